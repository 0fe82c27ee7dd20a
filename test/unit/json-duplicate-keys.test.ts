import { describe, expect, it } from "vitest";
import { duplicateJsonKey } from "../../src/shared/json-duplicate-keys.ts";

describe("a key written twice in a JSON object", () => {
	it("is found with the path of its object, however deep", () => {
		expect(duplicateJsonKey('{"name":"a","prompt":"p","prompt":"q"}')).toEqual({ path: "prompt", key: "prompt" });
		expect(duplicateJsonKey('{"tools":[{"type":"server"},{"type":"webhook","name":"x","name":"y"}]}')).toEqual({ path: "tools[1].name", key: "name" });
		expect(duplicateJsonKey('{"schedules":{"a":{"cron":"0 9 * * *"},"a":{"interval":"1h"}}}')).toEqual({ path: "schedules.a", key: "a" });
		// The same key spelt with an escape is the same key.
		expect(duplicateJsonKey('{"prompt":"p","pr\\u006fmpt":"q"}')).toEqual({ path: "prompt", key: "prompt" });
	});

	it("is not found where each object has its keys once", () => {
		for (const text of [
			'{"a":{"x":1},"b":{"x":2},"c":[{"x":1},{"x":2}]}',
			'{"prompt":"a \\"prompt\\": {\\"prompt\\"} , [x]","system_prompt":"prompt"}',
			'{"a":"\\\\","b":"\\\\\\""}',
			"[1,2,{\"a\":[]},{\"a\":{}}]",
			'"just a string"',
			"42",
			"{}",
		]) {
			expect(JSON.parse(text)).toBeDefined();
			expect(duplicateJsonKey(text), text).toBeNull();
		}
	});

	it("reads a key holding an escaped quote as one key", () => {
		expect(duplicateJsonKey('{"say \\"hi\\"":1,"say \\"hi\\"":2}')).toEqual({ path: 'say "hi"', key: 'say "hi"' });
	});

	it("reads a megabyte in one pass", () => {
		const big = JSON.stringify({ name: "a", tools: Array.from({ length: 2000 }, (_, i) => ({ name: `t${i}`, description: "d".repeat(400) })) });
		expect(big.length).toBeGreaterThan(800_000);
		expect(duplicateJsonKey(big)).toBeNull();
		expect(duplicateJsonKey(`${big.slice(0, -1)},"name":"b"}`)).toEqual({ path: "name", key: "name" });
	});
});
