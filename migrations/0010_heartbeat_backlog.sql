-- What the shards' follow-up queues held as the latest tick ended: the due agents left to
-- follow-ups, the oldest minute they are owed (ms) and how many shards had fallen behind (see
-- src/scheduler/backlog.ts). NULL in a row a tick before this wrote.
ALTER TABLE scheduler_heartbeat ADD COLUMN deferred INTEGER;
ALTER TABLE scheduler_heartbeat ADD COLUMN oldest_deferred_at INTEGER;
ALTER TABLE scheduler_heartbeat ADD COLUMN shards_behind INTEGER;
