// The fleet's oldest deferred minute is the oldest of its shards', which a mutation walk found
// unchecked (every backlog test had one shard behind): taken as the latest, a fleet with one shard
// hours behind and another just over its minute would report only the fresh minute, in
// POST /v1/tick's answer and GET /v1/status alike. So was the fleet's deferred count, the sum of the
// shards' (taken as the largest shard's, it dropped the agents every other shard owed).
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { tick } from "../helpers/ticks.ts";
import { namesInShard, shardWithVars } from "../helpers/vars.ts";

afterEach(() => {
	vi.useRealTimers();
});

describe("the fleet's oldest deferred minute, and its deferred count", () => {
	it("is the oldest any shard owes, not the latest; the count is every shard's together", async () => {
		// Minutes between fleet.yaml's slots (digests at :00, site-watch every 15 minutes).
		const first = Date.parse("2031-10-02T10:02:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: first - 30_000 });
		// Shard 3: 24 agents due every minute, 8 calls a minute (SUBREQUEST_LIMIT 10): it falls behind.
		for (const name of namesInShard("behind", 3, 24)) await createAgent({ name, schedules: { minutely: { cron: "* * * * *" } } });
		await shardWithVars(3, { SUBREQUEST_LIMIT: "10" });
		// Shard 5: 12 agents due at 10:05 alone, more than one tick's 8 calls: it owes 10:05 only.
		for (const name of namesInShard("fresh", 5, 12)) await createAgent({ name, schedules: { once: { cron: "5 10 * * *" } } });
		await shardWithVars(5, { SUBREQUEST_LIMIT: "10" });

		for (const m of [0, 1, 2]) {
			vi.setSystemTime(first + m * 60_000 + 5_000);
			await tick(first + m * 60_000);
		}
		vi.setSystemTime(first + 3 * 60_000 + 5_000);
		const res = await call("/v1/tick", { method: "POST", as: "admin" });
		expect(res.status).toBe(200);
		const answer = (await res.json()) as { scheduled_time: string; shards_behind: number; deferred: number; oldest_deferred_minute: string | null };
		expect(answer.scheduled_time).toBe("2031-10-02T10:05:00.000Z");
		expect(answer.shards_behind).toBe(0);
		// Shard 3 still owes 10:03 (32 calls made of the 96 due by 10:05); shard 5 owes 10:05.
		expect(answer.oldest_deferred_minute).toBe("2031-10-02T10:03:00.000Z");
		// Agents left to follow-ups: all 24 of shard 3's (each still owes a minute) and 4 of shard 5's 12.
		expect(answer.deferred).toBe(24 + 4);
		const status = (await (await call("/v1/status")).json()) as { scheduler: { deferred: number | null; oldest_deferred_minute: string | null } };
		expect(status.scheduler.oldest_deferred_minute).toBe("2031-10-02T10:03:00.000Z");
		expect(status.scheduler.deferred).toBe(24 + 4);
	});
});
