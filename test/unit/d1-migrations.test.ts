import { describe, expect, it } from "vitest";
import { D1_MIGRATIONS, LATEST_D1_MIGRATION } from "../../src/store/d1-schema.ts";

const files = Object.keys(import.meta.glob("/migrations/*.sql", { query: "?raw", import: "default" })).map((f) => f.slice("/migrations/".length));

describe("the D1 migrations /healthz checks for", () => {
	it("are the files in migrations/, in order: a new migration must be named in src/store/d1-schema.ts", () => {
		expect(files.length).toBeGreaterThan(10);
		expect(D1_MIGRATIONS).toEqual([...files].sort());
		expect(LATEST_D1_MIGRATION).toBe([...files].sort().at(-1));
	});
});
