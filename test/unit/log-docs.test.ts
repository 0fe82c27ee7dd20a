import { describe, expect, it } from "vitest";

const docs = import.meta.glob(["/README.md", "/wrangler.toml"], { query: "?raw", import: "default", eager: true }) as Record<string, string>;
const sources = import.meta.glob(["/src/**/*.ts", "/durable-objects/**/*.ts"], { query: "?raw", import: "default", eager: true }) as Record<string, string>;
const code = Object.values(sources).join("\n");

describe("the logs an operator is told of", () => {
	it("are all kept: wrangler.toml's [observability] samples every line", () => {
		const section = /\[observability\]([^[]*)/.exec(docs["/wrangler.toml"]!)?.[1] ?? "";
		expect(section).toMatch(/^enabled = true$/m);
		expect(section).toMatch(/^head_sampling_rate = 1$/m);
	});

	it("are events the Worker logs: every event README's table names is written by some log call", () => {
		const readme = docs["/README.md"]!;
		const table = readme.slice(readme.indexOf("| Event | Level | Key fields |"));
		const rows = table.slice(0, table.indexOf("\n\n")).split("\n").slice(2);
		expect(rows.length).toBeGreaterThan(10);
		const events = rows.flatMap((row) => [...row.split("|")[1]!.matchAll(/`([a-z_.*]+)`/g)].map((m) => m[1]!));
		// A name given by its suffix (`_caught_up`, `resolved`) is the one before it, cut at its last part.
		let previous = "";
		for (const named of events) {
			const event = named.includes(".") ? named : `${previous.slice(0, previous.lastIndexOf(named.startsWith("_") ? "_" : ".") + (named.startsWith("_") ? 0 : 1))}${named}`;
			previous = event;
			const pattern = event.includes("*") ? new RegExp(`"${event.replace(".", "\\.").replace("*", "[a-z_]+")}"`) : new RegExp(`"${event.replace(/\./g, "\\.")}"`);
			expect(code, event).toMatch(pattern);
		}
	});
});
