-- An incident's alert is claimed before it is sent: two ticks of one minute (a duplicate cron
-- delivery, or `drover tick` beside the cron), or an agent's failure beside a tick's retry, would
-- otherwise each find it unalerted and page twice. A claim older than a minute is a sender that
-- died mid-send, and is taken over.
ALTER TABLE incidents ADD COLUMN alert_claimed_at INTEGER;
-- When the incident was opened, or last re-opened: its alert's Idempotency-Key, the same on every
-- try of that opening (the count moves with each failure).
ALTER TABLE incidents ADD COLUMN opened_at INTEGER;
