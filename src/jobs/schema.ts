import { z } from "@hono/zod-openapi";
import { JobIdSchema } from "./ids.ts";

export const JOB_STATUSES = [
	"pending",
	"running",
	"approval_pending",
	"completed",
	"failed",
	"cancelled",
	"indeterminate",
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const FINAL_STATUSES = ["completed", "failed", "cancelled", "indeterminate"] as const satisfies readonly JobStatus[];
export type FinalStatus = (typeof FINAL_STATUSES)[number];

export const EXIT_REASONS = ["success", "error", "timeout", "cancelled", "max_turns", "usage_limit"] as const;
export type ExitReason = (typeof EXIT_REASONS)[number];

export const TRIGGER_TYPES = ["schedule", "manual", "webhook", "fork", "continue"] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

export const DISPATCH_KINDS = ["on_time", "late", "catch_up", "manual"] as const;
export type DispatchKind = (typeof DISPATCH_KINDS)[number];
/** A job's dispatch: only a schedule dispatches one ("manual" is the runs ledger's word for the rest). */
export type JobDispatch = Exclude<DispatchKind, "manual">;

/** `pending`: the first attempt did not settle it, and it is being retried; the others are final. */
export const DELIVERY_OUTCOMES = ["delivered", "failed", "suppressed", "unknown", "pending"] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

/** A runs ledger row's status (Hermes' set): what became of a slot or a manual run. */
export const OCCURRENCE_STATUSES = ["claimed", "running", "completed", "failed", "skipped", "unknown"] as const;
export type OccurrenceStatus = (typeof OCCURRENCE_STATUSES)[number];

/** deputy keeps the newest 128 transitions, so a job bouncing through approvals cannot grow without bound. */
export const TRANSITIONS_CAP = 128;

export const JobStatusSchema = z.enum(JOB_STATUSES);
export const ExitReasonSchema = z.enum(EXIT_REASONS);
export const TriggerTypeSchema = z.enum(TRIGGER_TYPES);
export const DispatchKindSchema = z.enum(DISPATCH_KINDS);
export const DeliveryOutcomeSchema = z.enum(DELIVERY_OUTCOMES);

const Timestamp = z.iso.datetime().openapi({ example: "2025-01-15T09:00:00.000Z" });
const Count = z.number().int().nonnegative();

export const ModelUsageSchema = z.object({
	input_tokens: Count,
	output_tokens: Count,
	cache_creation_input_tokens: Count,
	cache_read_input_tokens: Count,
});
export type ModelUsage = z.infer<typeof ModelUsageSchema>;

export const JobUsageSchema = z.object({
	per_model: z.record(z.string(), ModelUsageSchema),
	num_turns: Count,
	total_cost_usd: z.number().nonnegative().nullable(),
});
export type JobUsage = z.infer<typeof JobUsageSchema>;

export const UsageLimitsSchema = z.object({
	max_requests: Count.optional(),
	max_tool_calls: Count.optional(),
	max_input_tokens: Count.optional(),
	max_output_tokens: Count.optional(),
	max_cost_usd: z.number().nonnegative().optional(),
});
export type UsageLimits = z.infer<typeof UsageLimitsSchema>;

export const TransitionSchema = z.object({
	from: JobStatusSchema,
	to: JobStatusSchema,
	at: Timestamp,
	reason: z.string(),
});
export type Transition = z.infer<typeof TransitionSchema>;

export const JobErrorSchema = z.object({
	type: z.string(),
	message: z.string(),
	request_id: z.string().optional().openapi({
		description:
			"A failed model call's: the Messages API's id (its `request-id` header) for the answer the message reports, what Anthropic's support asks for; absent where none came (a network failure) and for other errors. Kept out of `message`, which is the incident's signature",
	}),
});
export type JobError = z.infer<typeof JobErrorSchema>;

export const PendingApprovalSchema = z.object({
	tool_use_id: z.string(),
	tool_name: z.string(),
	input: z.record(z.string(), z.unknown()),
	requested_at: Timestamp,
	expires_at: Timestamp.optional().openapi({
		description:
			"When the call counts as denied if no one decides it: its agent's approval_timeout after it was asked, or the job's timeout where that comes first (the job then fails `timeout`). Absent in records from before the field",
	}),
});
export type PendingApproval = z.infer<typeof PendingApprovalSchema>;

export const DeliverySchema = z.object({
	target: z.string(),
	outcome: DeliveryOutcomeSchema,
	error: z
		.string()
		.optional()
		.openapi({
			description:
				"Why a delivery that did not get through (failed, or unknown) did not, as its last attempt met it (`delivery target answered 500`, `delivery request failed: …`, a secret not set), with how many attempts were made; while one is retried (pending), what its last attempt met, which attempt that was and when the next goes (`delivery target answered 503 (asked to wait 120 s); attempt 1 of 6, the next at <ISO>`); absent otherwise, and in records from before the field",
		}),
});
export type Delivery = z.infer<typeof DeliverySchema>;

export const ToolCallTallySchema = z
	.object({
		made: z.number().int().nonnegative().openapi({ description: "Calls that ran (denied ones and ones never reached did not)" }),
		failed: z.number().int().nonnegative().openapi({ description: "Of those, the ones whose result told the model they failed, or that were cut off, their effect unknown (by a forced cancel, or by the run's end)" }),
	})
	.openapi("ToolCallTally");
export type ToolCallTally = z.infer<typeof ToolCallTallySchema>;

// Unnamed, so the summary can be picked from it without inheriting the JobRecord component name.
const JobRecordObject = z.object({
	// herdctl's job metadata, field for field
	id: JobIdSchema,
	agent: z.string(),
	schedule: z.string().nullable(),
	trigger_type: TriggerTypeSchema,
	status: JobStatusSchema,
	exit_reason: ExitReasonSchema.nullable(),
	session_id: z.string().nullable().openapi({
		description:
			"The session the job runs in (GET /v1/sessions/{id}): a continue's is its source's from the moment it is queued; any other job's is set as it starts (a new ses-<its id>, or the agent's persistent session it carries on), null while it is queued",
	}),
	forked_from: JobIdSchema.nullable(),
	started_at: Timestamp.nullable(),
	finished_at: Timestamp.nullable(),
	duration_seconds: z.number().nonnegative().nullable().openapi({
		description:
			"Seconds from started_at to finished_at, to the millisecond; for a job that ended before it started (cancelled or failed while queued) from created_at, the time it waited; null until the job ends",
	}),
	prompt: z.string().nullable(),
	summary: z.string().nullable().openapi({ description: "The final answer, up to 2,000 characters, ending in … where cut (the output holds it whole)" }),
	output_file: z.string().nullable(),
	usage: JobUsageSchema,
	// drover's additions
	created_at: Timestamp,
	revision: z.number().int().positive(),
	transitions: z.array(TransitionSchema).max(TRANSITIONS_CAP),
	scheduled_instant: Timestamp.nullable(),
	dispatch: DispatchKindSchema.exclude(["manual"])
		.nullable()
		.openapi({ description: "How a scheduled job's slot was taken (on_time, late, catch_up); null for a run not from a schedule" }),
	usage_limits: UsageLimitsSchema.nullable(),
	error: JobErrorSchema.nullable(),
	pending_approval: PendingApprovalSchema.nullable(),
	delivery: DeliverySchema.nullable(),
	definition_revision: z.string().openapi({ description: "Hash of the agent's configuration when the job was created" }),
	owner: z.string().nullable(),
	rate_limited_until: Timestamp.nullable().openapi({
		description:
			"A running job waiting out a rate limit on every key of every model it may use: when its next model call is made (its JSONL says so in a rate_limited line); null otherwise, and in records from before the field",
	}),
	cancel_requested: z.string().nullable().openapi({
		description:
			"A cancel waiting for a tool call in flight to finish (its effect is recorded, not cut off): who asked and why, as its transition will say; null otherwise",
	}),
	output_log: z.string().nullable().openapi({
		description:
			"The R2 key of the job's plain-text log (herdctl's output.log), kept when its schedule or agent sets output_to_file and written when it ends (GET /v1/jobs/{id}/output.log); null otherwise, and in records from before the field",
	}),
	continued_from: JobIdSchema.nullable().openapi({
		description:
			"The job whose conversation this one carries on, as forked_from names a fork's source: a continue's source (trigger_type continue, set as it is queued), or the run a persistent session's run (manual, schedule or webhook, session.mode persistent) carried the session on from (set as it starts); null otherwise (a run that started a session), and in records from before the field",
	}),
	tool_calls: ToolCallTallySchema.nullable().openapi({
		description:
			"How many tool calls the job ran and how many of those failed, counted as it ends (GET /v1/jobs/{id}/tool-calls lists them); null while it runs, and in records from before the field. completed says the run ended with a final answer, not that every call it made succeeded",
	}),
});

export const JobRecordSchema = JobRecordObject.openapi("JobRecord");
export type JobRecord = z.infer<typeof JobRecordSchema>;

/** A hook's call for a finished job, as GET /v1/jobs/:id shows it (not part of the stored record). */
export const HookCallSchema = z
	.object({
		hook: z.enum(["after_run", "on_error"]).openapi({ description: "The hooks list it is of" }),
		url_secret: z.string().openapi({ description: "The secret holding its URL (its name; the URL is never shown)" }),
		outcome: z.enum(["pending", "delivered", "failed", "unknown"]).openapi({
			description:
				"delivered: the target answered 2xx; failed: given up (its attempts spent, refused outright, or its secret not set or not a URL); unknown: given up after an attempt that may have arrived (the last timed out or failed in transit, or a refusal followed one that did), as a delivery's outcome is; either files its hook's incident, unless a call of that hook for a job that ended later got through; pending: not sent yet, waiting for the job's delivery (`waiting_for`), or retried",
		}),
		attempts: Count.openapi({ description: "Calls made so far" }),
		error: z.string().optional().openapi({ description: "What its last attempt met (`hook target answered 404`, `hook request failed: …`, a secret not set); absent once delivered or before a first attempt" }),
		next_attempt_at: Timestamp.optional().openapi({ description: "When a retried call goes next" }),
		waiting_for: z.enum(["delivery"]).optional().openapi({
			description:
				"Why a pending call has not been sent: `delivery`, a completed job's hook call held until the job's own delivery has an outcome (at most its retries), so that the record it carries says whether the answer got through; absent once it is sent, and for any other call",
		}),
	})
	.openapi("HookCall");
export type HookCall = z.infer<typeof HookCallSchema>;

/** GET /v1/jobs/:id: the record, with its hook calls. */
export const JobViewSchema = JobRecordObject.extend({
	hooks: z.array(HookCallSchema).openapi({
		description: "Its agent's hook calls (after_run, on_error) set off by its end, in the hooks' order: empty while it runs, for an agent without hooks, or where none of its hooks' events is the job's status",
	}),
}).openapi("JobView");
export type JobView = z.infer<typeof JobViewSchema>;

export const JobSummarySchema = JobRecordObject.pick({
	id: true,
	agent: true,
	schedule: true,
	trigger_type: true,
	status: true,
	exit_reason: true,
	dispatch: true,
	scheduled_instant: true,
	created_at: true,
	started_at: true,
	finished_at: true,
	duration_seconds: true,
	summary: true,
	revision: true,
	tool_calls: true,
})
	.extend({
		summary: z.string().nullable().openapi({ description: "The final answer's first 500 characters, ending in … where cut (GET /v1/jobs/{id} has 2,000, its output the whole); a job indexed before this was so keeps 2,000 until it is pruned" }),
		error: JobErrorSchema.omit({ request_id: true }).nullable().openapi({
			description:
				"What went wrong, where something ended the job (its record's error: a failure, a timeout, a tool call left indeterminate, a scheduled run whose slot passed), the message up to 500 characters, ending in … where cut (GET /v1/jobs/{id} holds it whole); null otherwise, and for a job indexed before the field until it next changes",
		}),
	})
	.openapi("JobSummary");
export type JobSummary = z.infer<typeof JobSummarySchema>;
