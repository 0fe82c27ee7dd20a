import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { JobIdPool } from "../../durable-objects/agent/job-ids.ts";
import { dealtJobId, idDay } from "../../src/jobs/id-blocks.ts";

const NOW = Date.parse("2026-12-01T10:00:00Z");

// test/scheduler/job-ids' "asks again only when an agent has none left" drains no block to its last id.
describe("an agent's dealt job ids", () => {
	it("are asked for again only when none is left: the last one held is used, not a new block asked for beside it", async () => {
		const pool = new JobIdPool();
		const day = idDay(NOW);
		const ids = [dealtJobId(day, 0, 0), dealtJobId(day, 0, 1)];
		pool.add(ids, NOW);
		expect(await pool.ensure(env, "pool-last", NOW)).toBe(false);
		expect(pool.take(NOW, "pool-last")).toBe(ids[0]);
		// One held, one wanted: no call to the shard (which would yield, and deal a block for nothing).
		expect(await pool.ensure(env, "pool-last", NOW)).toBe(false);
		expect(pool.take(NOW, "pool-last")).toBe(ids[1]);
	});
});
