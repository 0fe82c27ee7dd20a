/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { APP_JS } from "../../src/dashboard/client/index.ts";

// The script's source files as text (Vite inlines them at build time).
const files = import.meta.glob("/src/dashboard/client/*.client.js", { query: "?raw", import: "default", eager: true }) as Record<string, string>;

describe("the dashboard's script", () => {
	it("is every client file, each once, inside one strict function", () => {
		expect(Object.keys(files).length).toBeGreaterThan(10);
		expect(APP_JS.startsWith('"use strict";\n(() => {\n')).toBe(true);
		expect(APP_JS.endsWith("})();\n")).toBe(true);
		for (const [file, text] of Object.entries(files)) {
			// A file left out of index.ts's list would be type-checked but never served.
			expect(APP_JS.split(text).length - 1, file).toBe(1);
			expect(text.startsWith("// @ts-check\n"), file).toBe(true);
		}
	});
});
