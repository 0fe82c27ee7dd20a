import { describe, expect, it } from "vitest";
import { turnShares } from "../../durable-objects/agent/runner/context.ts";

describe("turnShares: what each of a turn's tool results keeps so that they fit one stored message", () => {
	it("keeps every result whole while they fit the budget", () => {
		expect(turnShares([10, 20, 30], 100)).toEqual([10, 20, 30]);
		expect(turnShares([], 100)).toEqual([]);
	});

	it("keeps the small ones whole and splits what is left evenly among the large ones, in the turn's order", () => {
		// 3,000 budget: 500 kept whole, then 2,500 shared by two.
		expect(turnShares([5_000, 500, 9_000], 3_000)).toEqual([1_250, 500, 1_250]);
		const shares = turnShares(Array.from({ length: 21 }, () => 100_000), 400_000);
		expect(shares.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(400_000);
		expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
	});

	it("never cuts a result below 1,000 characters, however many share the turn", () => {
		expect(turnShares(Array.from({ length: 500 }, () => 5_000), 400_000).every((n) => n === 1_000)).toBe(true);
	});
});
