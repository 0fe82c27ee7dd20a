import { describe, expect, it } from "vitest";
import { decodeUtf8Body, loneSurrogatePath, utf8Fault } from "../../src/shared/well-formed.ts";

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
const valid = (bytes: Uint8Array) => {
	try {
		strict.decode(bytes);
		return true;
	} catch {
		return false;
	}
};

describe("utf8Fault", () => {
	it("finds a fault exactly where the runtime's strict decoder refuses, and none where it decodes", () => {
		// Edge bytes of every class in table 3-7, so overlongs, surrogates and code points past U+10FFFF come up often.
		const pool = [0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff];
		let seed = 1;
		const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
		let faults = 0;
		const wrong: string[] = [];
		for (let n = 0; n < 5_000; n++) {
			const bytes = new Uint8Array(Array.from({ length: 1 + (next() % 6) }, () => pool[next() % pool.length]!));
			const fault = utf8Fault(bytes);
			if (fault) faults++;
			// Where there is a fault, everything before it is well-formed on its own.
			if ((fault === null) !== valid(bytes) || (fault && !valid(bytes.subarray(0, fault.offset)))) wrong.push([...bytes].join(" "));
		}
		expect(wrong).toEqual([]);
		expect(faults).toBeGreaterThan(250);
	});

	it("says which bytes are wrong and how", () => {
		expect(utf8Fault(new Uint8Array([0x61, 0xc0, 0x80]))).toEqual({ offset: 1, bytes: [0xc0], cutShort: false }); // an overlong NUL
		expect(utf8Fault(new Uint8Array([0xed, 0xa0, 0x80]))).toEqual({ offset: 0, bytes: [0xed, 0xa0], cutShort: false }); // U+D800
		expect(utf8Fault(new Uint8Array([0xf4, 0x90, 0x80, 0x80]))).toEqual({ offset: 0, bytes: [0xf4, 0x90], cutShort: false }); // past U+10FFFF
		expect(utf8Fault(new Uint8Array([0x7b, 0xe2, 0x82]))).toEqual({ offset: 1, bytes: [0xe2, 0x82], cutShort: true });
		expect(utf8Fault(new TextEncoder().encode("café ☃ 😀"))).toBeNull();
	});
});

describe("decodeUtf8Body", () => {
	it("decodes UTF-8, dropping a byte order mark as Request.text() does", () => {
		expect(decodeUtf8Body(new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]))).toBe("{}");
	});
});

describe("a lone surrogate in parsed JSON", () => {
	// Booleans: a lone surrogate in a failure's message would break the runner's report.
	it("is found in a key as in a value, with its path", () => {
		expect(loneSurrogatePath({ ok: { "bad\ud800": 1 } }) === "ok.bad\ud800").toBe(true);
		expect(loneSurrogatePath({ ok: ["fine", "bad\udc00"] })).toBe("ok[1]");
		expect(loneSurrogatePath("\ud83d")).toBe("(root)");
		expect(loneSurrogatePath({ emoji: "😀", "😀": ["é"] })).toBeNull();
	});
});
