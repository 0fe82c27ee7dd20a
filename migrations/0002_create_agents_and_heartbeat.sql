-- Agents defined through the API (fleet.yaml agents live in the bundle). A deleted agent keeps its
-- row, marked deleted_at, so its job history stays attributable.
CREATE TABLE agents (
  name TEXT PRIMARY KEY,
  definition TEXT NOT NULL,
  definition_revision TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  deleted_at INTEGER
);

-- The scheduler's liveness: one row, rewritten by every cron tick.
CREATE TABLE scheduler_heartbeat (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  tick_at INTEGER NOT NULL,
  scheduled_time INTEGER NOT NULL,
  outcome TEXT NOT NULL,
  shards_ok INTEGER NOT NULL,
  shards_failed INTEGER NOT NULL,
  agents_called INTEGER NOT NULL,
  claimed INTEGER NOT NULL,
  skipped INTEGER NOT NULL,
  error TEXT,
  last_ok_at INTEGER
);
