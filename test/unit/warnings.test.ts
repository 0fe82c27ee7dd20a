import { describe, expect, it } from "vitest";
import { scheduleWarnings } from "../../src/config/warnings.ts";

const warningsOf = (cron: string, timezone = "UTC") => scheduleWarnings({ schedules: { s: { cron, timezone, prompt: "p", catch_up: true, enabled: true } } } as never);

describe("a cron's timing that likely means otherwise", () => {
	it("is warned of: every minute of an hour, and both day fields given (either matching)", () => {
		expect(warningsOf("* 9 * * *")).toEqual(['schedule s: cron "* 9 * * *" runs every minute of hour 9, 60 runs an hour; for one run at its start write "0 9 …"']);
		expect(warningsOf("* */2 * * *")).toEqual(['schedule s: cron "* */2 * * *" runs every minute of the hours */2, 60 runs an hour; for one run at its start write "0 */2 …"']);
		expect(warningsOf("0 9 1-7 * 1")).toEqual([expect.stringMatching(/runs on the days of the month 1-7 and also on the weekdays 1 \(either day field matching, not both\)/)]);
	});

	it("is warned of: a day of the month some of its months lack, said with the last day's form", () => {
		expect(warningsOf("0 9 31 * *")).toEqual(['schedule s: cron "0 9 31 * *" never runs in Feb, Apr, Jun, Sep, Nov (no day 31 there); for the last day of every month write "0 9 L * *"']);
		expect(warningsOf("30 6 30 * ?")).toEqual(['schedule s: cron "30 6 30 * ?" never runs in Feb (no day 30 there); for the last day of every month write "30 6 L * ?"']);
		expect(warningsOf("0 9 29 1,2 *")).toEqual(['schedule s: cron "0 9 29 1,2 *" runs in Feb only in leap years; for the last day of every month write "0 9 L 1,2 *"']);
		expect(warningsOf("0 9 30,31 3,4 *")).toEqual([]);
		expect(warningsOf("0 9 31 1,3,5 *")).toEqual([]);
	});

	it("is warned of: an Etc/GMT zone, whose sign is the reverse of its offset's", () => {
		expect(warningsOf("0 9 * * *", "Etc/GMT+5")).toEqual([
			'schedule s: timezone "Etc/GMT+5" is UTC−05:00 (an Etc/GMT zone\'s sign is the reverse of its offset\'s), all year; where a place is meant, its Area/City zone follows its daylight saving',
		]);
		expect(warningsOf("0 9 * * *", "Etc/GMT-10")).toEqual([expect.stringContaining('"Etc/GMT-10" is UTC+10:00')]);
		expect(warningsOf("@daily", "Etc/GMT+5")).toEqual([expect.stringContaining('"Etc/GMT+5" is UTC\u221205:00')]);
		for (const zone of ["Etc/GMT", "Etc/GMT+0", "Etc/UTC", "UTC", "Europe/Berlin"]) expect(warningsOf("0 9 * * *", zone), zone).toEqual([]);
	});

	it("is not warned of where it means what it says", () => {
		for (const cron of ["0 9 L * *", "0 9 28 * *", "0 9 29-31 * *", "*/5 9 * * *", "0-59 9 * * *", "0 9 * * *", "0 9 1 * *", "0 9 * * 1-5", "0 9 1-7 * +1", "@hourly", "* * * * *", "0 9 ? * 1"]) expect(warningsOf(cron), cron).toEqual([]);
	});
});
