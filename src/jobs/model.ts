import { drawnJobId } from "./id-blocks.ts";
import { isJobId } from "./ids.ts";
import {
	FINAL_STATUSES,
	TRANSITIONS_CAP,
	type ExitReason,
	type FinalStatus,
	type JobDispatch,
	type JobError,
	type JobRecord,
	type JobStatus,
	type PendingApproval,
	type ToolCallTally,
	type TriggerType,
	type UsageLimits,
} from "./schema.ts";

// One import for callers: the model, its schemas and its ids.
export * from "./ids.ts";
export * from "./schema.ts";

const NEXT: Record<JobStatus, readonly JobStatus[]> = {
	pending: ["running", "cancelled", "failed"],
	running: ["completed", "failed", "cancelled", "approval_pending", "indeterminate"],
	approval_pending: ["running", "cancelled", "failed"],
	completed: [],
	failed: [],
	cancelled: [],
	indeterminate: [],
};

// The first entry is the default when the caller gives none.
const EXIT_REASONS_FOR: Record<FinalStatus, readonly ExitReason[]> = {
	completed: ["success"],
	cancelled: ["cancelled"],
	indeterminate: ["error"],
	failed: ["error", "timeout", "max_turns", "usage_limit"],
};

export function isFinal(status: JobStatus): status is FinalStatus {
	return (FINAL_STATUSES as readonly JobStatus[]).includes(status);
}

export function canTransition(from: JobStatus, to: JobStatus): boolean {
	return NEXT[from].includes(to);
}

export interface CreateJobInput {
	agent: string;
	trigger_type: TriggerType;
	definition_revision: string;
	/** Given when the id had to be known before the record (an idempotent claim); otherwise generated. */
	id?: string;
	schedule?: string | null;
	prompt?: string | null;
	session_id?: string | null;
	forked_from?: string | null;
	continued_from?: string | null;
	scheduled_instant?: Date | null;
	dispatch?: JobDispatch | null;
	usage_limits?: UsageLimits | null;
	owner?: string | null;
}

/**
 * A job record asked to break the lifecycle's rules: drover's own mistake, never a caller's (the
 * API refuses what a caller may get wrong before a record is touched). Not one of the public error
 * classes: thrown inside an agent's object, it is logged there and answered as an internal error.
 */
export class JobInvariantError extends Error {
	override readonly name = "JobInvariantError";
}

export function createJob(input: CreateJobInput, now: Date): JobRecord {
	if (input.id !== undefined && !isJobId(input.id)) throw new JobInvariantError(`not a job id: ${JSON.stringify(input.id)}`);
	for (const field of ["forked_from", "continued_from"] as const) {
		const from = input[field];
		if (from != null && !isJobId(from)) throw new JobInvariantError(`${field} is not a job id: ${JSON.stringify(from)}`);
	}
	return {
		id: input.id ?? drawnJobId(now.getTime()),
		agent: input.agent,
		schedule: input.schedule ?? null,
		trigger_type: input.trigger_type,
		status: "pending",
		exit_reason: null,
		session_id: input.session_id ?? null,
		forked_from: input.forked_from ?? null,
		continued_from: input.continued_from ?? null,
		cancel_requested: null,
		rate_limited_until: null,
		started_at: null,
		finished_at: null,
		duration_seconds: null,
		prompt: input.prompt ?? null,
		summary: null,
		output_file: null,
		output_log: null,
		usage: { per_model: {}, num_turns: 0, total_cost_usd: null },
		created_at: now.toISOString(),
		revision: 1,
		transitions: [],
		scheduled_instant: input.scheduled_instant?.toISOString() ?? null,
		dispatch: input.dispatch ?? null,
		usage_limits: input.usage_limits ?? null,
		error: null,
		pending_approval: null,
		delivery: null,
		definition_revision: input.definition_revision,
		owner: input.owner ?? null,
		tool_calls: null,
	};
}

export interface TransitionOptions {
	reason: string;
	at: Date;
	/** Only for a final status, and only one that status allows (see EXIT_REASONS_FOR). */
	exit_reason?: ExitReason;
	/** The error that ended the job: only for failed, cancelled or indeterminate. */
	error?: JobError;
	summary?: string;
	/** The tool call awaiting a decision: only when entering approval_pending. */
	pending_approval?: PendingApproval;
	/** The tool calls the job ran, counted as it ends; a job ending before it started ran none. */
	tool_calls?: ToolCallTally;
}

/**
 * The only way a job's status changes. Returns a new record; the input is never modified, so a
 * refused transition (a JobInvariantError) leaves it as it was.
 */
export function transition(job: JobRecord, to: JobStatus, options: TransitionOptions): JobRecord {
	const from = job.status;
	if (!canTransition(from, to)) {
		throw new JobInvariantError(`job ${job.id} cannot go from ${from} to ${to}: ${whyRefused(from, to)}`);
	}
	if (options.reason.trim() === "") throw new JobInvariantError("a transition needs a reason");
	if (options.pending_approval !== undefined && to !== "approval_pending") {
		throw new JobInvariantError(`pending_approval is only recorded when entering approval_pending, not ${to}`);
	}
	if (options.error !== undefined && (!isFinal(to) || to === "completed")) {
		throw new JobInvariantError(`an error is only recorded when a job ends unsuccessfully, not on ${to}`);
	}

	const at = options.at.toISOString();
	const next: JobRecord = {
		...job,
		status: to,
		revision: job.revision + 1,
		transitions: [...job.transitions, { from, to, at, reason: options.reason }].slice(-TRANSITIONS_CAP),
		started_at: to === "running" && job.started_at === null ? at : job.started_at,
		// A decision (or the job ending) settles the request; a stale one would invite a second decision.
		pending_approval: to === "approval_pending" ? (options.pending_approval ?? job.pending_approval) : null,
	};
	if (options.summary !== undefined) next.summary = options.summary;

	if (isFinal(to)) {
		next.exit_reason = exitReasonFor(job.id, to, options.exit_reason);
		next.finished_at = at;
		// A job cancelled or failed before it ran is timed from its creation. Date has millisecond
		// precision, so the difference in seconds has at most 3 decimals; a clock that stepped back
		// must not give a negative duration.
		const start = Date.parse(job.started_at ?? job.created_at);
		next.duration_seconds = Math.max(0, options.at.getTime() - start) / 1000;
		if (options.error !== undefined) next.error = options.error;
		// A job that ran without its count given is not said to have made none.
		next.tool_calls = options.tool_calls ?? (job.started_at === null ? { made: 0, failed: 0 } : null);
	} else if (options.exit_reason !== undefined || options.tool_calls !== undefined) {
		throw new JobInvariantError(`an exit reason or tool call count is only recorded when a job ends, not on ${to}`);
	}
	return next;
}

function whyRefused(from: JobStatus, to: JobStatus): string {
	if (isFinal(from)) return `${from} is final`;
	if (from === to) return `it is already ${from}`;
	return `${from} can only go to ${NEXT[from].join(", ")}`;
}

function exitReasonFor(id: string, to: FinalStatus, given: ExitReason | undefined): ExitReason {
	const allowed = EXIT_REASONS_FOR[to];
	if (given === undefined) return allowed[0] as ExitReason;
	if (!allowed.includes(given)) {
		throw new JobInvariantError(`job ${id} cannot end ${to} with exit reason ${given}: ${to} allows ${allowed.join(", ")}`);
	}
	return given;
}
