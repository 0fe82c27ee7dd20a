import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { SchedulerShardDO, ShardTickResult } from "../../durable-objects/shard/shard-do.ts";
import { shardName } from "../../src/scheduler/shards.ts";
import { createAgent } from "../helpers/agents.ts";
import { namesInShard } from "../helpers/vars.ts";

afterEach(() => {
	vi.useRealTimers();
});

type TickAnswer = { claimed: number; skipped: number; nextDue: number | null };
type Answer = () => Promise<TickAnswer>;

const FAR = Date.parse("2031-10-01T00:00:00Z");
const answered = (nextDue: number): Answer => () => Promise.resolve({ claimed: 1, skipped: 0, nextDue });
const fails: Answer = () => Promise.reject(new Error("agent object failed"));

/**
 * Agents that answer as `script` says, call by call (an agent's n-th call takes the n-th answer of
 * its list; an agent not listed answers, due again far ahead), so that two invocations' batches can
 * be made to end in a chosen order.
 */
function scriptedAgents(script: Record<string, Answer[]>, called: (name: string) => void) {
	const calls = new Map<string, number>();
	return {
		getByName: (name: string) => ({
			tick: () => {
				const n = calls.get(name) ?? 0;
				calls.set(name, n + 1);
				called(name);
				return (script[name]?.[n] ?? answered(FAR))();
			},
		}),
	};
}

interface Race {
	x: string;
	/** X's failing mark once both batches ended. */
	marked: boolean;
	/** The next minute's tick: what it counts as failing holds or resolves the scheduler incident. */
	after: ShardTickResult;
	markedAfter: boolean;
}

/**
 * A follow-up (B, minute m-1) holds its batch open on a slow agent that the next tick (A, minute m)
 * cannot take; agent X answers one way in B and the other in A, and A's batch ends first. X's mark
 * must follow its latest call, not the batch that ended last.
 */
async function raceOn(shard: number, inB: Answer, inA: Answer): Promise<Race> {
	const m = Date.parse("2031-09-01T10:02:00Z");
	vi.useFakeTimers({ toFake: ["Date"], now: m + 5_000 });
	const names = namesInShard("marks", shard, 9).sort();
	for (const name of names) await createAgent({ name, prompt: "Do the thing.", schedules: { minutely: { cron: "* * * * *" } } });
	const x = names[0]!;
	const slow = names.at(-1)!;
	let releaseSlow!: () => void;
	const slowHeld = new Promise<TickAnswer>((resolve) => (releaseSlow = () => resolve({ claimed: 1, skipped: 0, nextDue: FAR })));
	let slowCalled!: () => void;
	const slowReached = new Promise<void>((resolve) => (slowCalled = resolve));
	const agents = scriptedAgents({ [x]: [inB, inA], [slow]: [() => slowHeld] }, (name) => name === slow && slowCalled());
	return runInDurableObject(env.SCHEDULER_SHARD.getByName(shardName(shard)), async (instance: SchedulerShardDO, state) => {
		const self = instance as unknown as { env: Env };
		const mark = () => state.storage.sql.exec<{ failing_since: number | null }>("SELECT failing_since FROM agents WHERE name = ?", x).one().failing_since !== null;
		// B may call all nine; A 8 (80 % of 10), so it leaves the slow one, named last, out.
		self.env = { ...env, AGENT: agents, SUBREQUEST_LIMIT: "100" } as unknown as Env;
		const b = instance.tick(shard, m - 60_000);
		await slowReached;
		self.env = { ...self.env, SUBREQUEST_LIMIT: "10" } as Env;
		const a = await instance.tick(shard, m);
		expect(a.agents_called).toBe(8);
		releaseSlow();
		await b;
		const marked = mark();
		vi.setSystemTime(m + 65_000);
		self.env = { ...self.env, SUBREQUEST_LIMIT: "100" } as Env;
		const after = await instance.tick(shard, m + 60_000);
		return { x, marked, after, markedAfter: mark() };
	});
}

describe("an agent's failing mark, when a follow-up's batch ends after the next tick's", () => {
	it("is not set by the follow-up's failed call once the tick's later call answered", async () => {
		// X answered in A, due again a month ahead: no call would clear a mark left on it.
		const race = await raceOn(5, fails, answered(FAR));
		expect(race.marked).toBe(false);
		expect(race.after.failing).toBe(0);
	});

	it("is not cleared by the follow-up's answered call once the tick's later call failed", async () => {
		const m = Date.parse("2031-09-01T10:02:00Z");
		const race = await raceOn(6, answered(m), fails);
		expect(race.marked).toBe(true);
		// Still due (a failed call moves no due time): the next tick calls it, it answers, the mark goes.
		expect(race.after.failing).toBe(0);
		expect(race.markedAfter).toBe(false);
	});
});
