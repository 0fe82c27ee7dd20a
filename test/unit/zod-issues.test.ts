import { describe, expect, it } from "vitest";
import { z } from "zod";
import { formatPath, issuesOf } from "../../src/shared/zod-issues.ts";

// The `details.issues` of every 400: where the field at fault is, and what is wrong with it.
describe("an issue's path and message", () => {
	it("writes a path as a reader does, and the body itself as (root)", () => {
		expect(formatPath(["agents", 1, "schedules", "nightly"])).toBe("agents[1].schedules.nightly");
		expect(formatPath([0, "name"])).toBe("[0].name");
		expect(formatPath([])).toBe("(root)");
	});

	it("says at a key it refuses everything wrong with the key", () => {
		const schedules = z.record(z.string().regex(/^[a-z]+$/, "lower case letters only").min(2, "two letters or more"), z.number());
		const result = z.object({ schedules }).safeParse({ schedules: { A: 1 } });
		expect(result.success).toBe(false);
		expect(issuesOf(result.error!)).toEqual([{ path: "schedules.A", message: "lower case letters only; two letters or more" }]);
	});
});
