-- The live API agents' names: GET /v1/status counts them (every 10 s a dashboard is open) from
-- this instead of a SCAN of agents, whose rows each hold a whole definition (kilobytes).
CREATE INDEX IF NOT EXISTS agents_live ON agents (name) WHERE deleted_at IS NULL;
