import { describe, expect, it } from "vitest";
import { retryAfterMs } from "../../src/shared/retry-after.ts";

// How long a 429 or 503 asks to be left alone: the Messages API's rate-limit waits and the CLI's
// backoff read it. The forms the Anthropic SDK reads too: retry-after-ms first, then retry-after
// as seconds or as an HTTP date (RFC 9110 §10.2.3).
const now = Date.parse("2026-12-07T12:00:00Z");
const after = (headers: Record<string, string>) => retryAfterMs(new Headers(headers), now);

describe("Retry-After", () => {
	it("reads retry-after-ms first, a fraction rounded up so the wait is never shorter than asked", () => {
		expect(after({ "retry-after-ms": "1500", "retry-after": "9" })).toBe(1500);
		expect(after({ "retry-after-ms": "0.2" })).toBe(1);
		expect(after({ "retry-after-ms": "0", "retry-after": "9" })).toBe(0);
	});

	it("reads retry-after as seconds, or as a date: the time until then, none once it has passed", () => {
		expect(after({ "retry-after": "2" })).toBe(2000);
		expect(after({ "retry-after": "0" })).toBe(0);
		expect(after({ "retry-after": "Mon, 07 Dec 2026 12:00:30 GMT" })).toBe(30_000);
		expect(after({ "retry-after": "Mon, 07 Dec 2026 11:59:00 GMT" })).toBe(0);
	});

	it("says nothing for a value it cannot use, and falls back to retry-after past an unusable retry-after-ms", () => {
		expect(after({})).toBeNull();
		expect(retryAfterMs(undefined, now)).toBeNull();
		expect(after({ "retry-after": "soon" })).toBeNull();
		expect(after({ "retry-after": "-5" })).toBeNull();
		expect(after({ "retry-after-ms": "-1", "retry-after": "3" })).toBe(3000);
	});
});
