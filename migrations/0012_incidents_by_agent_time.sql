-- An agent's incidents newest first (GET /v1/incidents?agent=…, drover incidents --agent, its
-- dashboard page): incidents_by_agent leads with (agent, state), so a list without a state read
-- every incident of the agent and sorted them for each page. Index-only (see src/store/d1-schema.ts):
-- a D1 without it lists the same, by a sort.
CREATE INDEX IF NOT EXISTS incidents_by_agent_time ON incidents (agent, last_seen_at DESC, id DESC);
