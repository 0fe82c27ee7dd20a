import type { Schedule } from "../config/schema.ts";
import { nextDue } from "./occurrences.ts";

/**
 * The first slot of a schedule strictly after `after`. Kept as its own module for the API's
 * `next_run`; it must agree with the scheduler, so it is the scheduler's own slot arithmetic
 * (cron in the schedule's timezone, intervals aligned to the Unix epoch).
 */
export function nextRun(schedule: Schedule, after: Date): Date | null {
	return nextDue(schedule, after);
}
