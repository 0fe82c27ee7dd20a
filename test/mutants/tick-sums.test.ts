// A tick's claimed and skipped counts are the fleet's, every shard's added together, which a mutation
// walk found unchecked: taken as the largest shard's, GET /v1/status said half of what this tick did.
import { afterEach, describe, expect, it } from "vitest";
import { createAgent, runsOf, settleClaimedRuns } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { dayFromToday, minuteOn, tick } from "../helpers/ticks.ts";
import { namesInShard } from "../helpers/vars.ts";

// Yesterday's minutes, between fleet.yaml's slots (digests at :00, site-watch every 15 minutes).
const day = dayFromToday(-1);
const at = (hhmm: string) => minuteOn(day, hhmm);

// The claimed runs run in this test, not by their start alarms during a later one (see settleClaimedRuns).
afterEach(settleClaimedRuns);

describe("a tick's claimed and skipped counts", () => {
	it("add up every shard's", async () => {
		// Two agents on two shards, each with two schedules due at 10:05 and room for one run: each
		// tick claims one and skips the other.
		const names = [namesInShard("sums", 2, 1)[0]!, namesInShard("sums", 11, 1)[0]!];
		for (const name of names) await createAgent({ name, max_concurrent: 1, schedules: { a: { cron: "5 10 * * *" }, b: { cron: "5 * * * *" } } });
		await tick(at("10:04"));
		await tick(at("10:05"));
		for (const name of names) {
			const runs = (await runsOf(name)).filter((r) => r.scheduled_instant === new Date(at("10:05")).toISOString());
			expect(runs.map((r) => r.status).sort()).toEqual(["claimed", "skipped"]);
		}
		const status = (await (await call("/v1/status")).json()) as { scheduler: { claimed: number; skipped: number } };
		expect(status.scheduler).toMatchObject({ claimed: 2, skipped: 2 });
	});
});
