import { env, runInDurableObject } from "cloudflare:test";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { deletePrunedOutputs, pruneJobRows } from "../../durable-objects/agent/retention.ts";

/** A SqlStorage that sums the rows its statements read (what Cloudflare bills as rows read). */
export function countingReads(sql: SqlStorage): { sql: SqlStorage; rowsRead: () => number } {
	const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
	const counting = new Proxy(sql, {
		get(target, prop) {
			if (prop !== "exec") return Reflect.get(target, prop);
			return (query: string, ...bindings: unknown[]) => {
				const cursor = target.exec(query, ...bindings);
				cursors.push(cursor);
				return cursor;
			};
		},
	});
	return { sql: counting, rowsRead: () => cursors.reduce((n, c) => n + c.rowsRead, 0) };
}

/**
 * Undoes an AgentDO's schema steps from `version` on, so a test can re-run them as an upgrade from
 * the release before. Steps that only move data need no undo; the others are listed here, so adding
 * a migration means adding its undo in one place, not in every upgrade test.
 */
const AGENT_UNDO: Record<number, string> = {
	12: "DROP TABLE registry_sync",
	14: "ALTER TABLE job_setup DROP COLUMN extra_requests",
	15: "ALTER TABLE schedule_state DROP COLUMN defined_at",
	16: "ALTER TABLE agent_state DROP COLUMN tick_noted_at; ALTER TABLE agent_state DROP COLUMN tick_at",
	17: "DROP INDEX job_setup_by_session",
	18: "DROP TABLE persistent_session",
	19: "ALTER TABLE job_setup DROP COLUMN persistent_from; ALTER TABLE persistent_session DROP COLUMN ended_by",
	20: "ALTER TABLE tool_calls DROP COLUMN result_chars",
	21: "ALTER TABLE incident_events DROP COLUMN source; ALTER TABLE incident_watch DROP COLUMN waiting",
	22: "DROP INDEX occurrences_by_retention",
	23: "DROP INDEX occurrences_by_retain_until; ALTER TABLE occurrences DROP COLUMN retain_until",
	24: "ALTER TABLE occurrences DROP COLUMN default_prompt_chars",
	25: "ALTER TABLE deliveries DROP COLUMN in_doubt",
	26: "DROP TABLE former_agent_jobs",
	27: "ALTER TABLE webhook_seen DROP COLUMN job_id",
	28: "DROP TABLE message_chunks; ALTER TABLE messages DROP COLUMN chunks",
	29: "DROP TRIGGER sessions_job_started; DROP TRIGGER sessions_job_removed; DROP TRIGGER sessions_job_restarted; DROP TRIGGER sessions_job_moved; DROP TABLE sessions",
	30: "DROP INDEX occurrences_skips_by_claimed",
	31: "ALTER TABLE output_state DROP COLUMN marks",
	32: "ALTER TABLE job_setup DROP COLUMN cancel_by",
	33: "ALTER TABLE job_setup DROP COLUMN unbilled_tries",
	34: "ALTER TABLE tool_calls DROP COLUMN decision_reason",
	35: "DROP TABLE pruned_outputs",
};
export function rollBackAgentSchema(sql: SqlStorage, version: number): void {
	for (const v of Object.keys(AGENT_UNDO).map(Number).sort((a, b) => b - a)) if (v >= version) sql.exec(AGENT_UNDO[v]!);
	sql.exec("DELETE FROM schema_migrations WHERE version >= ?", version);
}

/**
 * Undoes one step alone, the later ones kept: where this release's code stands in for the release
 * before's while jobs run, it needs the later steps' columns (a job's end writes job_setup's). The
 * test then runs the step's SQL again itself (migrate() would skip a version below the latest).
 */
export function undoAgentStep(sql: SqlStorage, version: number): void {
	sql.exec(AGENT_UNDO[version]!);
}

/** The same for a scheduler shard's steps (durable-objects/shard/schema.ts). */
const SHARD_UNDO: Record<number, string> = {
	2: "ALTER TABLE agents DROP COLUMN definition",
	3: "ALTER TABLE agents DROP COLUMN generation",
	6: "DROP TABLE job_id_counters",
	7: "DROP INDEX agents_failing; ALTER TABLE agents DROP COLUMN failing_since",
};
export function rollBackShardSchema(sql: SqlStorage, version: number): void {
	for (const v of Object.keys(SHARD_UNDO).map(Number).sort((a, b) => b - a)) if (v >= version) sql.exec(SHARD_UNDO[v]!);
	sql.exec("DELETE FROM schema_migrations WHERE version >= ?", version);
}

const encoder = new TextEncoder();

/**
 * Makes an agent's SQLite refuse what Cloudflare's refuses and local workerd's stores: a string or
 * row over 2 MB (platform.md: "2 MB per row or value"), as SQLITE_TOOBIG. A statement's string
 * arguments are summed, as the row they make: every statement here that binds a large value writes
 * one row. `limit` lower than 2 MB stands in for content that no row could hold.
 */
export async function refuseOver2MB(agent: string, limit = 2_000_000): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) => {
		const sql = state.storage.sql as unknown as { exec: (query: string, ...args: unknown[]) => unknown };
		const exec = sql.exec.bind(sql);
		sql.exec = (query: string, ...args: unknown[]) => {
			const strings = args.filter((a): a is string => typeof a === "string");
			// A UTF-16 unit is at most 3 bytes of UTF-8: most statements are measured without encoding.
			if (strings.reduce((n, s) => n + s.length, 0) * 3 > limit) {
				const bytes = strings.reduce((n, s) => n + encoder.encode(s).length, 0);
				if (bytes > limit) throw new Error(`string or blob too big: SQLITE_TOOBIG (${bytes} bytes in one statement)`);
			}
			return exec(query, ...args);
		};
	});
}

/**
 * An agent's sessions table, and the same summed up from job_setup (each session's count and its
 * highest rowid's job, dated by that job's created_at): what the table is kept to be (agent step 29).
 */
export function sessionsSnapshot(sql: SqlStorage): { kept: unknown[]; fromSetup: unknown[] } {
	return {
		kept: sql.exec("SELECT session_id, last_job_id, last_created_at, job_count FROM sessions ORDER BY session_id").toArray(),
		fromSetup: sql
			.exec(
				`SELECT g.session_id, s.job_id AS last_job_id, (SELECT created_at FROM jobs WHERE id = s.job_id) AS last_created_at, g.n AS job_count
				 FROM (SELECT session_id, max(rowid) AS last, count(*) AS n FROM job_setup GROUP BY session_id) g JOIN job_setup s ON s.rowid = g.last
				 ORDER BY g.session_id`,
			)
			.toArray(),
	};
}

/**
 * A D1Database that sums the rows its statements read, as D1 reports them (`meta.rows_read`, what
 * Cloudflare bills): `first()` is asked as `all()`, whose answer carries that account.
 */
export function countingD1Reads(db: D1Database): { db: D1Database; rowsRead: () => number } {
	let rowsRead = 0;
	const real = new WeakMap<object, D1PreparedStatement>();
	const counted = (statement: D1PreparedStatement): D1PreparedStatement => {
		const proxy = new Proxy(statement, {
			get(target, prop) {
				if (prop === "bind") return (...values: unknown[]) => counted(target.bind(...values));
				if (prop === "all" || prop === "run")
					return async () => {
						const result = await target.all();
						rowsRead += result.meta.rows_read;
						return result;
					};
				if (prop === "first")
					return async (column?: string) => {
						const { results, meta } = await target.all<Record<string, unknown>>();
						rowsRead += meta.rows_read;
						const row = results[0] ?? null;
						return column === undefined || row === null ? row : (row[column] ?? null);
					};
				return Reflect.get(target, prop);
			},
		});
		real.set(proxy, statement);
		return proxy;
	};
	const counting = new Proxy(db, {
		get(target, prop) {
			if (prop === "prepare") return (query: string) => counted(target.prepare(query));
			if (prop === "batch")
				return async (statements: D1PreparedStatement[]) => {
					const results = await target.batch(statements.map((s) => real.get(s) ?? s));
					for (const r of results) rowsRead += r.meta.rows_read;
					return results;
				};
			return Reflect.get(target, prop);
		},
	});
	return { db: counting, rowsRead: () => rowsRead };
}

/**
 * Rows an agent's object holds of a job, by table (those with none left out): every table with a
 * job_id column, whatever later schema steps add, is searched.
 */
export function jobRowsOf(agent: string, id: string): Promise<Record<string, number>> {
	return runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) => {
		const sql = state.storage.sql;
		const tables = sql
			// pragma_table_info is not authorized in a Durable Object: a table's statement names its columns.
			.exec<{ name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'")
			.toArray()
			.filter((r) => /(?:[(,]|ADD COLUMN)\s*job_id\s/i.test(r.sql))
			.map((r) => r.name);
		return Object.fromEntries(tables.map((t) => [t, sql.exec<{ n: number }>(`SELECT count(*) AS n FROM "${t}" WHERE job_id = ?`, id).one().n]).filter(([, n]) => n !== 0));
	});
}

/**
 * One prune of an agent's SQLite, as a pass makes it without its D1 flush between: a batch of jobs
 * past `cutoff` (pruneJobRows), then their R2 output (deletePrunedOutputs). How many jobs it pruned.
 */
export async function pruneJobs(sql: SqlStorage, bucket: R2Bucket, agent: string, cutoff: number, now: number): Promise<number> {
	const { pruned } = pruneJobRows(sql, agent, cutoff, now);
	await deletePrunedOutputs(sql, bucket, agent);
	return pruned.length;
}
