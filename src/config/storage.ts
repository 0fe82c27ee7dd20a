/**
 * Cloudflare caps one Durable Object's SQLite at 10 GB; past it every write fails (SQLITE_FULL), and
 * with nothing old enough for retention to prune, the agent stays broken until its history shrinks.
 * Local workerd has no cap, so drover watches the size itself.
 */
const DO_STORAGE_LIMIT_BYTES = 10 * 1000 ** 3;
const WARN_AT = 0.8;

/** Cloudflare's cap on one D1 database (Workers Paid): past it every write fails, the job index's among them. */
const D1_LIMIT_BYTES = 10 * 1000 ** 3;

/** The fleet's warning once D1 holds 80 % of what it may, else null. */
export function d1StorageWarning(bytes: number | null): string | null {
	if (bytes === null || bytes < D1_LIMIT_BYTES * WARN_AT) return null;
	const gb = (bytes / 1000 ** 3).toFixed(1);
	return `storage: D1 holds ${gb} GB of the 10 GB Cloudflare allows a database (the job index's writes fail past it, and its lists stop moving): lower RETENTION_DAYS or agents' retention_days`;
}

/** The agent's warning once its object holds 80 % of what the platform allows, else null. */
export function storageWarning(bytes: number): string | null {
	if (bytes < DO_STORAGE_LIMIT_BYTES * WARN_AT) return null;
	const gb = (bytes / 1000 ** 3).toFixed(1);
	return `storage: the agent's Durable Object holds ${gb} GB of the 10 GB Cloudflare allows (writes fail past it): lower its retention_days, or run it less often`;
}
