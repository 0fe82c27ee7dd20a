import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { SchedulerShardDO } from "../../durable-objects/shard/shard-do.ts";
import { shardName } from "../../src/scheduler/shards.ts";
import { createAgent } from "../helpers/agents.ts";
import { namesInShard } from "../helpers/vars.ts";

afterEach(() => {
	vi.useRealTimers();
});

describe("a shard whose alarm cannot be set before it calls its agents", () => {
	it("logs shard.heartbeat_not_set with the minute it was calling for, as every scheduler line does, and calls them all the same", async () => {
		const minute = Date.parse("2031-09-03T10:02:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: minute - 30_000 });
		const shard = 5;
		const [name] = namesInShard("no-alarm", shard, 1);
		await createAgent({ name: name!, schedules: { minutely: { cron: "* * * * *" } } });
		vi.setSystemTime(minute + 5_000);
		const lines: Record<string, unknown>[] = [];
		const keep = (line: unknown) => {
			if (typeof line === "string" && line.startsWith("{")) lines.push(JSON.parse(line) as Record<string, unknown>);
		};
		const spy = vi.spyOn(console, "error").mockImplementation(keep);
		try {
			const result = await runInDurableObject(env.SCHEDULER_SHARD.getByName(shardName(shard)), async (instance: SchedulerShardDO) => {
				const self = instance as unknown as { heartbeat: () => Promise<void> };
				const real = self.heartbeat;
				// The platform refusing the alarm (a storage fault).
				self.heartbeat = () => Promise.reject(new Error("alarm refused"));
				try {
					return await instance.tick(shard, minute);
				} finally {
					self.heartbeat = real;
				}
			});
			expect(result).toMatchObject({ agents_called: 1, failed: [] });
		} finally {
			spy.mockRestore();
		}
		expect(lines.filter((l) => l.event === "shard.heartbeat_not_set")).toEqual([
			expect.objectContaining({ shard, minute: "2031-09-03T10:02:00.000Z", minutes: ["2031-09-03T10:02:00.000Z"], error_message: "alarm refused" }),
		]);
	});
});
