import { Cron } from "croner";
import { everyInterval, oneOffAdvice } from "./duration.ts";

/** A cron's fields, in order, and the values each takes (day-of-week 7 is Sunday, as 0 is). */
const CRON_FIELDS = [
	{ name: "minute", min: 0, max: 59 },
	{ name: "hour", min: 0, max: 23 },
	{ name: "day-of-month", min: 1, max: 31 },
	{ name: "month", min: 1, max: 12 },
	{ name: "day-of-week", min: 0, max: 7 },
] as const;
const CRON_FORM = `5 fields (${CRON_FIELDS.map((f) => f.name).join(" ")})`;

export function cronProblem(expression: string, timezone: string): string | undefined {
	const trimmed = expression.trim();
	// Other schedulers' forms, said in drover's: a repeat every so long is an interval, a date a one-off.
	const every = everyInterval(trimmed);
	if (every) return `invalid cron "${expression}": a run every ${every} is an interval, not a cron: write interval: "${every}" in place of cron`;
	const oneOff = oneOffAdvice(trimmed);
	if (oneOff) return `invalid cron "${expression}": a date is not a cron; ${oneOff}`;
	const problem = trimmed.startsWith("@") ? undefined : cronFieldsProblem(trimmed === "" ? [] : trimmed.split(/\s+/));
	if (problem) return `invalid cron "${expression}": ${problem}`;
	try {
		const next = new Cron(trimmed, { paused: true, timezone, mode: "5-part" }).nextRun();
		if (!next) return `cron "${expression}" never fires`;
		return undefined;
	} catch (error) {
		const reason = error instanceof Error ? error.message.replace(/^CronPattern:\s*/, "") : String(error);
		// A nickname croner does not know reaches its count of fields, which speaks of six and seven.
		if (trimmed.startsWith("@") && /space separated parts/.test(reason)) {
			return `invalid cron "${expression}": unknown nickname "${trimmed.split(/\s+/)[0]}"; use ${CRON_FORM}, or @hourly, @daily, @weekly, @monthly or @yearly`;
		}
		// croner numbers the fields ("configuration entry 2 (a)"), quoting them as it rewrote them (MON
		// as 1, ? as *): said by the field's name, as written.
		const entry = /^configuration entry (\d) \(.*\) contains illegal characters/.exec(reason);
		const n = Number(entry?.[1]) - 1;
		const field = entry ? CRON_FIELDS[n] : undefined;
		if (field) return `invalid cron "${expression}": ${field.name} "${trimmed.split(/\s+/)[n]}" is not a value, range, list or step of the field`;
		return `invalid cron "${expression}": ${reason}`;
	}
}

/**
 * Checked before croner, which would say it in its own terms: it takes six and seven fields (drover
 * takes five), and reports a day or month out of range counted from 0 ("Invalid value for day: -1"
 * for a day-of-month 0). A value is said as written, with its field's range; a step (after "/") and
 * the nth weekday (after "#") are no values of the field: a step of 0 is refused here (croner says
 * "illegal stepping"), the rest croner checks.
 */
function cronFieldsProblem(fields: string[]): string | undefined {
	if (fields.length !== CRON_FIELDS.length) {
		const seconds = fields.length > CRON_FIELDS.length ? ": the scheduler ticks once a minute, so there is no seconds field" : "";
		return `a cron has ${CRON_FORM}; got ${fields.length}${seconds}`;
	}
	for (const [i, { name, min, max }] of CRON_FIELDS.entries()) {
		for (const item of fields[i]!.split(",")) {
			const step = item.split("/")[1];
			if (step !== undefined && /^\d+$/.test(step) && Number(step) === 0) return `${name} step ${step} in "${item}": a step is 1 or more`;
			for (const value of item.split("/")[0]!.split("#")[0]!.match(/\d+/g) ?? []) {
				if (Number(value) < min || Number(value) > max) return `${name} ${value} is out of range ${min}–${max}`;
			}
		}
	}
	return undefined;
}
