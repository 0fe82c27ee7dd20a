import { createScheduledController, env } from "cloudflare:test";
import worker from "../../src/index.ts";
import { DAY_MS, utcDay } from "../../src/shared/time.ts";

/** Delivers one cron tick to the real scheduled handler, as Cloudflare would, at an explicit time. */
export async function tick(at: string | number): Promise<void> {
	const scheduledTime = typeof at === "string" ? Date.parse(at) : at;
	await worker.scheduled(createScheduledController({ scheduledTime, cron: "* * * * *" }), env);
}

/**
 * Midnight (UTC) of the day `daysBack` days before the real clock's: a day for a test's ticks that
 * stays recent whenever the suite runs. A literal day ages: once it is more than a few days old
 * (the days a scheduler shard keeps its job-id counters), the shard refuses to deal its ids, and
 * the runs its ticks claim draw theirs instead. Take it once per file, so that a run crossing
 * midnight keeps its ticks on one day.
 */
export function recentDay(daysBack = 1): number {
	return utcDay(Date.now()) - daysBack * DAY_MS;
}

/** `hh:mm` (UTC) on `day`, a midnight (UTC) such as recentDay's. */
export function minuteOn(day: number, hhmm: string): number {
	return day + Date.parse(`1970-01-01T${hhmm}:00Z`);
}
