import { createScheduledController, env } from "cloudflare:test";
import worker from "../../src/index.ts";
import { DAY_MS, utcDay } from "../../src/shared/time.ts";

/** Delivers one cron tick to the real scheduled handler, as Cloudflare would, at an explicit time. */
export async function tick(at: string | number): Promise<void> {
	const scheduledTime = typeof at === "string" ? Date.parse(at) : at;
	await worker.scheduled(createScheduledController({ scheduledTime, cron: "* * * * *" }), env);
}

/**
 * Midnight (UTC) of the day `days` days from the real clock's (negative: before it): a day for a
 * test's ticks that keeps its place against the present whenever the suite runs. A literal day
 * ages: once it is more than a few days past (the days a scheduler shard keeps its job-id
 * counters), the shard refuses to deal its ids and the runs its ticks claim draw theirs instead;
 * one meant to be ahead, so that no alarm set for it fires on its own, comes due. Take it once per
 * file, so that a run crossing midnight keeps its ticks on one day.
 */
export function dayFromToday(days: number): number {
	return utcDay(Date.now()) + days * DAY_MS;
}

/** `hh:mm` (UTC) on `day`, a midnight (UTC) such as dayFromToday's. */
export function minuteOn(day: number, hhmm: string): number {
	return day + Date.parse(`1970-01-01T${hhmm}:00Z`);
}
