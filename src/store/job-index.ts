import { clip } from "../shared/clip.ts";
import { cursorScope, decodeCursor, encodeCursor, type CursorKey } from "../shared/cursor.ts";
import { isFinal, JOB_STATUSES, type ExitReason, type JobRecord, type JobStatus, type JobSummary, type JobDispatch, type TriggerType, type JobError } from "../jobs/model.ts";
import { prefixRange } from "../jobs/session-ids.ts";
import { FIRST_FINAL } from "./first-final.ts";
import { usageStatement } from "./usage.ts";

/** A row of the D1 `jobs` table, as D1 returns it. */
interface JobIndexRow {
	id: string;
	agent: string;
	schedule: string | null;
	trigger_type: string;
	status: string;
	exit_reason: string | null;
	dispatch: string | null;
	scheduled_instant: string | null;
	created_at: number;
	started_at: string | null;
	finished_at: string | null;
	duration_seconds: number | null;
	summary: string | null;
	revision: number;
	updated_at: number;
	tool_calls_made: number | null;
	tool_calls_failed: number | null;
	// Absent (not null) on a D1 without migration 0015.
	error_type?: string | null;
	error_message?: string | null;
}

function toJobSummary(row: JobIndexRow): JobSummary {
	return {
		id: row.id,
		agent: row.agent,
		schedule: row.schedule,
		trigger_type: row.trigger_type as TriggerType,
		status: row.status as JobStatus,
		exit_reason: row.exit_reason as ExitReason | null,
		dispatch: row.dispatch as JobDispatch | null,
		scheduled_instant: row.scheduled_instant,
		created_at: new Date(row.created_at).toISOString(),
		started_at: row.started_at,
		finished_at: row.finished_at,
		duration_seconds: row.duration_seconds,
		summary: row.summary,
		revision: row.revision,
		tool_calls: row.tool_calls_made === null || row.tool_calls_failed === null ? null : { made: row.tool_calls_made, failed: row.tool_calls_failed },
		error: row.error_type == null || row.error_message == null ? null : { type: row.error_type, message: row.error_message },
	};
}

export interface JobFilters {
	agent?: string | undefined;
	status?: JobStatus | undefined;
	trigger_type?: TriggerType | undefined;
	/** Inclusive lower bound on creation time, ms since the epoch. */
	since?: number | undefined;
	/** Exclusive upper bound on creation time, ms since the epoch. */
	until?: number | undefined;
}

// Each filter is a fixed fragment with a bound parameter: no caller text ever reaches the SQL.
const FILTER_SQL = {
	agent: "agent = ?",
	status: "status = ?",
	trigger_type: "trigger_type = ?",
	since: "created_at >= ?",
	until: "created_at < ?",
} as const satisfies Record<keyof JobFilters, string>;

/**
 * The index a list reads, named in the query: D1 runs no ANALYZE, and without statistics SQLite
 * takes jobs_by_trigger_time whenever trigger_type is filtered, and jobs_by_status_time for an agent
 * and status with a time bound: a page of a 7-job agent then read 850k index entries (2.2 s at a
 * million jobs). Each of these yields the rows in the list's order; what it leaves out is a filter
 * over the few rows a page reads.
 */
function listIndex(filters: JobFilters): string {
	if (filters.agent !== undefined) return filters.status !== undefined ? "jobs_by_agent_status_time" : "jobs_by_agent_time";
	if (filters.status !== undefined) return "jobs_by_status_time";
	return filters.trigger_type !== undefined ? "jobs_by_trigger_time" : "jobs_by_time";
}

export function buildListQuery(filters: JobFilters, limit: number, after?: CursorKey): { sql: string; params: (string | number)[] } {
	const where: string[] = [];
	const params: (string | number)[] = [];
	// One upper bound, so the index's range starts at the cursor (or at until): with both, SQLite
	// seeks by one and filters by the other. Whichever is lower implies the other.
	const until = after !== undefined && filters.until !== undefined && after.at < filters.until ? undefined : filters.until;
	for (const key of Object.keys(FILTER_SQL) as (keyof JobFilters)[]) {
		const value = key === "until" ? until : filters[key];
		if (value === undefined) continue;
		where.push(FILTER_SQL[key]);
		params.push(value);
	}
	if (after && until === undefined) {
		// Row-value comparison lets SQLite seek straight into the (…, created_at DESC, id DESC) index.
		where.push("(created_at, id) < (?, ?)");
		params.push(after.at, after.id);
	}
	const sql =
		`SELECT * FROM jobs INDEXED BY ${listIndex(filters)}` +
		(where.length > 0 ? ` WHERE ${where.join(" AND ")}` : "") +
		" ORDER BY created_at DESC, id DESC LIMIT ?";
	params.push(limit + 1);
	return { sql, params };
}

export async function listJobs(
	db: D1Database,
	filters: JobFilters,
	limit: number,
	cursor?: string,
): Promise<{ jobs: JobSummary[]; next_cursor: string | null }> {
	const scope = cursorScope("jobs", { ...filters });
	const { sql, params } = buildListQuery(filters, limit, cursor === undefined ? undefined : decodeCursor(cursor, scope));
	const { results } = await db.prepare(sql).bind(...params).all<JobIndexRow>();
	const page = results.slice(0, limit);
	const last = page.at(-1);
	return {
		jobs: page.map(toJobSummary),
		next_cursor: results.length > limit && last ? encodeCursor({ at: last.created_at, id: last.id }, scope) : null,
	};
}

export async function getJobSummary(db: D1Database, id: string): Promise<JobSummary | null> {
	const row = await db.prepare("SELECT * FROM jobs WHERE id = ?").bind(id).first<JobIndexRow>();
	return row ? toJobSummary(row) : null;
}

/**
 * Indexed jobs whose id starts with `idPrefix` and that may have started a session (see
 * src/jobs/session-ids.ts): they started, and not as a continue, which runs in its source's session.
 * The index cannot tell more: a persistent run (manual, scheduled, webhook) that carried its agent's
 * session on started none, and only its agent knows. Jobs of `skipAgents` (agents already asked) are
 * passed over. A range of the primary key, so it reads only the ids of that prefix, up to `limit` matches.
 */
export async function sessionStarts(db: D1Database, idPrefix: string, limit: number, skipAgents: readonly string[] = []): Promise<JobSummary[]> {
	const [from, to] = prefixRange(idPrefix);
	const skip = skipAgents.length === 0 ? "" : ` AND agent NOT IN (${skipAgents.map(() => "?").join(", ")})`;
	const { results } = await db
		.prepare(`SELECT * FROM jobs WHERE id >= ? AND id < ? AND started_at IS NOT NULL AND trigger_type != 'continue'${skip} ORDER BY id LIMIT ?`)
		.bind(from, to, ...skipAgents, limit)
		.all<JobIndexRow>();
	return results.map(toJobSummary);
}

/**
 * The index's summary, as GET /v1/jobs documents it: the head of the record's (GET /v1/jobs/:id has
 * its 2,000 characters, the output all of it). A row is the index's size: with 2,000 characters it
 * took a 4 KB page of its own (4.5 KB a job, a busy fleet's 10 GB in days), with 500 about 1.1 KB.
 * Clipped here, not trusted to every sender: a row past D1's size limit fails the outbox's whole batch.
 */
export const INDEX_SUMMARY_CHARS = 500;

/**
 * The index's error message: enough for a list to say why a job failed (the record holds it whole).
 * Clipped here for the reason the summary is.
 */
export const INDEX_ERROR_CHARS = 500;

/** A record's error as a list shows it (GET /v1/jobs, a session's jobs). */
/** A job's summary as a list carries it (the index's, and a session's jobs alike). */
export function listedSummary(summary: string | null): string | null {
	return summary === null ? null : clip(summary, INDEX_SUMMARY_CHARS);
}

export function listedError(error: JobError | null): JobError | null {
	return error === null ? null : { type: error.type, message: clip(error.message, INDEX_ERROR_CHARS) };
}

/** Which columns a write fills: all, or those of a D1 without migration 0015 (see upsertJobIndex). */
type IndexColumns = "all" | "before-errors";

/**
 * Writes index rows for job records. A row only moves forward: an older revision arriving late
 * (retries, reordering) never overwrites a newer one, so the index never regresses. A newer one may
 * name another schedule: a run held while its schedule was renamed goes with it (see carryRename in
 * durable-objects/agent/scheduling.ts). updated_at is
 * D1's own clock as it writes the row, not the sender's: the instant the row changed in the index.
 * A record reaching a final status is counted in job_counts (see countJobsByStatus), and its usage
 * added to usage_daily (see listUsage), in the same batch, once: a final status is a job's last, so
 * a row already holding it was counted when it got it. Ids are dealt unique across the fleet (see
 * src/jobs/id-blocks.ts); should two agents still hold one (an id drawn before dealing, or when no
 * shard could be asked), the second never overwrites the row it finds.
 */
export function upsertStatements(db: D1Database, records: readonly JobRecord[], columns: IndexColumns = "all"): D1PreparedStatement[] {
	const errors = columns === "all";
	return records.flatMap((r) => {
		const error = listedError(r.error);
		const upsert = db
			.prepare(
				`INSERT INTO jobs (id, agent, schedule, trigger_type, status, exit_reason, dispatch, scheduled_instant,
				   created_at, started_at, finished_at, duration_seconds, summary, revision, tool_calls_made, tool_calls_failed${errors ? ", error_type, error_message" : ""}, updated_at)
				 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?${errors ? ", ?, ?" : ""}, CAST(unixepoch('subsec') * 1000 AS INTEGER))
				 ON CONFLICT (id) DO UPDATE SET
				   schedule = excluded.schedule, status = excluded.status, exit_reason = excluded.exit_reason, dispatch = excluded.dispatch, started_at = excluded.started_at,
				   finished_at = excluded.finished_at, duration_seconds = excluded.duration_seconds,
				   summary = excluded.summary, revision = excluded.revision, tool_calls_made = excluded.tool_calls_made,
				   tool_calls_failed = excluded.tool_calls_failed,${errors ? " error_type = excluded.error_type, error_message = excluded.error_message," : ""} updated_at = excluded.updated_at
				 WHERE excluded.revision > jobs.revision AND jobs.agent = excluded.agent`,
			)
			.bind(
				r.id,
				r.agent,
				r.schedule,
				r.trigger_type,
				r.status,
				r.exit_reason,
				r.dispatch,
				r.scheduled_instant,
				Date.parse(r.created_at),
				r.started_at,
				r.finished_at,
				r.duration_seconds,
				listedSummary(r.summary),
				r.revision,
				r.tool_calls?.made ?? null,
				r.tool_calls?.failed ?? null,
				...(errors ? [error?.type ?? null, error?.message ?? null] : []),
			);
		if (!isFinal(r.status)) return [upsert];
		// Before the upsert, which would make the row look counted already.
		const count = db
			.prepare(
				`INSERT INTO job_counts (status, n) SELECT ?2, 1 WHERE ${FIRST_FINAL}
				 ON CONFLICT (status) DO UPDATE SET n = n + 1`,
			)
			.bind(r.id, r.status, r.agent);
		return [count, usageStatement(db, r), upsert];
	});
}

/** A D1 without migration 0015: a Worker deployed ahead of its D1 (see src/store/d1-schema.ts). */
const errorColumnsMissing = (err: unknown) => err instanceof Error && /no column named error_type/.test(err.message);

export async function upsertJobIndex(db: D1Database, records: readonly JobRecord[]): Promise<void> {
	if (records.length === 0) return;
	try {
		await db.batch(upsertStatements(db, records));
	} catch (err) {
		// Indexed without their errors rather than not at all: the outbox would retry the batch, and
		// fail it, until the migration is applied, and the jobs would be missing from every list.
		// A batch is one transaction, so the failed one wrote nothing to count twice.
		if (!errorColumnsMissing(err)) throw err;
		await db.batch(upsertStatements(db, records, "before-errors"));
	}
}

/**
 * Removes an agent's pruned jobs from the index, and from the counts of final statuses in the same
 * batch. Only the agent's own rows: another agent's job may hold the same id (see upsertStatements).
 */
export async function deleteFromJobIndex(db: D1Database, agent: string, ids: readonly string[]): Promise<void> {
	// In batches of 100: each is one JSON array bound as a parameter, and a pass prunes at most
	// PRUNE_BATCH jobs, so this is one batch in practice.
	for (let i = 0; i < ids.length; i += 100) {
		const slice = JSON.stringify(ids.slice(i, i + 100));
		// Driven from the ids, each a probe of the primary key: by `agent = ?` (with no statistics)
		// SQLite read the agent's whole index at every pass, 190k entries for a busy agent.
		// `+agent`, `+status` and CROSS JOIN keep it from taking an index on them instead.
		const mine = "json_each(?1) AS e CROSS JOIN jobs j ON j.id = e.value AND +j.agent = ?2";
		await db.batch([
			db
				.prepare(
					`UPDATE job_counts SET n = n - (SELECT count(*) FROM ${mine} WHERE +j.status = job_counts.status)
					 WHERE status IN (SELECT j.status FROM ${mine})`,
				)
				.bind(slice, agent),
			db.prepare("DELETE FROM jobs WHERE id IN (SELECT value FROM json_each(?1)) AND +agent = ?2").bind(slice, agent),
		]);
	}
}

const LIVE_STATUSES = JOB_STATUSES.filter((s) => !isFinal(s));

/**
 * Indexed jobs by status: final statuses from job_counts, the others (a fleet's live and queued
 * jobs, few) counted in the index. Counting the final ones too would read every row.
 */
export async function countJobsByStatus(db: D1Database): Promise<Partial<Record<JobStatus, number>>> {
	const { results } = await db
		.prepare(
			`SELECT status, n FROM job_counts WHERE n > 0
			 UNION ALL
			 SELECT status, count(*) AS n FROM jobs WHERE status IN (${LIVE_STATUSES.map(() => "?").join(", ")}) GROUP BY status`,
		)
		.bind(...LIVE_STATUSES)
		.all<{ status: JobStatus; n: number }>();
	const n = new Map(results.map((r) => [r.status, r.n]));
	// In the lifecycle's order, whichever query each count came from.
	return Object.fromEntries(JOB_STATUSES.filter((s) => n.has(s)).map((s) => [s, n.get(s)!]));
}
