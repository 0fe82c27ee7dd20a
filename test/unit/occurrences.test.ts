import { Cron } from "croner";
import { describe, expect, it } from "vitest";
import type { CronSchedule, IntervalSchedule } from "../../src/config/schema.ts";
import { nextRun } from "../../src/scheduler/next-run.ts";
import {
	CRON_COUNT_LIMIT,
	graceWindowMs,
	humanDuration,
	nextDue,
	periodAt,
	planTick,
	slotsBetween,
	type TickPlan,
} from "../../src/scheduler/occurrences.ts";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

function cron(expr: string, timezone = "UTC", catch_up = true): CronSchedule {
	return { cron: expr, timezone, catch_up, enabled: true };
}

function every(interval: string, catch_up = true): IntervalSchedule {
	return { interval, catch_up, enabled: true };
}

const t = (iso: string) => new Date(iso);
const isos = (dates: Date[]) => dates.map((d) => d.toISOString());

/** A plan with Dates as ISO strings, so a failure shows readable instants. */
function readable(plan: TickPlan) {
	return {
		fires: plan.fires.map((f) => ({ instant: f.instant.toISOString(), dispatch: f.dispatch })),
		skipped: plan.skipped.map((s) => ({ ...s, first: s.first.toISOString(), last: s.last.toISOString() })),
		cursor: plan.cursor.toISOString(),
		next: plan.next?.toISOString() ?? null,
	};
}

describe("slotsBetween: cron", () => {
	it("every minute: after is exclusive, until inclusive", () => {
		const span = slotsBetween(cron("* * * * *"), t("2026-01-15T10:00:00Z"), t("2026-01-15T10:03:00Z"));
		expect(isos(span.slots)).toEqual(["2026-01-15T10:01:00.000Z", "2026-01-15T10:02:00.000Z", "2026-01-15T10:03:00.000Z"]);
		expect(span).toMatchObject({ total: 3, truncated: false, exact: true });
	});

	it("every minute with sub-minute bounds", () => {
		const span = slotsBetween(cron("* * * * *"), t("2026-01-15T10:00:00.500Z"), t("2026-01-15T10:02:59.999Z"));
		expect(isos(span.slots)).toEqual(["2026-01-15T10:01:00.000Z", "2026-01-15T10:02:00.000Z"]);
	});

	it("hourly in Europe/Berlin on an ordinary day is the top of each UTC hour", () => {
		const span = slotsBetween(cron("0 * * * *", "Europe/Berlin"), t("2026-01-15T09:30:00Z"), t("2026-01-15T12:00:00Z"));
		expect(isos(span.slots)).toEqual(["2026-01-15T10:00:00.000Z", "2026-01-15T11:00:00.000Z", "2026-01-15T12:00:00.000Z"]);
	});

	it("hourly in Europe/Berlin: 23 slots on the spring-forward day, 25 on the fall-back day", () => {
		const hourly = cron("0 * * * *", "Europe/Berlin");
		// Local midnight to local midnight.
		const spring = slotsBetween(hourly, t("2026-03-28T22:59:59Z"), t("2026-03-29T21:59:59Z"));
		expect(spring.total).toBe(23);
		const fall = slotsBetween(hourly, t("2026-10-24T21:59:59Z"), t("2026-10-25T22:59:59Z"));
		expect(fall.total).toBe(25);
		// Both passes through the repeated 02:00 are distinct instants, one hour apart.
		expect(isos(fall.slots.slice(2, 5))).toEqual([
			"2026-10-25T00:00:00.000Z",
			"2026-10-25T01:00:00.000Z",
			"2026-10-25T02:00:00.000Z",
		]);
	});

	it("daily 09:00 in Europe/Berlin is 08:00Z in winter and 07:00Z in summer (spring forward)", () => {
		const span = slotsBetween(cron("0 9 * * *", "Europe/Berlin"), t("2026-03-27T12:00:00Z"), t("2026-03-30T12:00:00Z"));
		expect(isos(span.slots)).toEqual(["2026-03-28T08:00:00.000Z", "2026-03-29T07:00:00.000Z", "2026-03-30T07:00:00.000Z"]);
	});

	it("daily 09:00 in Europe/Berlin back to 08:00Z after fall back", () => {
		const span = slotsBetween(cron("0 9 * * *", "Europe/Berlin"), t("2026-10-23T12:00:00Z"), t("2026-10-26T12:00:00Z"));
		expect(isos(span.slots)).toEqual(["2026-10-24T07:00:00.000Z", "2026-10-25T08:00:00.000Z", "2026-10-26T08:00:00.000Z"]);
	});

	it("daily 09:00 in America/New_York: 14:00Z in EST, 13:00Z in EDT, on its own DST dates", () => {
		const ny = cron("0 9 * * *", "America/New_York");
		expect(isos(slotsBetween(ny, t("2026-03-06T15:00:00Z"), t("2026-03-09T13:00:00Z")).slots)).toEqual([
			"2026-03-07T14:00:00.000Z",
			"2026-03-08T13:00:00.000Z",
			"2026-03-09T13:00:00.000Z",
		]);
		expect(isos(slotsBetween(ny, t("2026-10-30T14:00:00Z"), t("2026-11-02T14:00:00Z")).slots)).toEqual([
			"2026-10-31T13:00:00.000Z",
			"2026-11-01T14:00:00.000Z",
			"2026-11-02T14:00:00.000Z",
		]);
	});

	it("an empty or inverted span has no slots", () => {
		expect(slotsBetween(cron("* * * * *"), t("2026-01-15T10:00:00Z"), t("2026-01-15T10:00:00Z"))).toEqual({
			slots: [],
			total: 0,
			truncated: false,
			exact: true,
		});
		expect(slotsBetween(every("15m"), t("2026-01-15T10:30:00Z"), t("2026-01-15T10:00:00Z")).total).toBe(0);
	});

	it("rejects an invalid date instead of planning from NaN", () => {
		expect(() => slotsBetween(every("15m"), new Date(Number.NaN), t("2026-01-15T10:00:00Z"))).toThrow(RangeError);
	});
});

describe("DST: a fixed-time job in Europe/Berlin, 30 2 * * *", () => {
	const job = cron("30 2 * * *", "Europe/Berlin");

	it("spring forward 2026-03-29: 02:30 does not exist; croner runs it once at 03:00 CEST (01:00Z)", () => {
		// Local days 2026-03-28 .. 2026-03-30.
		const span = slotsBetween(job, t("2026-03-27T23:00:00Z"), t("2026-03-30T21:59:59Z"));
		expect(isos(span.slots)).toEqual([
			"2026-03-28T01:30:00.000Z", // 02:30 CET
			"2026-03-29T01:00:00.000Z", // 03:00 CEST, the first valid time after the gap
			"2026-03-30T00:30:00.000Z", // 02:30 CEST
		]);
		const day = slotsBetween(job, t("2026-03-28T23:00:00Z"), t("2026-03-29T21:59:59Z"));
		expect(day.total).toBe(1);
	});

	it("a tick at 03:00 CEST on the spring-forward day fires that run on time", () => {
		const plan = planTick(job, t("2026-03-29T00:59:00Z"), t("2026-03-29T01:00:05Z"));
		expect(readable(plan).fires).toEqual([{ instant: "2026-03-29T01:00:00.000Z", dispatch: "on_time" }]);
	});

	it("fall back 2026-10-25: 02:30 happens twice; exactly one run, at the first (CEST) pass, 00:30Z", () => {
		const day = slotsBetween(job, t("2026-10-24T22:00:00Z"), t("2026-10-25T22:59:59Z"));
		expect(isos(day.slots)).toEqual(["2026-10-25T00:30:00.000Z"]);
		expect(day.total).toBe(1);
	});

	it("a cursor inside the repeated hour does not produce the second 02:30 (01:30Z)", () => {
		expect(nextDue(job, t("2026-10-25T00:45:00Z"))?.toISOString()).toBe("2026-10-26T01:30:00.000Z");
		const plan = planTick(job, t("2026-10-25T01:29:00Z"), t("2026-10-25T01:30:10Z"));
		expect(plan.fires).toEqual([]);
		expect(plan.skipped).toEqual([]);
	});

	it("a list of wall times is treated the same: once in the repeated hour, after the gap in spring", () => {
		const twice = cron("30 2,14 * * *", "Europe/Berlin");
		expect(isos(slotsBetween(twice, t("2026-10-24T22:00:00Z"), t("2026-10-25T22:59:59Z")).slots)).toEqual([
			"2026-10-25T00:30:00.000Z",
			"2026-10-25T13:30:00.000Z",
		]);
		expect(isos(slotsBetween(twice, t("2026-03-28T23:00:00Z"), t("2026-03-29T21:59:59Z")).slots)).toEqual([
			"2026-03-29T01:00:00.000Z",
			"2026-03-29T12:30:00.000Z",
		]);
	});

	it("a stepped job keeps its rhythm through the repeated hour: both passes are distinct slots", () => {
		const half = cron("*/30 * * * *", "Europe/Berlin");
		const span = slotsBetween(half, t("2026-10-25T00:00:00Z"), t("2026-10-25T02:00:00Z"));
		expect(isos(span.slots)).toEqual([
			"2026-10-25T00:30:00.000Z",
			"2026-10-25T01:00:00.000Z",
			"2026-10-25T01:30:00.000Z",
			"2026-10-25T02:00:00.000Z",
		]);
	});
});

describe("DST: America/New_York", () => {
	it("spring forward 2026-03-08: 02:30 runs once at 03:00 EDT (07:00Z)", () => {
		const job = cron("30 2 * * *", "America/New_York");
		const day = slotsBetween(job, t("2026-03-08T05:00:00Z"), t("2026-03-09T03:59:59Z"));
		expect(isos(day.slots)).toEqual(["2026-03-08T07:00:00.000Z"]);
	});

	it("fall back 2026-11-01: 01:30 runs once, at the EDT pass (05:30Z)", () => {
		const job = cron("30 1 * * *", "America/New_York");
		const day = slotsBetween(job, t("2026-11-01T04:00:00Z"), t("2026-11-02T04:59:59Z"));
		expect(isos(day.slots)).toEqual(["2026-11-01T05:30:00.000Z"]);
	});
});

describe("slotsBetween: intervals aligned to the Unix epoch", () => {
	it("15m slots sit on the quarter hours whatever the cursor", () => {
		const expected = ["2026-01-15T10:15:00.000Z", "2026-01-15T10:30:00.000Z", "2026-01-15T10:45:00.000Z"];
		for (const after of ["2026-01-15T10:00:00Z", "2026-01-15T10:07:13.250Z", "2026-01-15T10:14:59.999Z"]) {
			expect(isos(slotsBetween(every("15m"), t(after), t("2026-01-15T10:45:00Z")).slots)).toEqual(expected);
		}
	});

	it("1h30m slots are multiples of 90 minutes since the epoch (every UTC midnight is one)", () => {
		const expected = ["2026-01-15T00:00:00.000Z", "2026-01-15T01:30:00.000Z", "2026-01-15T03:00:00.000Z"];
		for (const after of ["2026-01-14T22:30:00Z", "2026-01-14T23:12:00Z", "2026-01-14T23:59:59Z"]) {
			expect(isos(slotsBetween(every("1h30m"), t(after), t("2026-01-15T03:00:00Z")).slots)).toEqual(expected);
		}
		expect(t("2026-01-15T01:30:00Z").getTime() % (90 * MIN)).toBe(0);
	});

	it("counts a long interval span arithmetically and returns the newest slots", () => {
		const span = slotsBetween(every("1m"), t("2026-01-01T00:00:00Z"), t("2026-01-31T00:00:00Z"), 3);
		expect(span.total).toBe(43_200);
		expect(span.truncated).toBe(true);
		expect(isos(span.slots)).toEqual(["2026-01-30T23:58:00.000Z", "2026-01-30T23:59:00.000Z", "2026-01-31T00:00:00.000Z"]);
	});
});

describe("slotsBetween: cap", () => {
	it("an every-minute cron over 30 days: truncated, total 43,200, the newest 1000 returned", () => {
		const span = slotsBetween(cron("* * * * *"), t("2026-01-01T00:00:00Z"), t("2026-01-31T00:00:00Z"));
		expect(span.total).toBe(43_200);
		expect(span.truncated).toBe(true);
		expect(span.exact).toBe(true);
		expect(span.slots).toHaveLength(1000);
		expect(span.slots[0]?.toISOString()).toBe("2026-01-30T07:21:00.000Z");
		expect(span.slots.at(-1)?.toISOString()).toBe("2026-01-31T00:00:00.000Z");
		for (let i = 1; i < span.slots.length; i++) {
			expect((span.slots[i]?.getTime() ?? 0) - (span.slots[i - 1]?.getTime() ?? 0)).toBe(MIN);
		}
	});

	it("stops counting a cron span at the limit and says the total is a lower bound", () => {
		const span = slotsBetween(cron("* * * * *"), t("2026-01-01T00:00:00Z"), t("2026-05-01T00:00:00Z"), 2);
		expect(span).toMatchObject({ total: CRON_COUNT_LIMIT, truncated: true, exact: false });
		expect(isos(span.slots)).toEqual(["2026-04-30T23:59:00.000Z", "2026-05-01T00:00:00.000Z"]);
	});
});

describe("slotsBetween: long spans in a named zone", () => {
	// Walked with croner's zoned Cron one step at a time, as the short path does.
	function stepped(s: CronSchedule, after: Date, until: Date): string[] {
		const zoned = new Cron(s.cron, { timezone: s.timezone, paused: true, mode: "5-part", fixedTimeRule: "no-wildcard" });
		const out: string[] = [];
		for (let slot = zoned.nextRun(after); slot !== null && slot <= until; slot = zoned.nextRun(slot)) out.push(slot.toISOString());
		return out;
	}

	const year = [t("2025-12-31T13:17:00Z"), t("2026-12-31T09:00:00Z")] as const;
	const cases: CronSchedule[] = [
		cron("30 2 * * *", "Europe/Berlin"),
		cron("30 2,14 * * *", "Europe/Berlin"),
		cron("0 1-3 * * *", "Europe/Berlin"),
		cron("45 1 * * *", "America/New_York"),
		cron("15 2 * * 1-5", "Australia/Lord_Howe"), // a 30-minute DST shift
		cron("0 0 * * *", "America/Santiago"), // DST changes at midnight
		cron("30 5 L * *", "Asia/Kathmandu"), // a +05:45 offset
	];
	for (const s of cases) {
		it(`a year of "${s.cron}" in ${s.timezone} matches stepping the zoned Cron`, () => {
			const expected = stepped(s, ...year);
			const span = slotsBetween(s, ...year, 100_000);
			expect(isos(span.slots)).toEqual(expected);
			expect(span.total).toBe(expected.length);
		});
	}

	it("hourly across both Berlin DST changes: 8760 slots in 2026, identical to stepping", () => {
		const hourly = cron("0 * * * *", "Europe/Berlin");
		const expected = stepped(hourly, ...year);
		const span = slotsBetween(hourly, ...year, 100_000);
		expect(span.total).toBe(expected.length);
		expect(isos(span.slots)).toEqual(expected);
	});
});

describe("periodAt and graceWindowMs", () => {
	it("the grace window is clamped to [120 s, 2 h] around half the period", () => {
		expect(graceWindowMs(MIN)).toBe(120_000);
		expect(graceWindowMs(HOUR)).toBe(30 * MIN);
		expect(graceWindowMs(DAY)).toBe(2 * HOUR);
		expect(graceWindowMs(15 * MIN)).toBe(7.5 * MIN);
		expect(graceWindowMs(Number.POSITIVE_INFINITY)).toBe(2 * HOUR);
	});

	it("a slot's period is the real gap to the next slot", () => {
		expect(periodAt(cron("* * * * *"), t("2026-01-15T10:00:00Z"))).toBe(MIN);
		expect(periodAt(cron("0 * * * *", "Europe/Berlin"), t("2026-01-15T10:00:00Z"))).toBe(HOUR);
		expect(periodAt(cron("0 9 * * *", "Europe/Berlin"), t("2026-01-15T08:00:00Z"))).toBe(DAY);
		// 09:00 Saturday to 09:00 Sunday across spring forward is 23 hours.
		expect(periodAt(cron("0 9 * * *", "Europe/Berlin"), t("2026-03-28T08:00:00Z"))).toBe(23 * HOUR);
		expect(periodAt(every("1h30m"), t("2026-01-15T01:30:00Z"))).toBe(90 * MIN);
	});

	it("the formula applied to real schedules", () => {
		expect(graceWindowMs(periodAt(cron("* * * * *"), t("2026-01-15T10:00:00Z")))).toBe(120_000);
		expect(graceWindowMs(periodAt(cron("0 * * * *"), t("2026-01-15T10:00:00Z")))).toBe(30 * MIN);
		expect(graceWindowMs(periodAt(cron("0 9 * * *", "Europe/Berlin"), t("2026-01-15T08:00:00Z")))).toBe(2 * HOUR);
	});
});

describe("nextDue", () => {
	it("is the first slot strictly after the cursor", () => {
		expect(nextDue(every("15m"), t("2026-01-15T10:15:00Z"))?.toISOString()).toBe("2026-01-15T10:30:00.000Z");
		expect(nextDue(every("15m"), t("2026-01-15T10:14:59.999Z"))?.toISOString()).toBe("2026-01-15T10:15:00.000Z");
		expect(nextDue(cron("0 9 * * *", "Europe/Berlin"), t("2026-03-28T08:00:00Z"))?.toISOString()).toBe(
			"2026-03-29T07:00:00.000Z",
		);
	});

	it("the API's nextRun agrees with the scheduler", () => {
		const after = t("2026-10-25T00:45:00Z");
		for (const s of [cron("30 2 * * *", "Europe/Berlin"), cron("*/5 * * * *"), every("1h30m")]) {
			expect(nextRun(s, after)?.toISOString()).toBe(nextDue(s, after)?.toISOString());
		}
	});
});

describe("planTick", () => {
	const hourly = cron("0 * * * *");

	it("a tick 30 s after an hourly slot fires it on time", () => {
		expect(readable(planTick(hourly, t("2026-01-15T09:59:30Z"), t("2026-01-15T10:00:30Z")))).toEqual({
			fires: [{ instant: "2026-01-15T10:00:00.000Z", dispatch: "on_time" }],
			skipped: [],
			cursor: "2026-01-15T10:00:30.000Z",
			next: "2026-01-15T11:00:00.000Z",
		});
	});

	it("a tick 5 min after an hourly slot fires it late", () => {
		expect(readable(planTick(hourly, t("2026-01-15T09:59:30Z"), t("2026-01-15T10:05:00Z"))).fires).toEqual([
			{ instant: "2026-01-15T10:00:00.000Z", dispatch: "late" },
		]);
	});

	it("the grace window is inclusive: 30 min late is still late, 30 min 1 s is missed", () => {
		expect(planTick(hourly, t("2026-01-15T09:59:30Z"), t("2026-01-15T10:30:00Z")).fires[0]?.dispatch).toBe("late");
		const missed = readable(planTick(hourly, t("2026-01-15T09:59:30Z"), t("2026-01-15T10:30:01Z")));
		expect(missed.fires).toEqual([{ instant: "2026-01-15T10:00:00.000Z", dispatch: "catch_up" }]);
		expect(missed.skipped).toEqual([]);
	});

	it("no slot due: nothing fires, the cursor still advances", () => {
		expect(readable(planTick(hourly, t("2026-01-15T10:00:30Z"), t("2026-01-15T10:01:30Z")))).toEqual({
			fires: [],
			skipped: [],
			cursor: "2026-01-15T10:01:30.000Z",
			next: "2026-01-15T11:00:00.000Z",
		});
	});

	it("15m, ticks lost for an hour, catch_up on: one catch-up fire at the newest slot, the rest collapsed", () => {
		expect(readable(planTick(every("15m", true), t("2026-01-15T10:00:30Z"), t("2026-01-15T11:10:00Z")))).toEqual({
			fires: [{ instant: "2026-01-15T11:00:00.000Z", dispatch: "catch_up" }],
			skipped: [
				{
					first: "2026-01-15T10:15:00.000Z",
					last: "2026-01-15T10:45:00.000Z",
					count: 3,
					reason: "collapsed into catch-up run of 2026-01-15T11:00:00.000Z",
				},
			],
			cursor: "2026-01-15T11:10:00.000Z",
			next: "2026-01-15T11:15:00.000Z",
		});
	});

	it("15m, ticks lost for an hour, catch_up off: no fire, all four slots skipped with the reason", () => {
		expect(readable(planTick(every("15m", false), t("2026-01-15T10:00:30Z"), t("2026-01-15T11:10:00Z")))).toEqual({
			fires: [],
			skipped: [
				{
					first: "2026-01-15T10:15:00.000Z",
					last: "2026-01-15T11:00:00.000Z",
					count: 4,
					reason: "missed by 10m (grace window 7m 30s); catch_up is off",
				},
			],
			cursor: "2026-01-15T11:10:00.000Z",
			next: "2026-01-15T11:15:00.000Z",
		});
	});

	it("a slot in grace fires late and supersedes the missed ones before it", () => {
		const plan = readable(planTick(every("15m", false), t("2026-01-15T10:00:30Z"), t("2026-01-15T11:03:00Z")));
		expect(plan.fires).toEqual([{ instant: "2026-01-15T11:00:00.000Z", dispatch: "late" }]);
		expect(plan.skipped).toEqual([
			{
				first: "2026-01-15T10:15:00.000Z",
				last: "2026-01-15T10:45:00.000Z",
				count: 3,
				reason: "superseded by the run of 2026-01-15T11:00:00.000Z",
			},
		]);
	});

	it("several slots in grace: only the newest fires, the others are superseded", () => {
		// 1-minute slots have a 120 s grace, so 10:02 and 10:03 are both in grace at 10:03:20.
		const plan = readable(planTick(every("1m"), t("2026-01-15T10:00:00Z"), t("2026-01-15T10:03:20Z")));
		expect(plan.fires).toEqual([{ instant: "2026-01-15T10:03:00.000Z", dispatch: "on_time" }]);
		expect(plan.skipped).toEqual([
			{
				first: "2026-01-15T10:01:00.000Z",
				last: "2026-01-15T10:02:00.000Z",
				count: 2,
				reason: "superseded by the run of 2026-01-15T10:03:00.000Z",
			},
		]);
	});

	it("a 30-day outage on a 1-minute cron is one fire and one range, not 43,200 records", () => {
		const plan = readable(planTick(cron("* * * * *"), t("2026-01-01T00:00:00Z"), t("2026-01-31T00:00:10Z")));
		expect(plan.fires).toEqual([{ instant: "2026-01-31T00:00:00.000Z", dispatch: "on_time" }]);
		expect(plan.skipped).toEqual([
			{
				first: "2026-01-01T00:01:00.000Z",
				last: "2026-01-30T23:59:00.000Z",
				count: 43_199,
				reason: "superseded by the run of 2026-01-31T00:00:00.000Z",
			},
		]);
	});

	it("a 100-day outage on a 1-minute cron says the count it skipped is a lower bound, where counting stopped", () => {
		const plan = readable(planTick(cron("* * * * *"), t("2026-01-01T00:00:00Z"), t("2026-04-11T00:00:10Z")));
		expect(plan.fires).toEqual([{ instant: "2026-04-11T00:00:00.000Z", dispatch: "on_time" }]);
		expect(plan.skipped).toEqual([
			{
				first: "2026-01-01T00:01:00.000Z",
				last: "2026-04-10T23:59:00.000Z",
				count: CRON_COUNT_LIMIT - 1,
				reason: `superseded by the run of 2026-04-11T00:00:00.000Z (at least ${CRON_COUNT_LIMIT} slots; counting stops there)`,
			},
		]);
	});

	it("daily with catch_up off reports hours in the reason", () => {
		const plan = planTick(cron("0 9 * * *", "Europe/Berlin", false), t("2026-01-15T07:59:00Z"), t("2026-01-15T11:05:00Z"));
		expect(plan.fires).toEqual([]);
		expect(plan.skipped[0]?.reason).toBe("missed by 3h 5m (grace window 2h); catch_up is off");
		expect(plan.skipped[0]?.count).toBe(1);
	});

	it("a duplicate tick (same now twice) plans nothing the second time", () => {
		const schedule = every("15m");
		const now = t("2026-01-15T10:15:10Z");
		const first = planTick(schedule, t("2026-01-15T10:14:10Z"), now);
		expect(first.fires).toHaveLength(1);
		const second = planTick(schedule, first.cursor, now);
		expect(readable(second)).toEqual({
			fires: [],
			skipped: [],
			cursor: "2026-01-15T10:15:10.000Z",
			next: "2026-01-15T10:30:00.000Z",
		});
	});

	it("a tick whose time goes backwards plans nothing and never moves the cursor back", () => {
		const plan = readable(planTick(every("1m"), t("2026-01-15T10:05:00Z"), t("2026-01-15T10:03:00Z")));
		expect(plan).toEqual({ fires: [], skipped: [], cursor: "2026-01-15T10:05:00.000Z", next: "2026-01-15T10:06:00.000Z" });
	});

	it("consecutive on-time ticks fire each slot exactly once", () => {
		const schedule = cron("*/5 * * * *", "Europe/Berlin");
		let cursor = t("2026-01-15T09:59:00Z");
		const fired: string[] = [];
		for (let m = 0; m <= 20; m++) {
			const plan = planTick(schedule, cursor, new Date(t("2026-01-15T10:00:02Z").getTime() + m * MIN));
			fired.push(...plan.fires.map((f) => `${f.instant.toISOString()} ${f.dispatch}`));
			expect(plan.skipped).toEqual([]);
			cursor = plan.cursor;
		}
		expect(fired).toEqual([
			"2026-01-15T10:00:00.000Z on_time",
			"2026-01-15T10:05:00.000Z on_time",
			"2026-01-15T10:10:00.000Z on_time",
			"2026-01-15T10:15:00.000Z on_time",
			"2026-01-15T10:20:00.000Z on_time",
		]);
	});
});

describe("humanDuration", () => {
	it("shows the largest unit and the next one", () => {
		expect(humanDuration(45_000)).toBe("45s");
		expect(humanDuration((3 * 60 + 5) * MIN + 12_000)).toBe("3h 5m");
		expect(humanDuration(7.5 * MIN)).toBe("7m 30s");
		expect(humanDuration(2 * HOUR)).toBe("2h");
		expect(humanDuration(DAY + 3 * HOUR)).toBe("1d 3h");
		expect(humanDuration(0)).toBe("0s");
	});
});
