// A text's length in code points (what a delivery reports as answer_chars): a mutation walk found that a
// loop stopping one unit short, and so missing a surrogate pair at the text's very end, passed the suite.
import { describe, expect, it } from "vitest";
import { codePointLength } from "../../src/shared/clip.ts";

describe("codePointLength", () => {
	it("counts an emoji at a text's end as one code point", () => {
		expect(codePointLength("a\u{1F600}")).toBe(2);
		expect(codePointLength("\u{1F600}")).toBe(1);
	});
});
