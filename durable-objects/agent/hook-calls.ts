import type { HookCall } from "../../src/jobs/model.ts";

interface HookRow extends Record<string, SqlStorageValue> {
	target: string;
	url_secret: string;
	status: string;
	attempts: number;
	next_at: number;
	last_error: string | null;
}

/**
 * A job's hook calls as GET /v1/jobs/:id shows them, read from the queue of sends, which keeps each
 * call's row (its outcome, attempts and last error) until the job itself is pruned: without them a
 * job's record said nothing of its hooks, only the logs and a given-up call's incident did.
 */
export function hookCalls(sql: SqlStorage, jobId: string): HookCall[] {
	// Ids are `<job id>:<list>:<index>`; a job's rows are the range between `<job id>:` and `<job id>;`.
	const rows = sql
		.exec<HookRow>("SELECT target, url_secret, status, attempts, next_at, last_error FROM deliveries WHERE id > ? AND id < ? AND kind = 'hook'", `${jobId}:`, `${jobId};`)
		.toArray();
	const place = (target: string) => {
		const [list, index] = target.split(":");
		return [list === "after_run" ? 0 : 1, Number(index)] as const;
	};
	rows.sort((a, b) => {
		const [la, ia] = place(a.target);
		const [lb, ib] = place(b.target);
		return la - lb || ia - ib;
	});
	return rows.map((row) => {
		// `unknown`: given up after an attempt that may have arrived (a row given up before this release says `failed`).
		const outcome = row.status === "delivered" ? "delivered" : row.status === "failed" ? "failed" : row.status === "unknown" ? "unknown" : "pending";
		const retried = outcome === "pending" && row.status !== "held" && row.attempts > 0;
		return {
			hook: row.target.startsWith("on_error:") ? "on_error" : "after_run",
			url_secret: row.url_secret,
			outcome,
			attempts: row.attempts,
			...(outcome !== "delivered" && row.last_error !== null ? { error: row.last_error } : {}),
			...(retried ? { next_attempt_at: new Date(row.next_at).toISOString() } : {}),
			// Held for the job's delivery: without a reason, a pending call with 0 attempts and no error
			// read as one stuck, for as long as the delivery's retries last (up to an hour and more).
			...(row.status === "held" ? { waiting_for: "delivery" as const } : {}),
		};
	});
}
