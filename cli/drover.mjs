#!/usr/bin/env node
// The `drover` executable (package.json "bin"). Node 22 runs the CLI's TypeScript directly, but
// loading its type stripper costs about 90 ms at every start; `npm install` bundles the CLI into
// drover.bundle.mjs (scripts/build-cli.ts), which starts in about 180 ms where the sources take
// about 400 (`npm run bench -- bundle`). The bundle runs only while every file it was built from is
// as it was then, so an edited checkout runs its sources, never a stale build.
import { readFileSync, statSync } from "node:fs";
import nodeModule from "node:module";

// Run through its shebang, this file gets whichever node is first on PATH, maybe an older one that
// would fail with a SyntaxError from deep inside: say what to run instead.
const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
	process.stderr.write(
		`drover: needs Node 22.12 or later, and this is Node ${process.versions.node} (${process.execPath}): run it with the Node npm install brings, node_modules/.bin/node cli/drover.mjs, or npx drover in the checkout\n`,
	);
	process.exit(1);
}
// V8's compiled code kept between runs (in the OS's temporary directory): about 30 ms less compiling.
nodeModule.enableCompileCache();
const fresh = bundleIsFresh();
// Node runs TypeScript from 22.18 on; an earlier one runs the bundle only.
if (!fresh && !process.features.typescript) {
	process.stderr.write(
		`drover: its bundle is missing or older than its sources, and Node ${process.versions.node} cannot run the TypeScript sources (Node 22.18 or later can): run npm run prepare in the checkout to build it, or run drover with the Node npm install brings, node_modules/.bin/node cli/drover.mjs\n`,
	);
	process.exit(1);
}
const { run } = await import(fresh ? "./drover.bundle.mjs" : "./program.ts");
process.exitCode = await run(process.argv);

/**
 * Whether each file the bundle was built from is as it was then (its time and size): an edit, a
 * checkout or a restore of older files all make the sources the truth.
 * @returns {boolean}
 */
function bundleIsFresh() {
	try {
		/** @type {{ inputs: { file: string; mtimeMs: number; size: number }[] }} */
		const { inputs } = JSON.parse(readFileSync(new URL("drover.bundle.json", import.meta.url), "utf8"));
		const root = new URL("../", import.meta.url);
		if (!statSync(new URL("drover.bundle.mjs", import.meta.url)).isFile() || inputs.length === 0) return false;
		return inputs.every(({ file, mtimeMs, size }) => {
			const now = statSync(new URL(file, root));
			return now.mtimeMs === mtimeMs && now.size === size;
		});
	} catch {
		// No bundle, no list (or one of an older form), or a file it names is gone: the sources are the truth.
		return false;
	}
}
