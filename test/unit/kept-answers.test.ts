import { describe, expect, it } from "vitest";
import { KeptAnswers } from "../../src/shared/kept-answers.ts";

// The answers the CLI and the dashboard revalidate with If-None-Match (a 304 carries no body, so the
// kept text is what they show): bounded, the least recently kept going first.
const answer = (tag: string, chars: number) => ({ etag: `"${tag}"`, text: "x".repeat(chars) });
const keys = (kept: KeptAnswers, all: string[]) => all.filter((k) => kept.get(k) !== undefined);

describe("kept answers", () => {
	it("keep at most maxEntries, the least recently kept going first", () => {
		const kept = new KeptAnswers(3, 1000);
		for (const k of ["a", "b", "c"]) kept.keep(k, answer(k, 10));
		kept.keep("a", answer("a2", 10)); // kept again: now the most recent
		kept.keep("d", answer("d", 10));
		expect(keys(kept, ["a", "b", "c", "d"])).toEqual(["a", "c", "d"]);
		expect(kept.get("a")?.etag).toBe('"a2"');
	});

	it("keep at most maxChars, an answer kept again counted once, and none over a quarter of them", () => {
		const kept = new KeptAnswers(10, 100);
		kept.keep("a", answer("a", 25));
		for (let i = 0; i < 5; i++) kept.keep("b", answer("b", 25)); // replaced, not added up
		kept.keep("c", answer("c", 25));
		kept.keep("d", answer("d", 25));
		expect(keys(kept, ["a", "b", "c", "d"])).toEqual(["a", "b", "c", "d"]);
		kept.keep("e", answer("e", 1));
		expect(keys(kept, ["a", "b", "c", "d", "e"])).toEqual(["b", "c", "d", "e"]);
		kept.keep("big", answer("big", 26));
		expect(kept.get("big")).toBeUndefined();
		expect(keys(kept, ["b", "c", "d", "e"])).toEqual(["b", "c", "d", "e"]);
	});

	it("forget an answer that came without a tag, and all of them on clear, starting the count afresh", () => {
		const kept = new KeptAnswers(10, 100);
		kept.keep("a", answer("a", 25));
		kept.keep("a", null);
		expect(kept.get("a")).toBeUndefined();
		for (const k of ["a", "b", "c", "d"]) kept.keep(k, answer(k, 25));
		kept.clear();
		expect(keys(kept, ["a", "b", "c", "d"])).toEqual([]);
		for (const k of ["a", "b", "c", "d"]) kept.keep(k, answer(k, 25));
		expect(keys(kept, ["a", "b", "c", "d"])).toEqual(["a", "b", "c", "d"]);
	});
});
