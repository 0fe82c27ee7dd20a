// The scheduler's health at its edges, which a mutation walk found unchecked: a last good tick exactly
// HEARTBEAT_STALE_SECONDS old is within it (not stalled), a tick stamped ahead of this isolate's
// clock is 0 s old (not negative), and a status before any tick says deferred null, as documented.
import { describe, expect, it } from "vitest";
import { heartbeatHealth, type Heartbeat } from "../../src/store/heartbeat.ts";
import { call } from "../helpers/http.ts";

const NOW = Date.parse("2026-05-05T12:00:00Z");

function beat(tickAt: number, okAt: number): Heartbeat {
	return {
		last_tick_at: new Date(tickAt).toISOString(),
		scheduled_time: new Date(tickAt).toISOString(),
		outcome: "ok",
		shards_ok: 1,
		shards_failed: 0,
		agents_called: 0,
		claimed: 0,
		skipped: 0,
		error: null,
		last_ok_at: new Date(okAt).toISOString(),
		deferred: 0,
		oldest_deferred_at: null,
		shards_behind: 0,
	};
}

describe("the scheduler's health at its edges", () => {
	it("is stalled only past HEARTBEAT_STALE_SECONDS since the last good tick, not at it", () => {
		expect(heartbeatHealth(beat(NOW - 120_000, NOW - 120_000), NOW, 120)).toMatchObject({ stalled: false, age_seconds: 120 });
		expect(heartbeatHealth(beat(NOW - 120_001, NOW - 120_001), NOW, 120)).toMatchObject({ stalled: true });
	});

	it("counts a tick stamped ahead of this clock as 0 s old", () => {
		expect(heartbeatHealth(beat(NOW + 5_000, NOW + 5_000), NOW, 120)).toMatchObject({ age_seconds: 0, stalled: false });
	});

	it("says deferred and shards_behind null in a status before any tick", async () => {
		const res = await call("/v1/status");
		expect(res.status).toBe(200);
		expect(((await res.json()) as { scheduler: Record<string, unknown> }).scheduler).toMatchObject({ last_tick_at: null, stalled: true, deferred: null, shards_behind: null, agents_called: null });
	});
});
