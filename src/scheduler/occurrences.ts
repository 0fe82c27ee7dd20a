import { Cron } from "croner";
import { intervalMinutes, type CronSchedule, type IntervalSchedule, type Schedule } from "../config/schema.ts";

// An occurrence is identified by its slot's UTC instant (`scheduled_instant`), so every function
// here must give the same instants for the same schedule whoever calls it and from whichever cursor.

export type Dispatch = "on_time" | "late" | "catch_up";
export type PlannedFire = { instant: Date; dispatch: Dispatch };
/** A run of consecutive slots that were not fired, kept as a range so a long outage stays small. */
export type SkippedRange = { first: Date; last: Date; count: number; reason: string };
export type TickPlan = {
	fires: PlannedFire[];
	skipped: SkippedRange[];
	/** Every slot ≤ cursor is handled: advanced before dispatch so a crash cannot re-fire a slot. */
	cursor: Date;
	/** The first slot after the cursor. */
	next: Date | null;
};
export type SlotSpan = {
	/** Ascending; the newest `cap` slots when there are more. */
	slots: Date[];
	total: number;
	truncated: boolean;
	/** False when a cron span was too long to count: `total` is then a lower bound. */
	exact: boolean;
};

/** Cron slots are counted one step at a time; beyond this a span is reported as "at least". */
export const CRON_COUNT_LIMIT = 100_000;

const MINUTE_MS = 60_000;
const MIN_GRACE_MS = 2 * MINUTE_MS;
const MAX_GRACE_MS = 2 * 60 * MINUTE_MS;

// Building a Cron parses the pattern; a tick plans thousands of schedules that share a handful of
// patterns. Instances are stateless when given an explicit reference date, so sharing them is safe.
const CRON_CACHE_LIMIT = 1024;
const cronCache = new Map<string, Cron>();

function cronOf(schedule: CronSchedule): Cron {
	const key = `${schedule.timezone}\n${schedule.cron}`;
	let cron = cronCache.get(key);
	if (cron === undefined) {
		if (cronCache.size >= CRON_CACHE_LIMIT) cronCache.clear();
		cron = new Cron(schedule.cron, {
			timezone: schedule.timezone,
			paused: true,
			// The config allows only five fields; "auto" would read a sixth as seconds.
			mode: "5-part",
			// Explicit wall times such as "30 2,14 * * *" are meant as wall times: run once when the
			// time repeats in fall-back and after the gap in spring-forward, as "30 2 * * *" does.
			// Croner's default would fire a list twice in the repeated hour and drop it in the gap.
			fixedTimeRule: "no-wildcard",
		});
		cronCache.set(key, cron);
	}
	return cron;
}

function intervalMs(schedule: IntervalSchedule): number {
	return intervalMinutes(schedule.interval) * MINUTE_MS;
}

function checkDate(d: Date, name: string): number {
	const t = d.getTime();
	if (Number.isNaN(t)) throw new RangeError(`${name} is not a valid date`);
	return t;
}

/**
 * Every slot s with afterExclusive < s ≤ untilInclusive, ascending. Past `cap` slots only the newest
 * `cap` are returned (the newest matter most after an outage) and `total` still counts them all.
 */
export function slotsBetween(schedule: Schedule, afterExclusive: Date, untilInclusive: Date, cap = 1000): SlotSpan {
	const after = checkDate(afterExclusive, "afterExclusive");
	const until = checkDate(untilInclusive, "untilInclusive");
	const keep = Math.max(0, Math.floor(cap));
	if (until <= after) return { slots: [], total: 0, truncated: false, exact: true };

	if ("cron" in schedule) return cronSlotsBetween(cronOf(schedule), after, until, keep);

	// Epoch alignment makes slot k the instant k × period, so the span is counted, not walked.
	const period = intervalMs(schedule);
	const firstK = Math.floor(after / period) + 1;
	const lastK = Math.floor(until / period);
	const total = Math.max(0, lastK - firstK + 1);
	const slots: Date[] = [];
	for (let k = Math.max(firstK, lastK - keep + 1); k <= lastK; k++) slots.push(new Date(k * period));
	return { slots, total, truncated: total > keep, exact: true };
}

function cronSlotsBetween(cron: Cron, after: number, until: number, keep: number): SlotSpan {
	// A ring buffer: shifting an array would cost O(cap) for every slot of a long outage.
	const ring: Date[] = [];
	let total = 0;
	let slot = cron.nextRun(new Date(after));
	while (slot !== null && slot.getTime() <= until) {
		if (total === CRON_COUNT_LIMIT) {
			// Too many to count; the newest are still exact. previousRuns excludes its reference,
			// and slots are whole seconds, so one millisecond past `until` includes a slot at `until`.
			const newest = cron.previousRuns(keep, new Date(until + 1)).reverse();
			return { slots: newest, total, truncated: true, exact: false };
		}
		if (keep > 0) ring[total % keep] = slot;
		total++;
		slot = cron.nextRun(slot);
	}
	if (total <= keep) return { slots: ring, total, truncated: false, exact: true };
	const start = total % keep;
	return { slots: [...ring.slice(start), ...ring.slice(0, start)], total, truncated: true, exact: true };
}

/**
 * Milliseconds from this slot to the one after it: the interval, or for cron the real gap, which
 * changes across DST (a daily job's day is 23 h or 25 h). Infinity when the cron never fires again.
 */
export function periodAt(schedule: Schedule, slot: Date): number {
	if (!("cron" in schedule)) return intervalMs(schedule);
	const next = cronOf(schedule).nextRun(slot);
	return next === null ? Number.POSITIVE_INFINITY : next.getTime() - slot.getTime();
}

/** How late a slot may still fire as itself: max(120 s, min(period / 2, 2 h)), as Hermes does. */
export function graceWindowMs(periodMs: number): number {
	return Math.max(MIN_GRACE_MS, Math.min(periodMs / 2, MAX_GRACE_MS));
}

/** The first slot strictly after `cursor`. */
export function nextDue(schedule: Schedule, cursor: Date): Date | null {
	const t = checkDate(cursor, "cursor");
	if ("cron" in schedule) return cronOf(schedule).nextRun(cursor);
	const period = intervalMs(schedule);
	return new Date((Math.floor(t / period) + 1) * period);
}

/**
 * What a tick at `now` must do for a schedule whose slots up to `cursor` are all handled. At most
 * one fire per tick: several due slots would otherwise run back to back for one late tick. Every
 * slot that does not fire is returned in a skipped range with its reason, so none is lost silently.
 */
export function planTick(schedule: Schedule, cursor: Date, now: Date): TickPlan {
	const from = checkDate(cursor, "cursor");
	const at = checkDate(now, "now");
	// A duplicate or reordered tick: its slots were handled by the tick that moved the cursor.
	if (at <= from) return { fires: [], skipped: [], cursor, next: nextDue(schedule, cursor) };

	const advanced = new Date(at);
	const next = nextDue(schedule, advanced);
	// Only the newest slot can be in grace: were an older one in grace, so would be every newer one.
	const { slots, total, exact } = slotsBetween(schedule, cursor, now, 2);
	const newest = slots.at(-1);
	if (newest === undefined) return { fires: [], skipped: [], cursor: advanced, next };

	const lateness = at - newest.getTime();
	const grace = graceWindowMs(periodAt(schedule, newest));
	const iso = newest.toISOString();
	const older = (reason: string): SkippedRange[] => {
		const last = slots.at(-2);
		const first = nextDue(schedule, cursor);
		if (last === undefined || first === null) return [];
		return [{ first, last, count: total - 1, reason: withCount(reason, exact) }];
	};

	if (lateness <= grace) {
		return {
			fires: [{ instant: newest, dispatch: lateness < MINUTE_MS ? "on_time" : "late" }],
			skipped: older(`superseded by the run of ${iso}`),
			cursor: advanced,
			next,
		};
	}
	if (schedule.catch_up) {
		return {
			fires: [{ instant: newest, dispatch: "catch_up" }],
			skipped: older(`collapsed into catch-up run of ${iso}`),
			cursor: advanced,
			next,
		};
	}
	const first = nextDue(schedule, cursor) ?? newest;
	const reason = `missed by ${humanDuration(lateness)} (grace window ${humanDuration(grace)}); catch_up is off`;
	return { fires: [], skipped: [{ first, last: newest, count: total, reason: withCount(reason, exact) }], cursor: advanced, next };
}

function withCount(reason: string, exact: boolean): string {
	return exact ? reason : `${reason} (at least ${CRON_COUNT_LIMIT} slots; counting stops there)`;
}

const UNITS: readonly (readonly [string, number])[] = [
	["d", 86_400],
	["h", 3_600],
	["m", 60],
	["s", 1],
];

/** "3h 5m", "45s": the largest unit and the one below it, enough precision for a log line. */
export function humanDuration(ms: number): string {
	let rest = Math.max(0, Math.floor(ms / 1000));
	const parts: string[] = [];
	for (const [unit, seconds] of UNITS) {
		const n = Math.floor(rest / seconds);
		rest -= n * seconds;
		if (parts.length > 0 || n > 0) parts.push(n > 0 ? `${n}${unit}` : "");
		if (parts.length === 2) break;
	}
	const shown = parts.filter((p) => p !== "");
	return shown.length > 0 ? shown.join(" ") : "0s";
}
