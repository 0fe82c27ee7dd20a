#!/usr/bin/env node
// `npm run bench` runs every benchmark; `npm run bench -- <name> [options]` runs bench/<name>.mjs.
// A benchmark is a module exporting `title`, `usage`, `run(argv)` and `tableRows(results)`; it prints its figures and
// writes them to bench/results/<name>.json (gitignored); at the end one table of every figure against
// its goal is printed and written to bench/results/summary.json. Benchmarks report, they never pass or fail
// a build: the exit code is non-zero only when a benchmark could not run or its work went wrong.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { machineInfo } from "./lib/common.mjs";

const dir = import.meta.dirname;
const available = readdirSync(dir)
	.filter((f) => f.endsWith(".mjs") && f !== "run.mjs")
	.map((f) => f.slice(0, -".mjs".length))
	.sort();

const argv = process.argv.slice(2);
const names = argv.filter((a) => !a.startsWith("-") && available.includes(a));
const rest = argv.filter((a) => !names.includes(a));

if (rest.includes("--help") || rest.includes("-h")) {
	console.log("usage: npm run bench [-- <name>... [options]]\n");
	for (const name of available) {
		const mod = await import(pathToFileURL(path.join(dir, `${name}.mjs`)).href);
		console.log(`  ${name}: ${mod.title}\n${mod.usage ?? ""}`);
	}
	process.exit(0);
}
// Options are `--flag` or `--option=value`, so every other word names a benchmark.
const unknown = argv.filter((a) => !a.startsWith("-") && !available.includes(a));
if (unknown.length > 0) {
	console.error(`unknown benchmark ${unknown.join(", ")}; available: ${available.join(", ")}`);
	process.exit(2);
}

// After the benchmarks, one table of every figure against its goal, from the results each wrote.
const rows = [];
for (const name of names.length > 0 ? names : available) {
	const mod = await import(pathToFileURL(path.join(dir, `${name}.mjs`)).href);
	console.log(`\n== ${name}: ${mod.title}\n`);
	const started = Date.now();
	await mod.run(rest);
	const file = path.join(dir, "results", `${name}.json`);
	const doc = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : null;
	if (!doc || Date.parse(doc.at) < started) {
		rows.push({ scenario: name, figure: "(no results written)", measured: "—", goal: "", met: null });
		continue;
	}
	// A benchmark whose work went wrong says so in the table, and the others still run.
	if (doc.error) {
		rows.push({ scenario: name, figure: "(failed)", measured: doc.error, goal: "", met: null });
		continue;
	}
	for (const row of mod.tableRows?.(doc) ?? []) rows.push({ scenario: name, ...row });
}

const verdict = (met) => (met === null || met === undefined ? "—" : met ? "yes" : "NO");
const cells = rows.map((r) => [r.scenario, r.figure, r.measured, r.goal, verdict(r.met)]);
const head = ["scenario", "figure", "measured", "goal", "met"];
const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => String(c[i]).length)));
const line = (c) => `| ${c.map((x, i) => String(x).padEnd(widths[i])).join(" | ")} |`;
console.log(`\n== summary\n\n${line(head)}\n| ${widths.map((w) => "-".repeat(w)).join(" | ")} |\n${cells.map(line).join("\n")}`);
const out = path.join(dir, "results", "summary.json");
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify({ at: new Date().toISOString(), machine: machineInfo(), rows }, null, "\t")}\n`);
console.log(`\nwrote ${path.relative(process.cwd(), out)}`);

