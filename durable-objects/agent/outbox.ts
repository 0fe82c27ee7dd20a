import { deleteFromJobIndex, upsertJobIndex } from "../../src/store/job-index.ts";
import { getJob } from "./jobs.ts";

const BATCH = 50;
/** Past this many, acknowledged rows are deleted as the flush goes (a backlog D1 is catching up on). */
const MAX_DEFERRED = 4 * BATCH;

/**
 * Outbox rows D1 has acknowledged, by job, at the version sent, whose deletion waits for the next
 * write of the object's own. A delete made as D1 answers is a SQLite commit of its own (an fsync,
 * which the object's next outgoing request waits on); with the pass's last writes it costs nothing.
 * Until deleted they count as sent. If the instance dies first they are sent again, which changes
 * nothing: the index keeps a row's highest revision.
 */
export type OutboxAcks = Map<string, number>;

/** Rows still to send: all queued rows but those acknowledged at their current version. */
export function outboxSize(sql: SqlStorage, acked?: OutboxAcks): number {
	const queued = sql.exec<{ n: number }>("SELECT count(*) AS n FROM outbox").one().n;
	if (!acked || acked.size === 0 || queued === 0) return queued;
	let sent = 0;
	for (const [jobId, version] of acked) {
		if (sql.exec("SELECT 1 FROM outbox WHERE job_id = ? AND version = ?", jobId, version).toArray().length > 0) sent++;
	}
	return queued - sent;
}

/** Queues a job for the index: one row per job, whose version moves on with every save. */
export function queueForIndex(sql: SqlStorage, jobId: string, now: number): void {
	sql.exec("INSERT INTO outbox (job_id, version, queued_at) VALUES (?, 1, ?) ON CONFLICT (job_id) DO UPDATE SET version = version + 1", jobId, now);
}

/** Deletes the acknowledged rows whose job was not saved again since (its version moved on). */
export function settleOutbox(sql: SqlStorage, acked: OutboxAcks): void {
	for (const [jobId, version] of acked) sql.exec("DELETE FROM outbox WHERE job_id = ? AND version = ?", jobId, version);
	acked.clear();
}

/**
 * Sends queued job records to the D1 index, the newest revision of each. A row is acknowledged only
 * once D1 has it, and deleted (by settleOutbox: with `acked` given, at the caller's next write;
 * without, at the end of this flush) only if the job was not saved again meanwhile (its version
 * moved on, so the next round sends the newer record). A D1 failure leaves the queue as it was, so
 * the index is late but never loses a change. Returns how many records were written.
 */
export async function flushOutbox(sql: SqlStorage, db: D1Database, acked?: OutboxAcks): Promise<number> {
	const sent: OutboxAcks = acked ?? new Map();
	let written = 0;
	for (;;) {
		if (sent.size > MAX_DEFERRED) settleOutbox(sql, sent);
		// Enough rows that BATCH are due even if every acknowledged one is among them.
		const rows = sql
			// `+?` keeps the cached plan: see schema.ts.
			.exec<{ job_id: string; version: number }>("SELECT job_id, version FROM outbox ORDER BY job_id LIMIT +?", BATCH + sent.size)
			.toArray()
			.filter((r) => sent.get(r.job_id) !== r.version)
			.slice(0, BATCH);
		if (rows.length === 0) break;
		const ids = rows.map((r) => r.job_id);
		const records = ids.map((id) => getJob(sql, id)).filter((r) => r !== null);
		// A queued job this object no longer holds was pruned: the index drops it too.
		const gone = ids.filter((id) => !records.some((r) => r.id === id));
		await upsertJobIndex(db, records);
		if (gone.length > 0) {
			const agent = sql.exec<{ name: string }>("SELECT name FROM agent_state WHERE id = 1").toArray()[0]?.name;
			if (agent !== undefined) await deleteFromJobIndex(db, agent, gone);
		}
		for (const r of rows) sent.set(r.job_id, r.version);
		written += records.length;
	}
	if (!acked) settleOutbox(sql, sent);
	return written;
}
