/**
 * Versioned schema migrations for a Durable Object's SQLite. Run from the constructor, whose
 * synchronous SQLite calls finish before any request or alarm runs, so none sees a half-migrated
 * schema. Each step runs in one
 * transaction with its version bump: a crash mid-step leaves the previous version intact.
 */
export interface SqlMigration {
	version: number;
	name: string;
	sql: string;
}

export function migrate(storage: DurableObjectStorage, migrations: readonly SqlMigration[]): number {
	const sql = storage.sql;
	sql.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
	const current = sql.exec<{ v: number | null }>("SELECT max(version) AS v FROM schema_migrations").one().v ?? 0;
	let version = current;
	for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
		if (m.version <= current) continue;
		storage.transactionSync(() => {
			sql.exec(m.sql);
			sql.exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", m.version, m.name, Date.now());
		});
		version = m.version;
	}
	return version;
}
