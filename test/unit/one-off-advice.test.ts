import { describe, expect, it } from "vitest";
import { oneOffAdvice } from "../../src/config/duration.ts";

describe("a date written as a schedule (Hermes' one-shot)", () => {
	it("is told the cron for its time, but for a day that is none, which no cron would reach", () => {
		expect(oneOffAdvice("2026-02-30")).toBe("drover has no one-off schedule: a manual run (drover trigger) starts a job now");
		expect(oneOffAdvice("2026-12-24T24:00")).toBe("drover has no one-off schedule: a manual run (drover trigger) starts a job now");
		expect(oneOffAdvice("2026-12-24")).toBe(
			'drover has no one-off schedule: a manual run (drover trigger) starts a job now, and cron "0 0 24 12 *" (in the schedule\'s timezone, UTC unless it sets one) runs at that time, then each year until the schedule is removed',
		);
	});

	it("is read whole: a date followed by something else is no date", () => {
		expect(oneOffAdvice("2026-12-24T14")).toBeUndefined();
		expect(oneOffAdvice("2026-12-24 every day")).toBeUndefined();
		expect(oneOffAdvice("2026-12-24T09:30:15.5Z")).toContain('cron "30 9 24 12 *" (on the schedule\'s timezone\'s clock, UTC unless it sets one: the Z given is not read)');
	});
});
