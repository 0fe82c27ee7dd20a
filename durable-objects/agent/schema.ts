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
	{
		version: 2,
		name: "create_agent_state_and_ledger",
		sql: `
			-- One row: who this object is and whether it may run.
			CREATE TABLE agent_state (
				id INTEGER PRIMARY KEY CHECK (id = 1),
				name TEXT NOT NULL,
				source TEXT NOT NULL,
				definition TEXT,
				definition_revision TEXT,
				deleted_at INTEGER,
				paused_at INTEGER,
				paused_reason TEXT,
				paused_by TEXT
			);
			-- Per schedule: every slot at or before cursor has been handled (fired, skipped or superseded).
			CREATE TABLE schedule_state (
				schedule TEXT PRIMARY KEY,
				spec TEXT NOT NULL,
				cursor INTEGER NOT NULL,
				last_fire_instant INTEGER,
				last_fire_at INTEGER
			);
			-- The occurrence ledger: one row per fire, skip or manual run.
			CREATE TABLE occurrences (
				id TEXT PRIMARY KEY,
				schedule TEXT,
				source TEXT NOT NULL,
				scheduled_instant INTEGER,
				dispatch TEXT NOT NULL,
				claimed_at INTEGER NOT NULL,
				started_at INTEGER,
				finished_at INTEGER,
				status TEXT NOT NULL,
				skip_reason TEXT,
				skipped_count INTEGER,
				skipped_from INTEGER,
				job_id TEXT,
				error TEXT
			);
			-- Occurrence identity: a second claim of (schedule, instant) cannot insert.
			CREATE UNIQUE INDEX occurrences_identity ON occurrences (schedule, scheduled_instant)
				WHERE scheduled_instant IS NOT NULL;
			CREATE INDEX occurrences_by_claimed ON occurrences (claimed_at DESC, id DESC);
			CREATE INDEX occurrences_by_job ON occurrences (job_id) WHERE job_id IS NOT NULL;
			-- Idempotency-Key of manual triggers, kept 24 h.
			CREATE TABLE idempotency (
				key TEXT PRIMARY KEY,
				job_id TEXT NOT NULL,
				request_hash TEXT NOT NULL,
				created_at INTEGER NOT NULL
			);
			-- Signatures of accepted webhook calls, kept past the replay window.
			CREATE TABLE webhook_seen (signature TEXT PRIMARY KEY, seen_at INTEGER NOT NULL);
			-- Job records waiting to reach the D1 index; a row leaves only when D1 has acknowledged it.
			CREATE TABLE outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, queued_at INTEGER NOT NULL);
		`,
	},
];
