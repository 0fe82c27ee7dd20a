import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { SchedulerShardDO } from "../../durable-objects/shard/shard-do.ts";
import { shardName } from "../../src/scheduler/shards.ts";
import { createAgent, runsOf } from "../helpers/agents.ts";
import { tick } from "../helpers/ticks.ts";
import { followUps } from "../helpers/retention.ts";
import { namesInShard, shardWithVars } from "../helpers/vars.ts";

afterEach(() => {
	vi.useRealTimers();
});

type Internals = { env: Env; ctx: DurableObjectState };
type TickArgs = [name: string, source: "file" | "api", now: number, jobIds: readonly string[]];
type AgentTick = (...args: TickArgs) => Promise<unknown>;

const shardStub = (shard: number) => env.SCHEDULER_SHARD.getByName(shardName(shard));

/**
 * The shard's instance calls its agents through `route`: each agent's tick goes to what it returns
 * for the name (the real agent's, by default). A fresh instance gets the real binding back.
 */
async function routeCalls(shard: number, route: (name: string, real: AgentTick) => AgentTick): Promise<void> {
	await runInDurableObject(shardStub(shard), (instance: SchedulerShardDO) => {
		const self = instance as unknown as Internals;
		const agents = self.env.AGENT;
		self.env = {
			...self.env,
			AGENT: {
				getByName: (name: string) => {
					const real: AgentTick = (...args) => (agents.getByName(name) as unknown as { tick: AgentTick }).tick(...args);
					return { tick: route(name, real) };
				},
			},
		} as unknown as Env;
	});
}

/**
 * A real kill of the shard's instance (as kill.ts does for an agent) when it calls `victim`: `before`
 * the call reaches the agent, or `after` the agent has claimed but before the shard hears its answer.
 * Its writes so far are made durable first, as the output gate would have them before a call leaves.
 */
async function killShardCalling(shard: number, victim: string, when: "before" | "after"): Promise<void> {
	let ctx!: DurableObjectState;
	await runInDurableObject(shardStub(shard), (instance: SchedulerShardDO) => {
		ctx = (instance as unknown as Internals).ctx;
	});
	await routeCalls(shard, (name, real) =>
		name !== victim
			? real
			: async (...args) => {
					if (when === "after") await real(...args);
					await ctx.storage.sync();
					ctx.abort("killed by the test (shard)");
					throw new Error("killed by the test (shard)");
				},
	);
}

async function minutelyAgents(prefix: string, shard: number, count: number): Promise<string[]> {
	const names = namesInShard(prefix, shard, count).sort();
	// Room for every minute's run: a slot skipped here is skipped by the scheduler, not by overlap.
	for (const name of names) await createAgent({ name, max_concurrent: 5, schedules: { minutely: { cron: "* * * * *" } } });
	return names;
}

const ledger = async (name: string) => (await runsOf(name)).map((r) => [r.scheduled_instant, r.status, r.skip_reason]);

describe("a scheduler shard whose instance dies while its agents' calls are on their way", () => {
	it("calls the agents it never heard from for that minute at the next tick, before the tick's own: no slot is skipped as superseded", async () => {
		const ten = Date.parse("2031-08-01T10:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: ten - 30_000 });
		const shard = 2;
		const names = await minutelyAgents("dies-tick", shard, 4);
		vi.setSystemTime(ten + 5_000);
		await tick(ten);

		await killShardCalling(shard, names[1]!, "before");
		vi.setSystemTime(ten + 65_000);
		await tick(ten + 60_000);
		// No alarm is let run: the next tick is what comes.
		vi.setSystemTime(ten + 125_000);
		await tick(ten + 120_000);

		for (const name of names) {
			expect(await ledger(name), name).toEqual([
				["2031-08-01T10:00:00.000Z", "claimed", null],
				["2031-08-01T10:01:00.000Z", "claimed", null],
				["2031-08-01T10:02:00.000Z", "claimed", null],
			]);
		}
	});

	it("calls them from its heartbeat alarm, for their minute, when nothing else wakes the shard", async () => {
		const ten = Date.parse("2031-08-02T10:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: ten - 30_000 });
		const shard = 4;
		const names = await minutelyAgents("dies-alarm", shard, 4);
		vi.setSystemTime(ten + 5_000);
		await tick(ten);

		await killShardCalling(shard, names[2]!, "before");
		vi.setSystemTime(ten + 65_000);
		await tick(ten + 60_000);
		const alarm = await runInDurableObject(shardStub(shard), (_i: SchedulerShardDO, state) => state.storage.getAlarm());
		expect(alarm).not.toBeNull();
		// Within a slot's shortest grace window (2 minutes) of the minute called.
		expect(alarm! - (ten + 60_000)).toBeLessThanOrEqual(60_000);
		vi.setSystemTime(alarm!);
		expect(await runDurableObjectAlarm(shardStub(shard))).toBe(true);

		for (const name of names) {
			expect(await ledger(name), name).toEqual([
				["2031-08-02T10:00:00.000Z", "claimed", null],
				["2031-08-02T10:01:00.000Z", "claimed", null],
			]);
		}
		// Called through: no alarm is left to wake the shard for nothing.
		expect(await runDurableObjectAlarm(shardStub(shard))).toBe(false);
	});

	it("calls again an agent that had claimed before the shard died: the slot is claimed once", async () => {
		const ten = Date.parse("2031-08-03T10:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: ten - 30_000 });
		const shard = 9;
		const names = await minutelyAgents("dies-after", shard, 3);
		vi.setSystemTime(ten + 5_000);
		await tick(ten);

		const victim = names[0]!;
		await killShardCalling(shard, victim, "after");
		vi.setSystemTime(ten + 65_000);
		await tick(ten + 60_000);
		expect((await ledger(victim)).length).toBe(2);
		const calls: number[] = [];
		await routeCalls(shard, (name, real) => (name !== victim ? real : (...args) => (calls.push(args[2]), real(...args))));
		vi.setSystemTime(ten + 90_000);
		while (await runDurableObjectAlarm(shardStub(shard)));
		vi.setSystemTime(ten + 125_000);
		await tick(ten + 120_000);

		// Called again for 10:01, then for 10:02.
		expect(calls).toEqual([ten + 60_000, ten + 120_000]);
		for (const name of names) {
			expect(await ledger(name), name).toEqual([
				["2031-08-03T10:00:00.000Z", "claimed", null],
				["2031-08-03T10:01:00.000Z", "claimed", null],
				["2031-08-03T10:02:00.000Z", "claimed", null],
			]);
		}
	});

	it("does not call again from its heartbeat alarm a call still on its way in the live instance", async () => {
		const ten = Date.parse("2031-08-04T10:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: ten - 30_000 });
		const shard = 11;
		const names = await minutelyAgents("slow-live", shard, 3);
		vi.setSystemTime(ten + 5_000);
		await tick(ten);

		const slow = names[1]!;
		const calls: number[] = [];
		let release!: () => void;
		const released = new Promise<void>((resolve) => (release = resolve));
		let reached!: () => void;
		const reachedSlow = new Promise<void>((resolve) => (reached = resolve));
		await routeCalls(shard, (name, real) =>
			name !== slow
				? real
				: async (...args) => {
						calls.push(args[2]);
						reached();
						await released;
						return real(...args);
					},
		);
		vi.setSystemTime(ten + 65_000);
		const ticked = tick(ten + 60_000);
		await reachedSlow;
		// The slow agent takes longer than a heartbeat: the alarm fires while its call is on its way.
		const alarm = await runInDurableObject(shardStub(shard), (_i: SchedulerShardDO, state) => state.storage.getAlarm());
		expect(alarm).not.toBeNull();
		vi.setSystemTime(alarm!);
		expect(await runDurableObjectAlarm(shardStub(shard))).toBe(true);
		expect(calls).toEqual([ten + 60_000]);
		// Still the safety net while the call is on its way.
		expect(await runInDurableObject(shardStub(shard), (_i: SchedulerShardDO, state) => state.storage.getAlarm())).not.toBeNull();
		release();
		await ticked;

		expect(calls).toEqual([ten + 60_000]);
		for (const name of names) {
			expect(await ledger(name), name).toEqual([
				["2031-08-04T10:00:00.000Z", "claimed", null],
				["2031-08-04T10:01:00.000Z", "claimed", null],
			]);
		}
		// Answered: the heartbeat is taken down with it.
		expect(await runDurableObjectAlarm(shardStub(shard))).toBe(false);
	});

	it("calls them again within its subrequest budget, the rest of their minute left to follow-ups before the next", async () => {
		const ten = Date.parse("2031-08-05T10:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: ten - 30_000 });
		const shard = 12;
		const names = await minutelyAgents("dies-crowd", shard, 12);
		// 10 subrequests an invocation: 8 agent calls each.
		await shardWithVars(shard, { SUBREQUEST_LIMIT: "10" });
		vi.setSystemTime(ten + 5_000);
		await tick(ten);
		await followUps(shard);

		// Dies calling the third of the 8 its tick takes; the other 4 wait in its queue.
		await killShardCalling(shard, names[2]!, "before");
		vi.setSystemTime(ten + 65_000);
		await tick(ten + 60_000);
		// The fresh instance is deployed with the same limit.
		await shardWithVars(shard, { SUBREQUEST_LIMIT: "10" });
		vi.setSystemTime(ten + 125_000);
		const next = await shardStub(shard).tick(shard, ten + 120_000);
		expect(next.agents_called).toBe(8);
		expect(next.oldest_deferred).toBe(ten + 60_000);
		expect(next.deferred).toBeGreaterThan(0);
		expect(await followUps(shard)).toBeGreaterThan(0);

		for (const name of names) {
			expect(await ledger(name), name).toEqual([
				["2031-08-05T10:00:00.000Z", "claimed", null],
				["2031-08-05T10:01:00.000Z", "claimed", null],
				["2031-08-05T10:02:00.000Z", "claimed", null],
			]);
		}
	});
});
