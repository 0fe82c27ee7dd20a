-- The global job index: one row per job, fed from each AgentDO's outbox.
-- The AgentDO holds the full record; this table holds what GET /v1/jobs filters, sorts and shows.
CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  agent TEXT NOT NULL,
  schedule TEXT,
  trigger_type TEXT NOT NULL,
  status TEXT NOT NULL,
  exit_reason TEXT,
  dispatch TEXT,
  scheduled_instant TEXT,
  created_at INTEGER NOT NULL,
  started_at TEXT,
  finished_at TEXT,
  duration_seconds REAL,
  summary TEXT,
  revision INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

-- Keyset pagination is newest first on (created_at, id); every filter the API offers leads with its column.
CREATE INDEX jobs_by_time ON jobs (created_at DESC, id DESC);
CREATE INDEX jobs_by_agent_time ON jobs (agent, created_at DESC, id DESC);
CREATE INDEX jobs_by_status_time ON jobs (status, created_at DESC, id DESC);
CREATE INDEX jobs_by_trigger_time ON jobs (trigger_type, created_at DESC, id DESC);
CREATE INDEX jobs_by_agent_status_time ON jobs (agent, status, created_at DESC, id DESC);
