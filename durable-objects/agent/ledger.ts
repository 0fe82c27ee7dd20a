import type { DeliveryOutcome, DispatchKind, JobDispatch, JobStatus, OccurrenceStatus } from "../../src/jobs/model.ts";
import { isoOrNull } from "../../src/shared/iso-time.ts";

export type OccurrenceSource = "cron" | "manual" | "webhook";

interface OccurrenceRow {
	id: string;
	schedule: string | null;
	source: string;
	scheduled_instant: number | null;
	dispatch: string;
	claimed_at: number;
	started_at: number | null;
	finished_at: number | null;
	status: string;
	skip_reason: string | null;
	skipped_count: number | null;
	skipped_from: number | null;
	job_id: string | null;
	error: string | null;
	/** Read from the row's job (see listOccurrences). */
	delivery_outcome: string | null;
	[key: string]: SqlStorageValue;
}

/** A ledger row as the API shows it (`GET /v1/agents/:agent/runs`). */
export interface Occurrence {
	id: string;
	schedule: string | null;
	source: OccurrenceSource;
	scheduled_instant: string | null;
	dispatch: DispatchKind;
	claimed_at: string;
	started_at: string | null;
	finished_at: string | null;
	status: OccurrenceStatus;
	skip_reason: string | null;
	/** For a skipped row that stands for a run of missed slots: how many, from which instant. */
	skipped_count: number | null;
	skipped_from: string | null;
	job_id: string | null;
	error: string | null;
	/** Hermes' execution-row field: what became of the run's delivery; null without one (yet). */
	delivery_outcome: DeliveryOutcome | null;
}

function toOccurrence(row: OccurrenceRow): Occurrence {
	return {
		id: row.id,
		schedule: row.schedule,
		source: row.source as OccurrenceSource,
		scheduled_instant: isoOrNull(row.scheduled_instant),
		dispatch: row.dispatch as DispatchKind,
		claimed_at: new Date(row.claimed_at).toISOString(),
		started_at: isoOrNull(row.started_at),
		finished_at: isoOrNull(row.finished_at),
		status: row.status as OccurrenceStatus,
		skip_reason: row.skip_reason,
		skipped_count: row.skipped_count,
		skipped_from: isoOrNull(row.skipped_from),
		job_id: row.job_id,
		error: row.error,
		delivery_outcome: row.delivery_outcome as DeliveryOutcome | null,
	};
}

/**
 * A ledger row's id: its instant (the slot's, or the claim's for a manual run) as 12 hex digits, then
 * 20 random ones. The ledger lists newest claim first and breaks ties by id, so rows claimed in one
 * tick (another schedule's slot, a catch-up, a range of skipped slots) come newest slot first.
 */
function newOccurrenceId(instant: number): string {
	const random = crypto.randomUUID().replace(/-/g, "").slice(0, 20);
	return `occ-${Math.max(0, Math.floor(instant)).toString(16).padStart(12, "0")}${random}`;
}

export interface NewOccurrence {
	schedule: string | null;
	source: OccurrenceSource;
	scheduledInstant: number | null;
	dispatch: DispatchKind;
	claimedAt: number;
	status: "claimed" | "skipped";
	jobId?: string | null;
	skipReason?: string | null;
	skippedCount?: number | null;
	skippedFrom?: number | null;
	/** A manual or webhook run on the agent's default prompt: its length in the job's prompt. */
	defaultPromptChars?: number | null;
}

/**
 * Inserts a ledger row unless its occurrence (schedule, instant) already has one. Returns the new
 * row's id, or null when the occurrence was already claimed: that is what makes a claim idempotent.
 */
export function insertOccurrence(sql: SqlStorage, o: NewOccurrence): string | null {
	const id = newOccurrenceId(o.scheduledInstant ?? o.claimedAt);
	const cursor = sql.exec(
		`INSERT INTO occurrences (id, schedule, source, scheduled_instant, dispatch, claimed_at, status, job_id,
		   skip_reason, skipped_count, skipped_from, default_prompt_chars)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		 ON CONFLICT (schedule, scheduled_instant) WHERE scheduled_instant IS NOT NULL DO NOTHING`,
		id,
		o.schedule,
		o.source,
		o.scheduledInstant,
		o.dispatch,
		o.claimedAt,
		o.status,
		o.jobId ?? null,
		o.skipReason ?? null,
		o.skippedCount ?? null,
		o.skippedFrom ?? null,
		o.defaultPromptChars ?? null,
	);
	return cursor.rowsWritten > 0 ? id : null;
}

/**
 * Moves a claimed run's ledger row to its schedule's new name. False, the row left as it was, when
 * the new name already has a row for that instant (a schedule of that name removed before).
 */
export function renameOccurrence(sql: SqlStorage, jobId: string, schedule: string): boolean {
	return sql.exec("UPDATE OR IGNORE occurrences SET schedule = ? WHERE job_id = ?", schedule, jobId).rowsWritten > 0;
}

/**
 * The error type of a scheduled run's job cancelled at its start because it was held past its slot's
 * grace window (see held-claims.ts): its slot was not run.
 */
export const SLOT_PASSED = "slot_passed";

const STATUS_FOR_JOB: Partial<Record<JobStatus, OccurrenceStatus>> = {
	running: "running",
	completed: "completed",
	failed: "failed",
	cancelled: "failed",
	// The run stopped with a side effect unaccounted for: never reported as success, never re-run.
	indeterminate: "unknown",
};

/**
 * Keeps a job's ledger row in step with the job. A scheduled run not run because it was held past
 * its slot's grace window (its job cancelled with a `slot_passed` error, see held-claims.ts) is a
 * slot not run, as a tick's skip is: its row is `skipped` with the reason, not `failed`. A run
 * started late says so in its row's dispatch as in its job's.
 */
export function syncOccurrenceWithJob(
	sql: SqlStorage,
	job: {
		id: string;
		status: JobStatus;
		started_at: string | null;
		finished_at: string | null;
		error: { type?: string; message: string } | null;
		dispatch?: JobDispatch | null;
	},
): void {
	const notRun = job.status === "cancelled" && job.error?.type === SLOT_PASSED;
	const status = notRun ? "skipped" : STATUS_FOR_JOB[job.status];
	if (!status) return;
	const error = notRun ? null : job.status === "cancelled" ? "cancelled" : (job.error?.message ?? null);
	const skipReason = notRun ? job.error!.message : null;
	const startedAt = job.started_at === null ? null : Date.parse(job.started_at);
	const finishedAt = job.finished_at === null ? null : Date.parse(job.finished_at);
	// A manual run's job has no dispatch: its row's stays "manual".
	const dispatch = job.dispatch ?? null;
	// Most revisions of a job (usage, a turn) change none of this; a no-op update is still a billed row.
	sql.exec(
		`UPDATE occurrences SET status = ?1, started_at = ?2, finished_at = ?3, error = ?4, skip_reason = ?6, dispatch = coalesce(?7, dispatch)
		 WHERE job_id = ?5 AND (status IS NOT ?1 OR started_at IS NOT ?2 OR finished_at IS NOT ?3 OR error IS NOT ?4
		   OR skip_reason IS NOT ?6 OR dispatch IS NOT coalesce(?7, dispatch))`,
		status,
		startedAt,
		finishedAt,
		error,
		job.id,
		skipReason,
		dispatch,
	);
}

/**
 * Ledger rows with their job's delivery outcome, read with them: the job record holds it, and copying
 * it to the row would be another billed write per delivery.
 */
const SELECT_WITH_DELIVERY = "SELECT o.*, json_extract(j.record, '$.delivery.outcome') AS delivery_outcome FROM occurrences o LEFT JOIN jobs j ON j.id = o.job_id";

/** A page of the ledger, newest claim first. */
export function listOccurrences(sql: SqlStorage, limit: number, before?: { claimedAt: number; id: string }): Occurrence[] {
	const rows = before
		? sql.exec<OccurrenceRow>(`${SELECT_WITH_DELIVERY} WHERE (o.claimed_at, o.id) < (?, ?) ORDER BY o.claimed_at DESC, o.id DESC LIMIT ?`, before.claimedAt, before.id, limit)
		: sql.exec<OccurrenceRow>(`${SELECT_WITH_DELIVERY} ORDER BY o.claimed_at DESC, o.id DESC LIMIT ?`, limit);
	return rows.toArray().map(toOccurrence);
}

/**
 * Each named schedule's newest slot's row (fired, skipped or still running), as Hermes' `cron list`
 * shows a job's last status; a schedule without one (none due yet, or all past retention) is absent.
 * One indexed row a schedule (occurrences_identity), so an agent view stays cheap for a fleet page.
 */
export function lastRuns(sql: SqlStorage, schedules: readonly string[]): Record<string, Occurrence> {
	const out: Record<string, Occurrence> = {};
	for (const schedule of schedules) {
		const row = sql
			.exec<OccurrenceRow>(`${SELECT_WITH_DELIVERY} WHERE o.schedule = ? AND o.scheduled_instant IS NOT NULL ORDER BY o.scheduled_instant DESC LIMIT 1`, schedule)
			.toArray()[0];
		if (row) out[schedule] = toOccurrence(row);
	}
	return out;
}
