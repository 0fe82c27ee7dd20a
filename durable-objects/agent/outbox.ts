import { deleteFromJobIndex, upsertJobIndex } from "../../src/store/job-index.ts";
import { getJob } from "./jobs.ts";

const BATCH = 50;

export function outboxSize(sql: SqlStorage): number {
	return sql.exec<{ n: number }>("SELECT count(*) AS n FROM outbox").one().n;
}

/**
 * Sends queued job records to the D1 index, newest revision of each job once, and deletes the
 * queue rows only after D1 has acknowledged them. A D1 failure leaves the queue as it was, so the
 * index is late but never loses a change. Returns how many records were written.
 */
export async function flushOutbox(sql: SqlStorage, db: D1Database): Promise<number> {
	let written = 0;
	for (;;) {
		const rows = sql.exec<{ seq: number; job_id: string }>("SELECT seq, job_id FROM outbox ORDER BY seq LIMIT ?", BATCH).toArray();
		if (rows.length === 0) return written;
		const maxSeq = rows.at(-1)!.seq;
		const ids = [...new Set(rows.map((r) => r.job_id))];
		const records = ids.map((id) => getJob(sql, id)).filter((r) => r !== null);
		// A queued job this object no longer holds was pruned: the index drops it too.
		const gone = ids.filter((id) => !records.some((r) => r.id === id));
		await upsertJobIndex(db, records);
		if (gone.length > 0) await deleteFromJobIndex(db, gone);
		// Only the rows that were read: a change queued during the await stays for the next pass.
		sql.exec("DELETE FROM outbox WHERE seq <= ?", maxSeq);
		written += records.length;
	}
}
