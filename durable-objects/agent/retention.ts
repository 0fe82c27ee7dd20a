import type { AgentDefinition } from "../../src/config/schema.ts";
import { numberVar } from "../../src/config/vars.ts";
import { deleteJobOutput, deleteJobOutputs } from "../../src/store/output-r2.ts";
import { log } from "../../src/log.ts";
import { queueForIndex } from "./outbox.ts";

/** Days a finished job of `definition` is kept: its retention_days, else the deployment's RETENTION_DAYS. */
export function retentionDays(definition: Pick<AgentDefinition, "retention_days"> | null, env: { RETENTION_DAYS?: string }): number {
	return definition?.retention_days ?? numberVar(env, "RETENTION_DAYS");
}

/** Jobs pruned per call: a call that prunes this many may have left more behind. */
export const PRUNE_BATCH = 50;

/**
 * Deletes up to one batch of finished jobs created before `cutoff`: every row this object holds of
 * them, leaving an outbox entry so the D1 index drops them too, and a row in pruned_outputs for their
 * R2 output, which deletePrunedOutputs deletes. All in one synchronous write: R2 is not called
 * between, so an object that dies never holds a job whose output R2 no longer has (listed, its
 * output a 404), nor leaves an output with nothing to delete it (storage that only grows). Fewer
 * while outputs are still to delete (R2 failing), so those stay one batch. `full`: more may be left.
 */
export function pruneJobRows(sql: SqlStorage, agent: string, cutoff: number, now: number): { pruned: string[]; full: boolean } {
	const limit = Math.max(0, PRUNE_BATCH - prunedOutputsWaiting(sql));
	const old =
		limit === 0
			? []
			: sql
					.exec<{ id: string }>(
						// Kept for the retention after it finished, not after it was made: a run queued across a
						// pause (or one that ran long) would otherwise go the hour it ended. created_at, never later
						// than the finish, narrows the search by its index (`+status`: by jobs_by_status SQLite would
						// read every ended job, the whole history, an hour). A deleted agent's run goes at its stamp
						// (see stampDeletedHistory) if that comes first: found from the few stamped ledger rows
						// (CROSS JOIN keeps that order; without statistics SQLite would walk every ended job).
						// Each arm stops at a batch: without its own LIMIT the first read every expired job's record
						// at each pass through a backlog (228 ms a pass with 44k due, against 0.45 ms).
						`SELECT id FROM (
						   SELECT * FROM (
						     SELECT id, created_at FROM jobs WHERE created_at < ?1 AND +status IN ('completed', 'failed', 'cancelled', 'indeterminate')
						       AND coalesce(json_extract(record, '$.finished_at'), '') < ?2
						     ORDER BY created_at LIMIT ?3)
						   UNION
						   SELECT * FROM (
						     SELECT j.id, j.created_at FROM occurrences o CROSS JOIN jobs j ON j.id = o.job_id
						     WHERE o.retain_until <= ?4 AND j.status IN ('completed', 'failed', 'cancelled', 'indeterminate')
						     ORDER BY j.created_at LIMIT ?3)
						 ) ORDER BY created_at LIMIT ?3`,
						cutoff,
						new Date(cutoff).toISOString(),
						limit,
						now,
					)
					.toArray()
					.map((r) => r.id);
	for (const id of old) {
		// Chunks are deleted as the output is consolidated: only an output never consolidated (a row
		// here without its key) may have some left, and only it has its prefix listed.
		const chunks = sql.exec("SELECT 1 FROM output_state WHERE job_id = ? AND output_key IS NULL", id).toArray().length > 0;
		sql.exec("INSERT INTO pruned_outputs (job_id, chunks) VALUES (?, ?) ON CONFLICT (job_id) DO NOTHING", id, chunks ? 1 : 0);
		for (const table of ["jobs", "messages", "message_chunks", "tool_calls", "output_lines", "job_setup", "output_state", "follow_up_consent"] as const) {
			// Table names come from the fixed list above, never from input.
			sql.exec(`DELETE FROM ${table} WHERE ${table === "jobs" ? "id" : "job_id"} = ?`, id);
		}
		sql.exec("DELETE FROM occurrences WHERE job_id = ?", id);
		// A job's deliveries and hook calls (with the answer they carried) have ids `<job id>:<what>`
		// (effects.ts): a range of the primary key, where job_id has no index.
		sql.exec("DELETE FROM deliveries WHERE id > ? AND id < ?", `${id}:`, `${id};`);
		queueForIndex(sql, id, now);
	}
	// A deleted agent's marks (state.ts, forgetDeletedAgent) go with their jobs: one statement a prune,
	// over a table that is almost always empty, not one a job.
	if (old.length > 0) sql.exec("DELETE FROM former_agent_jobs WHERE job_id NOT IN (SELECT id FROM jobs)");
	// Ledger rows without a job (skips) age out with the same cutoff. Found by occurrences_skips_by_claimed
	// (step 30), which holds the skips only: a backlog's expired runs' rows are not read at each pass.
	sql.exec("DELETE FROM occurrences WHERE job_id IS NULL AND (claimed_at < ? OR retain_until <= ?)", cutoff, now);
	if (old.length > 0) log.info("retention.pruned", { agent, jobs: old.length, cutoff: new Date(cutoff).toISOString() });
	// A batch filled by outputs still to delete counts as full: once they are gone, more are due.
	return { pruned: old, full: old.length === limit };
}

/** Outputs pruned_outputs holds, still to delete from R2. */
function prunedOutputsWaiting(sql: SqlStorage): number {
	return sql.exec<{ n: number }>("SELECT count(*) AS n FROM pruned_outputs").one().n;
}

/**
 * Deletes from R2 the output of the jobs pruneJobRows pruned, and then their pruned_outputs rows:
 * every consolidated one's in one R2 call (up to 1,000 keys a call), each unconsolidated one's chunk
 * prefix (a listing and a delete) until `spent` says the invocation's subrequests are used up. A
 * failure leaves the rest for the next prune; deleting again what is gone changes nothing. How
 * many are left.
 */
export async function deletePrunedOutputs(sql: SqlStorage, bucket: R2Bucket, agent: string, spent: () => boolean = () => false): Promise<number> {
	const rows = sql.exec<{ job_id: string; chunks: number }>("SELECT job_id, chunks FROM pruned_outputs ORDER BY job_id").toArray();
	if (rows.length === 0) return 0;
	const whole = rows.filter((r) => r.chunks === 0).map((r) => r.job_id);
	if (whole.length > 0) {
		await deleteJobOutputs(bucket, agent, whole);
		sql.exec("DELETE FROM pruned_outputs WHERE job_id IN (SELECT value FROM json_each(?))", JSON.stringify(whole));
	}
	let left = rows.length - whole.length;
	for (const { job_id: id } of rows.filter((r) => r.chunks !== 0)) {
		if (spent()) break;
		await deleteJobOutput(bucket, agent, id, { chunks: true });
		sql.exec("DELETE FROM pruned_outputs WHERE job_id = ?", id);
		left--;
	}
	return left;
}

/**
 * When this object's first record passes its retention (`retentionMs` after it began to age), or
 * null when it holds none retention can remove yet (`retentionMs` is asked only if it holds some). A record begins to age at the finish of its
 * job, or at its claim for a skip (each job has a ledger row, kept in step with it, see ledger.ts):
 * a job still queued or running is not counted. A deleted agent's run may go sooner, at its stamp.
 * Two index lookups, whatever the history.
 */
export function nextExpiryAt(sql: SqlStorage, retentionMs: () => number | null): number | null {
	const { aging, stamped } = sql
		.exec<{ aging: number | null; stamped: number | null }>(
			`SELECT (SELECT min(coalesce(finished_at, claimed_at)) FROM occurrences WHERE job_id IS NULL OR finished_at IS NOT NULL) AS aging,
			   (SELECT min(retain_until) FROM occurrences WHERE retain_until IS NOT NULL) AS stamped`,
		)
		.one();
	// Read only when there is something aging: the agent's state is a read the hot path can skip.
	const kept = aging === null ? null : retentionMs();
	const due = [aging === null || kept === null ? null : aging + kept, stamped].filter((at): at is number => at !== null);
	return due.length === 0 ? null : Math.min(...due);
}

/**
 * Before a deleted agent's name is defined again: its history (the runs that ended, and its skips)
 * is kept no longer than its own retention promised, whatever the new agent's retention_days. A
 * shorter one of the new agent's applies all the same. Rows stamped before keep their stamp.
 */
export function stampDeletedHistory(sql: SqlStorage, retentionMs: number): void {
	sql.exec(
		"UPDATE occurrences SET retain_until = coalesce(finished_at, claimed_at) + ? WHERE (job_id IS NULL OR finished_at IS NOT NULL) AND retain_until IS NULL",
		retentionMs,
	);
}
