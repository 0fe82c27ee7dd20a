-- Failure incidents, deduplicated by error signature (Hermes): one row per agent + normalized error.
CREATE TABLE incidents (
  id TEXT PRIMARY KEY,
  agent TEXT NOT NULL,
  signature TEXT NOT NULL,
  class TEXT NOT NULL,
  state TEXT NOT NULL,
  error TEXT NOT NULL,
  count INTEGER NOT NULL,
  first_seen_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  last_job_id TEXT,
  alerted_at INTEGER,
  resolved_at INTEGER,
  closed_at INTEGER,
  closed_by TEXT
);

CREATE INDEX incidents_by_time ON incidents (last_seen_at DESC, id DESC);
CREATE INDEX incidents_by_state ON incidents (state, last_seen_at DESC, id DESC);
CREATE INDEX incidents_by_agent ON incidents (agent, state, last_seen_at DESC, id DESC);
