import { afterEach, describe, expect, it } from "vitest";
import { createAgent, runsOf, settleClaimedRuns } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { tick } from "../helpers/ticks.ts";

// Hermes' grace window max(120 s, min(period / 2, 2 h)) and catch-up at edge times.
const rows = async (agent: string) => (await runsOf(agent)).map((r) => [r.scheduled_instant, r.dispatch, r.status, r.skipped_count]);

// The runs this file's ticks claimed (for every agent then due) run in the test that claimed them,
// not by their start alarms during a later one (see settleClaimedRuns).
afterEach(settleClaimedRuns);

describe("grace window at its edges", () => {
	it("leap day yearly cron (period 4 y): grace is capped at 2 h; 2 h late is late", async () => {
		await createAgent({ name: "grace-leap-late", max_concurrent: 5, schedules: { leap: { cron: "0 12 29 2 *" } } });
		await tick("2024-02-29T11:00:00Z");
		await tick("2024-02-29T14:00:00Z"); // exactly 2 h late: inclusive
		expect(await rows("grace-leap-late")).toEqual([["2024-02-29T12:00:00.000Z", "late", "claimed", null]]);
	});

	it("leap day yearly cron: 2 h 1 min late with catch_up off is skipped saying so", async () => {
		await createAgent({ name: "grace-leap-miss", max_concurrent: 5, schedules: { leap: { cron: "0 12 29 2 *", catch_up: false } } });
		await tick("2024-02-29T11:00:00Z");
		await tick("2024-02-29T14:01:00Z");
		const runs = await runsOf("grace-leap-miss");
		expect(runs.map((r) => [r.scheduled_instant, r.status, r.skipped_count])).toEqual([["2024-02-29T12:00:00.000Z", "skipped", 1]]);
		expect(runs[0]!.skip_reason).toMatch(/missed by 2h 1m \(grace window 2h\); catch_up is off/);
	});

	it("*/5 cron (period 5 min): grace 150 s; 2 min late is late, 3 min late is a catch-up", async () => {
		await createAgent({ name: "grace-five-a", max_concurrent: 5, schedules: { f: { cron: "*/5 * * * *" } } });
		await tick("2026-11-02T10:04:00Z");
		await tick("2026-11-02T10:07:00Z");
		expect(await rows("grace-five-a")).toEqual([["2026-11-02T10:05:00.000Z", "late", "claimed", null]]);
		await createAgent({ name: "grace-five-b", max_concurrent: 5, schedules: { f: { cron: "*/5 * * * *" } } });
		await tick("2026-11-02T11:04:00Z");
		await tick("2026-11-02T11:08:00Z");
		expect(await rows("grace-five-b")).toEqual([["2026-11-02T11:05:00.000Z", "catch_up", "claimed", null]]);
	});

	it("1m interval: the 120 s floor; a tick 2 min after a slot (ticks lost) fires the newest slot on time and records the rest", async () => {
		await createAgent({ name: "grace-minute", max_concurrent: 5, schedules: { m: { interval: "1m" } } });
		await tick("2026-11-03T10:00:00Z");
		await tick("2026-11-03T10:03:00Z");
		expect(await rows("grace-minute")).toEqual([
			["2026-11-03T10:00:00.000Z", "on_time", "claimed", null],
			["2026-11-03T10:02:00.000Z", "late", "skipped", 2],
			["2026-11-03T10:03:00.000Z", "on_time", "claimed", null],
		]);
	});

	it("month-end cron 0 0 31 * * across February: one fire on Mar 31, Jan 31's after Feb is never invented", async () => {
		await createAgent({ name: "grace-month-end", max_concurrent: 5, schedules: { e: { cron: "0 0 31 * *", catch_up: false } } });
		await tick("2026-01-30T23:59:00Z");
		await tick("2026-01-31T00:00:00Z");
		await tick("2026-02-28T00:00:00Z");
		await tick("2026-03-01T00:00:00Z");
		await tick("2026-03-31T00:00:00Z");
		expect(await rows("grace-month-end")).toEqual([
			["2026-01-31T00:00:00.000Z", "on_time", "claimed", null],
			["2026-03-31T00:00:00.000Z", "on_time", "claimed", null],
		]);
	});

	it("a tick delivered a few seconds early (clock skew) does not fire the slot early, and the next tick fires it", async () => {
		await createAgent({ name: "grace-skew", max_concurrent: 5, schedules: { h: { cron: "0 * * * *" } } });
		await tick("2026-11-04T08:45:00Z");
		await tick(Date.parse("2026-11-04T09:00:00Z") - 3_000);
		expect(await rows("grace-skew")).toEqual([]);
		await tick("2026-11-04T09:01:00Z");
		expect((await runsOf("grace-skew")).map((r) => [r.scheduled_instant, r.status])).toEqual([["2026-11-04T09:00:00.000Z", "claimed"]]);
	});

	it("DST fall-back in New York: an hourly '0 * * * *' zoned job fires both 01:00s (distinct instants), each once", async () => {
		await createAgent({ name: "grace-ny-hourly", max_concurrent: 10, schedules: { h: { cron: "0 * * * *", timezone: "America/New_York" } } });
		for (let m = 0; m <= 4 * 60; m += 30) await tick(Date.parse("2026-11-01T04:30:00Z") + m * 60_000);
		expect((await runsOf("grace-ny-hourly")).map((r) => r.scheduled_instant)).toEqual([
			"2026-11-01T05:00:00.000Z",
			"2026-11-01T06:00:00.000Z",
			"2026-11-01T07:00:00.000Z",
			"2026-11-01T08:00:00.000Z",
		]);
	});

	it("a manual run carries no occurrence identity: it neither blocks nor counts as the slot due the same minute", async () => {
		await createAgent({ name: "grace-manual-slot", max_concurrent: 5, schedules: { h: { cron: "0 * * * *" } } });
		await tick("2026-11-05T09:45:00Z");
		const res = await call("/v1/agents/grace-manual-slot/jobs", { method: "POST", as: "operate", body: {} });
		expect(res.status).toBe(201);
		await tick("2026-11-05T10:00:00Z");
		const runs = await runsOf("grace-manual-slot");
		expect(runs.filter((r) => r.source === "manual").map((r) => r.scheduled_instant)).toEqual([null]);
		expect(runs.filter((r) => r.source === "cron").map((r) => [r.scheduled_instant, r.status])).toEqual([["2026-11-05T10:00:00.000Z", "claimed"]]);
	});
});
