import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent, runsOf, settle, settleClaimedRuns } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { jobOf } from "../helpers/jobs.ts";
import { killSwitch } from "../helpers/kill.ts";
import { tick } from "../helpers/ticks.ts";

afterEach(async () => {
	vi.restoreAllMocks();
	// The runs this file's ticks claimed (for every agent then due) run in the test that claimed them,
	// not by their start alarms during a later one (see settleClaimedRuns).
	await settleClaimedRuns();
});

/**
 * The object's next `setAlarm` fails: `kill` dies there (a real `ctx.abort()`, after what was
 * written so far is on disk), `refuse` throws as storage refusing the write would. Once only: a
 * fresh instance has the real storage back.
 */
async function breakNextSetAlarm(agent: string, how: "kill" | "refuse"): Promise<{ readonly fired: number }> {
	const switcher = await killSwitch(agent);
	let fired = 0;
	await runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) => {
		const storage = state.storage as { setAlarm: DurableObjectStorage["setAlarm"] };
		const real = storage.setAlarm.bind(state.storage);
		storage.setAlarm = async (...args) => {
			if (fired > 0) return real(...args);
			fired++;
			if (how === "kill") return switcher.kill();
			throw new Error("setAlarm refused (injected)");
		};
	});
	return {
		get fired() {
			return fired;
		},
	};
}

// Hermes' stuck claims (#108802): a claim committed whose start alarm was never set left its job
// pending, unlisted in D1, until its schedule's next slot, a day later for a daily one, which then
// skipped as "at capacity" behind it.
describe("a claim whose start alarm was not set", () => {
	for (const how of ["kill", "refuse"] as const) {
		it(`(${how === "kill" ? "the object dying at its setAlarm" : "storage refusing the alarm"}) starts at the tick that repeats the failed call, and runs`, async () => {
			const name = `claim-start-${how}`;
			// Tomorrow (UTC): job ids are dealt only for days near the real clock.
			const day = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
			const emulator = useEmulator();
			emulator.enqueue({ text: "Morning report done." });
			await createAgent({ name, schedules: { daily: { cron: "0 9 * * *" } } });
			await tick(`${day}T08:59:00Z`);
			const broken = await breakNextSetAlarm(name, how);
			vi.spyOn(console, "error").mockImplementation(() => {});
			vi.spyOn(console, "warn").mockImplementation(() => {});
			await tick(`${day}T09:00:00Z`);
			expect(broken.fired).toBe(1);
			const [run] = await runsOf(name);
			expect(run).toMatchObject({ scheduled_instant: `${day}T09:00:00.000Z`, status: "claimed" });
			expect((await jobOf(name, run!.job_id!)).status).toBe("pending");

			// The shard calls the agent again for the minute its call failed: nothing new to claim, but
			// the claimed run is set to start within the claim's start spread.
			await tick(`${day}T09:01:00Z`);
			vi.restoreAllMocks();
			const alarm = await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => state.storage.getAlarm());
			expect(alarm, "an alarm to start the claimed run").not.toBeNull();
			expect(alarm! - Date.now()).toBeLessThanOrEqual(5_000);
			expect(await runDurableObjectAlarm(env.AGENT.getByName(name))).toBe(true);
			await settle(name);
			expect(await jobOf(name, run!.job_id!)).toMatchObject({ status: "completed", summary: "Morning report done." });
			expect((await runsOf(name)).map((r) => [r.scheduled_instant, r.status])).toEqual([[`${day}T09:00:00.000Z`, "completed"]]);
		});
	}
});

