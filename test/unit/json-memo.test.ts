import { describe, expect, it } from "vitest";
import { jsonMemo } from "../../src/shared/json-memo.ts";

describe("jsonMemo", () => {
	it("parses a text once and hands every reader the same frozen value", () => {
		const parse = jsonMemo<{ tools: { name: string }[] }>();
		const text = JSON.stringify({ tools: [{ name: "http_fetch" }] });
		const a = parse(text);
		// A text read again from SQLite is a new string with the same characters.
		const b = parse(`${text} `.trimEnd());
		expect(b).toBe(a);
		expect(a).toEqual({ tools: [{ name: "http_fetch" }] });
		expect(() => {
			(a.tools[0] as { name: string }).name = "changed";
		}).toThrow(TypeError);
		expect(() => a.tools.push({ name: "more" })).toThrow(TypeError);
		expect(parse(text).tools[0]!.name).toBe("http_fetch");
	});

	it("keeps at most maxEntries texts, dropping the oldest", () => {
		const parse = jsonMemo<number[]>({ maxEntries: 2 });
		const first = parse("[1]");
		parse("[2]");
		parse("[3]");
		expect(parse("[3]")).toBe(parse("[3]"));
		const again = parse("[1]");
		expect(again).toEqual([1]);
		expect(again).not.toBe(first);
	});

	it("parses a text longer than maxChars afresh each time, without holding or freezing it", () => {
		const parse = jsonMemo<{ prompt: string }>({ maxChars: 100 });
		const text = JSON.stringify({ prompt: "x".repeat(200) });
		const a = parse(text);
		const b = parse(text);
		expect(a).toEqual(b);
		expect(a).not.toBe(b);
		expect(Object.isFrozen(a)).toBe(false);
	});

	it("revives a long text as it does a short one, and holds a text of exactly maxChars", () => {
		// A job record stored before a field existed reads with it null, however long its prompt.
		const parse = jsonMemo<{ prompt: string; added?: null }>({ maxChars: 100, revive: (v) => ({ ...v, added: v.added ?? null }) });
		expect(parse(JSON.stringify({ prompt: "x".repeat(200) }))).toEqual({ prompt: "x".repeat(200), added: null });
		const exact = JSON.stringify({ prompt: "y".repeat(100 - 13) });
		expect(exact).toHaveLength(100);
		expect(parse(exact)).toBe(parse(exact));
		expect(Object.isFrozen(parse(exact))).toBe(true);
	});
});
