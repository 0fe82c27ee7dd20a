-- How many of a day's priced_jobs used no tokens (a job that never called a model is priced at $0):
-- with them alone priced, GET /v1/usage answers no cost for the day, where it answered $0 beside
-- jobs whose model had no price. Added to per job from this migration on; a row's jobs added before
-- it (or by a release before it) count 0 here, and are answered as they were.
ALTER TABLE usage_daily ADD COLUMN tokenless_priced_jobs INTEGER NOT NULL DEFAULT 0;
