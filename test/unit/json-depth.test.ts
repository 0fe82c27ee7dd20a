import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, textNestsDeeper, withinDepth } from "../../src/shared/json-depth.ts";

// The API's "nests deeper than 64 levels" refusal (an approval's edited input, a definition, a
// signed hook's body): 64 levels of objects and arrays are taken, 65 are not, whichever check reads them.
const nested = (levels: number): unknown => {
	let value: unknown = "leaf";
	for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { k: value };
	return value;
};

describe("JSON nesting", () => {
	it("takes 64 levels and refuses 65, read as a value", () => {
		expect(MAX_JSON_DEPTH).toBe(64);
		expect(withinDepth(nested(64))).toBe(true);
		expect(withinDepth(nested(65))).toBe(false);
		expect(withinDepth("a scalar")).toBe(true);
	});

	it("takes 64 levels and refuses 65, read from the text, brackets inside strings not counted", () => {
		expect(textNestsDeeper(JSON.stringify(nested(64)))).toBe(false);
		expect(textNestsDeeper(JSON.stringify(nested(65)))).toBe(true);
		expect(textNestsDeeper(JSON.stringify({ prompt: "[".repeat(100), quoted: '"{{{{' + "{".repeat(100) }))).toBe(false);
	});
});
