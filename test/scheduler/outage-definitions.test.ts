import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createAgent, redefineAgent, runsOf, settle } from "../helpers/agents.ts";
import { tick } from "../helpers/ticks.ts";

// Definitions made while ticks are missing (an outage), at times near the wall clock as in
// production: a PUT or POST is stamped with the time it is made, and the ticks around it here are
// dated before and after that time. Its own file: a later tick elsewhere would date these definitions.
const MINUTE = 60_000;
const quarter = (t: number) => Math.floor(t / (15 * MINUTE)) * 15 * MINUTE;
const iso = (t: number) => new Date(t).toISOString();

// The wall clock is the test's (a fake one), set where each story has it: on the real one, a quarter
// hour passing between the moment a test read and the definitions it then made moved the slots owed.
// Far ahead (2037), so an alarm set by it never comes due on its own during the run, as one set
// seconds ahead of the real clock did not.
const NOW = Date.parse("2037-12-03T14:37:00Z");
const wallClock = (t: number) => vi.setSystemTime(t);
beforeEach(() => {
	vi.useFakeTimers({ toFake: ["Date"], now: NOW });
});
afterEach(() => {
	vi.useRealTimers();
});

const put = (name: string, body: Record<string, unknown>) => redefineAgent(name, { max_concurrent: 50, ...body });

/** The 15-minute slots of `schedule` in (from, to) that no ledger row covers. */
async function uncovered(agent: string, schedule: string, from: number, to: number): Promise<string[]> {
	const covered = new Set<number>();
	for (const r of await runsOf(agent)) {
		if (r.schedule !== schedule) continue;
		const last = Date.parse(r.scheduled_instant!);
		const first = r.skipped_from ? Date.parse(r.skipped_from) : last;
		for (let t = first; t <= last; t += 15 * MINUTE) covered.add(t);
	}
	const out: string[] = [];
	for (let t = quarter(from) + 15 * MINUTE; t < to; t += 15 * MINUTE) if (!covered.has(t)) out.push(iso(t));
	return out;
}

describe("a schedule a POST starts while ticks are missing", () => {
	it("is owed the slots after its definition as any schedule is (one catch-up run, or one skipped range with catch_up off), and none before it", async () => {
		const definedAt = NOW;
		const lastTick = quarter(definedAt) - 15 * MINUTE;
		wallClock(lastTick);
		await tick(lastTick);
		wallClock(definedAt);
		await createAgent({ name: "born-in-outage", max_concurrent: 5, schedules: { q: { interval: "15m", catch_up: true } } });
		await createAgent({ name: "born-in-outage-off", max_concurrent: 5, schedules: { q: { interval: "15m", catch_up: false } } });
		// Ticks come back about 3 hours later, 10 minutes after a slot: past its 7.5-minute grace.
		const newest = quarter(definedAt) + 3 * 60 * MINUTE;
		wallClock(newest + 10 * MINUTE);
		await tick(newest + 10 * MINUTE);
		const firstOwed = quarter(definedAt) + 15 * MINUTE;

		const on = await runsOf("born-in-outage");
		expect(on.map((r) => [r.scheduled_instant, r.dispatch, r.status, r.skipped_from, r.skipped_count])).toEqual(
			expect.arrayContaining([
				[iso(newest), "catch_up", "claimed", null, null],
				[iso(newest - 15 * MINUTE), "late", "skipped", iso(firstOwed), 11],
			]),
		);
		expect(on).toHaveLength(2);

		const off = await runsOf("born-in-outage-off");
		expect(off).toHaveLength(1);
		expect(off[0]).toMatchObject({ status: "skipped", scheduled_instant: iso(newest), skipped_from: iso(firstOwed), skipped_count: 12, job_id: null });
		expect(off[0]!.skip_reason).toMatch(/catch_up is off/);
		await settle("born-in-outage");
	});
});

describe("a schedule that stops while ticks are missing", () => {
	for (const [what, next, reason] of [
		["removed", { other: { cron: "0 0 1 1 *" } }, "schedule s was removed"],
		["disabled", { s: { interval: "15m", enabled: false }, other: { cron: "0 0 1 1 *" } }, "schedule s was disabled"],
		["renamed and retimed", { s2: { interval: "30m" } }, "schedule s was removed"],
	] as const) {
		it(`(${what}) leaves a row for each slot it missed before it stopped, saying why it did not run`, async () => {
			const name = `stopped-${what.split(" ")[0]}`;
			const changedAt = NOW;
			const lastTick = quarter(changedAt) - 3 * 60 * MINUTE;
			wallClock(lastTick - 10_000);
			await createAgent({ name, max_concurrent: 50, schedules: { s: { interval: "15m", catch_up: true } } });
			await tick(lastTick);
			// Three hours into the outage the schedule stops; the ticks come back after.
			wallClock(changedAt);
			await put(name, { schedules: next });
			wallClock(quarter(changedAt) + 15 * MINUTE);
			await tick(quarter(changedAt) + 15 * MINUTE);
			expect(await uncovered(name, "s", lastTick, changedAt)).toEqual([]);
			const missed = (await runsOf(name)).filter((r) => r.schedule === "s" && r.status === "skipped");
			expect(missed.length).toBeGreaterThan(0);
			for (const r of missed) expect(r.skip_reason).toBe(`not run: ${reason} before this slot was claimed`);
			// Nothing of s after the change: it owes nothing for the time it is off.
			expect((await runsOf(name)).filter((r) => r.schedule === "s" && Date.parse(r.scheduled_instant!) > changedAt)).toEqual([]);
			await settle(name);
		});
	}
});

// Later than every other tick in this file: the scheduler's latest tick dates a definition.
describe("a schedule a POST starts after its slot, while that minute's tick is still on its way", () => {
	it("does not run the slot from before it existed: only the slots after its definition are owed", async () => {
		const name = "born-after-slot";
		const next = quarter(NOW) + 6 * 60 * MINUTE;
		const slot = next - 5 * MINUTE;
		const daily = { cron: `${new Date(slot).getUTCMinutes()} ${new Date(slot).getUTCHours()} * * *` };
		wallClock(slot - 5 * MINUTE + 5_000);
		await tick(slot - 5 * MINUTE); // the last tick before cron triggers stop arriving
		// Defined half a minute after the next tick's time; that tick arrives ten seconds later (ticks
		// are back, or `drover tick` is run by hand).
		wallClock(next + 30_000);
		await createAgent({ name, max_concurrent: 5, schedules: { daily } });
		wallClock(next + 40_000);
		await tick(next);
		expect(await runsOf(name)).toEqual([]);
		// The next day's slot is its first.
		wallClock(slot + 24 * 60 * MINUTE + 2_000);
		await tick(slot + 24 * 60 * MINUTE);
		expect((await runsOf(name)).map((r) => [r.scheduled_instant, r.dispatch, r.status])).toEqual([[iso(slot + 24 * 60 * MINUTE), "on_time", "claimed"]]);
		await settle(name);
	});
});
