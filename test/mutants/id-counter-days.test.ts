import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { shardName } from "../../src/scheduler/shards.ts";

// A shard deals a day's job ids while the wall clock is within ID_COUNTER_DAYS (3) of that day, and
// forgets the counters of days older than that. The oldest day still dealt must keep its counter: one
// forgotten as it is dealt would start again at 0, and two runs would get one id.

afterEach(() => {
	vi.useRealTimers();
});

describe("the oldest day a shard still deals", () => {
	it("never deals the same id twice", async () => {
		// Wall clock 2037-12-08 08:00Z: the oldest day dealt is 2037-12-05.
		vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2037-12-08T08:00:00Z") });
		const shard = 3;
		const stub = env.SCHEDULER_SHARD.getByName(shardName(shard));
		const at = Date.parse("2037-12-05T20:00:00Z");
		const first = await stub.dealJobIds(shard, 4, at);
		const second = await stub.dealJobIds(shard, 4, at);
		expect(first).toHaveLength(4);
		expect(second).toHaveLength(4);
		expect(new Set([...first, ...second]).size).toBe(8);
	});
});
