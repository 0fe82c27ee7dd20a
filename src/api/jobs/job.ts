import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { accepts } from "hono/accepts";
import { agentRpc } from "../../../durable-objects/agent/client.ts";
import { FIRST_LINE_HEADER } from "../../../durable-objects/agent/output-http.ts";
import { CATCH_UP_BUDGET_BYTES, MAX_BACKLOG_BYTES, MAX_HELD_BYTES, MAX_STREAMS_PER_AGENT, MAX_STREAMS_PER_JOB, STREAM_RETRY_AFTER_SECONDS } from "../../../durable-objects/agent/streams.ts";
import { BadRequestError } from "../../errors.ts";
import { JobIdSchema, JobRecordSchema, JobStatusSchema, JobSummarySchema, JobViewSchema, TriggerTypeSchema, type JobRecord } from "../../jobs/model.ts";
import { toHerdctlYaml } from "../../jobs/yaml.ts";
import { getJobSummary, listJobs } from "../../store/job-index.ts";
import { BLANK_MESSAGE, MAX_PROMPT_CHARS, NOT_BLANK } from "../../config/schema.ts";
import type { AppEnv } from "../context.ts";
import { errorBody } from "../error-handler.ts";
import { createApi, withRole } from "../factory.ts";
import { AgentNameParam, CursorParam, IdempotencyHeader, pageLimit, queryInt } from "../params.ts";
import { unwrap } from "../refusals.ts";
import { screenPrompt } from "../screen.ts";
import { bodySize, conflictResponse, errorResponse, ErrorSchema, notFoundResponse, PROMPT_BODY_BYTES, queueFullResponse, runConflictResponse } from "../schemas.ts";
import { MAX_JSON_DEPTH, withinDepth } from "../../shared/json-depth.ts";
import { requestedRange } from "../../shared/range.ts";
import { sha256Hex } from "../../shared/hash.ts";
import { noJob } from "./not-found.ts";

// A date alone stands for its start, in UTC, as /v1/usage reads its days (Date.parse reads it so).
// zod's date-time wants seconds unless told minutes (precision -1); ISO 8601 leaves them out.
const Instant = z.union([z.iso.datetime({ offset: true }), z.iso.datetime({ offset: true, precision: -1 }), z.iso.date()], {
	error: "must be an ISO 8601 date-time with its offset, e.g. 2026-11-30T09:00:00Z or 2026-11-30T09:00+01:00, or a date, 2026-11-30 (its start, UTC)",
	// As the document says it: RFC 3339's date-time needs seconds, so the minute form is its pattern
	// (generated, it was a second date-time, refusing 09:00Z in a client that checks formats).
}).openapi({
	anyOf: [
		{ type: "string", format: "date-time" },
		{ type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(Z|[+-]\\d{2}:\\d{2})$" },
		{ type: "string", format: "date" },
	],
	example: "2026-11-30T09:00Z",
});

const ListQuery = z
	.strictObject({
		agent: AgentNameParam.optional().openapi({ description: "Only this agent's jobs" }),
		status: JobStatusSchema.optional().openapi({ description: "Only jobs in this status" }),
		trigger_type: TriggerTypeSchema.optional().openapi({ description: "Only jobs started this way" }),
		since: Instant.optional().openapi({ description: "Jobs created at or after this instant" }),
		until: Instant.optional().openapi({ description: "Jobs created before this instant" }),
		limit: pageLimit(200, 20),
		cursor: CursorParam,
	})
	.refine((q) => !q.since || !q.until || Date.parse(q.since) < Date.parse(q.until), {
		message: "since must be before until",
		path: ["since"],
	});

const JobPath = z.object({ id: JobIdSchema });

/** Where a stream resumes: the number of the last line the client has. */
const LineNumber = z.string().regex(/^\d{1,12}$/, "must be a line number");

/** The agent a job belongs to, from the index; every job action goes to that agent's object. */
async function ownerOf(env: Env, id: string): Promise<string> {
	const summary = await getJobSummary(env.DB, id);
	if (!summary) throw noJob(env, id);
	return summary.agent;
}

/** Hands a stream request to the agent's object and passes its response through untouched. */
async function forward(c: Context<AppEnv>, agent: string, path: string): Promise<Response> {
	const original = c.req.raw;
	const url = new URL(original.url);
	const headers = new Headers();
	const { range, ifRange } = requestedRange(original);
	if (range !== null) headers.set("range", range);
	if (ifRange !== null) headers.set("if-range", ifRange);
	for (const name of ["last-event-id", "accept"]) {
		const value = original.headers.get(name);
		if (value !== null) headers.set(name, value);
	}
	const answer = await c.env.AGENT.getByName(agent).fetch(new Request(`https://agent${path}${url.search}`, { headers, signal: original.signal }));
	if (answer.ok || !(answer.headers.get("content-type") ?? "").startsWith("application/json")) return answer;
	// The agent's errors (a range past the end, a stream refused) are its own JSON error body: given
	// the request's id here, as every error body the API writes has it.
	const body = (await answer.json()) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
	const error = body.error;
	if (typeof error?.code !== "string" || typeof error.message !== "string") return Response.json(body, answer);
	return Response.json(errorBody(c, error.code, error.message, error.details), answer);
}

/**
 * A continue or a fork of job `id`, by its agent's object: under an Idempotency-Key, the job the
 * key already made (`created` false) or a 409 for a different request under it, as for a trigger.
 */
async function followUp(c: Context<AppEnv>, kind: "continue" | "fork", id: string, key: string | undefined, prompt: string | undefined, allowDefinitionChange: boolean): Promise<{ job: JobRecord; created: boolean }> {
	const agent = await ownerOf(c.env, id);
	const opts = { prompt, owner: c.var.principal.name, allowDefinitionChange };
	const rpc = agentRpc(c.env, agent);
	if (key === undefined) return { job: unwrap(await rpc.followUp(kind, id, opts)), created: true };
	// What the request asks for, so a retry under the key is told from another request under it.
	const requestHash = await sha256Hex(JSON.stringify({ kind, source: id, prompt: prompt ?? null, allow_definition_change: allowDefinitionChange }));
	return unwrap(await rpc.followUpOnce(kind, id, { ...opts, idempotency: { key, requestHash } }));
}

/** GET /v1/jobs/:id gives JSON unless the Accept header weights YAML (by any of its usual names) higher. */
const JSON_TYPE = "application/json";
const JOB_TYPES = [JSON_TYPE, "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"];

const jobResponse = (description: string) => ({ description, content: { "application/json": { schema: JobRecordSchema } } });

/** A deny's reason is a sentence or two for the model, not a prompt. */
const MAX_DENY_REASON_CHARS = 2000;

const CancelBody = z
	.strictObject({
		reason: z.string().max(500).optional().openapi({ description: "Recorded in the job's transitions" }),
		force: z
			.boolean()
			.optional()
			.openapi({
				description:
					"Also cut off a tool call in flight (herdctl's force-kill): the call is aborted now, recorded as interrupted with its effect unknown (a continue or fork tells the model so, and never that it may safely repeat it), and the job answers `cancelled`, its reason saying it was forced. Accepted after a plain cancel that waits for a tool call (an escalation). A pending, approval_pending or model-calling job is cancelled as without it. A tool call left by an instance of the agent's object that is gone cannot be cut off: the job answers as it stands and ends `indeterminate` (the call's effect unknown), as without it.",
			}),
	})
	.openapi("CancelRequest");
const ApprovalBody = z
	.strictObject({
		decision: z.enum(["approve", "deny"]),
		tool_use_id: z
			.string()
			.min(1)
			.max(200)
			.optional()
			.openapi({
				description:
					"The tool call this decision is for (pending_approval.tool_use_id, as read before deciding). If another call is waiting by then (the model made a second gated call, and this decision was retried or sent late), the answer is 409 and nothing is decided. Required with tool_input; without it a plain approve or deny acts on whichever call is waiting.",
			}),
		tool_input: z
			.record(z.string(), z.unknown())
			.refine((v) => withinDepth(v), `nests deeper than ${MAX_JSON_DEPTH} levels`)
			.optional()
			.openapi({ description: "Approve with this input instead of the model's; it must match the tool's input_schema" }),
		allow_definition_change: z
			.boolean()
			.default(false)
			.openapi({ description: "Approve even if the agent's definition changed since the job started (else 409, as for continue and fork)" }),
		reason: z
			.string()
			.max(MAX_DENY_REASON_CHARS, `must be at most ${MAX_DENY_REASON_CHARS.toLocaleString("en-US")} characters`)
			.regex(NOT_BLANK, "must not be empty or only whitespace: leave it out to deny without one")
			// SQLite's substr, which reads the head of a call's result the model is sent, stops at a NUL.
			.regex(/^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$/, "must not hold control characters (tab and newline aside)")
			.optional()
			.openapi({
				description: `A deny's reason, up to ${MAX_DENY_REASON_CHARS} characters: the model is told it with the refusal (its tool result reads \`denied by <who>: the tool call was not executed; the reason given: <reason>\`), so it can do otherwise; screened as a prompt is, and kept in the job's transitions and output`,
			}),
	})
	.refine((b) => b.decision === "approve" || b.tool_input === undefined, { message: "tool_input goes only with approve", path: ["tool_input"] })
	.refine((b) => b.decision === "deny" || b.reason === undefined, { message: "reason goes only with deny (an approve's edit is tool_input)", path: ["reason"] })
	.refine((b) => b.tool_input === undefined || b.tool_use_id !== undefined, { message: "tool_input needs tool_use_id, the call it edits", path: ["tool_use_id"] })
	.openapi("ApprovalRequest");
const FollowUpPrompt = z
	.string()
	// No .min(1): NOT_BLANK refuses "" too, and a second issue said it again in zod's words.
	.max(MAX_PROMPT_CHARS)
	.regex(NOT_BLANK, BLANK_MESSAGE)
	.openapi({ description: `Up to ${MAX_PROMPT_CHARS.toLocaleString("en-US")} characters (Unicode code points), in a body of up to ${bodySize(PROMPT_BODY_BYTES)}` });
const FollowUpBody = (promptRequired: boolean) =>
	z.strictObject({
		prompt: promptRequired ? FollowUpPrompt : FollowUpPrompt.optional(),
		allow_definition_change: z.boolean().default(false).openapi({ description: "Run even if the agent's definition changed since the job" }),
	});

const JobPage = z
	.object({ jobs: z.array(JobSummarySchema), next_cursor: z.string().nullable() })
	.openapi("JobPage");

export const jobApi = createApi()
	.openapi(
		withRole("read", {
			method: "get",
			operationId: "listJobs",
			path: "/",
			summary: "List jobs, newest first, with keyset pagination",
			request: { query: ListQuery },
			responses: { 200: { description: "A page of jobs", content: { "application/json": { schema: JobPage } } } },
		}),
		async (c) => {
			const q = c.req.valid("query");
			const page = await listJobs(
				c.env.DB,
				{
					agent: q.agent,
					status: q.status,
					trigger_type: q.trigger_type,
					since: q.since === undefined ? undefined : Date.parse(q.since),
					until: q.until === undefined ? undefined : Date.parse(q.until),
				},
				q.limit,
				q.cursor,
			);
			return c.json(page, 200);
		},
	)
	.openapi(
		withRole("read", {
			method: "get",
			operationId: "getJob",
			path: "/{id}",
			summary: "One job's full record, with its hook calls",
			request: { params: z.object({ id: JobIdSchema }) },
			responses: {
				200: {
					description: "The job record; with `Accept: application/yaml`, herdctl's YAML job layout",
					content: { "application/json": { schema: JobViewSchema }, "application/yaml": { schema: z.string() } },
				},
				...notFoundResponse,
			},
		}),
		async (c) => {
			const { id } = c.req.valid("param");
			const summary = await getJobSummary(c.env.DB, id);
			const job = summary && (await agentRpc(c.env, summary.agent).jobView(id));
			if (!job) throw noJob(c.env, id);
			// The body depends on Accept: a cache must not give one client's YAML to another.
			c.header("vary", "Accept");
			if (accepts(c, { header: "Accept", supports: JOB_TYPES, default: JSON_TYPE }) !== JSON_TYPE) {
				return c.body(toHerdctlYaml(job), 200, { "content-type": "application/yaml; charset=utf-8" });
			}
			return c.json(job, 200);
		},
	)
	.openapi(
		withRole("operate", {
			method: "post",
			operationId: "cancelJob",
			path: "/{id}/cancel",
			summary: "Cancel a job: a pending one, or one in a model call (the call is aborted), at once; one in a tool call as soon as the call returns, or at once with `force` (the call cut off, its effect unknown)",
			request: { params: JobPath, body: { content: { "application/json": { schema: CancelBody } }, required: false } },
			responses: {
				200: jobResponse("The job: cancelled, or still running while a tool call in flight finishes (without `force`)"),
				...notFoundResponse,
				...conflictResponse,
			},
		}),
		async (c) => {
			const { id } = c.req.valid("param");
			const agent = await ownerOf(c.env, id);
			const body = c.req.valid("json") ?? {};
			return c.json(unwrap(await agentRpc(c.env, agent).cancel(id, body.reason ?? null, c.var.principal.name, body.force ?? false)), 200);
		},
	)
	.openapi(
		withRole("operate", {
			method: "post",
			operationId: "decideJobApproval",
			path: "/{id}/approval",
			summary: "Approve (optionally with edited input) or deny the tool call a job is waiting on",
			request: { params: JobPath, body: { content: { "application/json": { schema: ApprovalBody } }, required: true } },
			responses: { 200: jobResponse("The job, running again"), ...notFoundResponse, ...conflictResponse },
		}),
		async (c) => {
			const { id } = c.req.valid("param");
			const agent = await ownerOf(c.env, id);
			const body = c.req.valid("json");
			const rpc = agentRpc(c.env, agent);
			const by = c.var.principal.name;
			// A reason goes by a method of its own: an object still on the release before (a deploy's
			// first minutes) lacks it and refuses, where its decide would deny without telling the model why.
			if (body.reason !== undefined) return c.json(unwrap(await rpc.denyWithReason(id, screenPrompt(body.reason, "strict", "reason"), by, body.tool_use_id)), 200);
			return c.json(unwrap(await rpc.decide(id, body.decision, body.tool_input, by, body.allow_definition_change, body.tool_use_id)), 200);
		},
	)
	.openapi(
		withRole("operate", {
			method: "post",
			operationId: "continueJob",
			path: "/{id}/continue",
			summary: "A new job continuing this job's session with a new prompt",
			request: { params: JobPath, headers: IdempotencyHeader, body: { content: { "application/json": { schema: FollowUpBody(true) } }, required: true } },
			responses: { 201: jobResponse("The new pending job"), 200: jobResponse("The job this Idempotency-Key already created"), ...notFoundResponse, ...runConflictResponse, ...queueFullResponse },
		}, { maxBodyBytes: PROMPT_BODY_BYTES }),
		async (c) => {
			const body = c.req.valid("json");
			const { job, created } = await followUp(c, "continue", c.req.valid("param").id, c.req.valid("header")["idempotency-key"], screenPrompt(body.prompt ?? "", "strict"), body.allow_definition_change);
			return c.json(job, created ? 201 : 200);
		},
	)
	.openapi(
		withRole("operate", {
			method: "post",
			operationId: "forkJob",
			path: "/{id}/fork",
			summary: "A new job in a new session starting from this job's conversation (forked_from)",
			request: { params: JobPath, headers: IdempotencyHeader, body: { content: { "application/json": { schema: FollowUpBody(false) } }, required: false } },
			responses: { 201: jobResponse("The new pending job"), 200: jobResponse("The job this Idempotency-Key already created"), ...notFoundResponse, ...runConflictResponse, ...queueFullResponse },
		}, { maxBodyBytes: PROMPT_BODY_BYTES }),
		async (c) => {
			const body = c.req.valid("json") ?? { allow_definition_change: false };
			const prompt = body.prompt === undefined ? undefined : screenPrompt(body.prompt, "strict");
			const { job, created } = await followUp(c, "fork", c.req.valid("param").id, c.req.valid("header")["idempotency-key"], prompt, body.allow_definition_change);
			return c.json(job, created ? 201 : 200);
		},
	)
	.openapi(
		withRole("read", {
			method: "get",
			operationId: "getJobOutput",
			path: "/{id}/output",
			summary: "The job's JSONL output: from R2 once it has ended, from its agent while it runs; honours Range",
			description:
				"A part of the output is asked for by a bytes `Range` header or by `?lines=N`, not both: the two ask for different parts, and a request with both is a 400. `?lines=N` alone is the last N lines; with `after=A`, the N lines after line A (lines A+1 to A+N, fewer at the end), to read any part of a long output by line numbers.",
			request: {
				params: JobPath,
				query: z.strictObject({
					lines: queryInt(1, 100_000).openapi({ description: "Only the last N lines, or with `after` the N lines after it (not with a Range header)" }),
					after: queryInt(0, 1_000_000_000_000).openapi({ description: "With `lines`: the line number the answer's lines follow (0: from the first). Past the job's last line, a 400" }),
				}),
				headers: z.object({ range: z.string().optional().openapi({ description: "One bytes range (not with ?lines=)" }) }),
			},
			responses: {
				400: errorResponse("The request was malformed, the message says how: a Range header together with ?lines=, a bad ?lines=, an `after` without `lines` or past the job's last line, or a bad job id"),
				200: {
					description: "JSONL, one object per line",
					content: { "application/x-ndjson": { schema: z.string() } },
					headers: z.object({
						"Accept-Ranges": z.literal("bytes").optional().openapi({ description: "Once the output is in R2: a bytes Range is honoured" }),
						[FIRST_LINE_HEADER]: z.string().optional().openapi({
							description:
								"With ?lines=N only: the number of the answer's first line (line numbers run from 1 with no gaps), or, when it has none, the number the job's next line will take. Following on with the stream's `after` = this + the lines received − 1 needs no read of the whole output.",
							example: "9901",
						}),
					}),
				},
				206: {
					description: "The requested byte range",
					content: { "application/x-ndjson": { schema: z.string() } },
					headers: z.object({ "Content-Range": z.string().openapi({ description: "bytes <first>-<last>/<size>", example: "bytes 0-10/748" }), "Accept-Ranges": z.literal("bytes").optional() }),
				},
				416: {
					description: "The range starts at or past the end of the output (Content-Range: bytes */<size>); a Range that is not one valid bytes range is ignored",
					content: { "application/json": { schema: ErrorSchema } },
					headers: z.object({ "Content-Range": z.string().openapi({ description: "bytes */<size>", example: "bytes */748" }) }),
				},
				...notFoundResponse,
			},
		}),
		async (c) => {
			const { id } = c.req.valid("param");
			// Which part would be meant is a guess either way: the last lines, or those bytes of the whole.
			// Any Range counts, even one the agent would ignore: the client asked for a part by both.
			if (c.req.valid("query").lines !== undefined && (c.req.valid("header").range ?? "").trim() !== "") {
				const message = "a Range header and ?lines= each ask for a part of the output, and do not go together; send one of them";
				throw new BadRequestError(message, { issues: [{ path: "lines", message: "not with a Range header: send one or the other" }] });
			}
			if (c.req.valid("query").after !== undefined && c.req.valid("query").lines === undefined) {
				const message = "after names the line the answer's lines follow, and needs lines= to say how many (up to 100000)";
				throw new BadRequestError(message, { issues: [{ path: "after", message: "needs lines=" }] });
			}
			// The agent's answer (JSONL, or a JSON error) passes through as it is. @hono/zod-openapi types
			// only JSON and text/plain bodies (x-ndjson comes out as never), and with every status's
			// content declared it no longer takes a plain Response: hence the cast.
			return (await forward(c, await ownerOf(c.env, id), `/jobs/${id}/output`)) as never;
		},
	)
	.openapi(
		withRole("read", {
			method: "get",
			operationId: "streamJob",
			path: "/{id}/stream",
			summary: "Server-Sent Events: one `line` event per JSONL line (id = line number), `status` events, then `end`",
			description:
				"Reconnect with Last-Event-ID to resume exactly after that line; `after` does the same for a client that cannot set the header (the header wins). " +
				"One past the job's last line so far (another job's, or made up) is a 400: no line of this job's would ever follow it. " +
				`A job may have ${MAX_STREAMS_PER_JOB} live streams and an agent's jobs ${MAX_STREAMS_PER_AGENT} together; beyond that a stream is refused with a 429. ` +
				`A stream that does not read what it is sent is dropped once more than ${MAX_BACKLOG_BYTES / 1024 / 1024} MiB wait for it, or, while it catches up, once the streams catching up hold more than ${CATCH_UP_BUDGET_BYTES / 1024 / 1024} MiB together and it has stalled longest, or once all of the agent's streams hold more than ${MAX_HELD_BYTES / 1024 / 1024} MiB together and it has the most waiting: it is closed without an \`end\` event, and reconnecting with Last-Event-ID resumes after the last line received.`,
			request: {
				params: JobPath,
				query: z.strictObject({ after: LineNumber.optional().openapi({ description: "Start after this line number" }) }),
				headers: z.object({ "last-event-id": LineNumber.optional().openapi({ description: "The id of the last `line` event received (its line number): the stream resumes after it; wins over `after`" }) }),
			},
			responses: {
				200: { description: "An event stream", content: { "text/event-stream": { schema: z.string() } } },
				...notFoundResponse,
				429: {
					...errorResponse(
						`The job already has ${MAX_STREAMS_PER_JOB} live streams, or its agent's jobs ${MAX_STREAMS_PER_AGENT} together (code rate_limited; the message says which limit); try again after Retry-After, or close a stream`,
					),
					headers: z.object({ "Retry-After": z.string().openapi({ description: "Seconds to wait before asking again", example: String(STREAM_RETRY_AFTER_SECONDS) }) }),
				},
			},
		}),
		async (c) => {
			const { id } = c.req.valid("param");
			return forward(c, await ownerOf(c.env, id), `/jobs/${id}/stream`);
		},
	);
