import type { JobRecord, JobStatus, JobSummary } from "../../src/jobs/model.ts";
import { prefixRange } from "../../src/jobs/session-ids.ts";
import type { CursorKey } from "../../src/shared/cursor.ts";
import { listedError, listedSummary } from "../../src/store/job-index.ts";
import { getJob, pendingJobs } from "./jobs.ts";
import { readPersistentSession } from "./runner/persistent.ts";

/**
 * An agent's sessions, read from what its jobs already store: every job that started has a
 * job_setup row naming its session (indexed by job_setup_by_session), and a continue queued to run
 * names its session in its record. The sessions table (schema step 29) sums up each session's
 * started jobs, kept by triggers on job_setup: their count and the last to start.
 */

/** A job of a session as a list names it. */
export interface SessionJobRef {
	id: string;
	status: JobStatus;
	created_at: string;
}

export interface SessionSummary {
	session_id: string;
	agent: string;
	job_count: number;
	first_job: SessionJobRef;
	/** The newest job: the one a resume continues. */
	last_job: SessionJobRef;
	/** When the newest job last changed (its latest transition). */
	updated_at: string;
	/** The agent's persistent session (runner/persistent.ts): the one its persistent runs carry on. */
	persistent: boolean;
}

/** A job in a session's detail: its summary, and the job it continued. */
export type SessionJob = JobSummary & { continued_from: string | null };

export interface SessionDetail extends SessionSummary {
	/** Oldest first; the newest MAX_SESSION_JOBS when there are more (job_count says how many). */
	jobs: SessionJob[];
}

/** What a lookup by id or prefix found in this agent. */
export type SessionLookup = { session: SessionDetail } | { candidates: string[] };

/** Jobs a session's detail lists, its newest: a session continued for months stays one answer. */
export const MAX_SESSION_JOBS = 200;
/** Queued jobs looked through for continues: the queue holds 100 (triggers.ts), schedules a few more. */
const QUEUED_LOOKED_AT = 1000;

/** A row of `jobs` joined to its job_setup row: the job's place in its session. */
interface SessionJobRow {
	id: string;
	status: string;
	created_at: number;
	session_id: string;
	[key: string]: SqlStorageValue;
}

const toRef = (row: SessionJobRow): SessionJobRef => ({ id: row.id, status: row.status as JobStatus, created_at: new Date(row.created_at).toISOString() });
const refOf = (job: JobRecord): SessionJobRef => ({ id: job.id, status: job.status, created_at: job.created_at });

/** Oldest first, as ids break ties in every list of jobs. */
const byCreation = (a: SessionJobRef, b: SessionJobRef) => Date.parse(a.created_at) - Date.parse(b.created_at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Continues queued and not started yet (no job_setup row), by the session they continue. */
function queuedBySession(sql: SqlStorage): Map<string, JobRecord[]> {
	const out = new Map<string, JobRecord[]>();
	for (const job of pendingJobs(sql, QUEUED_LOOKED_AT)) {
		if (job.session_id === null) continue;
		const list = out.get(job.session_id) ?? [];
		list.push(job);
		out.set(job.session_id, list);
	}
	return out;
}

/**
 * A session's started jobs: how many, and its first and last to start, or null if none started.
 * The count and the last are the session's row; the first is its lowest job_setup rowid (a row is
 * written once, as its job starts), one probe of job_setup_by_session. Reading every job of the
 * session, sorted, took 336 ms for one of 50,000 jobs, for a list that shows two of them; counting
 * its index entries, 50,000 rows read.
 */
function startedEnds(sql: SqlStorage, sessionId: string): { count: number; ends: SessionJobRef[] } | null {
	const row = sql
		.exec<{ n: number; first: string | null; last: string }>(
			"SELECT job_count AS n, last_job_id AS last, (SELECT job_id FROM job_setup WHERE session_id = ?1 ORDER BY rowid LIMIT 1) AS first FROM sessions WHERE session_id = ?1",
			sessionId,
		)
		.toArray()[0];
	if (!row || row.first === null) return null;
	const ends = sql
		.exec<SessionJobRow>("SELECT j.id, j.status, j.created_at, ?3 AS session_id FROM jobs j WHERE j.id IN (?1, ?2)", row.first, row.last, sessionId)
		.toArray()
		.map(toRef);
	return { count: row.n, ends };
}

/**
 * The newest `limit` jobs to start in a session (by setup row, newest first: its job_setup_by_session
 * entries are in rowid order) and the continues queued for it, oldest first.
 */
function newestRefs(sql: SqlStorage, sessionId: string, queued: Map<string, JobRecord[]>, limit: number): SessionJobRef[] {
	const started = sql
		.exec<SessionJobRow>(
			"SELECT j.id, j.status, j.created_at, s.session_id FROM job_setup s JOIN jobs j ON j.id = s.job_id WHERE s.session_id = ? ORDER BY s.rowid DESC LIMIT ?",
			sessionId,
			limit,
		)
		.toArray()
		.map(toRef);
	return [...started, ...(queued.get(sessionId) ?? []).map(refOf)].sort(byCreation).slice(-limit);
}

function summarize(sql: SqlStorage, agent: string, sessionId: string, queued: Map<string, JobRecord[]>, persistentId: string | null): SessionSummary | null {
	const started = startedEnds(sql, sessionId);
	const waiting = (queued.get(sessionId) ?? []).map(refOf);
	const refs = [...(started?.ends ?? []), ...waiting].sort(byCreation);
	const first = refs[0];
	const last = refs.at(-1);
	if (!first || !last) return null;
	const record = getJob(sql, last.id);
	return {
		session_id: sessionId,
		agent,
		job_count: (started?.count ?? 0) + waiting.length,
		first_job: first,
		last_job: last,
		updated_at: record?.transitions.at(-1)?.at ?? last.created_at,
		persistent: sessionId === persistentId,
	};
}

/**
 * A page of the agent's sessions, newest first by their newest started job, after `before` (that
 * job's created_at and id, the page's cursor). A session is listed at its newest job only: its last
 * to start (its newest setup row: a session's continues start in the order they were queued), which
 * its row in sessions names, dated by that job's created_at: a seek of sessions_by_last, one row a
 * session listed. Walking the jobs newest first for the sessions' last jobs instead read every job
 * between two sessions' newest: 157 ms for a page over one session of 50,000 jobs. A session
 * retention left no started job of, with a continue of it queued, is listed at that continue.
 */
export function listSessions(sql: SqlStorage, agent: string, limit: number, before?: CursorKey): { sessions: SessionSummary[]; next: CursorKey | null } {
	const started = sql
		.exec<SessionJobRow>(
			// CROSS JOIN keeps sessions outermost: the page is read in sessions_by_last's order.
			`SELECT j.id, j.status, j.created_at, s.session_id FROM sessions s CROSS JOIN jobs j ON j.id = s.last_job_id
			 WHERE (s.last_created_at, s.last_job_id) < (?1, ?2)
			 ORDER BY s.last_created_at DESC, s.last_job_id DESC LIMIT ?3`,
			before?.at ?? Number.MAX_SAFE_INTEGER,
			before?.id ?? "",
			limit + 1,
		)
		.toArray();
	const queued = queuedBySession(sql);
	const heads = [...started, ...queuedOnlyHeads(sql, queued, before)].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
	const page = heads.slice(0, limit);
	const persistentId = readPersistentSession(sql)?.sessionId ?? null;
	const sessions = page.flatMap((h) => summarize(sql, agent, h.session_id, queued, persistentId) ?? []);
	const last = page.at(-1);
	return { sessions, next: heads.length > limit && last ? { at: last.created_at, id: last.id } : null };
}

/**
 * Sessions none of whose jobs has started any more (retention removed them) while a continue of
 * them waits in the queue, each at its newest queued job, after `before`: listed by that job, as a
 * session with a job to come is not over. A probe of sessions per queued session.
 */
function queuedOnlyHeads(sql: SqlStorage, queued: Map<string, JobRecord[]>, before?: CursorKey): SessionJobRow[] {
	const heads: SessionJobRow[] = [];
	for (const [sessionId, jobs] of queued) {
		const newest = jobs.at(-1)!;
		const at = Date.parse(newest.created_at);
		if (before && (at > before.at || (at === before.at && newest.id >= before.id))) continue;
		if (sql.exec("SELECT 1 FROM sessions WHERE session_id = ?", sessionId).toArray().length > 0) continue;
		heads.push({ id: newest.id, status: newest.status, created_at: at, session_id: sessionId });
	}
	return heads;
}

/** Session ids of this agent starting with `prefix`, in order, at most `limit`: a session only a queued continue still names included. */
function sessionIdsWithPrefix(sql: SqlStorage, prefix: string, limit: number): string[] {
	const [from, to] = prefixRange(prefix);
	const started = sql
		.exec<{ session_id: string }>("SELECT session_id FROM sessions WHERE session_id >= ? AND session_id < ? ORDER BY session_id LIMIT ?", from, to, limit)
		.toArray()
		.map((r) => r.session_id);
	const queued = [...queuedBySession(sql).keys()].filter((id) => id >= from && id < to);
	return [...new Set([...started, ...queued])].sort().slice(0, limit);
}

/** A session by its whole id, with its jobs; null if this agent has none of that id. */
export function getSession(sql: SqlStorage, agent: string, sessionId: string): SessionDetail | null {
	const queued = queuedBySession(sql);
	const summary = summarize(sql, agent, sessionId, queued, readPersistentSession(sql)?.sessionId ?? null);
	if (!summary) return null;
	const jobs = newestRefs(sql, sessionId, queued, MAX_SESSION_JOBS).flatMap((ref) => {
		const job = getJob(sql, ref.id);
		return job ? [toSessionJob(job)] : [];
	});
	return { ...summary, jobs };
}

/**
 * A session by id or by a prefix of one: the session when the id is whole or the prefix names one
 * only; else the ids it could be (up to `limit`; none when none).
 */
export function findSession(sql: SqlStorage, agent: string, idOrPrefix: string, limit: number): SessionLookup {
	const whole = getSession(sql, agent, idOrPrefix);
	if (whole) return { session: whole };
	const candidates = sessionIdsWithPrefix(sql, idOrPrefix, limit);
	const only = candidates.length === 1 ? getSession(sql, agent, candidates[0]!) : null;
	return only ? { session: only } : { candidates };
}

function toSessionJob(job: JobRecord): SessionJob {
	return {
		id: job.id,
		agent: job.agent,
		schedule: job.schedule,
		trigger_type: job.trigger_type,
		status: job.status,
		exit_reason: job.exit_reason,
		dispatch: job.dispatch,
		scheduled_instant: job.scheduled_instant,
		created_at: job.created_at,
		started_at: job.started_at,
		finished_at: job.finished_at,
		duration_seconds: job.duration_seconds,
		summary: listedSummary(job.summary),
		revision: job.revision,
		tool_calls: job.tool_calls,
		error: listedError(job.error),
		continued_from: job.continued_from,
	};
}
