-- Tokens and cost of ended jobs by agent and UTC day of their creation, kept by the index writes
-- (src/store/job-index.ts) for GET /v1/usage: the usage lives in each job's record in its agent's
-- object, and summing it there meant one request per job. A job is added when its final record
-- reaches the index, once. Pruning a job (retention) leaves it here: this is the fleet's usage
-- history, a row per agent and day. Jobs that ended before this migration are not in it; deployed,
-- the Worker that keeps it goes out right after this runs (npm run deploy), and a job that ends in
-- between, under the Worker before, is not counted.
CREATE TABLE usage_daily (
  day INTEGER NOT NULL,                      -- UTC midnight of the jobs' created_at, ms since the epoch
  agent TEXT NOT NULL,
  jobs INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cache_creation_input_tokens INTEGER NOT NULL,
  cache_read_input_tokens INTEGER NOT NULL,
  cost_usd REAL NOT NULL,                    -- the sum over priced_jobs; unpriced jobs add 0
  priced_jobs INTEGER NOT NULL,
  -- Newest day first, agents by name: GET /v1/usage's order, read straight off the key without a sort.
  PRIMARY KEY (day DESC, agent)
) WITHOUT ROWID;

-- One agent's days (GET /v1/usage?agent=…, drover usage --agent) without reading every agent's.
CREATE INDEX usage_by_agent ON usage_daily (agent, day);
