import { outputLogEntry } from "../../src/jobs/output-text.ts";
import { consolidate, putChunk, putOutputLog, type LineMark } from "../../src/store/output-r2.ts";
import type { JobRecord } from "../../src/jobs/model.ts";
import { getJob } from "./jobs.ts";
import { readLines } from "./runner/output.ts";

/** Lines read at a time while consolidating: with a part's buffer, what the isolate holds. */
const CONSOLIDATE_BATCH_BYTES = 1024 * 1024;

/** A running job's lines go to R2 in chunks of about this much, so R2 holds them before it ends. */
const CHUNK_LINES = 500;
const CHUNK_BYTES = 1024 * 1024;

interface OutputState {
	flushedLine: number;
	outputKey: string | null;
	/** How many lines the consolidated object holds, and its size; null until then. */
	lines: number | null;
	bytes: number | null;
}

export function outputState(sql: SqlStorage, jobId: string): OutputState {
	const row = sql
		.exec<{ flushed_line: number; output_key: string | null; lines: number | null; bytes: number | null }>(
			"SELECT flushed_line, output_key, lines, bytes FROM output_state WHERE job_id = ?",
			jobId,
		)
		.toArray()[0];
	return { flushedLine: row?.flushed_line ?? 0, outputKey: row?.output_key ?? null, lines: row?.lines ?? null, bytes: row?.bytes ?? null };
}

function unflushed(sql: SqlStorage, jobId: string, after: number): { n: number; bytes: number } {
	const row = sql
		.exec<{ n: number; bytes: number | null }>(
			"SELECT count(*) AS n, sum(length(CAST(body AS BLOB)) + 1) AS bytes FROM output_lines WHERE job_id = ? AND line > ?",
			jobId,
			after,
		)
		.one();
	return { n: row.n, bytes: row.bytes ?? 0 };
}

/** Puts a running job's new lines to R2 as a known-length chunk once enough have gathered. */
export async function flushChunks(sql: SqlStorage, bucket: R2Bucket, job: JobRecord): Promise<void> {
	const state = outputState(sql, job.id);
	const pending = unflushed(sql, job.id, state.flushedLine);
	if (pending.n < CHUNK_LINES && pending.bytes < CHUNK_BYTES) return;
	const lines = readLines(sql, job.id, state.flushedLine, CHUNK_LINES * 4);
	if (lines.length === 0) return;
	// Recorded before the put leaves, so a chunk written by an object that then died is still known
	// to exist (and deleted at consolidation); jobs without this row skip that R2 listing.
	sql.exec("INSERT OR IGNORE INTO output_state (job_id, flushed_line) VALUES (?, 0)", job.id);
	await putChunk(bucket, job.agent, job.id, lines);
	sql.exec(
		"INSERT INTO output_state (job_id, flushed_line) VALUES (?, ?) ON CONFLICT (job_id) DO UPDATE SET flushed_line = excluded.flushed_line",
		job.id,
		lines.at(-1)!.line,
	);
}

/** Finished jobs whose output is not yet consolidated in R2. */
export function unconsolidated(sql: SqlStorage, limit: number): string[] {
	// Only jobs that still have lines in SQLite can need it, and those are few (live or just ended),
	// so the query walks output_lines one job at a time, a seek each (SQLite has no skip-scan
	// without ANALYZE), and looks each up in jobs: CROSS JOIN keeps it in that order. Left to
	// itself, the planner walked every finished job in the history instead (3.4 ms a call at
	// 43,000 jobs, a month of a per-minute agent, and twice an alarm pass).
	return sql
		// `+?` keeps the cached plan: see schema.ts.
		.exec<{ id: string }>(
			`WITH RECURSIVE l(job_id) AS (
				SELECT min(job_id) FROM output_lines
				UNION ALL
				SELECT (SELECT min(job_id) FROM output_lines WHERE job_id > l.job_id) FROM l WHERE l.job_id IS NOT NULL
			)
			SELECT j.id FROM l CROSS JOIN jobs j ON j.id = l.job_id
			WHERE j.status IN ('completed', 'failed', 'cancelled', 'indeterminate') LIMIT +?`,
			limit,
		)
		.toArray()
		.map((r) => r.id);
}

/** What a consolidation wrote to R2, for recordConsolidated. */
export interface Consolidated {
	jobId: string;
	key: string;
	lines: number;
	bytes: number;
	marks: LineMark[];
}

/**
 * The consolidated object's line marks (see LineMark), for its readers; none before consolidation,
 * for an object too small to have any, or one consolidated by a release before marks.
 */
export function outputMarks(sql: SqlStorage, jobId: string): LineMark[] {
	const row = sql.exec<{ marks: string | null }>("SELECT marks FROM output_state WHERE job_id = ?", jobId).toArray()[0];
	if (!row?.marks) return [];
	// Read as written by recordConsolidated; anything else (a hand edit) means no marks, not an error:
	// the readers then take the object from its start, and check each mark against it anyway.
	let pairs: unknown;
	try {
		pairs = JSON.parse(row.marks);
	} catch {
		return [];
	}
	if (!Array.isArray(pairs)) return [];
	return pairs.map((pair) => ({ line: Number(pair?.[0]), offset: Number(pair?.[1]) }));
}

/**
 * Writes a finished job's output as one R2 object (the key its output_file has named since it
 * started), and its plain-text log where output_log names one. The lines stay in SQLite until
 * recordConsolidated: R2 is the copy that outlives the job. A failure of either write leaves both
 * to be written again.
 */
export async function consolidateJob(sql: SqlStorage, bucket: R2Bucket, jobId: string): Promise<Consolidated | null> {
	const job = getJob(sql, jobId);
	if (!job) return null;
	const chunked = sql.exec("SELECT 1 FROM output_state WHERE job_id = ?", jobId).toArray().length > 0;
	const readBatch = (after: number, limit: number) => readLines(sql, job.id, after, limit, CONSOLIDATE_BATCH_BYTES);
	const result = await consolidate(bucket, job.agent, job.id, readBatch, { chunks: chunked });
	// After consolidate, which deletes the chunks' prefix the log lives under.
	if (job.output_log !== null) await putOutputLog(bucket, job.agent, job.id, readBatch, outputLogEntry);
	return { jobId: job.id, key: result.key, lines: result.lines, bytes: result.bytes, marks: result.marks };
}

/**
 * Notes where a consolidated job's output now lives and drops its lines from SQLite. Until this
 * runs, the lines are served from SQLite; if the instance dies first, the job is consolidated
 * again, to the same object.
 */
export function recordConsolidated(sql: SqlStorage, done: Consolidated): void {
	const marks = done.marks.length > 0 ? [JSON.stringify(done.marks.map((m) => [m.line, m.offset]))] : [];
	// Only a large object's row names marks: a small job's statement is the one it was before them.
	const [column, value, set] = marks.length > 0 ? [", marks", ", ?", ", marks = excluded.marks"] : ["", "", ""];
	sql.exec(
		`INSERT INTO output_state (job_id, flushed_line, output_key, lines, bytes${column}) VALUES (?, ?, ?, ?, ?${value})
		 ON CONFLICT (job_id) DO UPDATE SET output_key = excluded.output_key, lines = excluded.lines, bytes = excluded.bytes,
		 flushed_line = excluded.flushed_line${set}`,
		done.jobId,
		done.lines,
		done.key,
		done.lines,
		done.bytes,
		...marks,
	);
	sql.exec("DELETE FROM output_lines WHERE job_id = ?", done.jobId);
}
