import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { shardName, shardOf } from "../../src/scheduler/shards.ts";
import { createAgent, runsOf } from "../helpers/agents.ts";

/** `count` agent names, prefixed `prefix`, that all hash to scheduler shard `shard`. */
function namesInShard(prefix: string, shard: number, count: number): string[] {
	const names: string[] = [];
	for (let i = 0; names.length < count; i++) if (shardOf(`${prefix}-${i}`) === shard) names.push(`${prefix}-${i}`);
	return names;
}

const withVars = (vars: Record<string, string>) => (instance: unknown) => {
	const self = instance as { env: Env };
	self.env = { ...self.env, ...vars } as Env;
};

afterEach(() => {
	vi.useRealTimers();
});

describe("a shard's follow-up that has not finished when the next tick comes", () => {
	it("still calls every deferred agent for the earlier minute: no occurrence is skipped as superseded", async () => {
		const ten = Date.parse("2031-07-01T10:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: ten - 30_000 });
		const shard = 3;
		const names = namesInShard("overlap", shard, 24);
		for (const name of names) await createAgent({ name, schedules: { minutely: { cron: "* * * * *" } } });
		const stub = env.SCHEDULER_SHARD.getByName(shardName(shard));
		// 10 subrequests an invocation: 8 agent calls each.
		await runInDurableObject(stub, withVars({ SUBREQUEST_LIMIT: "10" }));

		vi.setSystemTime(ten + 5_000);
		const first = await stub.tick(shard, ten);
		expect(first.deferred).toBeGreaterThan(0);
		// T1's follow-up alarm and the tick of T2 run at once, interleaving at their awaits.
		vi.setSystemTime(ten + 65_000);
		await Promise.all([runDurableObjectAlarm(stub), stub.tick(shard, ten + 60_000)]);
		while (await runDurableObjectAlarm(stub));

		for (const name of names) {
			const runs = (await runsOf(name)).map((r) => [r.scheduled_instant, r.status, r.skip_reason]);
			// The later minute may be skipped by the agent's overlap rule (10:00's run is still pending),
			// never the earlier one for the later one.
			expect(runs, name).toEqual([
				["2031-07-01T10:00:00.000Z", "claimed", null],
				["2031-07-01T10:01:00.000Z", expect.stringMatching(/^(claimed|skipped)$/), expect.not.stringMatching(/superseded/)],
			]);
		}
	});
});
