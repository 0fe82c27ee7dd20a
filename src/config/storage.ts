/**
 * Cloudflare caps one Durable Object's SQLite at 10 GB; past it every write fails (SQLITE_FULL), and
 * with nothing old enough for retention to prune, the agent stays broken until its history shrinks.
 * Local workerd has no cap, so drover watches the size itself.
 */
const DO_STORAGE_LIMIT_BYTES = 10 * 1000 ** 3;
const WARN_AT = 0.8;

/** The agent's warning once its object holds 80 % of what the platform allows, else null. */
export function storageWarning(bytes: number): string | null {
	if (bytes < DO_STORAGE_LIMIT_BYTES * WARN_AT) return null;
	const gb = (bytes / 1000 ** 3).toFixed(1);
	return `storage: the agent's Durable Object holds ${gb} GB of the 10 GB Cloudflare allows (writes fail past it): lower its retention_days, or run it less often`;
}
