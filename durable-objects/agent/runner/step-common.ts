// What every step of a job shares: its dependencies, the record's writes, and how a job ends.
import type { ModelClient } from "../../../src/agent/contracts.ts";
import { transition, type ExitReason, type JobRecord } from "../../../src/jobs/model.ts";
import { log } from "../../../src/log.ts";
import { redact } from "../../../src/security/redact.ts";
import { putJob } from "../jobs.ts";
import { appendLines, type OutputLine } from "./output.ts";
import { noteFailedRun } from "./persistent.ts";
import { NEVER, toolCallCount, toolCallTally, type JobSetup } from "./session.ts";
import { type LimitHit, type UsedCounts } from "./usage.ts";

/** The final transition's reason of a completed job whose answer stopped at max_tokens (its delivery says so too). */
export const CUT_AT_MAX_TOKENS = "final answer, cut short at max_tokens";

/** A job's summary is its final answer up to this many characters, marked "…" where cut (the output has it whole). */
export const SUMMARY_CHARS = 2000;

/** While a model call is in flight an alarm waits this far ahead: if the object dies, it wakes and resumes. */
export const HEARTBEAT_MS = 30_000;

export interface StepDeps {
	sql: SqlStorage;
	/** Runs `write` as one transaction (the object's transactionSync): if it throws, none of it is kept. */
	transact: <T>(write: () => T) => T;
	env: Env;
	model: ModelClient;
	now: () => number;
	/** Keeps an alarm set ahead while a call is in flight. */
	heartbeat: (at: number) => Promise<void>;
	/** In-flight calls by job, so a cancel in this instance can abort them. */
	inflight: Map<string, AbortController>;
	/** Tool calls in flight by job, so a forced cancel in this instance can cut them off (a plain one lets them finish). */
	toolCalls: Map<string, InflightTool>;
	/** Tells live subscribers that a job has new lines or a new status. */
	notify: (jobId: string) => void;
	/**
	 * Whether the alarm run's budget is spent (see PassBudget): a step then makes no further tool
	 * call, and leaves the turn's others pending for the next alarm run.
	 */
	handOver: () => boolean;
}

/** A tool call in flight in this instance: what a forced cancel aborts, and names in its reason. */
export interface InflightTool {
	controller: AbortController;
	name: string;
	toolUseId: string;
}

/** What the loop should do after a step. */
export type StepResult = "continue" | "wait" | "done";

export function save(deps: StepDeps, job: JobRecord): JobRecord {
	putJob(deps.sql, job, deps.now());
	deps.notify(job.id);
	return job;
}

export function bump(job: JobRecord, patch: Partial<JobRecord>): JobRecord {
	return { ...job, ...patch, revision: job.revision + 1 };
}

export function out(deps: StepDeps, jobId: string, ...lines: OutputLine[]): void {
	appendLines(deps.sql, jobId, lines, deps.now());
	deps.notify(jobId);
}

/** How a job ends when its turns are spent: another turn (or one whose tools' results need it) is past max_turns. */
export function maxTurnsFailure(maxTurns: number): { reason: string; exit_reason: ExitReason; error: { type: string; message: string } } {
	const reason = `max_turns ${maxTurns} reached`;
	return { reason, exit_reason: "max_turns", error: { type: "max_turns", message: reason } };
}

/**
 * A usage limit's failure. The error names the limit alone, so each run that hits it files the same
 * incident (its signature is the error's text) instead of a new one for every amount used.
 */
/** How a job stopped by max_requests at a refusal says it: a follow-up drops the refused answer, as after a refusal. */
export const REFUSED_AT_LIMIT = "refused, and its fallback would have been a request past it";

export function limitFailure(hit: LimitHit): { reason: string; exit_reason: ExitReason; error: { type: string; message: string } } {
	return { reason: hit.reason, exit_reason: "usage_limit", error: { type: "usage_limit", message: `usage limit reached: ${hit.limit}` } };
}

/** The requests and tool calls a job has made, for its usage limits (read when a limit asks). */
export function used(deps: StepDeps, job: JobRecord, setup: JobSetup): () => UsedCounts {
	return () => ({ requests: requestsMade(job, setup), toolCalls: toolCallCount(deps.sql, job.id) });
}

/** The billed model requests a job has made: its turns, and the extra ones (refusals, continuations, aborted tries) its setup counts. */
export const requestsMade = (job: JobRecord, setup: JobSetup): number => (job.usage.num_turns ?? 0) + setup.extraRequests;

/**
 * What a job's model calls came to, for its job.finished line: billed requests (refused and continued
 * ones too: model_calls), every request sent, failed tries included (model_tries: a job whose calls
 * all failed made none of the first and six of the second), and tokens, counted as model.call counts
 * them, the cache's apart (input_tokens is the uncached input alone, as the API reports it).
 */
function modelTotals(job: JobRecord, extraRequests: number, unbilledTries: number) {
	const models = Object.values(job.usage.per_model);
	const calls = (job.usage.num_turns ?? 0) + extraRequests;
	return {
		model_calls: calls,
		model_tries: calls + unbilledTries,
		input_tokens: models.reduce((n, u) => n + u.input_tokens, 0),
		output_tokens: models.reduce((n, u) => n + u.output_tokens, 0),
		cache_creation_input_tokens: models.reduce((n, u) => n + u.cache_creation_input_tokens, 0),
		cache_read_input_tokens: models.reduce((n, u) => n + u.cache_read_input_tokens, 0),
	};
}

/**
 * job.finished for a job that ends before it ever ran (cancelled while queued, a slot passed, its
 * agent deleted): a job's lines end with it whichever way it ended. Nothing was called or spent.
 */
export function logEndedUnstarted(done: JobRecord, reason: string, by?: string): void {
	log.info("job.finished", {
		agent: done.agent,
		job_id: done.id,
		status: done.status,
		exit_reason: done.exit_reason,
		reason,
		...(by !== undefined ? { by } : {}),
		...(done.error ? { error_type: done.error.type, error_message: done.error.message } : {}),
		turns: 0,
	});
}

/** Ends a job with a final status, its exit reason and a closing JSONL line. */
export function finish(
	deps: StepDeps,
	job: JobRecord,
	to: "completed" | "failed" | "cancelled" | "indeterminate",
	opts: { reason: string; exit_reason?: ExitReason; error?: { type: string; message: string; request_id?: string }; summary?: string | null; by?: string },
): JobRecord {
	const done = transition(job, to, {
		reason: opts.reason,
		at: new Date(deps.now()),
		...(opts.exit_reason ? { exit_reason: opts.exit_reason } : {}),
		...(opts.error ? { error: { type: opts.error.type, message: redact(opts.error.message), ...(opts.error.request_id ? { request_id: opts.error.request_id } : {}) } } : {}),
		...(opts.summary !== undefined && opts.summary !== null ? { summary: opts.summary } : {}),
		tool_calls: toolCallTally(deps.sql, job.id),
	});
	// The setup's count of extra requests comes back with the write it already takes (job.finished's
	// model_calls), not from a read of the whole setup row, definition and all, at every job's end.
	// So does who asked for a cancel the job's loop ends it by (cancel_by).
	const ended = deps.sql
		.exec<{ extra_requests: number; cancel_by: string | null; unbilled_tries: number }>(
			"UPDATE job_setup SET next_step_at = ?, approval_expires_at = NULL WHERE job_id = ? RETURNING extra_requests, cancel_by, unbilled_tries",
			NEVER,
			job.id,
		)
		.toArray()[0];
	const extraRequests = ended?.extra_requests ?? 0;
	const by = to === "cancelled" ? (opts.by ?? ended?.cancel_by ?? null) : null;
	if (opts.error) out(deps, job.id, { type: "error", message: redact(opts.error.message), code: opts.error.type, ...(opts.error.request_id ? { request_id: opts.error.request_id } : {}) });
	out(deps, job.id, { type: "system", subtype: "result", status: to, exit_reason: done.exit_reason, content: opts.reason });
	// A job that failed or ended indeterminate is something to look at: warn, where a level filter finds it.
	(to === "failed" || to === "indeterminate" ? log.warn : log.info)("job.finished", {
		agent: job.agent,
		job_id: job.id,
		status: to,
		exit_reason: done.exit_reason,
		reason: opts.reason,
		...(by !== null ? { by } : {}),
		...(opts.error ? { error_type: opts.error.type, error_message: redact(opts.error.message) } : {}),
		turns: done.usage.num_turns,
		...modelTotals(done, extraRequests, ended?.unbilled_tries ?? 0),
		tool_calls: done.tool_calls,
		cost_usd: done.usage.total_cost_usd,
	});
	if (to === "failed" && opts.error) noteFailedRun(deps.sql, done, { type: opts.error.type, message: redact(opts.error.message) });
	return save(deps, done);
}
