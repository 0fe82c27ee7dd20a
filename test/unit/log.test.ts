import { afterEach, describe, expect, it, vi } from "vitest";
import { errorFields, log } from "../../src/log.ts";

afterEach(() => vi.restoreAllMocks());

describe("log lines", () => {
	it("writes a debug line through console.debug, where a console filtered to debug finds it", () => {
		const debug: string[] = [];
		const info: string[] = [];
		vi.spyOn(console, "debug").mockImplementation((line: string) => void debug.push(line));
		vi.spyOn(console, "log").mockImplementation((line: string) => void info.push(line));
		log.debug("model.call", { agent: "a" });
		expect(debug.map((l) => JSON.parse(l))).toMatchObject([{ level: "debug", event: "model.call", agent: "a" }]);
		expect(info).toEqual([]);
	});
});

describe("errorFields", () => {
	it("names an error's cause: what a wrapped fetch failure was underneath", () => {
		const err = new Error("delivery failed", { cause: new TypeError("Network connection lost") });
		expect(errorFields(err)).toMatchObject({ error_name: "Error", error_message: "delivery failed", cause_name: "TypeError", cause_message: "Network connection lost" });
	});

	it("names a cause that is no Error by its value", () => {
		expect(errorFields(new Error("x", { cause: { code: "E_LIMIT" } }))).toMatchObject({ cause_message: '{"code":"E_LIMIT"}' });
	});

	it("writes a thrown plain object as JSON, not [object Object], and cuts a long one", () => {
		expect(errorFields({ code: 7, reason: "quota" })).toEqual({ error_message: '{"code":7,"reason":"quota"}' });
		const long = errorFields({ text: "x".repeat(5000) }).error_message as string;
		expect(long.length).toBeLessThan(1100);
		expect(long).toMatch(/^\{"text":"x+… \[\d+ more characters\]$/);
	});

	it("writes a thrown value JSON cannot take (a cycle, a BigInt) without throwing", () => {
		const cyclic: Record<string, unknown> = { a: 1 };
		cyclic.self = cyclic;
		expect(errorFields(cyclic).error_message).toBe("[unserializable object]");
		expect(errorFields(10n).error_message).toBe("10");
		expect(errorFields("plain text").error_message).toBe("plain text");
	});
});
