import { Cron } from "croner";
import { intervalMinutes, type Schedule } from "../config/schema.ts";

/**
 * The first slot of a schedule strictly after `after`. Cron slots are computed in the schedule's
 * timezone (croner handles DST gaps and repeats); interval slots are aligned to the Unix epoch so
 * an occurrence's instant is the same whoever computes it and whenever.
 */
export function nextRun(schedule: Schedule, after: Date): Date | null {
	if ("cron" in schedule) {
		return new Cron(schedule.cron, { timezone: schedule.timezone, paused: true }).nextRun(after);
	}
	const period = intervalMinutes(schedule.interval) * 60_000;
	return new Date((Math.floor(after.getTime() / period) + 1) * period);
}
