import { describe, expect, it } from "vitest";
import { duration, relTime } from "../../cli/format.ts";

describe("the CLI's durations", () => {
	it("print as the unit they round to, never 1000ms or 60.0s", () => {
		expect([0.4, 0.9994, 0.9996, 1, 12.34, 59.94, 59.96, 60, 119.4, 3599.4, 3599.6, 7380].map(duration)).toEqual([
			"400ms",
			"999ms",
			"1.0s",
			"1.0s",
			"12.3s",
			"59.9s",
			"1m 00s",
			"1m 00s",
			"1m 59s",
			"59m 59s",
			"1h 00m",
			"2h 03m",
		]);
		expect(duration(null)).toBe("-");
	});
});

describe("the CLI's relative times", () => {
	const now = Date.parse("2026-12-07T12:00:00Z");
	const ago = (s: number) => relTime(new Date(now - s * 1000).toISOString(), now);
	it("say seconds to 59, minutes to 59, hours to 47, then days, ahead or behind", () => {
		expect([0, 0.4, 1, 59, 60, 3599, 3600, 47 * 3600 + 3599, 48 * 3600].map(ago)).toEqual(["now", "now", "1s ago", "59s ago", "1m ago", "59m ago", "1h ago", "47h ago", "2d ago"]);
		expect([-1, -90, -48 * 3600].map(ago)).toEqual(["in 1s", "in 1m", "in 2d"]);
		expect(relTime(null, now)).toBe("-");
		expect(relTime("yesterday", now)).toBe("yesterday");
	});
});
