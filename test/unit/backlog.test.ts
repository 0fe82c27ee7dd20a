import { describe, expect, it } from "vitest";
import { backlogWarning, isBehind } from "../../src/scheduler/backlog.ts";

const m = (minute: number) => Date.parse("2031-01-01T10:00:00Z") + minute * 60_000;

describe("a shard's queue of pending minutes", () => {
	it("is behind from a span of 3 minutes, and stays so until only its newest minute is left", () => {
		expect(isBehind([], false)).toBe(false);
		// One minute's overflow, or two slow minutes: ordinary.
		expect(isBehind([m(0)], false)).toBe(false);
		expect(isBehind([m(0), m(1), m(2)], false)).toBe(false);
		expect(isBehind([m(0), m(3)], false)).toBe(true);
		// Hovering at the threshold is one warning, not one every other tick.
		expect(isBehind([m(2), m(3), m(4)], true)).toBe(true);
		expect(isBehind([m(4)], true)).toBe(false);
		expect(isBehind([], true)).toBe(false);
	});

	it("is a status warning only while a shard is behind, saying since when and how many wait", () => {
		const beat = { scheduled_time: new Date(m(5)).toISOString(), deferred: 40, oldest_deferred_at: new Date(m(4)).toISOString(), shards_behind: 0 };
		expect(backlogWarning(beat)).toBeNull();
		// A heartbeat written before the counts were (null) says nothing.
		expect(backlogWarning({ ...beat, deferred: null, oldest_deferred_at: null, shards_behind: null })).toBeNull();
		expect(backlogWarning({ ...beat, shards_behind: 1 })).toMatch(/^1 scheduler shard is behind: due agents still wait to be called for 2031-01-01T10:04:00.000Z, 1 minute before the last tick, and 40 were left to follow-ups/);
		expect(backlogWarning({ ...beat, shards_behind: 2, oldest_deferred_at: new Date(m(1)).toISOString() })).toMatch(/^2 scheduler shards are behind: .* 4 minutes before the last tick/);
	});
});
