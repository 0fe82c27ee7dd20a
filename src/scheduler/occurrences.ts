import { Cron, type CronOptions } from "croner";
import { intervalMinutes } from "../config/duration.ts";
import type { CronSchedule, IntervalSchedule, Schedule } from "../config/schema.ts";

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
const HOUR_MS = 60 * MINUTE_MS;
const MIN_GRACE_MS = 2 * MINUTE_MS;
const MAX_GRACE_MS = 2 * HOUR_MS;

const CRON_OPTIONS: CronOptions = {
	paused: true,
	// The config allows only five fields; "auto" would read a sixth as seconds.
	mode: "5-part",
	// Explicit wall times such as "30 2,14 * * *" are meant as wall times: run once when the time
	// repeats in fall-back and after the gap in spring-forward, as "30 2 * * *" does. Croner's
	// default would run a list twice in the repeated hour and drop it in the gap.
	fixedTimeRule: "no-wildcard",
};

// Building a Cron parses the pattern; a tick plans thousands of schedules that share a handful of
// patterns. Instances are stateless when given an explicit reference date, so sharing them is safe.
const CRON_CACHE_LIMIT = 1024;
const cronCache = new Map<string, Cron>();

function cached(key: string, make: () => Cron): Cron {
	let cron = cronCache.get(key);
	if (cron === undefined) {
		if (cronCache.size >= CRON_CACHE_LIMIT) cronCache.clear();
		cron = make();
		cronCache.set(key, cron);
	}
	return cron;
}

// A named zone costs croner an Intl conversion on every step (about 50 µs, ten times a fixed
// offset), so zones that are UTC by definition skip it.
const UTC_ZONES = new Set(["UTC", "Etc/UTC", "GMT", "Etc/GMT"]);

function zonedCron(schedule: CronSchedule): Cron {
	if (UTC_ZONES.has(schedule.timezone)) return fixedCron(schedule.cron, 0);
	return cached(`${schedule.timezone}\n${schedule.cron}`, () => new Cron(schedule.cron, { ...CRON_OPTIONS, timezone: schedule.timezone }));
}

function fixedCron(pattern: string, offsetMinutes: number): Cron {
	return cached(`${offsetMinutes}\n${pattern}`, () => new Cron(pattern, { ...CRON_OPTIONS, utcOffset: offsetMinutes }));
}

const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/** The zone's UTC offset in whole minutes at an instant, NaN when it is not whole minutes (LMT). */
function offsetMinutesAt(timeZone: string, at: number): number {
	let format = offsetFormats.get(timeZone);
	if (format === undefined) {
		format = new Intl.DateTimeFormat("en-US", {
			timeZone,
			hourCycle: "h23",
			year: "numeric",
			month: "numeric",
			day: "numeric",
			hour: "numeric",
			minute: "numeric",
			second: "numeric",
		});
		offsetFormats.set(timeZone, format);
	}
	const part = { year: 0, month: 1, day: 1, hour: 0, minute: 0, second: 0 };
	for (const p of format.formatToParts(at)) if (p.type in part) part[p.type as keyof typeof part] = Number(p.value);
	const wall = Date.UTC(part.year, part.month - 1, part.day, part.hour, part.minute, part.second);
	const offset = wall - Math.floor(at / 1000) * 1000;
	return offset % MINUTE_MS === 0 ? offset / MINUTE_MS : Number.NaN;
}

function intervalMs(schedule: IntervalSchedule): number {
	return intervalMinutes(schedule.interval) * MINUTE_MS;
}

function checkDate(d: Date, name: string): number {
	const t = d.getTime();
	if (Number.isNaN(t)) throw new RangeError(`${name} is not a valid date`);
	return t;
}

type Walk = {
	first: Date | null;
	/** Ascending, the newest `keep` of them. */
	slots: Date[];
	total: number;
	exact: boolean;
	/** The first slot after the span: the next due slot, and the end of the newest slot's period. */
	following: Date | null;
};

function walk(schedule: Schedule, after: number, until: number, keep: number): Walk {
	if ("cron" in schedule) return walkCron(schedule, after, until, keep);
	// Epoch alignment makes slot k the instant k × period, so the span is counted, not walked.
	const period = intervalMs(schedule);
	const firstK = Math.floor(after / period) + 1;
	const lastK = Math.floor(until / period);
	const total = Math.max(0, lastK - firstK + 1);
	const slots: Date[] = [];
	for (let k = Math.max(firstK, lastK - keep + 1); k <= lastK; k++) slots.push(new Date(k * period));
	return { first: total > 0 ? new Date(firstK * period) : null, slots, total, exact: true, following: new Date((lastK + 1) * period) };
}

// A long span is walked a day at a time. Where the zone keeps one offset from a few hours before a
// day to a few hours after it, no wall time that day is skipped or repeated, so a fixed-offset Cron
// gives the same slots as the zoned one at a tenth of the cost. Days near a DST change use the
// zoned Cron and so croner's own gap and repeat rules. The margin covers the largest DST shift (2 h).
const CHUNK_MS = 24 * HOUR_MS;
const OFFSET_SAMPLE_MS = 6 * HOUR_MS;
const OFFSET_MARGIN_MS = 3 * HOUR_MS;

function walkCron(schedule: CronSchedule, after: number, until: number, keep: number): Walk {
	const zoned = zonedCron(schedule);
	const chunked = until - after > CHUNK_MS && !UTC_ZONES.has(schedule.timezone);
	// A ring buffer: shifting an array would cost O(keep) for every slot of a long outage.
	const ring: Date[] = [];
	const state = { first: null as Date | null, total: 0 };
	const newestFirst = (): Date[] => {
		if (state.total <= keep) return ring;
		const start = state.total % keep;
		return [...ring.slice(start), ...ring.slice(0, start)];
	};

	let from = after;
	while (from < until) {
		const to = chunked ? Math.min(until, from + CHUNK_MS) : until;
		const cron = chunked ? chunkCron(schedule, from, to) ?? zoned : zoned;
		let slot = cron.nextRun(new Date(from));
		while (slot !== null && slot.getTime() <= to) {
			if (state.total === CRON_COUNT_LIMIT) {
				// Too many to count; the newest are still exact. previousRuns excludes its reference,
				// and slots are whole seconds, so a millisecond past `until` includes a slot at `until`.
				const newest = keep > 0 ? zoned.previousRuns(keep, new Date(until + 1)).reverse() : [];
				const slots = newest.filter((s) => s.getTime() > after);
				return { first: state.first, slots, total: state.total, exact: false, following: zoned.nextRun(new Date(until)) };
			}
			state.first ??= slot;
			if (keep > 0) ring[state.total % keep] = slot;
			state.total++;
			slot = cron.nextRun(slot);
		}
		// Unchunked, the step that left the span is the zoned Cron's next slot; a fixed-offset
		// Cron's step past its chunk may be on the wrong side of a DST change.
		if (!chunked) return { first: state.first, slots: newestFirst(), total: state.total, exact: true, following: slot };
		from = to;
	}
	return { first: state.first, slots: newestFirst(), total: state.total, exact: true, following: zoned.nextRun(new Date(until)) };
}

/** A fixed-offset Cron valid for slots in (from, to], or undefined when the offset may change. */
function chunkCron(schedule: CronSchedule, from: number, to: number): Cron | undefined {
	const offset = offsetMinutesAt(schedule.timezone, from - OFFSET_MARGIN_MS);
	if (Number.isNaN(offset)) return undefined;
	for (let t = from - OFFSET_MARGIN_MS + OFFSET_SAMPLE_MS; t < to + OFFSET_MARGIN_MS; t += OFFSET_SAMPLE_MS) {
		if (offsetMinutesAt(schedule.timezone, t) !== offset) return undefined;
	}
	if (offsetMinutesAt(schedule.timezone, to + OFFSET_MARGIN_MS) !== offset) return undefined;
	return fixedCron(schedule.cron, offset);
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
	const { slots, total, exact } = walk(schedule, after, until, keep);
	return { slots, total, truncated: !exact || total > keep, exact };
}

/**
 * Milliseconds from this slot to the one after it: the interval, or for cron the real gap, which
 * changes across DST (a daily job's day is 23 h or 25 h). Infinity when the cron never fires again.
 */
export function periodAt(schedule: Schedule, slot: Date): number {
	if (!("cron" in schedule)) return intervalMs(schedule);
	const next = zonedCron(schedule).nextRun(slot);
	return next === null ? Number.POSITIVE_INFINITY : next.getTime() - slot.getTime();
}

/** How late a slot may still fire as itself: max(120 s, min(period / 2, 2 h)), as Hermes does. */
export function graceWindowMs(periodMs: number): number {
	return Math.max(MIN_GRACE_MS, Math.min(periodMs / 2, MAX_GRACE_MS));
}

/** The first slot strictly after `cursor`. */
export function nextDue(schedule: Schedule, cursor: Date): Date | null {
	const t = checkDate(cursor, "cursor");
	if ("cron" in schedule) return zonedCron(schedule).nextRun(cursor);
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
	const { first, slots, total, exact, following: next } = walk(schedule, from, at, 2);
	const newest = slots.at(-1);
	if (newest === undefined || first === null) return { fires: [], skipped: [], cursor: advanced, next };

	// Only the newest slot can be in grace: were an older one in grace, so would be every newer one.
	// Its period ends at the next slot, which is the first one after now.
	const lateness = at - newest.getTime();
	const grace = graceWindowMs(next === null ? Number.POSITIVE_INFINITY : next.getTime() - newest.getTime());
	const iso = newest.toISOString();
	const older = (reason: string): SkippedRange[] => {
		const last = slots.at(-2);
		return last === undefined ? [] : [{ first, last, count: total - 1, reason: withCount(reason, exact) }];
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
