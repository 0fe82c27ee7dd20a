import { z } from "@hono/zod-openapi";
import { agentRpc } from "../../../durable-objects/agent/client.ts";
import type { AgentStatus } from "../../../durable-objects/agent/agent-do.ts";
import { DeliveryOutcomeSchema, JobRecordSchema, JobStatusSchema, JobSummarySchema } from "../../jobs/model.ts";
import { listJobs } from "../../store/job-index.ts";
import { screenPrompt } from "../screen.ts";
import { cursorScope, decodeCursor, encodeCursor } from "../../shared/cursor.ts";
import { sha256Hex } from "../../shared/hash.ts";
import { BLANK_MESSAGE, MAX_PROMPT_CHARS, NOT_BLANK } from "../../config/schema.ts";
import { createApi, withRole } from "../factory.ts";
import { AgentNameParam, CursorParam, IdempotencyHeader, pageLimit } from "../params.ts";
import { unwrap } from "../refusals.ts";
import { requireAgent, requireAgentSource, requireKnownAgent } from "../resolve-agent.ts";
import { bodySize, DateTimeString, LastJobSchema, OccurrenceStatusSchema, PausedSchema, PROMPT_BODY_BYTES, RunningJobSchema, conflictResponse, notFoundResponse, queueFullResponse, runConflictResponse } from "../schemas.ts";

const AgentPath = z.object({ agent: AgentNameParam });

const TriggerBody = z
	.strictObject({
		prompt: z
			.string()
			// No .min(1): NOT_BLANK refuses "" too, and a second issue said it again in zod's words.
			.max(MAX_PROMPT_CHARS)
			.regex(NOT_BLANK, BLANK_MESSAGE)
			.optional()
			.openapi({ description: `Overrides the agent's default prompt: up to ${MAX_PROMPT_CHARS.toLocaleString("en-US")} characters (Unicode code points), in a body of up to ${bodySize(PROMPT_BODY_BYTES)}` }),
	})
	.openapi("TriggerRequest");

const PauseBody = z.strictObject({ reason: z.string().max(500).optional() }).openapi("PauseRequest");

const AgentStatusSchema = z
	.object({
		name: z.string(),
		source: z.enum(["file", "api"]),
		deleted: z.boolean(),
		paused: PausedSchema,
		running_jobs: z.array(RunningJobSchema),
		queued_jobs: z.number().int(),
		last_job: LastJobSchema,
		index_backlog: z.number().int(),
		storage_bytes: z.number().int().openapi({ description: "The agent's Durable Object's SQLite database, in bytes: Cloudflare allows 10 GB an object" }),
	})
	.openapi("AgentStatus");

const OccurrenceSchema = z
	.object({
		id: z.string(),
		schedule: z.string().nullable(),
		source: z.enum(["cron", "manual", "webhook"]).openapi({ description: "What started the run: a schedule (cron), a manual run, a fork or a continue (manual), or the webhook trigger" }),
		scheduled_instant: DateTimeString.nullable(),
		dispatch: z.enum(["on_time", "late", "catch_up", "manual"]),
		claimed_at: DateTimeString,
		started_at: DateTimeString.nullable(),
		finished_at: DateTimeString.nullable(),
		status: OccurrenceStatusSchema,
		skip_reason: z.string().nullable(),
		skipped_count: z.number().int().nullable(),
		skipped_from: z.string().nullable(),
		job_id: z.string().nullable(),
		error: z.string().nullable(),
		delivery_outcome: DeliveryOutcomeSchema.nullable().openapi({ description: "What became of the run's delivery (its job's); pending while it is retried; null without one, or before its first attempt" }),
	})
	.openapi("Occurrence");

/** The answers' shapes, for the CLI (a type-only import: nothing of src/ loads in it at run time). */
export type AgentStatusShape = z.infer<typeof AgentStatusSchema>;
export type OccurrenceShape = z.infer<typeof OccurrenceSchema>;

/** A pause's or resume's answer: the schedules' last runs are the agent view's (GET /v1/agents/:agent), not this one's. */
function statusAnswer({ last_runs: _, ...status }: AgentStatus): AgentStatusShape {
	return status;
}


export const agentActionsApi = createApi()
	.openapi(
		withRole("operate", {
			method: "post",
			operationId: "runAgent",
			path: "/{agent}/jobs",
			summary: "Run an agent now (manual trigger)",
			request: {
				params: AgentPath,
				headers: IdempotencyHeader,
				body: { content: { "application/json": { schema: TriggerBody } }, required: false },
			},
			responses: {
				201: { description: "A new pending job", content: { "application/json": { schema: JobRecordSchema } } },
				200: { description: "The job this Idempotency-Key already created", content: { "application/json": { schema: JobRecordSchema } } },
				...notFoundResponse,
				...runConflictResponse,
				...queueFullResponse,
			},
		}, { maxBodyBytes: PROMPT_BODY_BYTES }),
		async (c) => {
			const agent = await requireAgentSource(c.env, c.req.valid("param").agent);
			const body = c.req.valid("json") ?? {};
			const key = c.req.valid("header")["idempotency-key"];
			const result = unwrap(
				await agentRpc(c.env, agent.name).trigger(agent.name, agent.source, {
					kind: "manual",
					prompt: body.prompt === undefined ? undefined : screenPrompt(body.prompt, "strict"),
					idempotency: key === undefined ? undefined : { key, requestHash: await sha256Hex(JSON.stringify({ prompt: body.prompt ?? null })) },
					owner: c.var.principal.name,
				}),
			);
			return c.json(result.job, result.created ? 201 : 200);
		},
	)
	.openapi(
		withRole("operate", {
			method: "post",
			operationId: "pauseAgent",
			path: "/{agent}/pause",
			summary: "Pause an agent: its due occurrences are recorded as skipped (reason: paused). Pausing a paused agent keeps the time of its first pause; a reason replaces the old one, none keeps it",
			request: { params: AgentPath, body: { content: { "application/json": { schema: PauseBody } }, required: false } },
			responses: { 200: { description: "Paused", content: { "application/json": { schema: AgentStatusSchema } } }, ...notFoundResponse },
		}),
		async (c) => {
			const agent = await requireAgent(c.env, c.req.valid("param").agent);
			// A blank reason is none: status would show "paused: " with nothing after it.
			const reason = c.req.valid("json")?.reason?.trim() || null;
			return c.json(statusAnswer(unwrap(await agentRpc(c.env, agent.name).pause(agent.name, agent.source, reason, c.var.principal.name))), 200);
		},
	)
	.openapi(
		withRole("operate", {
			method: "post",
			operationId: "resumeAgent",
			path: "/{agent}/resume",
			summary: "Resume a paused agent (paused by an operator or automatically)",
			request: { params: AgentPath },
			responses: {
				200: { description: "Resumed", content: { "application/json": { schema: AgentStatusSchema } } },
				...notFoundResponse,
				...conflictResponse,
			},
		}),
		async (c) => {
			const agent = await requireAgent(c.env, c.req.valid("param").agent);
			return c.json(statusAnswer(unwrap(await agentRpc(c.env, agent.name).resume(agent.name, agent.source, c.var.principal.name))), 200);
		},
	)
	.openapi(
		withRole("read", {
			method: "get",
			operationId: "listAgentRuns",
			path: "/{agent}/runs",
			summary: "The agent's occurrence ledger, newest first: claimed, skipped (with reason), late, catch-up, unknown",
			request: {
				params: AgentPath,
				query: z.strictObject({
					limit: pageLimit(200, 50),
					cursor: CursorParam,
				}),
			},
			responses: {
				200: {
					description: "A page of the ledger",
					content: { "application/json": { schema: z.object({ runs: z.array(OccurrenceSchema), next_cursor: z.string().nullable() }) } },
				},
				...notFoundResponse,
			},
		}),
		async (c) => {
			const { agent: name } = c.req.valid("param");
			const { limit, cursor } = c.req.valid("query");
			const scope = cursorScope("runs", { agent: name });
			const before = cursor === undefined ? undefined : decodeCursor(cursor, scope);
			await requireKnownAgent(c.env, name);
			const runs = await agentRpc(c.env, name).runs(limit + 1, before && { claimedAt: before.at, id: before.id });
			const page = runs.slice(0, limit);
			const last = page.at(-1);
			return c.json({ runs: page, next_cursor: runs.length > limit && last ? encodeCursor({ at: Date.parse(last.claimed_at), id: last.id }, scope) : null }, 200);
		},
	)
	.openapi(
		withRole("read", {
			method: "get",
			operationId: "listAgentJobs",
			path: "/{agent}/jobs",
			summary: "The agent's jobs, newest first (its newest job is the one `drover logs <agent> --follow` follows)",
			request: {
				params: AgentPath,
				query: z.strictObject({
					status: JobStatusSchema.optional().openapi({ description: "Only jobs in this status" }),
					limit: pageLimit(200, 20),
					cursor: CursorParam,
				}),
			},
			responses: {
				...notFoundResponse,
				200: {
					description: "A page of the agent's jobs",
					content: { "application/json": { schema: z.object({ jobs: z.array(JobSummarySchema), next_cursor: z.string().nullable() }) } },
				},
			},
		}),
		async (c) => {
			const { agent } = c.req.valid("param");
			const { status, limit, cursor } = c.req.valid("query");
			const page = await listJobs(c.env.DB, { agent, status }, limit, cursor);
			// An empty first page of a name that never was an agent is a 404 (with a status filter too:
			// a deleted agent's jobs stay listable, and none in that status is an empty page).
			if (page.jobs.length === 0 && cursor === undefined) await requireKnownAgent(c.env, agent);
			return c.json(page, 200);
		},
	);
