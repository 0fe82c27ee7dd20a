/**
 * How long a response asks to be left alone: `retry-after-ms` (Anthropic's), else `retry-after` as
 * seconds or an HTTP date (RFC 9110 §10.2.3). Null when it says nothing usable.
 */
export function retryAfterMs(headers: Headers | undefined, now: number): number | null {
	const ms = headers?.get("retry-after-ms");
	if (ms) {
		const n = Number(ms);
		if (Number.isFinite(n) && n >= 0) return Math.ceil(n);
	}
	const value = headers?.get("retry-after");
	if (value) {
		const seconds = Number(value);
		if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
		// Every HTTP-date form begins with its day's name; V8's Date.parse would read "-5" as a year.
		const at = /^[A-Za-z]/.test(value) ? Date.parse(value) : Number.NaN;
		if (!Number.isNaN(at)) return Math.max(0, at - now);
	}
	return null;
}
