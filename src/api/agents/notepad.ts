import { z } from "@hono/zod-openapi";
import { agentRpc } from "../../../durable-objects/agent/client.ts";
import { findNote, keyLengthProblem, keyProblem, NOTEPAD_KEY_CHARS, notepadJson, notepadKey, type NoteCondition } from "../../../durable-objects/agent/notepad.ts";
import { scanPrompt } from "../../agent/injection.ts";
import { BadRequestError, NotFoundError } from "../../errors.ts";
import { redact } from "../../security/redact.ts";
import { noteVersion } from "../../shared/note-version.ts";
import { createApi, withRole } from "../factory.ts";
import { AgentNameParam } from "../params.ts";
import { oneTag } from "../preconditions.ts";
import { unwrap } from "../refusals.ts";
import { requireAgent } from "../resolve-agent.ts";
import { bodySize, errorResponse, MAX_BODY_BYTES, notFoundResponse } from "../schemas.ts";

/** A key is checked as it will be stored and looked up: NFC (an NFD "é" is two characters, NFC one). */
function problem(check: (key: string) => string | null) {
	return (key: string, ctx: z.RefinementCtx) => {
		const message = check(notepadKey(key));
		if (message !== null) ctx.addIssue({ code: "custom", message });
	};
}

const AgentPath = z.object({ agent: AgentNameParam });
// Lengths are counted in characters (code points), as the messages say; JSON Schema's maxLength counts the same way.
const Key = z.string().openapi({ minLength: 1, maxLength: NOTEPAD_KEY_CHARS });
/** Reading or deleting checks the length only, so a key stored before the character rules can still be reached. */
const KeyPath = AgentPath.extend({ key: Key.superRefine(problem(keyLengthProblem)).openapi({ description: "A notepad key" }) });
/**
 * A key written is a path segment the caller reads and deletes by, so what would change it is refused
 * rather than changed: invisible characters (stripped, it would be stored under another name) and a
 * credential (redacted, it would be another key; the value is stored redacted).
 */
function writeKeyProblem(key: string): string | null {
	const basic = keyProblem(key);
	if (basic !== null) return basic;
	const scan = scanPrompt(key, "data");
	if (!scan.ok) return `notepad key refused by the injection scan: ${scan.reason}`;
	if (scan.text !== key) return "notepad keys may not contain invisible characters (zero-width, bidi controls, fillers)";
	if (redact(key) !== key) return "notepad keys may not hold a credential (an API key, token or secret URL): put it nowhere, or in a Worker secret";
	return null;
}

const WriteKeyPath = AgentPath.extend({
	key: Key.superRefine(problem(writeKeyProblem)).openapi({
		description:
			"1-128 characters, one line of printable text: no control characters (C0, DEL, C1) or U+2028/U+2029. Stored NFC-normalized: precomposed and decomposed spellings (U+00E9 and e + U+0301) name one key",
		pattern: "^[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]+$",
	}),
});
const Notepad = z.record(z.string(), z.string()).openapi("Notepad");

const TAG = /^[A-Za-z0-9_-]{43}$/;
const VERSION = 'one version in quotes, as the key\'s ETag gives it (its value\'s SHA-256 in base64url, "Xy3…", 43 characters), or *';
const IfMatch = z
	.string()
	.optional()
	.openapi({ description: 'The version of the value the write was made on, as GET /v1/agents/{agent}/notepad/{key}\'s ETag gives it (the value\'s SHA-256 in base64url, quoted), or * (any value): a 412, changing nothing, when the key holds another value or none. Without it, the last write wins' });
const WriteConditions = z.object({
	"if-match": IfMatch,
	"if-none-match": z.string().optional().openapi({ description: "* only: write the key only if it is not set (a 412, changing nothing, if it is)" }),
});

/** A write's condition, from its If-Match and If-None-Match (a 400 for a header the write cannot be made on). */
function conditionOf(headers: { "if-match"?: string; "if-none-match"?: string }): NoteCondition {
	const ifMatch = oneTag(headers["if-match"], "If-Match", TAG, VERSION);
	const ifNoneMatch = oneTag(headers["if-none-match"], "If-None-Match", /(?!)/, "*: a write made only if the key is not set");
	return { ...(ifMatch !== undefined ? { ifMatch } : {}), ...(ifNoneMatch !== undefined ? { ifNoneMatch: "*" as const } : {}) };
}

/** Whether a write is conditional: it then goes by the object's *If methods (see AgentDO.setNoteIf). */
const isCondition = (condition: NoteCondition): boolean => condition.ifMatch !== undefined || condition.ifNoneMatch !== undefined;

const etagOf = (value: string) => `"${noteVersion(value)}"`;
const preconditionFailed = { 412: errorResponse("The condition failed: the key holds another value than If-Match's version (or none), or is set when If-None-Match: * said it must not be; nothing was changed (code precondition_failed)") };
const tooLarge = { 413: errorResponse(`The value or the notepad would exceed its limit, or the body is over ${bodySize(MAX_BODY_BYTES)}; nothing changed`) };

/**
 * An agent's notepad, rendered into its next prompts as "## Job notepad (persistent across runs)".
 * Only operators write it (no model tool does), so an agent cannot plant instructions for itself.
 */
export const notepadApi = createApi()
	.openapi(
		withRole("read", {
			method: "get",
			operationId: "getNotepad",
			path: "/{agent}/notepad",
			summary: "The agent's whole notepad",
			request: { params: AgentPath },
			responses: { 200: { description: "Key → value", content: { "application/json": { schema: Notepad } } }, ...notFoundResponse },
		}),
		async (c) => {
			const agent = await requireAgent(c.env, c.req.valid("param").agent);
			return c.json(notepadJson(await agentRpc(c.env, agent.name).notepad(agent.name, agent.source)), 200);
		},
	)
	.openapi(
		withRole("read", {
			method: "get",
			operationId: "getNotepadKey",
			path: "/{agent}/notepad/{key}",
			summary: "One notepad value",
			request: { params: KeyPath },
			responses: {
				200: { description: "The value; ETag: its version, for a write's If-Match (If-None-Match with it: 304 while the value is unchanged)", content: { "application/json": { schema: z.object({ key: z.string(), value: z.string() }) } } },
				...notFoundResponse,
			},
		}),
		async (c) => {
			const { agent: name, key } = c.req.valid("param");
			const agent = await requireAgent(c.env, name);
			const note = findNote(await agentRpc(c.env, agent.name).notepad(agent.name, agent.source), key);
			if (note === null) throw new NotFoundError(`no notepad key ${JSON.stringify(notepadKey(key))} for agent ${name}`);
			return c.json(note, 200, { ETag: etagOf(note.value) });
		},
	)
	.openapi(
		withRole("operate", {
			method: "put",
			operationId: "putNotepadKey",
			path: "/{agent}/notepad/{key}",
			summary: "Set a notepad value (16 KiB a value, 64 KiB in all)",
			request: { params: WriteKeyPath, headers: WriteConditions, body: { content: { "application/json": { schema: z.strictObject({ value: z.string() }) } }, required: true } },
			responses: {
				200: { description: "The notepad after the write; ETag: the version of the value as stored (redacted, invisible characters stripped), for the next write's If-Match", content: { "application/json": { schema: Notepad } } },
				...notFoundResponse,
				...preconditionFailed,
				...tooLarge,
			},
		}),
		async (c) => {
			const { agent: name, key } = c.req.valid("param");
			const condition = conditionOf(c.req.valid("header"));
			const agent = await requireAgent(c.env, name);
			// Every run's prompt carries the notepad: its value is scanned as the data it is (invisible
			// characters stripped, overrides refused), and stored redacted, as every record is.
			const scan = scanPrompt(c.req.valid("json").value, "data");
			if (!scan.ok) throw new BadRequestError(`notepad value refused by the injection scan: ${scan.reason}`, { issues: [{ path: "value", message: scan.reason }] });
			const value = redact(scan.text);
			const { notepad } = unwrap(
				await (isCondition(condition)
					? agentRpc(c.env, agent.name).setNoteIf(agent.name, agent.source, key, value, condition, c.var.principal.name)
					: agentRpc(c.env, agent.name).setNote(agent.name, agent.source, key, value, undefined, c.var.principal.name)),
			);
			return c.json(notepadJson(notepad), 200, { ETag: etagOf(findNote(notepad, key)?.value ?? value) });
		},
	)
	.openapi(
		withRole("operate", {
			method: "delete",
			operationId: "deleteNotepadKey",
			path: "/{agent}/notepad/{key}",
			summary: "Delete a notepad value",
			request: { params: KeyPath, headers: z.object({ "if-match": IfMatch }) },
			responses: { 200: { description: "Deleted", content: { "application/json": { schema: z.object({ deleted: z.number().int() }) } } }, ...notFoundResponse, ...preconditionFailed },
		}),
		async (c) => {
			const { agent: name, key } = c.req.valid("param");
			const condition = conditionOf(c.req.valid("header"));
			const agent = await requireAgent(c.env, name);
			const result = unwrap(
				await (isCondition(condition)
					? agentRpc(c.env, agent.name).deleteNoteIf(agent.name, agent.source, key, condition, c.var.principal.name)
					: agentRpc(c.env, agent.name).deleteNote(agent.name, agent.source, key, undefined, c.var.principal.name)),
			);
			if (result.deleted === 0) throw new NotFoundError(`no notepad key ${JSON.stringify(notepadKey(key))} for agent ${name}`);
			return c.json(result, 200);
		},
	)
	.openapi(
		withRole("operate", {
			method: "delete",
			operationId: "clearNotepad",
			path: "/{agent}/notepad",
			summary: "Clear the notepad",
			request: { params: AgentPath },
			responses: { 200: { description: "Cleared", content: { "application/json": { schema: z.object({ deleted: z.number().int() }) } } }, ...notFoundResponse },
		}),
		async (c) => {
			const agent = await requireAgent(c.env, c.req.valid("param").agent);
			return c.json(unwrap(await agentRpc(c.env, agent.name).deleteNote(agent.name, agent.source, null, undefined, c.var.principal.name)), 200);
		},
	);
