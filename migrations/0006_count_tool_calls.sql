-- A job's tool calls as it ended: how many ran and how many failed (the record's tool_calls), so a
-- list can show a completed job whose calls did not all succeed. Null until it ends, and for rows
-- written before this column.
ALTER TABLE jobs ADD COLUMN tool_calls_made INTEGER;
ALTER TABLE jobs ADD COLUMN tool_calls_failed INTEGER;
