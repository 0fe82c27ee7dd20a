import { deleteFromJobIndex, upsertJobIndex } from "../../src/store/job-index.ts";
import { getJob } from "./jobs.ts";

const BATCH = 50;

export function outboxSize(sql: SqlStorage): number {
	return sql.exec<{ n: number }>("SELECT count(*) AS n FROM outbox").one().n;
}

/** Queues a job for the index: one row per job, whose version moves on with every save. */
export function queueForIndex(sql: SqlStorage, jobId: string, now: number): void {
	sql.exec("INSERT INTO outbox (job_id, version, queued_at) VALUES (?, 1, ?) ON CONFLICT (job_id) DO UPDATE SET version = version + 1", jobId, now);
}

/**
 * Sends queued job records to the D1 index, the newest revision of each, and deletes a queue row
 * only after D1 has acknowledged it, and only if the job was not saved again meanwhile (its
 * version moved on, so the next pass sends the newer record). A D1 failure leaves the queue as it
 * was, so the index is late but never loses a change. Returns how many records were written.
 */
export async function flushOutbox(sql: SqlStorage, db: D1Database): Promise<number> {
	let written = 0;
	for (;;) {
		const rows = sql.exec<{ job_id: string; version: number }>("SELECT job_id, version FROM outbox ORDER BY job_id LIMIT ?", BATCH).toArray();
		if (rows.length === 0) return written;
		const ids = rows.map((r) => r.job_id);
		const records = ids.map((id) => getJob(sql, id)).filter((r) => r !== null);
		// A queued job this object no longer holds was pruned: the index drops it too.
		const gone = ids.filter((id) => !records.some((r) => r.id === id));
		await upsertJobIndex(db, records);
		if (gone.length > 0) await deleteFromJobIndex(db, gone);
		for (const r of rows) sql.exec("DELETE FROM outbox WHERE job_id = ? AND version = ?", r.job_id, r.version);
		written += records.length;
	}
}
