import { describe, expect, it } from "vitest";
import { z } from "@hono/zod-openapi";
import "../../src/shared/zod-messages.ts";

// The words zod-messages.ts gives the API's and fleet.yaml's issues (its z.config), read from a
// schema's parse as a 400's details.issues and a fleet.yaml error read them.
const messages = (schema: z.ZodType, value: unknown) => schema.safeParse(value).error?.issues.map((i) => i.message);

describe("zod-messages", () => {
	it("says a number out of range in words, and leaves zod's words to a text's or a list's length", () => {
		expect(messages(z.int().max(500), 501)).toEqual(["must be at most 500, got 501"]);
		expect(messages(z.int().lt(500), 500)).toEqual(["must be less than 500, got 500"]);
		// "got" and the value would be the whole text or list: zod's own words say what is wrong.
		expect(messages(z.string().max(3), "abcd")).toEqual(["Too big: expected string to have <=3 characters"]);
		expect(messages(z.array(z.string()).min(1), [])).toEqual(["Too small: expected array to have >=1 items"]);
	});

	it("tells a duration written as a number what to write: minutes for a whole number over 0, the forms for any other", () => {
		const durations = z.object({ approval_timeout: z.string(), interval: z.string() });
		expect(messages(durations, { approval_timeout: 30, interval: "1h" })).toEqual(['a duration is text with a unit: write "30m" for 30 minutes ("30s" seconds, "30h" hours)']);
		expect(messages(durations, { approval_timeout: "1h", interval: 0 })).toEqual(['a duration is text with a unit, e.g. "90s", "15m", "1h30m"']);
		expect(messages(durations, { approval_timeout: "1h", interval: -5 })).toEqual(['a duration is text with a unit, e.g. "90s", "15m", "1h30m"']);
	});

	it("reads a number in quotes, negative or not, as the number meant", () => {
		expect(messages(z.object({ max_turns: z.number() }), { max_turns: " -3 " })).toEqual(['expected a number, got the text " -3 ": write -3, without quotes']);
	});

	it("says a list written as a map is one, in YAML's words and JSON's", () => {
		expect(messages(z.object({ tags: z.array(z.string()) }), { tags: { a: "b" } })).toEqual(["expected a list (a - line an item in YAML, [...] in JSON), got a map"]);
	});
});
