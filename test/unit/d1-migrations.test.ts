import { describe, expect, it } from "vitest";
import { D1_INDEX_ONLY_MIGRATIONS, D1_MIGRATIONS } from "../../src/store/d1-schema.ts";

const files = Object.keys(import.meta.glob("/migrations/*.sql", { query: "?raw", import: "default" })).map((f) => f.slice("/migrations/".length));

describe("the D1 migrations /healthz checks for", () => {
	it("are the files in migrations/, in order: a new migration must be named in src/store/d1-schema.ts", () => {
		expect(files.length).toBeGreaterThan(10);
		expect(D1_MIGRATIONS).toEqual([...files].sort());
	});
});

const sources = import.meta.glob("/migrations/*.sql", { query: "?raw", import: "default", eager: true }) as Record<string, string>;
const statements = (sql: string): string[] =>
	sql
		.replace(/--.*$/gm, "")
		.split(";")
		.map((s) => s.trim())
		.filter(Boolean);

describe("the D1 migrations marked index-only (a missing one leaves /healthz 200)", () => {
	it("are exactly those whose every statement creates an index", () => {
		const indexOnly = Object.entries(sources)
			.filter(([, sql]) => statements(sql).every((s) => /^CREATE\s+(UNIQUE\s+)?INDEX\b/i.test(s)))
			.map(([f]) => f.slice("/migrations/".length))
			.sort();
		expect(indexOnly).toContain("0011_live_agents_index.sql");
		expect([...D1_INDEX_ONLY_MIGRATIONS].sort()).toEqual(indexOnly);
	});
});
