import { numberVar } from "../../config/vars.ts";
import { NotFoundError } from "../../errors.ts";
import { DAY_MS } from "../../shared/time.ts";

/**
 * The 404 for a job id the index does not hold. An id carries its UTC day, so one from before the
 * deployment's retention (a link in a months-old alert or delivery, a CLI history line) is told why it
 * may be gone: retention removed it, which a bare "no job" leaves a user to guess at. Later ids get the
 * bare answer: an agent's own retention_days may be shorter, but the index cannot say which agent.
 */
export function noJob(env: { RETENTION_DAYS?: string }, id: string, now = Date.now()): NotFoundError {
	const day = id.slice(4, 14);
	const days = numberVar(env, "RETENTION_DAYS");
	// Kept `days` after it ends, and it ended no earlier than its id's day began: an id whose day
	// began more than that long ago may have gone (never before, whatever the time of day).
	if (Date.parse(`${day}T00:00:00Z`) + days * DAY_MS < now) {
		return new NotFoundError(
			`no job ${id}: its id is from ${day}, and a job is kept ${days} days after it ends (RETENTION_DAYS; less where its agent sets retention_days), so retention may have removed it`,
		);
	}
	return new NotFoundError(`no job ${id}`);
}
