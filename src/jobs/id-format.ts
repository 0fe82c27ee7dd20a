/**
 * `job-YYYY-MM-DD-xxxxxx`. Anchored on both ends (and JS `$` never matches before a trailing
 * newline), so a path segment either is a job id or is rejected before any lookup. The pattern
 * alone lets through days no month has (02-30, 04-31, 02-29 of a common year): isJobId and
 * JobIdSchema also check that the date is a real one.
 */
export const JOB_ID_PATTERN = /^job-\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])-[a-z0-9]{6}$/;

export const JOB_ID_FORMAT = "job-YYYY-MM-DD-xxxxxx (a UTC date, then 6 characters from a-z and 0-9)";

/** Whether a pattern-matching id's YYYY-MM-DD is a day of the calendar (2026-02-30 is not). */
export function hasRealDate(id: string): boolean {
	const year = Number(id.slice(4, 8));
	const month = Number(id.slice(9, 11));
	const day = Number(id.slice(12, 14));
	// An impossible day rolls over into the next month; a real one comes back unchanged.
	// (setUTCFullYear rather than Date.UTC, which reads years 0-99 as 1900-1999.)
	const date = new Date(0);
	date.setUTCFullYear(year, month - 1, day);
	return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

export function isJobId(value: unknown): value is string {
	return typeof value === "string" && JOB_ID_PATTERN.test(value) && hasRealDate(value);
}
