import { describe, expect, it } from "vitest";
import { resolveRange } from "../../src/shared/range.ts";

describe("resolveRange (RFC 9110 §14.1-14.2)", () => {
	it.each([
		["bytes=0-9", 100, { offset: 0, length: 10 }],
		["bytes=90-", 100, { offset: 90, length: 10 }],
		["bytes=90-1000", 100, { offset: 90, length: 10 }],
		["bytes=99-99", 100, { offset: 99, length: 1 }],
		["bytes=-10", 100, { offset: 90, length: 10 }],
		["bytes=-1000", 100, { offset: 0, length: 100 }],
		["BYTES=0-9", 100, { offset: 0, length: 10 }],
		[" bytes=0-9 ", 100, { offset: 0, length: 10 }],
		// A list may carry empty elements (§5.6.1): still one range.
		["bytes=0-9,", 100, { offset: 0, length: 10 }],
		// Its elements and empty ones may have whitespace about them (§5.6.1's OWS).
		["bytes=0-9 , ,", 100, { offset: 0, length: 10 }],
		["bytes=5-5", 100, { offset: 5, length: 1 }],
	])("serves %s of %i bytes as a part", (header, total, expected) => {
		expect(resolveRange(header, total)).toEqual(expected);
	});

	it.each([
		["bytes=100-", 100],
		["bytes=100-200", 100],
		["bytes=99999999999999999999-", 100],
		["bytes=-0", 100],
		["bytes=0-", 0],
		["bytes=0-0", 0],
	])("answers %s of %i bytes as unsatisfiable", (header, total) => {
		expect(resolveRange(header, total)).toBe("unsatisfiable");
	});

	it.each([
		[null],
		[""],
		// last-pos below first-pos makes the spec invalid, not unsatisfiable (§14.1.1).
		["bytes=10-5"],
		["bytes=200-100"],
		["bytes=9007199254740993-9007199254740992"],
		// A unit other than bytes MUST be ignored (§14.2).
		["items=0-5"],
		["none"],
		// Not a ranges-specifier.
		["bytes"],
		["bytes 0-5"],
		["bytes="],
		["bytes=-"],
		["bytes=,"],
		["bytes=abc"],
		["bytes=1-2-3"],
		["bytes=+1-5"],
		["bytes=0x10-"],
		["bytes=1.5-2"],
		["bytes=\u0661-"],
		// More than one range: served whole rather than as multipart/byteranges.
		["bytes=0-5,10-20"],
		["bytes=200-300,400-"],
	])("ignores %s (the whole body)", (header) => {
		expect(resolveRange(header, 100)).toBeNull();
	});

	it("serves a zero-length body whole for a suffix range, the one form satisfiable at zero length", () => {
		expect(resolveRange("bytes=-10", 0)).toBeNull();
	});
});
