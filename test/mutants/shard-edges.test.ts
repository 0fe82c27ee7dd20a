// A mutation walk of the scheduler shard (durable-objects/shard/shard-do.ts) found these unchecked.
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { SchedulerShardDO } from "../../durable-objects/shard/shard-do.ts";
import { dealtJobId, idDay } from "../../src/jobs/id-blocks.ts";
import { shardName, shardOf } from "../../src/scheduler/shards.ts";
import { createAgent, runsOf } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { trigger } from "../helpers/jobs.ts";
import { tick } from "../helpers/ticks.ts";
import { namesInShard, shardWithVars } from "../helpers/vars.ts";
import { loggedDuring } from "../helpers/logs.ts";
import { call } from "../helpers/http.ts";

// Far ahead of the real clock, so no alarm set here fires on its own.
beforeEach(() => {
	vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2037-12-12T09:01:30Z") });
});
afterEach(() => {
	vi.useRealTimers();
});

/** How many job ids the shard has dealt for `day`. */
function dealtSoFar(shard: number, day: string): Promise<number> {
	return runInDurableObject(env.SCHEDULER_SHARD.getByName(shardName(shard)), (_instance, state) => {
		return state.storage.sql.exec<{ next: number }>("SELECT next FROM job_id_counters WHERE day = ?", day).toArray()[0]?.next ?? 0;
	});
}

describe("the job ids a tick deals", () => {
	it("gives each agent it calls one to spare: a manual run just after takes it, and asks the shard for no block", async () => {
		useEmulator();
		let name = "";
		for (let i = 0; !name; i++) if (shardOf(`spare-id-${i}`) === 2) name = `spare-id-${i}`;
		const shard = 2;
		await createAgent({ name, schedules: { often: { interval: "1m" } } });
		const day = idDay(Date.parse("2037-12-12T09:02:00Z"));
		const before = await dealtSoFar(shard, day);
		await tick("2037-12-12T09:02:00Z");
		const afterTick = await dealtSoFar(shard, day);
		const [claimed] = await runsOf(name);
		// Its claim took one of the ids the tick dealt (fleet.yaml's agents of the shard are dealt theirs too).
		const k = Array.from({ length: afterTick - before }, (_, i) => before + i).find((n) => dealtJobId(day, shard, n) === claimed?.job_id);
		expect(k).toBeDefined();
		const manual = await trigger(name);
		// The tick's second id for it, not the first of a block of 32 asked for after the tick's.
		expect(manual.id).toBe(dealtJobId(day, shard, k! + 1));
		expect(await dealtSoFar(shard, day)).toBe(afterTick);
	});

	it("deals neighbouring agents slices that never overlap: two agents' claims and the manual runs after are four jobs", async () => {
		useEmulator();
		const shard = 6;
		const names = namesInShard("neighbour", shard, 2);
		for (const name of names) await createAgent({ name, schedules: { often: { interval: "1m" } } });
		await tick("2037-12-12T09:02:00Z");
		const claims = await Promise.all(names.map(async (name) => (await runsOf(name)).at(-1)?.job_id));
		const manuals = [];
		for (const name of names) manuals.push((await trigger(name)).id);
		const ids = [...claims, ...manuals];
		expect(ids.every((id) => typeof id === "string")).toBe(true);
		expect(new Set(ids).size).toBe(4);
		// Each id is its own agent's job: an id dealt twice would leave one of the two under the other's name.
		for (const [i, name] of names.entries()) {
			for (const id of [claims[i]!, manuals[i]!]) {
				const res = await call(`/v1/jobs/${id}`);
				expect(res.status).toBe(200);
				expect(((await res.json()) as { agent: string }).agent).toBe(name);
			}
		}
	});
});

/** The structured lines of `event` written while `fn` ran. */
const logged = (event: string, fn: () => Promise<unknown>) => loggedDuring(fn, event);

describe("a follow-up alarm's shard.follow_up line", () => {
	it("names the oldest minute it calls for as its minute, and every pending minute", async () => {
		// Between fleet.yaml's slots.
		const first = Date.parse("2031-09-05T10:02:00Z");
		vi.setSystemTime(first - 30_000);
		const shard = 9;
		for (const name of namesInShard("owed", shard, 24)) await createAgent({ name, schedules: { minutely: { cron: "* * * * *" } } });
		// 8 calls an invocation: two ticks leave 10:02 part called and 10:03 untouched.
		await shardWithVars(shard, { SUBREQUEST_LIMIT: "10" });
		for (const m of [0, 1]) {
			vi.setSystemTime(first + m * 60_000 + 5_000);
			await tick(first + m * 60_000);
		}
		const lines = await logged("shard.follow_up", () => runDurableObjectAlarm(env.SCHEDULER_SHARD.getByName(shardName(shard))));
		expect(lines).toEqual([
			expect.objectContaining({ shard, minute: "2031-09-05T10:02:00.000Z", minutes: ["2031-09-05T10:02:00.000Z", "2031-09-05T10:03:00.000Z"], failed: 0 }),
		]);
	});
});

type Internals = { env: Env; ctx: DurableObjectState };
type AgentTick = (name: string, source: "file" | "api", now: number, jobIds: readonly string[]) => Promise<unknown>;

/** A real kill of shard `shard`'s instance as it calls `victim` (before the call leaves), as test/scheduler/shard-death.test.ts does. */
async function killShardCalling(shard: number, victim: string): Promise<void> {
	await runInDurableObject(env.SCHEDULER_SHARD.getByName(shardName(shard)), (instance: SchedulerShardDO) => {
		const self = instance as unknown as Internals;
		const { ctx } = self;
		const agents = self.env.AGENT;
		self.env = {
			...self.env,
			AGENT: {
				getByName: (name: string) => ({
					tick: (async (...args) => {
						if (name !== victim) return (agents.getByName(name) as unknown as { tick: AgentTick }).tick(...args);
						await ctx.storage.sync();
						ctx.abort("killed by the test (shard)");
						throw new Error("killed by the test (shard)");
					}) satisfies AgentTick,
				}),
			},
		} as unknown as Env;
	});
}

describe("a shard whose instance died with calls out", () => {
	it("says shard.calls_recovered, with the minute of the calls it makes again, when the next tick finds them", async () => {
		const ten = Date.parse("2031-09-06T10:02:00Z");
		vi.setSystemTime(ten - 30_000);
		const shard = 4;
		const names = namesInShard("died", shard, 3).sort();
		for (const name of names) await createAgent({ name, max_concurrent: 5, schedules: { minutely: { cron: "* * * * *" } } });
		await killShardCalling(shard, names[1]!);
		vi.setSystemTime(ten + 5_000);
		await tick(ten);
		vi.setSystemTime(ten + 65_000);
		const lines = await logged("shard.calls_recovered", () => tick(ten + 60_000));
		expect(lines).toEqual([expect.objectContaining({ shard, minute: "2031-09-06T10:02:00.000Z", minutes: ["2031-09-06T10:02:00.000Z"] })]);
		// And the agents it never heard from claimed that minute's slot, then the next.
		for (const name of names) expect((await runsOf(name)).map((r) => r.scheduled_instant), name).toEqual(["2031-09-06T10:02:00.000Z", "2031-09-06T10:03:00.000Z"]);
	});
});

describe("a shard upgraded from the single follow-up cursor", () => {
	it("still calls the minute an older version left in it, at its alarm", async () => {
		const ten = Date.parse("2031-09-07T10:02:00Z");
		vi.setSystemTime(ten - 30_000);
		const shard = 11;
		const names = namesInShard("legacy", shard, 3).sort();
		for (const name of names) await createAgent({ name, schedules: { minutely: { cron: "* * * * *" } } });
		// As a shard before the queue left its one cursor: 10:02 called up to the first agent.
		await runInDurableObject(env.SCHEDULER_SHARD.getByName(shardName(shard)), async (_i: SchedulerShardDO, state) => {
			state.storage.sql.exec("INSERT INTO meta (key, value) VALUES ('follow_up', ?)", JSON.stringify({ shard, now: ten, after: "" }));
			await state.storage.setAlarm(ten + 5_000);
		});
		vi.setSystemTime(ten + 5_000);
		expect(await runDurableObjectAlarm(env.SCHEDULER_SHARD.getByName(shardName(shard)))).toBe(true);
		for (const name of names) expect((await runsOf(name)).map((r) => [r.scheduled_instant, r.status]), name).toEqual([["2031-09-07T10:02:00.000Z", "claimed"]]);
	});
});

describe("a raised RETENTION_DAYS", () => {
	it("is no notice (no shard.retention_shortened line); a lowered one after it is, from the raised value", async () => {
		const ten = Date.parse("2031-09-08T10:02:00Z");
		vi.setSystemTime(ten - 30_000);
		const shard = 12;
		for (const name of namesInShard("kept-longer", shard, 2)) await createAgent({ name });
		vi.setSystemTime(ten + 5_000);
		await tick(ten);
		await shardWithVars(shard, { RETENTION_DAYS: "60" });
		vi.setSystemTime(ten + 65_000);
		expect(await logged("shard.retention_shortened", () => tick(ten + 60_000))).toEqual([]);
		await shardWithVars(shard, { RETENTION_DAYS: "7" });
		vi.setSystemTime(ten + 125_000);
		expect(await logged("shard.retention_shortened", () => tick(ten + 120_000))).toEqual([expect.objectContaining({ shard, from: 60, to: 7 })]);
	});
});

describe("a tick that leaves due agents to a follow-up", () => {
	it("sets the shard's alarm at once, so they are called within seconds, not at the next tick", async () => {
		// Shard 14 (no other case here uses it): 12 agents due at 10:05, more than one invocation's 8 calls (SUBREQUEST_LIMIT 10).
		vi.setSystemTime(Date.parse("2037-12-12T10:04:30Z"));
		for (const name of namesInShard("deferring", 14, 12)) await createAgent({ name, schedules: { once: { cron: "5 10 * * *" } } });
		await shardWithVars(14, { SUBREQUEST_LIMIT: "10" });
		vi.setSystemTime(Date.parse("2037-12-12T10:05:02Z"));
		await tick("2037-12-12T10:05:00Z");
		const alarm = await runInDurableObject(env.SCHEDULER_SHARD.getByName(shardName(14)), (_i: SchedulerShardDO, state) => state.storage.getAlarm());
		expect(alarm, "the follow-up's alarm").not.toBeNull();
		expect(alarm! - Date.now(), "its delay (ms)").toBeLessThanOrEqual(0);
		// And the follow-up calls the four left.
		expect(await runDurableObjectAlarm(env.SCHEDULER_SHARD.getByName(shardName(14)))).toBe(true);
		const claimed = await Promise.all(namesInShard("deferring", 14, 12).map(async (name) => (await runsOf(name)).length));
		expect(claimed).toEqual(Array(12).fill(1));
	});
});
