-- Jobs in each final status, kept by the index writes themselves (src/store/job-index.ts): counting
-- the jobs table on every GET /v1/status read every row of its status index, 80 ms and a million
-- rows read (billed) at a million jobs. Statuses that are not final are few and still counted live.
-- Deployed, the Worker that keeps the counts goes out right after this runs (npm run deploy): a job
-- that ends in between, under the Worker before, is not counted.
CREATE TABLE job_counts (
  status TEXT PRIMARY KEY,
  n INTEGER NOT NULL
);

INSERT INTO job_counts (status, n)
SELECT status, count(*) FROM jobs WHERE status IN ('completed', 'failed', 'cancelled', 'indeterminate') GROUP BY status;
