import { z } from "@hono/zod-openapi";
import { agentRpc } from "../../../durable-objects/agent/client.ts";
import type { ToolCall } from "../../../durable-objects/agent/runner/session.ts";
import { JobIdSchema, JobStatusSchema } from "../../jobs/model.ts";
import { redactDeep } from "../../security/redact.ts";
import { clip } from "../../shared/clip.ts";
import { cursorScope, decodeCursor, encodeCursor } from "../../shared/cursor.ts";
import { isoOrNull } from "../../shared/iso-time.ts";
import { getJobSummary } from "../../store/job-index.ts";
import { createApi, withRole } from "../factory.ts";
import { CursorParam, pageLimit } from "../params.ts";
import { DateTimeString, notFoundResponse } from "../schemas.ts";
import { noJob } from "./not-found.ts";

/** How much of each result a page shows: enough to read what came back; the JSONL has it whole. */
export const RESULT_PREVIEW_CHARS = 4000;

const ToolCallSchema = z
	.object({
		tool_use_id: z.string(),
		name: z.string(),
		input: z.record(z.string(), z.unknown()).openapi({ description: "The input it ran with: an operator's edited input where an approval edited it; credentials in it redacted, as in the output" }),
		status: z.enum(["pending", "executing", "completed", "failed", "denied", "interrupted"]).openapi({
			description:
				"pending: not run (waiting for approval, or the job ended first); executing: under way, or, in a job that has ended (indeterminate), cut off with its effect unknown; completed or failed: ran, with its result; denied: never ran, as an approval denied it or its input was not valid JSON (the result says which); interrupted: a forced cancel cut it off, its effect unknown. Never re-run, whatever the status",
		}),
		decision: z.enum(["approve", "deny"]).nullable().openapi({ description: "An approval's decision, for a tool that requires one" }),
		decided_by: z.string().nullable(),
		decision_reason: z.string().nullable().openapi({ description: "A deny's reason, as its decider gave it (told the model with the refusal); null without one" }),
		is_error: z.boolean().openapi({ description: "Whether the model was told the call failed" }),
		result: z.string().nullable().openapi({ description: `What the model was told, its first ${RESULT_PREVIEW_CHARS} characters (cut with …); the JSONL's tool_result line has it whole. Null until the call ends` }),
		result_chars: z.number().int().nullable().openapi({ description: "The whole result's length, in UTF-16 code units" }),
		started_at: DateTimeString.nullable().openapi({ description: "When it began executing" }),
		finished_at: DateTimeString.nullable(),
	})
	.openapi("ToolCall");

const ToolCallPageSchema = z
	.object({
		job_id: JobIdSchema,
		agent: z.string(),
		status: JobStatusSchema,
		tool_calls: z.array(ToolCallSchema),
		next_cursor: z.string().nullable(),
	})
	.openapi("ToolCallPage");

export type ToolCallPageShape = z.infer<typeof ToolCallPageSchema>;

function toolCallView(call: ToolCall): z.infer<typeof ToolCallSchema> {
	const ended = call.result !== null;
	return {
		tool_use_id: call.toolUseId,
		name: call.name,
		// An operator's edited input is stored as sent (the tool ran with it); shown redacted, as the output shows it.
		input: redactDeep(call.input),
		status: call.status,
		decision: call.decision,
		decided_by: call.decidedBy,
		decision_reason: call.decisionReason,
		is_error: call.isError,
		result: ended ? clip(call.result!, RESULT_PREVIEW_CHARS) : null,
		result_chars: ended ? call.resultLength : null,
		started_at: isoOrNull(call.startedAt),
		finished_at: isoOrNull(call.finishedAt),
	};
}

/** GET /v1/jobs/:id/tool-calls, mounted beside the job routes. */
export const jobToolCallsApi = createApi().openapi(
	withRole("read", {
		method: "get",
		operationId: "listJobToolCalls",
		path: "/{id}/tool-calls",
		summary: "A job's tool calls, in the order the model made them (deputy's runtime): input, status, approval, result, timing",
		description:
			"Each call is recorded before it runs and never run twice; this is that record. A job that made none, or has not started, has an empty list.",
		request: {
			params: z.object({ id: JobIdSchema }),
			query: z.strictObject({ limit: pageLimit(200, 50), cursor: CursorParam }),
		},
		responses: {
			200: { description: "A page of the job's tool calls", content: { "application/json": { schema: ToolCallPageSchema } } },
			...notFoundResponse,
		},
	}),
	async (c) => {
		const { id } = c.req.valid("param");
		const { limit, cursor } = c.req.valid("query");
		const scope = cursorScope("tool-calls", { job: id });
		const after = cursor === undefined ? 0 : decodeCursor(cursor, scope).at;
		const summary = await getJobSummary(c.env.DB, id);
		// The head one character longer than the preview, so clip marks a cut.
		const found = summary && (await agentRpc(c.env, summary.agent).toolCalls(id, limit, after, RESULT_PREVIEW_CHARS + 1));
		if (!found) throw noJob(c.env, id);
		return c.json(
			{
				job_id: found.job.id,
				agent: found.job.agent,
				status: found.job.status,
				tool_calls: found.calls.map(toolCallView),
				next_cursor: found.next === null ? null : encodeCursor({ at: found.next, id }, scope),
			},
			200,
		);
	},
);
