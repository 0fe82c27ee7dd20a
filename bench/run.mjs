#!/usr/bin/env node
// `npm run bench` runs every benchmark; `npm run bench -- <name> [options]` runs bench/<name>.mjs.
// A benchmark is a module exporting `title`, `usage` and `run(argv)`; it prints its figures and
// writes them to bench/results/<name>.json (gitignored). Benchmarks report, they never pass or fail
// a build: the exit code is non-zero only when a benchmark could not run or its work went wrong.
import { readdirSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

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

for (const name of names.length > 0 ? names : available) {
	const mod = await import(pathToFileURL(path.join(dir, `${name}.mjs`)).href);
	console.log(`\n== ${name}: ${mod.title}\n`);
	await mod.run(rest);
}

