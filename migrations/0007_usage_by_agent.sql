-- usage_by_agent as 0005 defines it now: 0005 was changed after it was first written (the index was
-- added to it), and D1 applies a migration once, by name, so a database that applied the first
-- version of it has no such index and reads every agent's days for one agent's. A no-op where
-- 0005 made it. (A shipped migration is never changed again: a change is a new one, like this.)
CREATE INDEX IF NOT EXISTS usage_by_agent ON usage_daily (agent, day);
