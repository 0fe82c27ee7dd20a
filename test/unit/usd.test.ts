import { describe, expect, it } from "vitest";
import { usd } from "../../src/shared/usd.ts";

describe("a cost as the CLI and the dashboard show it", () => {
	it("has four decimals, or the API's six where four would show a cost that is not zero as $0.0000", () => {
		expect([0, 0.0123, 1.5, 0.00005, 0.000029, 0.000001].map(usd)).toEqual(["$0.0000", "$0.0123", "$1.5000", "$0.0001", "$0.000029", "$0.000001"]);
	});

	it("puts a minus sign before the dollar sign", () => {
		expect([-0.00002, -2.25].map(usd)).toEqual(["-$0.000020", "-$2.2500"]);
	});
});
