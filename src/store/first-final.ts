/**
 * The guard of every statement that adds a job's final record to a rollup (job_counts,
 * usage_daily): true unless the index row already holds that final status. A final status is a
 * job's last, so a row holding it was added when it got it; a record sent again, merged with
 * another or arriving late is not added twice. `?1` binds the job id, `?2` its final status and
 * `?3` its agent, and the statement must run before the record's upsert, in its batch. A job whose
 * id another agent's row holds is not added at all: the upsert leaves it out of the index (see
 * upsertStatements), and with no row of its own, neither could it be told apart from a resend.
 */
export const FIRST_FINAL = "NOT EXISTS (SELECT 1 FROM jobs WHERE id = ?1 AND (status = ?2 OR agent != ?3))";
