import { FINAL_STATUSES, isFinal, type JobRecord, type JobStatus } from "../../src/jobs/model.ts";
import { jsonMemo } from "../../src/shared/json-memo.ts";
import { syncOccurrenceWithJob } from "./ledger.ts";
import { queueForIndex } from "./outbox.ts";

/** A row of AgentDO's `jobs` table. The record column is the whole JobRecord as JSON. */
interface JobRow {
	id: string;
	status: string;
	created_at: number;
	revision: number;
	record: string;
	[key: string]: SqlStorageValue;
}

// A step reads the same record several times between saves: parsed once per revision's text. A
// record stored before continued_from, cancel_requested, rate_limited_until, output_log or tool_calls
// existed reads with them null, as the API documents.
const parseRecord = jsonMemo<JobRecord>({
	revive: (r) =>
		r.continued_from === undefined || r.cancel_requested === undefined || r.rate_limited_until === undefined || r.output_log === undefined || r.tool_calls === undefined
			? {
					...r,
					continued_from: r.continued_from ?? null,
					cancel_requested: r.cancel_requested ?? null,
					rate_limited_until: r.rate_limited_until ?? null,
					output_log: r.output_log ?? null,
					tool_calls: r.tool_calls ?? null,
				}
			: r,
});
const toJobRecord = (row: JobRow): JobRecord => parseRecord(row.record);

/**
 * A new job id this agent has not used: `draw`'s (the shard's dealt ids, see JobIdPool), drawn again
 * if this agent already holds it. Dealt ids are never dealt twice, but an id drawn at random before
 * this release, or when no shard could be asked, may be; putJob would then keep the older record
 * and drop the new job.
 */
export function freshJobId(sql: SqlStorage, now: number, draw: (now: number) => string): string {
	for (;;) {
		const id = draw(now);
		if (sql.exec("SELECT 1 FROM jobs WHERE id = ?", id).toArray().length === 0) return id;
	}
}

export function getJob(sql: SqlStorage, id: string): JobRecord | null {
	const row = sql.exec<JobRow>("SELECT * FROM jobs WHERE id = ?", id).toArray()[0];
	return row ? toJobRecord(row) : null;
}

/**
 * Stores a job record if it is newer than the one held (revisions never go backwards), keeps its
 * ledger row in step, and queues it for the D1 index, all in the caller's synchronous section so
 * the three can never disagree. Returns whether anything was written.
 */
export function putJob(sql: SqlStorage, job: JobRecord, now: number): boolean {
	const written = sql.exec(
		`INSERT INTO jobs (id, status, created_at, revision, record) VALUES (?, ?, ?, ?, ?)
		 ON CONFLICT (id) DO UPDATE SET status = excluded.status, revision = excluded.revision, record = excluded.record
		 WHERE excluded.revision > jobs.revision`,
		job.id,
		job.status,
		Date.parse(job.created_at),
		job.revision,
		JSON.stringify(job),
	).rowsWritten;
	if (written === 0) return false;
	syncOccurrenceWithJob(sql, job);
	queueForIndex(sql, job.id, now);
	// Reaching a final status sets off delivery, hooks and incidents, queued on the next alarm.
	if (isFinal(job.status)) sql.exec("INSERT OR IGNORE INTO final_effects (job_id, queued_at) VALUES (?, ?)", job.id, now);
	return true;
}

const ACTIVE: readonly JobStatus[] = ["running", "approval_pending"];

/** Jobs holding a concurrency slot (running or waiting on a human) and jobs queued to start. */
export function jobCounts(sql: SqlStorage): { active: number; pending: number } {
	const rows = sql.exec<{ status: string; n: number }>(
		"SELECT status, count(*) AS n FROM jobs WHERE status IN ('pending', 'running', 'approval_pending') GROUP BY status",
	);
	let active = 0;
	let pending = 0;
	for (const r of rows) {
		if (r.status === "pending") pending += r.n;
		else if ((ACTIVE as readonly string[]).includes(r.status)) active += r.n;
	}
	return { active, pending };
}

export function pendingJobs(sql: SqlStorage, limit: number): JobRecord[] {
	return sql
		// `+?` keeps the cached plan: see schema.ts.
		.exec<JobRow>("SELECT * FROM jobs WHERE status = 'pending' ORDER BY created_at, id LIMIT +?", limit)
		.toArray()
		.map(toJobRecord);
}

/** The runs of `schedule` claimed and not started yet: held (a pause, capacity) or waiting out their start spread. */
export function pendingJobsOf(sql: SqlStorage, schedule: string): JobRecord[] {
	return sql.exec<JobRow>("SELECT * FROM jobs WHERE status = 'pending' AND json_extract(record, '$.schedule') = ?", schedule).toArray().map(toJobRecord);
}

export function jobsWithStatus(sql: SqlStorage, statuses: readonly JobStatus[], limit = 100): JobRecord[] {
	const marks = statuses.map(() => "?").join(", ");
	return sql
		.exec<JobRow>(`SELECT * FROM jobs WHERE status IN (${marks}) ORDER BY created_at DESC, id DESC LIMIT +?`, ...statuses, limit)
		.toArray()
		.map(toJobRecord);
}

/**
 * The newest job that ended: an agent's last outcome, beside the running and queued jobs it is
 * listed with (the newest job of all would be one of those whenever the agent is busy).
 */
export function lastFinishedJob(sql: SqlStorage): JobRecord | null {
	// `+status`: walk jobs_by_created from the newest and stop at the first that ended (past at most
	// the running and queued few), rather than take every ended job from jobs_by_status and sort them.
	const marks = FINAL_STATUSES.map(() => "?").join(", ");
	const row = sql.exec<JobRow>(`SELECT * FROM jobs WHERE +status IN (${marks}) ORDER BY created_at DESC, id DESC LIMIT 1`, ...FINAL_STATUSES).toArray()[0];
	return row ? toJobRecord(row) : null;
}
