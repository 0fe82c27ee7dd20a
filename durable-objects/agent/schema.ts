import type { SqlMigration } from "../../src/store/sqlite-migrations.ts";

/**
 * AgentDO's SQLite schema, append-only: never edit a shipped step, add the next one.
 *
 * Queries on the hot path write a parameter the query planner would look at (a LIMIT, the key
 * ahead of a max() or an ORDER BY) as `+?`. workerd caches prepared statements, but SQLite
 * re-plans a statement each time such a parameter is bound again, which cost up to 17 µs a
 * statement here; `+?` is the same value, compared the same way, with the same index.
 */
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
	{
		version: 3,
		name: "create_runner_state",
		sql: `
			-- What a running job was started with (its manifest): later turns reuse it, so a deploy
			-- mid-run does not change the agent under a job's feet.
			CREATE TABLE job_setup (
				job_id TEXT PRIMARY KEY,
				session_id TEXT NOT NULL,
				definition TEXT NOT NULL,
				system TEXT NOT NULL,
				tools TEXT NOT NULL,
				models TEXT NOT NULL,
				max_tokens INTEGER NOT NULL,
				deadline INTEGER NOT NULL,
				next_step_at INTEGER NOT NULL,
				cancel_requested TEXT,
				approval_expires_at INTEGER
			);
			CREATE INDEX job_setup_by_next ON job_setup (next_step_at);
			-- The conversation, one row per message, committed after every turn.
			CREATE TABLE messages (
				job_id TEXT NOT NULL,
				seq INTEGER NOT NULL,
				role TEXT NOT NULL,
				content TEXT NOT NULL,
				PRIMARY KEY (job_id, seq)
			);
			-- Tool calls: recorded executing before the call leaves, completed/failed after.
			CREATE TABLE tool_calls (
				job_id TEXT NOT NULL,
				tool_use_id TEXT NOT NULL,
				seq INTEGER NOT NULL,
				name TEXT NOT NULL,
				input TEXT NOT NULL,
				status TEXT NOT NULL,
				decision TEXT,
				decided_by TEXT,
				result TEXT,
				is_error INTEGER,
				started_at INTEGER,
				finished_at INTEGER,
				PRIMARY KEY (job_id, tool_use_id)
			);
			-- JSONL output lines as produced, numbered from 1 per job.
			CREATE TABLE output_lines (
				job_id TEXT NOT NULL,
				line INTEGER NOT NULL,
				body TEXT NOT NULL,
				PRIMARY KEY (job_id, line)
			);
		`,
	},
	{
		version: 4,
		name: "track_output_in_r2",
		sql: `
			-- Lines up to flushed_line are in R2 chunks; output_key is set once the final object is written.
			CREATE TABLE output_state (
				job_id TEXT PRIMARY KEY,
				flushed_line INTEGER NOT NULL DEFAULT 0,
				output_key TEXT,
				lines INTEGER,
				bytes INTEGER
			);
		`,
	},
	{
		version: 5,
		name: "create_notepad_deliveries_effects",
		sql: `
			-- The agent's notepad: rendered into every prompt; written only through the API.
			CREATE TABLE notepad (key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at INTEGER NOT NULL);
			-- Jobs that reached a final status and whose effects (delivery, hooks, incidents) are not queued yet.
			CREATE TABLE final_effects (job_id TEXT PRIMARY KEY, queued_at INTEGER NOT NULL);
			-- Outgoing deliveries and hook calls, retried until they succeed or give up; id is the idempotency key.
			CREATE TABLE deliveries (
				id TEXT PRIMARY KEY,
				job_id TEXT NOT NULL,
				kind TEXT NOT NULL,
				target TEXT NOT NULL,
				url_secret TEXT NOT NULL,
				body TEXT NOT NULL,
				content_type TEXT NOT NULL,
				attempts INTEGER NOT NULL DEFAULT 0,
				next_at INTEGER NOT NULL,
				status TEXT NOT NULL,
				last_error TEXT
			);
			CREATE INDEX deliveries_due ON deliveries (status, next_at);
			-- Failures and clean runs waiting to reach the D1 incident table.
			CREATE TABLE incident_events (
				seq INTEGER PRIMARY KEY AUTOINCREMENT,
				kind TEXT NOT NULL,
				job_id TEXT,
				error TEXT,
				status INTEGER,
				at INTEGER NOT NULL
			);
		`,
	},
	{
		version: 6,
		name: "index_tool_calls_by_turn",
		sql: `
			-- Each step reads the latest turn's tool calls; without this it rescans all of the job's.
			CREATE INDEX tool_calls_by_turn ON tool_calls (job_id, seq);
		`,
	},
	{
		version: 7,
		name: "incident_watch",
		sql: `
			-- A row while this agent may have an open incident in D1 (only its own failures open one), so a
			-- clean run asks D1 to resolve incidents only then, not after every job. The generation lets a
			-- failure filed while a resolve is in flight keep the row.
			CREATE TABLE incident_watch (id INTEGER PRIMARY KEY CHECK (id = 1), generation INTEGER NOT NULL);
			-- Objects that existed before this table may have open incidents: their next clean run checks.
			INSERT INTO incident_watch (id, generation) SELECT 1, 1 WHERE EXISTS (SELECT 1 FROM jobs);
		`,
	},
	{
		version: 8,
		name: "outbox_one_row_per_job",
		sql: `
			-- One row per job waiting for the index, however many revisions it went through: each save
			-- bumps the row's version instead of appending a row (and an AUTOINCREMENT counter write), and
			-- a flush deletes the row only if no save came while D1 was being written.
			CREATE TABLE outbox_v8 (job_id TEXT PRIMARY KEY, version INTEGER NOT NULL, queued_at INTEGER NOT NULL) WITHOUT ROWID;
			INSERT INTO outbox_v8 (job_id, version, queued_at) SELECT job_id, count(*), min(queued_at) FROM outbox GROUP BY job_id;
			DROP TABLE outbox;
			ALTER TABLE outbox_v8 RENAME TO outbox;
		`,
	},
	{
		version: 9,
		name: "follow_up_consent",
		sql: `
			-- Continues and forks queued with allow_definition_change: they start on whatever the agent's
			-- definition is by then. Without a row, one whose agent changed while it waited is cancelled.
			CREATE TABLE follow_up_consent (job_id TEXT PRIMARY KEY) WITHOUT ROWID;
		`,
	},
	{
		version: 10,
		name: "schedule_changed_at",
		sql: `
			-- When an API agent's PUT changed the schedule's timing (spec still the old one until the next
			-- tick): the old timing's missed slots are accounted up to then, the new timing's from then.
			ALTER TABLE schedule_state ADD COLUMN changed_at INTEGER;
		`,
	},
	{
		version: 11,
		name: "hold_hooks_for_their_delivery",
		sql: `
			-- Hook calls the previous release queued beside a delivery still being sent: held, as this
			-- release queues them, so they go once the delivery has an outcome and carry it.
			UPDATE deliveries SET status = 'held'
			 WHERE kind = 'hook' AND status IN ('pending', 'sending')
			   AND job_id IN (SELECT job_id FROM deliveries WHERE kind = 'delivery' AND status IN ('pending', 'sending'));
		`,
	},
	{
		version: 12,
		name: "registry_sync",
		sql: `
			-- A row while the agent's shard and the D1 registry may not hold what agent_state says (a
			-- define or remove not yet propagated). seq moves on with every write; a sync deletes the row
			-- only if no write came while it ran. by and at: who made the latest write, and when. due_at:
			-- when the alarm takes it up (a grace after the write, later after a failed sync).
			CREATE TABLE registry_sync (
				id INTEGER PRIMARY KEY CHECK (id = 1),
				seq INTEGER NOT NULL,
				by TEXT NOT NULL,
				at INTEGER NOT NULL,
				due_at INTEGER NOT NULL
			);
		`,
	},
	{
		version: 13,
		name: "registry_sync_on_upgrade",
		sql: `
			-- An API agent from a release whose define and remove made three writes that could stop
			-- half-way: its shard and D1 are told what the object holds at its first pass.
			INSERT OR IGNORE INTO registry_sync (id, seq, by, at, due_at)
			SELECT 1, 1, 'upgrade', CAST(unixepoch('subsec') * 1000 AS INTEGER), 0 FROM agent_state WHERE id = 1 AND source = 'api';
		`,
	},
	{
		version: 14,
		name: "job_setup_extra_requests",
		sql: `
			-- Billed model requests that are not turns (a paused turn's continuation, a fallback's refused
			-- answer): max_requests counts them with num_turns. Written only when one happens.
			ALTER TABLE job_setup ADD COLUMN extra_requests INTEGER NOT NULL DEFAULT 0;
		`,
	},
	{
		version: 15,
		name: "schedule_defined_at",
		sql: `
			-- When a PUT or POST started a schedule no tick has seen yet (the clock's time, beside
			-- changed_at's tick time): the slots it is owed after a tick went missing start there.
			ALTER TABLE schedule_state ADD COLUMN defined_at INTEGER;
		`,
	},
	{
		version: 16,
		name: "agent_tick_clock",
		sql: `
			-- The newest tick that claimed a run of this agent or found one held (its scheduled time), and
			-- when it came (this object's clock): a held claim's lateness is measured on the ticks' clock.
			ALTER TABLE agent_state ADD COLUMN tick_at INTEGER;
			ALTER TABLE agent_state ADD COLUMN tick_noted_at INTEGER;
		`,
	},
	{
		version: 17,
		name: "job_setup_by_session",
		sql: `
			-- A session's jobs (GET /v1/sessions/:id, GET /v1/agents/:agent/sessions): every job that
			-- started has its setup row, and the row its session. One index entry a job, written once
			-- when it starts (later writes of the row leave session_id alone).
			CREATE INDEX job_setup_by_session ON job_setup (session_id);
		`,
	},
	{
		version: 18,
		name: "persistent_session",
		sql: `
			-- The agent's persistent session (session.mode: persistent): its next run continues job_id,
			-- the last run of the session that completed. started_at: when the session's first run
			-- started (its timeout counts from it); active_at: when job_id completed (its idle_timeout).
			CREATE TABLE persistent_session (
				id INTEGER PRIMARY KEY CHECK (id = 1),
				session_id TEXT NOT NULL,
				job_id TEXT NOT NULL,
				started_at INTEGER NOT NULL,
				active_at INTEGER NOT NULL
			);
		`,
	},
	{
		version: 19,
		name: "persistent_session_guards",
		sql: `
			-- A persistent run's view of the session when it started: the last completed run it found
			-- ('' for none; NULL for a run not in persistent mode). It moves the session on only if the
			-- session still stands there when it completes, so a reset, a delete or a run that completed
			-- first is never undone.
			ALTER TABLE job_setup ADD COLUMN persistent_from TEXT;
			-- Why the session is not to be continued though unexpired: a run failed on the conversation
			-- it carried (too long for the model, or refused as invalid), which every later run would carry.
			ALTER TABLE persistent_session ADD COLUMN ended_by TEXT;
		`,
	},
	{
		version: 20,
		name: "tool_result_heads",
		sql: `
			-- A tool result is stored as the head the model is ever sent, its whole length here: a whole
			-- result could pass the platform's 2 MB a value (a megabyte of Latin-1 decoded as UTF-8 is
			-- three), and its call, done, would then end the job indeterminate. The JSONL keeps it whole.
			ALTER TABLE tool_calls ADD COLUMN result_chars INTEGER;
		`,
	},
	{
		version: 21,
		name: "incident_event_sources",
		sql: `
			-- The schedule (or webhook, or one-off run) a failure or clean run came from: an incident
			-- waits for the source that failed to run clean (see src/incidents/sources.ts). NULL in events
			-- queued before: their clean runs resolve as before.
			ALTER TABLE incident_events ADD COLUMN source TEXT;
			-- The sources the agent's open incidents wait on, as D1 last said (JSON), or NULL when not known
			-- since the last failure: a clean run of none of them asks D1 nothing.
			ALTER TABLE incident_watch ADD COLUMN waiting TEXT;
		`,
	},
	{
		version: 22,
		name: "occurrences_by_retention",
		sql: `
			-- When each record retention can remove began to age: a finished job's ledger row from its
			-- finish, a skip from its claim. A run still queued or running is not in it, so the alarm
			-- waits for the first record that can go, not for a run queued across a long pause, which
			-- woke the object hourly to prune nothing. A row enters once, when its job ends.
			CREATE INDEX occurrences_by_retention ON occurrences (coalesce(finished_at, claimed_at))
				WHERE job_id IS NULL OR finished_at IS NOT NULL;
		`,
	},
	{
		version: 23,
		name: "occurrences_retain_until",
		sql: `
			-- When a deleted agent's history must go at the latest, fixed when its name is defined again:
			-- the new agent's retention_days, if longer, does not keep the old agent's runs longer than
			-- the old one promised. NULL for every other row; the index holds only the stamped ones.
			ALTER TABLE occurrences ADD COLUMN retain_until INTEGER;
			CREATE INDEX occurrences_by_retain_until ON occurrences (retain_until) WHERE retain_until IS NOT NULL;
		`,
	},
	{
		version: 24,
		name: "default_prompt_runs",
		sql: `
			-- A manual or webhook run queued with the agent's default prompt: how many characters of its
			-- prompt the default is (a webhook's payload follows). A run that starts on a changed
			-- definition takes that definition's prompt, as it takes its system prompt and tools. On the
			-- ledger row the trigger writes anyway: no row more a run.
			ALTER TABLE occurrences ADD COLUMN default_prompt_chars INTEGER;
		`,
	},
	{
		version: 25,
		name: "deliveries_in_doubt",
		sql: `
			-- Why an earlier attempt of a send may have arrived (it timed out, failed in transit, or was out
			-- when the object died), or NULL: a refusal after it (a 409 for the replayed Idempotency-Key)
			-- leaves the outcome unknown, not failed.
			ALTER TABLE deliveries ADD COLUMN in_doubt TEXT;
		`,
	},
	{
		version: 26,
		name: "former_agent_jobs",
		sql: `
			-- The jobs of a deleted agent still able to end (a run going on its manifest, a delivery still
			-- retried) when its name was given to a new agent: their failures and clean ends are not the new
			-- agent's incidents. Marked by id, not by time: a tick's jobs are dated by the tick's clock.
			CREATE TABLE former_agent_jobs (job_id TEXT PRIMARY KEY);
		`,
	},
	{
		version: 27,
		name: "webhook_seen_job",
		sql: `
			-- The job an accepted webhook call created: a sender's resend of the same signed bytes (its
			-- answer lost) is answered with that job. NULL for a call remembered before this step.
			ALTER TABLE webhook_seen ADD COLUMN job_id TEXT;
		`,
	},
	{
		version: 28,
		name: "message_chunks",
		sql: `
			-- A message whose JSON is over what a row may safely hold (the platform refuses a value or row
			-- over 2 MB; a model's answer can carry a server tool's result, a fetched PDF in base64, and a
			-- turn's tool results can escape to six bytes a character) is stored in pieces of at most a
			-- megabyte: its messages row holds the first and chunks says how many there are; the others
			-- are here, numbered from 1. NULL: the row holds the whole message, as every one before this step.
			ALTER TABLE messages ADD COLUMN chunks INTEGER;
			CREATE TABLE message_chunks (
				job_id TEXT NOT NULL,
				seq INTEGER NOT NULL,
				chunk INTEGER NOT NULL,
				content TEXT NOT NULL,
				PRIMARY KEY (job_id, seq, chunk)
			);
		`,
	},
	{
		version: 29,
		name: "sessions",
		sql: `
			-- Each session that has a started job (a job_setup row): its last job to start (the session's
			-- highest job_setup rowid), that job's created_at (the order GET /v1/agents/:agent/sessions
			-- lists sessions in, an index seek) and how many of its jobs started. Listing sessions from
			-- job_setup walked every job between two sessions' newest, a whole long session's length a
			-- page. Kept by triggers on job_setup, so every write of it keeps it right, the older
			-- release's too after a rollback. created_at is written once, as a job is queued.
			CREATE TABLE sessions (
				session_id TEXT PRIMARY KEY,
				last_job_id TEXT NOT NULL,
				last_created_at INTEGER,
				job_count INTEGER NOT NULL
			) WITHOUT ROWID;
			CREATE INDEX sessions_by_last ON sessions (last_created_at DESC, last_job_id DESC);
			INSERT INTO sessions (session_id, last_job_id, last_created_at, job_count)
			SELECT s.session_id, s.job_id, (SELECT created_at FROM jobs WHERE id = s.job_id), g.n
			FROM (SELECT session_id, max(rowid) AS last, count(*) AS n FROM job_setup GROUP BY session_id) g
			JOIN job_setup s ON s.rowid = g.last;
			-- A job starts: a new row's rowid is above every row's, so it is its session's last.
			CREATE TRIGGER sessions_job_started AFTER INSERT ON job_setup BEGIN
				INSERT INTO sessions (session_id, last_job_id, last_created_at, job_count)
				VALUES (NEW.session_id, NEW.job_id, (SELECT created_at FROM jobs WHERE id = NEW.job_id), 1)
				ON CONFLICT (session_id) DO UPDATE SET last_job_id = excluded.last_job_id, last_created_at = excluded.last_created_at, job_count = job_count + 1;
			END;
			-- A job's setup goes (retention): its session counts one less, goes when none is left, and
			-- falls back to its new last when the job was its last.
			CREATE TRIGGER sessions_job_removed AFTER DELETE ON job_setup BEGIN
				UPDATE sessions SET job_count = job_count - 1 WHERE session_id = OLD.session_id;
				DELETE FROM sessions WHERE session_id = OLD.session_id AND job_count <= 0;
				UPDATE sessions SET (last_job_id, last_created_at) = (
					SELECT s.job_id, (SELECT created_at FROM jobs WHERE id = s.job_id) FROM job_setup s WHERE s.session_id = OLD.session_id ORDER BY s.rowid DESC LIMIT 1)
				WHERE session_id = OLD.session_id AND last_job_id = OLD.job_id;
			END;
			-- putSetup writes with INSERT OR REPLACE, and a REPLACE deletes the row it replaces without
			-- firing delete triggers (SQLite's recursive_triggers is off): the row is deleted first.
			CREATE TRIGGER sessions_job_restarted BEFORE INSERT ON job_setup WHEN EXISTS (SELECT 1 FROM job_setup WHERE job_id = NEW.job_id) BEGIN
				DELETE FROM job_setup WHERE job_id = NEW.job_id;
			END;
			-- No release moves a started job to another session; a hand edit that does has both sessions
			-- counted again in full.
			CREATE TRIGGER sessions_job_moved AFTER UPDATE OF session_id ON job_setup WHEN NEW.session_id IS NOT OLD.session_id BEGIN
				DELETE FROM sessions WHERE session_id IN (OLD.session_id, NEW.session_id);
				INSERT INTO sessions (session_id, last_job_id, last_created_at, job_count)
				SELECT s.session_id, s.job_id, (SELECT created_at FROM jobs WHERE id = s.job_id), g.n
				FROM (SELECT session_id, max(rowid) AS last, count(*) AS n FROM job_setup WHERE session_id IN (OLD.session_id, NEW.session_id) GROUP BY session_id) g
				JOIN job_setup s ON s.rowid = g.last;
			END;
		`,
	},
	{
		version: 30,
		name: "occurrences_skips_by_claimed",
		sql: `
			-- Retention's delete of the ledger's skips (rows without a job) past the cutoff: by
			-- occurrences_by_claimed it read every ledger row claimed before it, the expired jobs' rows
			-- of a backlog too, at each pass (13 to 16 ms a pass with 44,000 behind, in node:sqlite). Skips only here.
			CREATE INDEX occurrences_skips_by_claimed ON occurrences (claimed_at) WHERE job_id IS NULL;
		`,
	},
	{
		version: 31,
		name: "output_state_marks",
		sql: `
			-- Where lines start in a consolidated object (consolidate's marks, JSON [[line, offset], …]):
			-- a read of the lines after N starts at the last mark before them, not at the object's byte 0.
			ALTER TABLE output_state ADD COLUMN marks TEXT;
		`,
	},
	{
		version: 32,
		name: "job_setup_cancel_by",
		sql: `
			-- Who asked for a running job's cancel (a token's name), for its job.finished line when the
			-- job's own loop ends it: the cancel's reason says it in words, the line says it as a field.
			ALTER TABLE job_setup ADD COLUMN cancel_by TEXT;
		`,
	},
	{
		version: 33,
		name: "job_setup_unbilled_tries",
		sql: `
			-- Requests sent to the Messages API for the job that were not billed (a 529 retried, a
			-- call that failed unanswered), for its job.finished line's model_tries: model_calls
			-- counts the billed ones. Kept apart so a call answered at its first try writes nothing more.
			ALTER TABLE job_setup ADD COLUMN unbilled_tries INTEGER NOT NULL DEFAULT 0;
		`,
	},
	{
		version: 34,
		name: "tool_calls_decision_reason",
		sql: `
			-- Why an operator denied a call, in their words: the model is told it with the refusal, so
			-- it can do otherwise rather than guess (or ask for the same call again).
			ALTER TABLE tool_calls ADD COLUMN decision_reason TEXT;
		`,
	},
	{
		version: 35,
		name: "pruned_outputs",
		sql: `
			-- The R2 output of jobs retention pruned, still to delete: written with the deletion of the
			-- job's rows, deleted once R2 has deleted the output. Rows first, so that a job is never kept
			-- without its output, and the output never kept without a row that leads to it.
			CREATE TABLE pruned_outputs (job_id TEXT PRIMARY KEY, chunks INTEGER NOT NULL) WITHOUT ROWID;
		`,
	},
];
