import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { dealtJobId, idDay, SLOT_CAPACITY } from "../../src/jobs/id-blocks.ts";
import { isJobId } from "../../src/jobs/ids.ts";
import { shardName, shardOf } from "../../src/scheduler/shards.ts";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { currentDefinition, readState } from "../../durable-objects/agent/state.ts";
import { createAgent, runsOf, settle } from "../helpers/agents.ts";
import { call, errorOf } from "../helpers/http.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { jobOf, trigger } from "../helpers/jobs.ts";
import { tick } from "../helpers/ticks.ts";

// The wall clock is the test's (a fake one): a shard deals a day's ids only while the wall clock is
// within ID_COUNTER_DAYS of that day, and a run's id carries its day. On the real clock a tick at a
// literal date got no dealt ids from three days after it on, and a test that crossed midnight UTC
// read the day before its run's. Far ahead (2037 has 2026's calendar), so an alarm set by it (a
// claimed run's start) never comes due on its own during the run, whatever day that is.
beforeEach(() => {
	vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2037-12-05T08:59:30Z") });
});
afterEach(() => {
	vi.useRealTimers();
});

/** `count` agent names that land on one scheduler shard, and the shard. */
function namesOnOneShard(prefix: string, count: number): { names: string[]; shard: number } {
	const byShard = new Map<number, string[]>();
	for (let i = 0; ; i++) {
		const name = `${prefix}-${i}`;
		const names = byShard.get(shardOf(name)) ?? [];
		names.push(name);
		byShard.set(shardOf(name), names);
		if (names.length === count) return { names, shard: shardOf(name) };
	}
}

/** How many job ids the shard has dealt for `day`. */
function dealtSoFar(shard: number, day: string): Promise<number> {
	return runInDurableObject(env.SCHEDULER_SHARD.getByName(shardName(shard)), (_instance, state) => {
		return state.storage.sql.exec<{ next: number }>("SELECT next FROM job_id_counters WHERE day = ?", day).toArray()[0]?.next ?? 0;
	});
}

/** Ticks at `at`; the ids the shard dealt for it. */
async function dealtByTick(shard: number, at: string): Promise<Set<string>> {
	const day = idDay(Date.parse(at));
	const before = await dealtSoFar(shard, day);
	await tick(at);
	const after = await dealtSoFar(shard, day);
	return new Set(Array.from({ length: after - before }, (_, i) => dealtJobId(day, shard, before + i)));
}

describe("job ids across the fleet", () => {
	it("deals agents that share a shard different ids for their runs, and asks again only when an agent has none left", async () => {
		useEmulator();
		const { names: [a, b], shard } = namesOnOneShard("dealt-manual", 2) as { names: [string, string]; shard: number };
		await createAgent({ name: a });
		await createAgent({ name: b });
		const day = idDay(Date.now());
		const before = await dealtSoFar(shard, day);

		const first = await trigger(a);
		const second = await trigger(b);
		const third = await trigger(a);
		// Each agent is dealt a block of 32 the first time; a's second run takes the next of its block.
		expect(first.id).toBe(dealtJobId(day, shard, before));
		expect(second.id).toBe(dealtJobId(day, shard, before + 32));
		expect(third.id).toBe(dealtJobId(day, shard, before + 1));
		expect(await dealtSoFar(shard, day)).toBe(before + 64);
		// Each is found by its id, in the D1 index as well as in its agent.
		for (const [agent, job] of [[a, first], [b, second], [a, third]] as const) {
			await settle(agent);
			expect((await jobOf(agent, job.id)).agent).toBe(agent);
			const row = await env.DB.prepare("SELECT agent FROM jobs WHERE id = ?").bind(job.id).first<{ agent: string }>();
			expect(row?.agent).toBe(agent);
		}
	});

	it("deals each agent a tick calls the id of the job it claims, before the call leaves", async () => {
		useEmulator();
		const { names, shard } = namesOnOneShard("dealt-tick", 3);
		for (const name of names) await createAgent({ name, schedules: { often: { interval: "1m" } } });
		const dealt = await dealtByTick(shard, "2037-12-05T09:00:00Z");
		const claimed = await Promise.all(names.map(async (name) => (await runsOf(name)).map((r) => r.job_id)));
		expect(claimed.map((ids) => ids.length)).toEqual([1, 1, 1]);
		const ids = claimed.flat() as string[];
		expect(new Set(ids).size).toBe(3);
		for (const id of ids) expect(dealt.has(id)).toBe(true);
	});

	it("deals an agent with more schedules due than a tick brings ids for one id per schedule", async () => {
		useEmulator();
		const { names: [name], shard } = namesOnOneShard("dealt-many", 1) as { names: [string]; shard: number };
		const schedules = { a: { interval: "1m" }, b: { interval: "5m" }, c: { interval: "15m" } };
		vi.setSystemTime(Date.parse("2037-12-06T08:59:30Z"));
		await createAgent({ name, max_concurrent: 5, schedules });
		const dealt = await dealtByTick(shard, "2037-12-06T09:00:00Z");
		const ids = (await runsOf(name)).map((r) => r.job_id!);
		expect(ids).toHaveLength(3);
		expect(new Set(ids).size).toBe(3);
		for (const id of ids) expect(dealt.has(id)).toBe(true);
	});

	it("never deals a day's ids twice, whatever day a tick between asks for", async () => {
		useEmulator();
		const { names: [a, b], shard } = namesOnOneShard("dealt-days", 2) as { names: [string, string]; shard: number };
		await createAgent({ name: a, schedules: { often: { interval: "1m" } } });
		await createAgent({ name: b });
		const day = idDay(Date.now());
		const before = await dealtSoFar(shard, day);
		const first = await trigger(a);
		// A tick dated a week ahead (a test's, or a clock gone wrong) must not make the shard forget today.
		await tick(Date.now() + 7 * 86_400_000);
		const second = await trigger(b);
		expect(first.id).toBe(dealtJobId(day, shard, before));
		expect(second.id).toBe(dealtJobId(day, shard, before + 32));
		expect(second.id).not.toBe(first.id);
	});

	it("admits a run that waited for its ids on the agent as it is after the wait", async () => {
		useEmulator();
		const name = "waits-for-ids";
		await createAgent({ name });
		const stub = env.AGENT.getByName(name);
		// While the run waits for its shard, the agent is disabled (a write the object takes meanwhile).
		let real!: Env;
		await runInDurableObject(stub, (instance: AgentDO, state) => {
			const swappable = instance as unknown as { env: Env };
			real = swappable.env;
			const shard = (shardName: string) => {
				const target = real.SCHEDULER_SHARD.getByName(shardName);
				const dealJobIds = async (...args: [number, number, number]) => {
					const definition = currentDefinition(readState(state.storage.sql)!)!;
					await instance.define(name, { ...definition, enabled: false }, "disabled-while-waiting");
					return target.dealJobIds(...args);
				};
				return new Proxy(target, { get: (t, prop) => (prop === "dealJobIds" ? dealJobIds : Reflect.get(t, prop)) });
			};
			swappable.env = { ...real, SCHEDULER_SHARD: { getByName: shard } as unknown as Env["SCHEDULER_SHARD"] };
		});
		const answer = await call(`/v1/agents/${name}/jobs`, { method: "POST", as: "operate", body: { prompt: "Go." } });
		await runInDurableObject(stub, (instance: AgentDO) => {
			(instance as unknown as { env: Env }).env = real;
		});
		expect(answer.status).toBe(409);
		expect((await errorOf(answer)).message).toBe(`agent ${name} is disabled in its definition`);
		expect(await runsOf(name)).toEqual([]);
	});

	it("still runs a trigger whose shard cannot deal, on an id it draws itself", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "Ran anyway." });
		const { names: [name], shard } = namesOnOneShard("undealt", 1) as { names: [string]; shard: number };
		await createAgent({ name });
		const day = idDay(Date.now());
		// The shard has dealt every id of its slot today.
		await runInDurableObject(env.SCHEDULER_SHARD.getByName(shardName(shard)), (_instance, state) => {
			state.storage.sql.exec("INSERT OR REPLACE INTO job_id_counters (day, next) VALUES (?, ?)", day, SLOT_CAPACITY);
		});
		const job = await trigger(name);
		expect(isJobId(job.id)).toBe(true);
		expect(job.id.slice(4, 14)).toBe(day);
		await settle(name);
		expect(await jobOf(name, job.id)).toMatchObject({ status: "completed", summary: "Ran anyway." });
	});
});
