// What a duration in a definition may be ("90s", "15m", "1h30m", "1d") and the bounds each field sets.

// Whole units in descending order, e.g. "90s", "30m", "1h30m", "1d".
const DURATION = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;
export const DURATION_FORM = 'a number with a unit (d, h, m, s), e.g. "90s", "15m", "1h30m", "1d"';

export function parseDuration(s: string): number | undefined {
	const m = DURATION.exec(s);
	if (!m || s === "") return undefined;
	const [, d = "0", h = "0", min = "0", sec = "0"] = m;
	return ((Number(d) * 24 + Number(h)) * 60 + Number(min)) * 60 + Number(sec);
}

/** Seconds in a duration string such as "1h30m"; throws on anything else. */
export function durationSeconds(s: string): number {
	const seconds = parseDuration(s);
	if (seconds === undefined) throw new RangeError(`"${s}" is not a duration; use ${DURATION_FORM}`);
	return seconds;
}

// An interval's own examples: a DURATION_FORM one of seconds ("90s") is no interval.
const INTERVAL_FORM = 'a number with a unit (d, h, m), e.g. "15m", "1h30m", "1d"';

// Hermes' "every 30m": the duration after "every", said back when it is an interval.
const EVERY = /^@?every\s+(\S+)$/i;
/** The interval `every <duration>` (Hermes' form, or Go cron's `@every`) stands for, when it is one. */
export function everyInterval(s: string): string | undefined {
	const given = EVERY.exec(s.trim())?.[1];
	return given !== undefined && intervalProblem(given) === undefined ? given : undefined;
}

// A date (Hermes' one-shot "2026-02-03T14:00"): drover schedules recur, so it is said what to do instead.
// Whole, so that "…T14" is not read as midnight; seconds and an offset allowed, as ISO 8601 writes them.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;
const NO_ONE_OFF = "drover has no one-off schedule: a manual run (drover trigger) starts a job now";
/** What to write for a run at one date and time, when `s` is one; undefined otherwise. */
export function oneOffAdvice(s: string): string | undefined {
	const m = DATE_TIME.exec(s.trim());
	if (!m) return undefined;
	const [, year, month, day, hour = "0", minute = "0", offset] = m;
	// A day that is not one (2026-02-30) or a time past 23:59 gets no cron, which would never fire.
	const at = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute)));
	if (at.getUTCMonth() !== Number(month) - 1 || at.getUTCDate() !== Number(day) || at.getUTCHours() !== Number(hour) || at.getUTCMinutes() !== Number(minute)) return NO_ONE_OFF;
	const cron = `${Number(minute)} ${Number(hour)} ${Number(day)} ${Number(month)} *`;
	const clock = offset === undefined ? "in the schedule's timezone, UTC unless it sets one" : `on the schedule's timezone's clock, UTC unless it sets one: the ${offset.toUpperCase()} given is not read`;
	const repeats = month === "02" && day === "29" ? "each leap year" : "each year";
	return `${NO_ONE_OFF}, and cron "${cron}" (${clock}) runs at that time, then ${repeats} until the schedule is removed`;
}

const MAX_INTERVAL_MINUTES = 31 * 24 * 60;
export function intervalProblem(s: string): string | undefined {
	const seconds = parseDuration(s);
	if (seconds === undefined) {
		const oneOff = oneOffAdvice(s);
		if (oneOff) return `interval "${s}" is a date, not a duration: ${oneOff}`;
		const every = everyInterval(s);
		return `interval "${s}" is not a duration; use ${INTERVAL_FORM}${every ? ` (did you mean "${every}"?)` : ""}`;
	}
	// The scheduler ticks once a minute, so a sub-minute remainder could never be honoured.
	if (seconds % 60 !== 0) return `interval "${s}" must be whole minutes, e.g. "1m" or "15m"`;
	if (seconds < 60) return `interval "${s}" must be at least 1m`;
	if (seconds / 60 > MAX_INTERVAL_MINUTES) return `interval "${s}" must be at most 31d`;
	return undefined;
}

/** Minutes in a schedule interval such as "15m" or "1d"; throws if it is not a valid interval. */
export function intervalMinutes(s: string): number {
	const problem = intervalProblem(s);
	if (problem) throw new RangeError(problem);
	return durationSeconds(s) / 60;
}

export function timeoutProblem(s: string): string | undefined {
	const seconds = parseDuration(s);
	if (seconds === undefined) return `timeout "${s}" is not a duration; use ${DURATION_FORM}`;
	if (seconds < 10) return `timeout "${s}" must be at least 10s`;
	if (seconds > 24 * 3600) return `timeout "${s}" must be at most 24h`;
	return undefined;
}
