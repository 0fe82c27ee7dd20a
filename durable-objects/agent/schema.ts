import type { SqlMigration } from "../../src/store/sqlite-migrations.ts";

/** AgentDO's SQLite schema, append-only: never edit a shipped step, add the next one. */
export const AGENT_MIGRATIONS: readonly SqlMigration[] = [
	{
		version: 1,
		name: "create_jobs",
		sql: `
			CREATE TABLE jobs (
				id TEXT PRIMARY KEY,
				status TEXT NOT NULL,
				created_at INTEGER NOT NULL,
				revision INTEGER NOT NULL,
				record TEXT NOT NULL
			);
			CREATE INDEX jobs_by_created ON jobs (created_at DESC, id DESC);
			CREATE INDEX jobs_by_status ON jobs (status);
		`,
	},
];
