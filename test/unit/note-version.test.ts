import { describe, expect, it } from "vitest";
import { noteVersion, noteVersionWeb } from "../../src/shared/note-version.ts";

describe("a notepad value's version", () => {
	it("is the same from node:crypto (the agent's object, the API, the CLI) and Web Crypto (the dashboard), for any text", async () => {
		const values = ["", "page 7", "line one\nline two\n", "café", "cafe\u0301", "🦀 ".repeat(5000), "\u0000\u2028", "lone \ud800 surrogate", "x".repeat(16 * 1024)];
		for (const value of values) {
			const version = noteVersion(value);
			expect(version, JSON.stringify(value.slice(0, 20))).toMatch(/^[A-Za-z0-9_-]{43}$/);
			expect(await noteVersionWeb(value), JSON.stringify(value.slice(0, 20))).toBe(version);
		}
		expect(noteVersion("page 7")).not.toBe(noteVersion("page 8"));
		// SHA-256 of "abc" (FIPS 180-2's example), in base64url.
		expect(noteVersion("abc")).toBe("ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
	});
});
