import { describe, expect, it } from "vitest";
import { scheduleWarnings } from "../../src/config/warnings.ts";

const warningsOf = (cron: string) => scheduleWarnings({ schedules: { s: { cron, prompt: "p", catch_up: true, enabled: true } } } as never);

describe("a cron's timing that likely means otherwise", () => {
	it("is warned of: every minute of an hour, and both day fields given (either matching)", () => {
		expect(warningsOf("* 9 * * *")).toEqual(['schedule s: cron "* 9 * * *" runs every minute of hour 9, 60 runs an hour; for one run at its start write "0 9 …"']);
		expect(warningsOf("* */2 * * *")).toEqual(['schedule s: cron "* */2 * * *" runs every minute of the hours */2, 60 runs an hour; for one run at its start write "0 */2 …"']);
		expect(warningsOf("0 9 1-7 * 1")).toEqual([expect.stringMatching(/runs on the days of the month 1-7 and also on the weekdays 1 \(either day field matching, not both\)/)]);
	});

	it("is not warned of where it means what it says", () => {
		for (const cron of ["*/5 9 * * *", "0-59 9 * * *", "0 9 * * *", "0 9 1 * *", "0 9 * * 1-5", "0 9 1-7 * +1", "@hourly", "* * * * *", "0 9 ? * 1"]) expect(warningsOf(cron), cron).toEqual([]);
	});
});
