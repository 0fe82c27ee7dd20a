-- Which recurring sources (`schedule:<name>`, `webhook`; `manual` for runs that do not recur) are
-- failing with an incident's error since it opened. A clean run clears its own source and `manual`,
-- and the incident resolves once none is left: an agent with one failing and one healthy schedule
-- kept its incident open, alerted once, where each clean run used to resolve it and each failure
-- re-open it and page again. NULL for an incident opened before this: any clean run resolves it.
ALTER TABLE incidents ADD COLUMN failing TEXT;
