import { createRoute, z } from "@hono/zod-openapi";
import { agentRpc } from "../../durable-objects/agent/client.ts";
import { stripInvisible } from "../agent/injection.ts";
import { secretNamed } from "../delivery/secret-url.ts";
import { BadRequestError, NotFoundError, ServiceUnavailableError, UnsupportedMediaTypeError } from "../errors.ts";
import { JobRecordSchema } from "../jobs/model.ts";
import { webhookSecretProblem } from "../config/readiness.ts";
import { log } from "../log.ts";
import { sha256Hex } from "../shared/hash.ts";
import { createApi } from "./factory.ts";
import { AgentNameParam, IdempotencyKeyHeader } from "./params.ts";
import { unwrap } from "./refusals.ts";
import { requireUtf8Charset } from "./media-type.ts";
import { bodyWithinLimit } from "./request-guards.ts";
import { requireAgent } from "./resolve-agent.ts";
import { bodySize, errorResponse, MAX_BODY_BYTES, notFoundResponse, payloadTooLargeResponse, queueFullResponse, runConflictResponse, standardErrors } from "./schemas.ts";
import { screenPrompt } from "./screen.ts";
import { verifyWebhook } from "./webhook-signature.ts";
import { MAX_JSON_DEPTH, textNestsDeeper } from "../shared/json-depth.ts";
import { decodeUtf8Body, LONE_SURROGATE_MESSAGE, loneSurrogatePath } from "../shared/well-formed.ts";

/** All a caller hears of an agent whose webhook secret is unset or unusable. */
const NOT_CONFIGURED = "webhook not configured";

// Said once an isolate an agent and problem: anyone may call the route, and a line (error level) per
// call let strangers flood the log; the request line (request.failed, with its request_id) is each call's.
const notConfigured = (agent: string, secretName: string, problem: string): void =>
	log.once("error", "hooks.not_configured", JSON.stringify([agent, secretName, problem]), { agent, secret_name: secretName, error_message: problem });
const noWebhook = (agent: string) => `no webhook at /v1/hooks/${agent}: no such agent, or it has no webhook.secret in its definition`;

// application/json, or a structured +json type, with any parameters (charset).
const JSON_MEDIA_TYPE = /^application\/([a-z0-9.-]+\+)?json\s*(;.*)?$/i;

/** Webhook triggers authenticate by signature, not bearer token: the sender holds only the agent's secret. */
export const hooksApi = createApi().openapi(
	createRoute({
		method: "post",
		operationId: "triggerWebhook",
		path: "/{agent}",
		summary: "Trigger an agent from a signed webhook; the body, a JSON object, is given to the agent as data",
		middleware: [bodyWithinLimit(MAX_BODY_BYTES)],
		// No bearer token: the signature headers authenticate the request.
		security: [],
		description:
			"Headers: X-Drover-Timestamp (unix seconds, in digits, signed as the header spells it) and X-Drover-Signature: sha256=<hex of HMAC-SHA256(secret, `${timestamp}.${body}`)> (prefix and hex in either case), " +
			"the body being its bytes as sent (which must be UTF-8: a signed body that is not is a 400), " +
			"with the secret named by the agent's `webhook.secret`. Requests more than 300 s from the Worker's clock are refused; one seen before (the same signature, within 15 minutes) " +
			"is answered with the job it created (200), or a 409 if that job is not known any more; one refused as its agent is paused or disabled (409) is refused again as a replay (409): a retry is signed with a new timestamp; one refused with its queue full (429) runs when the same bytes come again once it drains, as a sender honouring Retry-After resends them. An Idempotency-Key (as on POST /v1/agents/{agent}/jobs) " +
			"makes a re-signed retry of the same body the same job (200) within 24 h; another body under the key is a 409.",
		request: {
			params: z.object({ agent: AgentNameParam }),
			// None is read: a sender's ?prompt= or ?agent= would otherwise seem to do something (the other
			// routes get this from withRole; this one authenticates by signature instead).
			query: z.strictObject({}),
			headers: z.object({
				"x-drover-timestamp": z.string().optional().openapi({ description: "Unix seconds, in digits, as signed; without it a 401", example: "1764493200" }),
				"x-drover-signature": z.string().optional().openapi({ description: "sha256=<hex of HMAC-SHA256(secret, `<timestamp>.<body>`)>; without it a 401" }),
				"idempotency-key": IdempotencyKeyHeader,
			}),
			// Documented, not validated here: a validator would parse and re-serialize the JSON, and the
			// signature covers the raw bytes (the route checks the body itself, after the signature).
			body: {
				required: true,
				description: `Any JSON object (up to ${bodySize(MAX_BODY_BYTES)}), signed as sent; the agent gets it as data, apart from its prompt`,
				content: { "application/json": { schema: { type: "object", additionalProperties: true } } },
			},
		},
		responses: {
			202: { description: "A new pending job", content: { "application/json": { schema: JobRecordSchema } } },
			200: {
				description: "The job this request already created: a resend of the same signed bytes within 15 minutes, or of the same body with the same Idempotency-Key within 24 h",
				content: { "application/json": { schema: JobRecordSchema } },
			},
			400: standardErrors[400],
			401: standardErrors[401],
			...notFoundResponse,
			...runConflictResponse,
			...payloadTooLargeResponse,
			415: errorResponse("The body is not sent as application/json (or a +json type), or is declared in a charset other than utf-8 (code unsupported_media_type)"),
			...queueFullResponse,
			500: standardErrors[500],
			503: errorResponse("The agent's webhook secret is not set on the Worker, too short to sign with, or one drover signs what it sends with (code unavailable); the Worker's logs say which"),
		},
	}),
	async (c) => {
		const name = c.req.valid("param").agent;
		// Anyone may call this route, so an agent without a webhook and no agent at all get the same
		// answer: it must not tell strangers which agents exist. The log says which.
		const agent = await requireAgent(c.env, name).catch((err: unknown) => {
			if (err instanceof NotFoundError) log.info("hooks.refused", { agent: name, error_message: "no agent of that name" });
			throw err instanceof NotFoundError ? new NotFoundError(noWebhook(name)) : err;
		});
		const secretName = agent.definition.webhook?.secret;
		if (!secretName) {
			log.info("hooks.refused", { agent: agent.name, error_message: "the agent has no webhook.secret in its definition" });
			throw new NotFoundError(noWebhook(agent.name));
		}
		// Anyone may call this route: the answer names no secret and says nothing of its value; the
		// operator reads which and why in the log. (A short key, or a name that points at a plain
		// setting such as RETENTION_DAYS = "30", can be guessed; one drover signs its own sends with
		// lets their receivers forge triggers.)
		const problem = webhookSecretProblem(c.env, secretName);
		if (problem) {
			notConfigured(agent.name, secretName, `the secret ${problem}`);
			// Said once at error (hooks.not_configured); each stranger's POST is a warning, not a page.
			c.set("failureLevel", "warn");
			throw new ServiceUnavailableError(NOT_CONFIGURED);
		}
		const secret = secretNamed(c.env, secretName)!;
		// Every body drover takes is JSON, sent as JSON.
		const contentType = c.req.header("content-type");
		if (!JSON_MEDIA_TYPE.test(contentType ?? "")) throw UnsupportedMediaTypeError.jsonRequired(contentType);
		// A body declared in another charset would be read as text it is not, its signature checking out all the same.
		requireUtf8Charset(contentType);
		// The signature covers the exact bytes sent: it is verified over them, before they are decoded,
		// so only a sender holding the secret hears whether they are UTF-8, as whether they are JSON.
		const bytes = new Uint8Array(await c.req.arrayBuffer());
		const headers = c.req.valid("header");
		await verifyWebhook(secret, headers["x-drover-timestamp"], headers["x-drover-signature"], bytes, Date.now());
		const raw = decodeUtf8Body(bytes);
		const idempotencyKey = headers["idempotency-key"];
		// Read from the text, before parsing: thousands of levels would overflow the walks below (a 500).
		if (textNestsDeeper(raw)) {
			throw BadRequestError.ofBody(`webhook body nests deeper than ${MAX_JSON_DEPTH} levels`);
		}
		let parsed: unknown;
		try {
			parsed = JSON.parse(raw);
		} catch {
			throw BadRequestError.ofBody("webhook body is not valid JSON");
		}
		if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw BadRequestError.ofBody("webhook body must be a JSON object");
		const lone = loneSurrogatePath(parsed);
		if (lone !== null) throw new BadRequestError(`webhook body: ${lone}: ${LONE_SURROGATE_MESSAGE}`, { issues: [{ path: lone, message: LONE_SURROGATE_MESSAGE }] });
		// Injected data gets the looser scan: invisible characters are stripped, overrides refused. It
		// scans the payload as the model will read it (JSON.stringify escapes only quotes, backslashes
		// and control characters), not the raw body, where a \u escape hid a letter or an invisible
		// character from the scan and JSON.parse then restored it.
		// Two keys that differ only by invisible characters would be one once they are stripped, and the
		// parse below would keep the last value: refused, rather than a value dropped unsaid.
		const merged = keysMergedByStripping(parsed);
		if (merged !== null) {
			const shown = (key: string) => JSON.stringify(key).replace(/\p{Default_Ignorable_Code_Point}/gu, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, "0")}`);
			const message = `keys ${shown(merged[0])} and ${shown(merged[1])} are the same key once invisible characters are removed`;
			throw new BadRequestError(`webhook body: ${message}`, { issues: [{ path: merged[1], message }] });
		}
		const payload: unknown = JSON.parse(screenPrompt(JSON.stringify(parsed), "data"));
		// And each string on its own, as written: in the JSON text a tab or a line break is an escape
		// (`\t`), which a phrase split by one would slip past, though the model reads it as a space.
		for (const text of stringsOf(parsed)) screenPrompt(text, "data");
		const result = unwrap(
			await agentRpc(c.env, agent.name).trigger(agent.name, agent.source, {
				kind: "webhook",
				payload,
				// Remembered in one spelling: the prefix and hex are taken in either case, and each spelling
				// of the same signature must not count as a new request (a replay).
				signature: headers["x-drover-signature"]?.toLowerCase(),
				// The body as sent (decoded only once it is known UTF-8, so one text is one byte string),
				// marked as a webhook's: a manual trigger's key never matches it.
				idempotency: idempotencyKey === undefined ? undefined : { key: idempotencyKey, requestHash: await sha256Hex(`webhook\n${raw}`) },
				owner: `webhook:${agent.name}`,
			}),
		);
		return c.json(result.job, result.created ? 202 : 200);
	},
);

/** Two keys of one object that stripping invisible characters makes one (the first such pair), or null. */
function keysMergedByStripping(value: unknown): [string, string] | null {
	const stack = [value];
	while (stack.length > 0) {
		const v = stack.pop();
		if (Array.isArray(v)) for (const item of v) stack.push(item);
		else if (v !== null && typeof v === "object") {
			const seen = new Map<string, string>();
			for (const [key, child] of Object.entries(v)) {
				const bare = stripInvisible(key);
				const other = seen.get(bare);
				if (other !== undefined) return [other, key];
				seen.set(bare, key);
				stack.push(child);
			}
		}
	}
	return null;
}

/** Every key and string value in a parsed JSON value (depth already bounded), without recursion. */
function stringsOf(value: unknown): string[] {
	const out: string[] = [];
	const stack = [value];
	while (stack.length > 0) {
		const v = stack.pop();
		if (typeof v === "string") out.push(v);
		else if (Array.isArray(v)) {
			// One at a time: spreading a wide array into push() overflows the stack.
			for (const item of v) stack.push(item);
		}
		else if (v !== null && typeof v === "object") {
			for (const [key, child] of Object.entries(v)) {
				out.push(key);
				stack.push(child);
			}
		}
	}
	return out;
}
