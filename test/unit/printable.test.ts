import { describe, expect, it } from "vitest";
import { printable } from "../../src/shared/printable.ts";
import { editDistance } from "../../src/shared/edit-distance.ts";

// printable: the CLI's one sanitizer of text from outside drover (and a job's output.log's), so a
// model's or a webhook's text cannot drive the terminal that shows it.
describe("printable text", () => {
	it("escapes C0 controls but newline and tab, DEL, and C1 controls, as \\x and two hex digits", () => {
		expect(printable("clear\x1b[2J bell\x07 nul\x00 cr\r del\x7f csi\x9b nel\x85")).toBe("clear\\x1b[2J bell\\x07 nul\\x00 cr\\x0d del\\x7f csi\\x9b nel\\x85");
		expect(printable("line one\n\tline two")).toBe("line one\n\tline two");
	});

	it("escapes the bidirectional controls, which reorder what follows, as \\u and four", () => {
		expect(printable("safe \u202eexe.txt")).toBe("safe \\u202eexe.txt");
		const bidi = ["\u061c", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"];
		expect(bidi.map(printable)).toEqual(bidi.map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`));
	});

	it("leaves every other character as it is", () => {
		const text = "Résumé ✅ 日本語 «ok» \u200d👩‍💻 \u00a0\u00ff\u2028";
		expect(printable(text)).toBe(text);
	});
});

// The "did you mean" of config keys, models and time zones is the smallest number of edits.
describe("edit distance", () => {
	it("counts inserts, deletes and replacements, one each", () => {
		expect(editDistance("kitten", "sitting")).toBe(3);
		expect(editDistance("flaw", "lawn")).toBe(2);
		expect(editDistance("", "abc")).toBe(3);
		expect(editDistance("abc", "")).toBe(3);
		expect(editDistance("max_turns", "max_turns")).toBe(0);
		expect(editDistance("max_turn", "max_turns")).toBe(1);
	});
});
