/**
 * The D1 migrations (migrations/) this code reads and writes by, in order. `npm run deploy` applies
 * them before it uploads the Worker; a bare `wrangler deploy` or a CI or Git build does not, and a
 * Worker ahead of its D1 fails on each column it lacks. /healthz compares this list with the record
 * wrangler keeps of what it applied (d1_migrations). test/unit/d1-migrations.test.ts holds it to the files.
 */
export const D1_MIGRATIONS = [
	"0001_create_job_index.sql",
	"0002_create_agents_and_heartbeat.sql",
	"0003_create_incidents.sql",
	"0004_count_final_jobs.sql",
	"0005_roll_up_usage.sql",
	"0006_count_tool_calls.sql",
	"0007_usage_by_agent.sql",
	"0008_claim_alerts.sql",
	"0009_incident_failing.sql",
	"0010_heartbeat_backlog.sql",
	"0011_live_agents_index.sql",
	"0012_incidents_by_agent_time.sql",
	"0013_usage_tokenless_priced_jobs.sql",
	"0014_count_live_agents.sql",
	"0015_index_job_errors.sql",
] as const;

/**
 * The migrations that only add an index (test/unit/d1-migrations.test.ts holds this to the files):
 * without one a read scans where it would seek, and nothing fails, so /healthz names it but stays 200.
 */
export const D1_INDEX_ONLY_MIGRATIONS: ReadonlySet<string> = new Set<string>(["0007_usage_by_agent.sql", "0011_live_agents_index.sql", "0012_incidents_by_agent_time.sql"]);

/** What applies them: the binding's name, so it holds whatever database_name the operator chose. */
export const D1_MIGRATIONS_FIX = "npx wrangler d1 migrations apply DB --remote";

/**
 * The migrations D1 has no record of, in order (none: it is up to date; a migration a newer release
 * applied, after a rollback, is not this code's concern). Null when D1 keeps no record at all (no
 * d1_migrations table: a schema made by hand, or wrangler's migrations_table set to another name):
 * reporting every migration missing then sent a healthy Worker's /healthz to 503, and its suggested
 * fix replayed 0001 onto tables that exist. Throws when D1 cannot be read.
 */
export async function missingD1Migrations(db: D1Database): Promise<string[] | null> {
	let applied: Set<string>;
	try {
		const { results } = await db.prepare("SELECT name FROM d1_migrations").all<{ name: string }>();
		applied = new Set(results.map((r) => r.name));
	} catch (err) {
		if (err instanceof Error && /no such table: d1_migrations/.test(err.message)) return null;
		throw err;
	}
	return D1_MIGRATIONS.filter((name) => !applied.has(name));
}

/** D1's schema as /healthz (and GET /v1/status) report it: see Health's `d1` in src/api/health.ts. */
export interface D1Health {
	ok: boolean;
	missing?: string[];
	fix?: string;
	recorded?: false;
}

/**
 * What missingD1Migrations found (undefined: D1 could not be read) as a report: ok unless D1 cannot be
 * read or lacks a migration the code needs; index-only ones missing alone are listed, and ok.
 */
export function d1Health(missing: string[] | null | undefined): D1Health {
	if (missing === undefined) return { ok: false };
	if (missing === null) return { ok: true, recorded: false };
	if (missing.length === 0) return { ok: true };
	return { ok: missing.every((name) => D1_INDEX_ONLY_MIGRATIONS.has(name)), missing, fix: D1_MIGRATIONS_FIX };
}

/** How long GET /v1/status reuses an isolate's D1 check: a dashboard asks every 10 s, each a D1 read otherwise. */
export const D1_CHECK_TTL_MS = 60_000;

let lastCheck: { at: number; health: Promise<D1Health> } | undefined;

/**
 * d1Health, read from D1 at most once every D1_CHECK_TTL_MS an isolate (so a fix applied shows within
 * a minute). A failed read is reported ({ ok: false }) and not kept: the next call reads again.
 */
export function cachedD1Health(db: D1Database, now: number, onError: (err: unknown) => void): Promise<D1Health> {
	if (lastCheck && now >= lastCheck.at && now - lastCheck.at < D1_CHECK_TTL_MS) return lastCheck.health;
	const check: { at: number; health: Promise<D1Health> } = {
		at: now,
		health: missingD1Migrations(db).then(d1Health, (err: unknown) => {
			if (lastCheck === check) lastCheck = undefined;
			onError(err);
			return d1Health(undefined);
		}),
	};
	lastCheck = check;
	return check.health;
}
