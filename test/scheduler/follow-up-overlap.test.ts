import { env, runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { shardName } from "../../src/scheduler/shards.ts";
import { createAgent, runsOf } from "../helpers/agents.ts";
import { namesInShard, shardWithVars } from "../helpers/vars.ts";

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
		await shardWithVars(shard, { SUBREQUEST_LIMIT: "10" });

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
		// 24 agents made and ticked: 0.8-1.9 s here, so a machine 3 times slower reaches vitest's 5 s default.
	}, 30_000);
});
