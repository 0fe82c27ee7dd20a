-- What ended a failed job (the record's error: its type and message, the message clipped as
-- INDEX_ERROR_CHARS says), so a list of jobs can say why each failed without a request per job.
-- Null for a job that did not fail, and for rows written before this column until their job
-- writes its next revision.
ALTER TABLE jobs ADD COLUMN error_type TEXT;
ALTER TABLE jobs ADD COLUMN error_message TEXT;
