/** A UTC day in milliseconds (UTC has no daylight saving: every day is this long). */
export const DAY_MS = 86_400_000;

/** UTC midnight of the day holding `ms`. */
export const utcDay = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;

/** A UTC midnight as YYYY-MM-DD. */
export const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
