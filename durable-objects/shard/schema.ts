import type { SqlMigration } from "../../src/store/sqlite-migrations.ts";

export const SHARD_MIGRATIONS: readonly SqlMigration[] = [
	{
		version: 1,
		name: "create_agents",
		sql: `
			-- The agents of this shard and when each is next due (ms); 0 = call at the next tick.
			CREATE TABLE agents (
				name TEXT PRIMARY KEY,
				source TEXT NOT NULL,
				next_due_at INTEGER NOT NULL
			);
			CREATE INDEX agents_by_due ON agents (next_due_at);
			CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
		`,
	},
	{
		version: 2,
		name: "file_agent_definitions",
		sql: `
			-- A file agent's definition as the last synced deploy had it: a later deploy that drops or
			-- changes the agent still knows its retention. Null for API agents.
			ALTER TABLE agents ADD COLUMN definition TEXT;
		`,
	},
	{
		version: 3,
		name: "agent_generations",
		sql: `
			-- Bumped by every registration and deploy sync: a tick writes an agent's next due time only
			-- if no change landed while it was calling the agent (that change's "due at once" stands).
			ALTER TABLE agents ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
		`,
	},
	{
		version: 4,
		name: "exact_generations_and_file_definitions",
		sql: `
			-- Generations are compared from JavaScript, whose numbers hold integers exactly only to
			-- 2^53: one beyond (the random() of version 3's first rows) never matched, and its agent's
			-- due time was never written. Such rows start over at 0.
			UPDATE agents SET generation = 0 WHERE generation NOT BETWEEN -9007199254740991 AND 9007199254740991;
			-- A shard upgraded with fleet.yaml unchanged would keep no file agent's definition until the
			-- file changed: forgetting the synced revision makes the next tick store them all.
			DELETE FROM meta WHERE key = 'fleet';
		`,
	},
	{
		version: 5,
		name: "resync_for_replaced_api_agents",
		sql: `
			-- A fleet.yaml agent that took an API agent's name before a file agent replaced it (or a
			-- deleted one's, whose due time was stored as never) is found by the next deploy sync:
			-- forgetting the synced revision makes the first tick after this upgrade run it.
			DELETE FROM meta WHERE key = 'fleet';
		`,
	},
	{
		version: 6,
		name: "job_id_counters",
		sql: `
			-- The next job id number this shard deals on each UTC day (see src/jobs/id-blocks.ts).
			CREATE TABLE job_id_counters (day TEXT PRIMARY KEY, next INTEGER NOT NULL);
		`,
	},
	{
		version: 7,
		name: "failing_agents",
		sql: `
			-- When an agent's latest call failed (null: it answered). A follow-up's failure is seen by no
			-- tick, and a tick that reached every agent it called resolved the scheduler incident, which
			-- the next failing follow-up opened again: the tick leaves it open while any is set.
			ALTER TABLE agents ADD COLUMN failing_since INTEGER;
			-- Almost always empty: each tick counts it, and only then clears marks name by name.
			CREATE INDEX agents_failing ON agents (failing_since) WHERE failing_since IS NOT NULL;
		`,
	},
];
