import { afterEach, describe, expect, it, vi } from "vitest";
import { dealtJobId, drawnJobId, SLOT_CAPACITY } from "../../src/jobs/id-blocks.ts";
import { isJobId } from "../../src/jobs/ids.ts";
import { SCHEDULER_SHARDS } from "../../src/scheduler/shards.ts";

const DAY = "2026-12-01";
const PER_SHARD = 4_000;

function dealtByEveryShard(count: number): string[] {
	return Array.from({ length: SCHEDULER_SHARDS }, (_, shard) => Array.from({ length: count }, (_, k) => dealtJobId(DAY, shard, k))).flat();
}

describe("job ids dealt by the shards", () => {
	afterEach(() => {
		vi.restoreAllMocks();
	});

	it("are in the design's format, dated with the day, and never the same twice across shards", () => {
		const ids = dealtByEveryShard(PER_SHARD);
		for (const id of ids) {
			expect(isJobId(id)).toBe(true);
			expect(id.slice(0, 15)).toBe(`job-${DAY}-`);
		}
		expect(new Set(ids).size).toBe(SCHEDULER_SHARDS * PER_SHARD);
	});

	it("look random: one shard's consecutive ids share no common beginning", () => {
		const suffixes = Array.from({ length: 200 }, (_, k) => dealtJobId(DAY, 3, k).slice(15));
		// Dealt in order, printed in order, they would share their first characters for long runs.
		expect(new Set(suffixes.map((s) => s.slice(0, 2))).size).toBeGreaterThan(150);
		expect(new Set(suffixes.flatMap((s) => [...s])).size).toBe(36);
	});

	it("do not repeat one day's suffixes the next, though each day's counters start again at 0", () => {
		const suffixes = (day: string) => Array.from({ length: 500 }, (_, k) => dealtJobId(day, 0, k).slice(15));
		const today = suffixes(DAY);
		const tomorrow = new Set(suffixes("2026-12-02"));
		// Two independent draws of 500 from 2.2 billion share none, save by a 1-in-10,000 chance.
		expect(today.filter((s) => tomorrow.has(s))).toEqual([]);
		// And another day's ids are as distinct across shards as today's.
		const other = Array.from({ length: SCHEDULER_SHARDS }, (_, shard) => Array.from({ length: 1_000 }, (_, k) => dealtJobId("2027-03-28", shard, k))).flat();
		expect(new Set(other).size).toBe(SCHEDULER_SHARDS * 1_000);
	});

	it("are refused outside a shard's slot, so one shard can never deal another's", () => {
		expect(() => dealtJobId(DAY, SCHEDULER_SHARDS, 0)).toThrow(RangeError);
		expect(() => dealtJobId(DAY, -1, 0)).toThrow(RangeError);
		expect(() => dealtJobId(DAY, 0, SLOT_CAPACITY)).toThrow(RangeError);
		expect(isJobId(dealtJobId(DAY, SCHEDULER_SHARDS - 1, SLOT_CAPACITY - 1))).toBe(true);
	});

	it("never meet an id drawn at random when no shard could be asked", () => {
		// Feed the draw every number a shard deals first: a drawn id must still be none of theirs.
		let next = 0;
		vi.spyOn(crypto, "getRandomValues").mockImplementation(<T extends ArrayBufferView | null>(array: T): T => {
			(array as unknown as Uint32Array)[0] = next++;
			return array;
		});
		const now = Date.parse(`${DAY}T12:00:00Z`);
		const drawn = Array.from({ length: PER_SHARD }, () => drawnJobId(now));
		expect(new Set(drawn).size).toBe(PER_SHARD);
		const dealt = new Set(dealtByEveryShard(PER_SHARD + 1));
		expect(drawn.filter((id) => dealt.has(id))).toEqual([]);
		for (const id of drawn) expect(id.slice(0, 15)).toBe(`job-${DAY}-`);
	});
});
