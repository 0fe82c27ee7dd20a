import { describe, expect, it } from "vitest";

const docs = import.meta.glob(["/README.md", "/wrangler.toml"], { query: "?raw", import: "default", eager: true }) as Record<string, string>;
const sources = import.meta.glob(["/src/**/*.ts", "/durable-objects/**/*.ts"], { query: "?raw", import: "default", eager: true }) as Record<string, string>;

const HEADER = "| Event | Level | Key fields |";

/** A file's code without its comment lines and trailing `// …` comments: a comment naming `log.once` is no call. */
const uncommented = (text: string) =>
	text
		.split("\n")
		.filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line))
		.map((line) => line.replace(/\s\/\/\s.*$/, ""))
		.join("\n");

/**
 * A logged event name: a string literal, or a template literal whose one `${name}` is a parameter
 * typed in the same file as a union of string literals (`kind: "continue" | "fork"`), each a name.
 */
function eventNames(literal: string, file: string, text: string): string[] {
	if (literal.startsWith('"')) return [literal.slice(1, -1)];
	const template = /^`([a-z_.]*)\$\{(\w+)\}([a-z_.]*)`$/.exec(literal);
	const union = template && new RegExp(`\\b${template[2]}: ("[a-z_]+"(?:\\s*\\|\\s*"[a-z_]+")*)`).exec(text);
	if (!template || !union) throw new Error(`${file}: a log call whose event this test cannot read: ${literal}`);
	return [...union[1]!.matchAll(/"([a-z_]+)"/g)].map((m) => `${template[1]}${m[1]}${template[3]}`);
}

const EVENT = String.raw`("[^"\n]*"|\x60[^\x60\n]*\x60)`;
// Each reference to a level's method, up to the event it is called with: `log.warn("x"`, and a
// method chosen by a condition, `(ok ? log.info : failed ? log.error : log.warn)("x"`.
const CALL = new RegExp(String.raw`log\.(debug|info|warn|error)(?:\s*:[^;()]*?)?\s*\)?\s*\(\s*${EVENT}`, "y");
const ONCE = new RegExp(String.raw`log\.once\s*\(\s*"(debug|info|warn|error)"\s*,\s*${EVENT}`, "y");

/** Every event the Worker and the Durable Objects log, with the levels each is logged at. */
function loggedEvents(): Map<string, Set<string>> {
	const events = new Map<string, Set<string>>();
	const note = (names: string[], level: string) => {
		for (const name of names) events.set(name, (events.get(name) ?? new Set()).add(level));
	};
	for (const [file, raw] of Object.entries(sources)) {
		const text = uncommented(raw);
		for (const ref of text.matchAll(/\blog\.(?:debug|info|warn|error|once)\b/g)) {
			const pattern = ref[0] === "log.once" ? ONCE : CALL;
			pattern.lastIndex = ref.index;
			const call = pattern.exec(text);
			if (!call) throw new Error(`${file}: a log call whose event this test cannot read: ${text.slice(ref.index, ref.index + 80)}`);
			note(eventNames(call[2]!, file, text), call[1]!);
		}
		// The logger's own lines (config.var_invalid), written below its methods.
		if (file === "/src/log.ts") for (const m of text.matchAll(new RegExp(String.raw`\bemit\(\s*"(debug|info|warn|error)"\s*,\s*${EVENT}`, "g"))) note(eventNames(m[2]!, file, text), m[1]!);
	}
	return events;
}

/**
 * README's event tables (one an area, each under HEADER): each event a row names, with the row's
 * level cell. A name given by its suffix (`_caught_up`, `resolved`) is the one before it, cut at its last part.
 */
function documentedEvents(): Map<string, string> {
	const readme = docs["/README.md"]!;
	const events = new Map<string, string>();
	for (let at = readme.indexOf(HEADER); at !== -1; at = readme.indexOf(HEADER, at + 1)) {
		const table = readme.slice(at);
		const rows = table.slice(0, table.search(/\n(?!\|)/)).split("\n").slice(2);
		for (const row of rows) {
			const [, names, level] = row.split("|");
			let previous = "";
			for (const [, named] of names!.matchAll(/`([^`]+)`/g)) {
				expect(named, `README's event table names an event as ${named}`).toMatch(/^[a-z0-9_.]+$/);
				const cut = named!.startsWith("_") ? previous.lastIndexOf("_") : previous.lastIndexOf(".") + 1;
				const event = named!.includes(".") ? named! : `${previous.slice(0, cut)}${named}`;
				previous = event;
				expect(events.has(event), `${event} has one row in README's event tables`).toBe(false);
				events.set(event, level!);
			}
		}
	}
	return events;
}

describe("the logs an operator is told of", () => {
	it("are all kept: wrangler.toml's [observability] samples every line", () => {
		const section = /\[observability\]([^[]*)/.exec(docs["/wrangler.toml"]!)?.[1] ?? "";
		expect(section).toMatch(/^enabled = true$/m);
		expect(section).toMatch(/^head_sampling_rate = 1$/m);
	});

	it("are all in README's event tables, and only those: each event a log call writes has a row, and each row's event is written by some log call", () => {
		const logged = loggedEvents();
		const documented = documentedEvents();
		expect(logged.size).toBeGreaterThan(80);
		const undocumented = [...logged.keys()].filter((event) => !documented.has(event)).sort();
		const unlogged = [...documented.keys()].filter((event) => !logged.has(event)).sort();
		expect({ undocumented, unlogged }).toEqual({ undocumented: [], unlogged: [] });
	});

	it("are given at their levels: each level an event is logged at is named in its row's level cell", () => {
		const documented = documentedEvents();
		const missing = [...loggedEvents()].flatMap(([event, levels]) => [...levels].filter((level) => documented.has(event) && !documented.get(event)!.includes(`\`${level}\``)).map((level) => `${event}: ${level}`));
		expect(missing).toEqual([]);
	});
});
