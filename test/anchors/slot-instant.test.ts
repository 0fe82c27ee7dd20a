import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { planTick } from "../../src/scheduler/occurrences.ts";
import { createAgent, runsOf, settleClaimedRuns } from "../helpers/agents.ts";
import { dayFromToday, minuteOn } from "../helpers/ticks.ts";

// Hermes: a completed row that finished before its own slot never counts for that occurrence, "because
// a run cannot prove an occurrence that had not happened yet". drover keeps that by never claiming a
// slot before its instant, whoever calls the agent: the shard's due-time index skips an agent not due
// yet, but a follow-up, a recovered call or a stale index reaches the agent's own planning.
afterEach(settleClaimedRuns);

const hourly = { cron: "0 * * * *", timezone: "UTC", enabled: true, catch_up: false } as const;

describe("a slot is never claimed before its instant", () => {
	it("plans nothing a millisecond before the slot, and fires it on time at the slot itself", () => {
		const cursor = new Date("2026-11-04T08:45:00Z");
		const early = planTick(hourly as never, cursor, new Date(Date.parse("2026-11-04T09:00:00Z") - 1));
		expect(early.fires).toEqual([]);
		expect(early.skipped).toEqual([]);
		expect(early.next?.toISOString()).toBe("2026-11-04T09:00:00.000Z");
		const at = planTick(hourly as never, early.cursor, new Date("2026-11-04T09:00:00Z"));
		expect(at.fires).toEqual([{ instant: new Date("2026-11-04T09:00:00Z"), dispatch: "on_time" }]);
	});

	it("an agent called seconds before its slot claims nothing, and claims the slot once at the next call", async () => {
		const day = dayFromToday(3);
		await createAgent({ name: "slot-early", max_concurrent: 5, schedules: { h: { cron: "0 * * * *", catch_up: false } } });
		const agent = env.AGENT.getByName("slot-early");
		await agent.tick("slot-early", "api", minuteOn(day, "08:45"));
		const before = (await runsOf("slot-early")).filter((r) => r.status !== "skipped");
		expect(before).toEqual([]);
		await agent.tick("slot-early", "api", minuteOn(day, "09:00") - 3_000);
		expect((await runsOf("slot-early")).filter((r) => r.status !== "skipped")).toEqual([]);
		await agent.tick("slot-early", "api", minuteOn(day, "09:00") + 30_000);
		const slot = new Date(minuteOn(day, "09:00")).toISOString();
		expect((await runsOf("slot-early")).filter((r) => r.status !== "skipped").map((r) => [r.scheduled_instant, r.dispatch, r.status])).toEqual([[slot, "on_time", "claimed"]]);
	});
});
