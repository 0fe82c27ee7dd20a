import type { AgentDefinition } from "../../src/config/schema.ts";
import { numberVar } from "../../src/config/vars.ts";
import { deleteJobOutput } from "../../src/store/output-r2.ts";
import { log } from "../../src/log.ts";
import { queueForIndex } from "./outbox.ts";

/** Days a finished job of `definition` is kept: its retention_days, else the deployment's RETENTION_DAYS. */
export function retentionDays(definition: Pick<AgentDefinition, "retention_days"> | null, env: { RETENTION_DAYS?: string }): number {
	return definition?.retention_days ?? numberVar(env, "RETENTION_DAYS");
}

/** Jobs pruned per call: a call that prunes this many may have left more behind. */
export const PRUNE_BATCH = 50;

/**
 * Deletes up to one batch of finished jobs created before `cutoff`: their R2 output first, then
 * every row this object holds of them, leaving an outbox entry so the D1 index drops them too.
 * Bounded per call, so a large backlog is worked off over several alarms without a long stall.
 */
export async function pruneJobs(sql: SqlStorage, bucket: R2Bucket, agent: string, cutoff: number, now: number): Promise<number> {
	const old = sql
		.exec<{ id: string }>(
			// Kept for the retention after it finished, not after it was made: a run queued across a
			// pause (or one that ran long) would otherwise go the hour it ended. created_at, never later
			// than the finish, narrows the search by its index.
			`SELECT id FROM jobs WHERE created_at < ?1 AND status IN ('completed', 'failed', 'cancelled', 'indeterminate')
			   AND coalesce(json_extract(record, '$.finished_at'), '') < ?2 ORDER BY created_at LIMIT ?3`,
			cutoff,
			new Date(cutoff).toISOString(),
			PRUNE_BATCH,
		)
		.toArray()
		.map((r) => r.id);
	for (const id of old) {
		await deleteJobOutput(bucket, agent, id);
		for (const table of ["jobs", "messages", "tool_calls", "output_lines", "job_setup", "output_state", "follow_up_consent"] as const) {
			// Table names come from the fixed list above, never from input.
			sql.exec(`DELETE FROM ${table} WHERE ${table === "jobs" ? "id" : "job_id"} = ?`, id);
		}
		sql.exec("DELETE FROM occurrences WHERE job_id = ?", id);
		// A job's deliveries and hook calls (with the answer they carried) have ids `<job id>:<what>`
		// (effects.ts): a range of the primary key, where job_id has no index.
		sql.exec("DELETE FROM deliveries WHERE id > ? AND id < ?", `${id}:`, `${id};`);
		queueForIndex(sql, id, now);
	}
	// Ledger rows without a job (skips) age out with the same cutoff.
	sql.exec("DELETE FROM occurrences WHERE job_id IS NULL AND claimed_at < ?", cutoff);
	if (old.length > 0) log.info("retention.pruned", { agent, jobs: old.length, cutoff: new Date(cutoff).toISOString() });
	return old.length;
}

/**
 * When this object's first record retention can remove began to age, or null when it holds none:
 * the earliest finish of its ended jobs and claim of its skips (each job has a ledger row, kept in
 * step with it, see ledger.ts). It passes the agent's retention at that instant plus the retention.
 * A job still queued or running is not counted: it ages from its finish. One index lookup.
 */
export function oldestRecordAt(sql: SqlStorage): number | null {
	return sql
		.exec<{ at: number | null }>(
			"SELECT min(coalesce(finished_at, claimed_at)) AS at FROM occurrences WHERE job_id IS NULL OR finished_at IS NOT NULL",
		)
		.one().at;
}
