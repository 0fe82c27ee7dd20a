-- How many live API agents the registry holds, kept by its own writes (src/store/agent-registry.ts):
-- GET /v1/status, which each open dashboard asks every 10 s, counted them from the agents_live index,
-- a row read per agent each time: 1,000 rows a call at 1,000 agents, 8.6 million a day for one tab
-- left open, billed reads that grew with the fleet. Deployed, the Worker that keeps the count
-- goes out right after this runs (npm run deploy): an agent defined or deleted in between, under the
-- Worker before, is counted at the next hour's tick, which counts them again (src/scheduler/tick.ts).
CREATE TABLE agent_counts (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  live INTEGER NOT NULL
);

INSERT INTO agent_counts (id, live) SELECT 1, count(*) FROM agents WHERE deleted_at IS NULL;
