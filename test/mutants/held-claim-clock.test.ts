import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { schedulerNow } from "../../durable-objects/agent/held-claims.ts";
import { createAgent, runsOf, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { jobOf } from "../helpers/jobs.ts";
import { dayFromToday, tick } from "../helpers/ticks.ts";

// held-claims.ts schedulerNow: a held run's lateness is measured on the ticks' clock, moved on by the
// time since the newest tick came. A run its agent's resume starts 40 s after a tick is 40 s later
// than that tick says: an hourly slot held 29 min 30 s at the tick and started 40 s on is past its
// 30-min grace window (not run with catch_up off), where the tick's time alone would run it.
describe("the scheduler's clock an agent keeps", () => {
	it("is the newest tick's time moved on by the wall-clock time since it came, never moved back", async () => {
		await createAgent({ name: "tick-clock" });
		await runInDurableObject(env.AGENT.getByName("tick-clock"), (_i: AgentDO, state) => {
			const sql = state.storage.sql;
			const wall = Date.now();
			// No tick noted: the wall clock.
			expect(schedulerNow(sql, wall)).toBe(wall);
			const tickAt = Date.parse("2027-01-05T10:39:30Z");
			sql.exec("UPDATE agent_state SET tick_at = ?, tick_noted_at = ? WHERE id = 1", tickAt, wall);
			expect(schedulerNow(sql, wall)).toBe(tickAt);
			expect(schedulerNow(sql, wall + 40_000)).toBe(tickAt + 40_000);
			// A wall clock behind the note (a retried call) does not move it back.
			expect(schedulerNow(sql, wall - 5_000)).toBe(tickAt);
		});
	});
});

// held-claims.ts heldClaim: a run still pending a minute after its claim was held. A catch-up run is
// claimed long after its slot (that is what it is), and one that starts at once was held by nothing.
describe("a catch-up run that starts as soon as it is claimed", () => {
	it("starts as claimed: its job says started, not held past its slot's grace, and stays a catch_up", async () => {
		const name = "catch-up-at-once";
		const day = new Date(dayFromToday(-2)).toISOString().slice(0, 10);
		useEmulator().enqueue({ text: "At noon." }, { text: "Caught up." });
		await createAgent({ name, max_concurrent: 5, schedules: { quarter: { interval: "15m" } } });
		await tick(`${day}T12:00:00Z`);
		// Ticks stop for over an hour: 13:00 is claimed at 13:10 as the outage's catch-up run.
		await tick(`${day}T13:10:00Z`);
		const catchUp = (await runsOf(name)).find((r) => r.dispatch === "catch_up")!;
		expect(catchUp).toMatchObject({ scheduled_instant: `${day}T13:00:00.000Z`, status: "claimed" });
		await settle(name);
		const job = await jobOf(name, catchUp.job_id!);
		expect(job).toMatchObject({ status: "completed", dispatch: "catch_up", summary: "Caught up." });
		expect(job.transitions.find((t) => t.to === "running")?.reason).toBe("started");
	});
});
