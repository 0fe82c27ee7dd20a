import { z } from "@hono/zod-openapi";
import { QUEUE_RETRY_AFTER_SECONDS } from "../errors.ts";
import { DeliveryOutcomeSchema, EXIT_REASONS, JOB_STATUSES, OCCURRENCE_STATUSES, ToolCallTallySchema } from "../jobs/model.ts";

/** Every `error.code` an answer gives (src/errors.ts, error-handler.ts): a client branches on these, not on the message. */
export const ERROR_CODES = [
	"bad_request",
	"unauthorized",
	"forbidden",
	"not_found",
	"method_not_allowed",
	"conflict",
	"agent_paused",
	"agent_disabled",
	"precondition_failed",
	"payload_too_large",
	"unsupported_media_type",
	"range_not_satisfiable",
	"rate_limited",
	"internal",
	"config_invalid",
	"unavailable",
] as const;

const IssueSchema = z.object({
	path: z.string().openapi({ example: "schedules.nightly.cron" }),
	message: z.string(),
	line: z.number().int().optional().openapi({ description: "Where a YAML body wrote the field (1-based)" }),
	column: z.number().int().optional(),
});

export const ErrorSchema = z
	.object({
		error: z.object({
			code: z.enum(ERROR_CODES).openapi({ example: "bad_request" }),
			message: z.string().openapi({ example: "limit: must be at most 200" }),
			details: z
				.looseObject({
					issues: z.array(IssueSchema).optional().openapi({ description: "A 400's (and config_invalid's): each field at fault" }),
					candidates: z
						.array(z.object({ session_id: z.string(), agent: z.string() }))
						.optional()
						.openapi({ description: "GET /v1/sessions/{id}'s 409: sessions the prefix fits" }),
				})
				.optional(),
			request_id: z.string().openapi({
				description: "The request's id, also sent as the X-Request-Id header: quote it to the Worker's operator, who finds the request's log lines by it (Cloudflare's cf-ray when there is one)",
				example: "8f1a2b3c4d5e6f70-LHR",
			}),
		}),
	})
	.openapi("Error");

export const errorResponse = (description: string) => ({
	description,
	content: { "application/json": { schema: ErrorSchema } },
});

/** The error answers every authenticated route can give, for the OpenAPI document. */
export const standardErrors = {
	400: errorResponse("The request was malformed; the message says what was wrong"),
	401: errorResponse("No valid bearer token"),
	403: errorResponse("The token's role is too weak for this route"),
	500: errorResponse("internal: drover failed (the details are in the Worker's logs only); config_invalid: the Worker's own configuration, such as API_TOKENS, is unusable"),
} as const;

export const notFoundResponse = { 404: errorResponse("No such resource") } as const;
/** Every route with a request body declares this: the body was sent without Content-Type: application/json. */
export const unsupportedMediaTypeResponse = { 415: errorResponse("The body is not sent as application/json or a +json type (such as application/merge-patch+json), or is declared in a charset other than UTF-8 (an empty body's charset is not looked at) (code unsupported_media_type)") } as const;
export const unsupportedMediaTypeJsonOrYamlResponse = { 415: errorResponse("The body is sent as neither JSON (application/json or a +json type) nor YAML (application/yaml; application/x-yaml, text/yaml and text/x-yaml are read as it), or is declared in a charset other than UTF-8 (code unsupported_media_type)") } as const;
export const conflictResponse = { 409: errorResponse("The resource is in the wrong state for this") } as const;
/** A route that queues a run: a paused or disabled agent's 409 has its own code, the run not queued. */
export const runConflictResponse = {
	409: errorResponse("agent_paused / agent_disabled: the agent is paused or disabled, and the run was not queued (ask again once it is resumed or enabled); conflict: another wrong state, the message says which"),
} as const;
/** The request body a route takes unless it declares another limit (an agent definition, with room to spare). */
export const MAX_BODY_BYTES = 256 * 1024;
/**
 * The body of a route that carries a prompt (MAX_PROMPT_CHARS, a manual run's, a continue's, a
 * fork's): its worst case, not its usual one. A prompt's character
 * beyond the BMP is 12 bytes as JSON escapes (`\ud83d\ude00`, what Python's json.dumps sends by
 * default), so 100,000 of them are 1.2 MB; the rest is room for the other fields. Under 256 KiB, the
 * documented limit could be reached only in Latin text (50,001 CJK characters escaped were a 413).
 */
export const PROMPT_BODY_BYTES = 1.25 * 1024 * 1024;
/**
 * The body of a route that carries an agent's definition (at most MAX_DEFINITION_BYTES of JSON as
 * stored, in UTF-8): sent with every character past ASCII as \u escapes it is up to three times that
 * (é is 2 bytes and `\u00e9` 6), and the rest is room for indentation. The schema's own limits then
 * answer an oversized definition with a 400 naming its field, not a 413.
 */
export const DEFINITION_BODY_BYTES = 1024 * 1024;

/** A body limit as the documents and messages say it: "256 KiB", "1.25 MiB". */
export function bodySize(bytes: number): string {
	return bytes >= 1024 * 1024 ? `${bytes / 1024 / 1024} MiB` : `${bytes / 1024} KiB`;
}

/** The 413 of a route whose body may be at most `bytes`. */
export const payloadTooLarge = (bytes: number) => ({ 413: errorResponse(`The body is over ${bodySize(bytes)}, this route's limit (code payload_too_large)`) }) as const;
export const payloadTooLargeResponse = payloadTooLarge(MAX_BODY_BYTES);
/** Routes that queue a run: the agent's queue holds at most 100. */
export const queueFullResponse = {
	429: {
		...errorResponse("The agent already has 100 runs queued (code rate_limited); try again after Retry-After"),
		headers: z.object({ "Retry-After": z.string().openapi({ description: "Seconds to wait before asking again", example: String(QUEUE_RETRY_AFTER_SECONDS) }) }),
	},
} as const;

/**
 * A time as answers write it, ISO 8601 in UTC (toISOString): format date-time, so a generated client
 * can read it as a date rather than a bare string. Documentation only: nothing is parsed by it.
 */
export const DateTimeString = z.string().openapi({ format: "date-time", example: "2026-11-30T09:00:00.000Z" });
/** A UTC day, YYYY-MM-DD. */
export const DateString = z.string().openapi({ format: "date", example: "2026-11-30" });

/**
 * A job's status and exit reason in an agent's live state: the agent's object types them as strings
 * (durable-objects/agent), so the enums are stated for the document, which the contract check holds
 * the answers to.
 */
const JobStatusString = z.string().openapi({ enum: [...JOB_STATUSES] });
const ExitReasonString = z.string().nullable().openapi({ enum: [...EXIT_REASONS, null] });

/** A ledger row's status (`GET /v1/agents/:agent/runs`), Hermes' set. */
export const OccurrenceStatusSchema = z.enum(OCCURRENCE_STATUSES).openapi({
	description:
		"Hermes' statuses: claimed (not started yet), running (approval_pending included), completed, failed (a cancelled run too, its error cancelled), skipped (not run: skip_reason says why), unknown (the job ended indeterminate: a tool call's effect unknown)",
});

/** A schedule's newest slot as its agent's ledger has it (Hermes' `cron list` last status). */
export const LastRunSchema = z
	.object({
		scheduled_instant: DateTimeString,
		status: OccurrenceStatusSchema,
		skip_reason: z.string().nullable(),
		job_id: z.string().nullable(),
		finished_at: DateTimeString.nullable(),
		delivery_outcome: DeliveryOutcomeSchema.nullable().openapi({ description: "What became of the run's delivery: a completed run whose answer did not get through reads failed or unknown; null without one (yet)" }),
	})
	.nullable()
	.openapi({ description: "The schedule's newest slot's row in the agent's runs (fired, skipped saying why, or still running); null before its first slot, once its rows are past retention, and in a dry run's plan" });

/** An agent's live state as its Durable Object reports it (paused, running, last job). */
export const PausedSchema = z.object({ at: DateTimeString, reason: z.string().nullable(), by: z.string().nullable() }).nullable();
export const RunningJobSchema = z.object({ id: z.string(), status: JobStatusString, started_at: DateTimeString.nullable(), schedule: z.string().nullable() });
export const LastJobSchema = z
	.object({
		id: z.string(),
		status: JobStatusString,
		exit_reason: ExitReasonString,
		finished_at: DateTimeString.nullable(),
		delivery: DeliveryOutcomeSchema.nullable().openapi({ description: "Its delivery's outcome: a completed job whose answer did not get through reads failed or unknown here, pending while it is retried; null with no delivery" }),
		tool_calls: ToolCallTallySchema.nullable().openapi({ description: "The tool calls it ran and how many failed (the record's tool_calls): a completed job's failed calls are worth a look" }),
	})
	.nullable()
	.openapi({ description: "The newest job that ended (running and queued jobs are listed apart); null if none has" });
