#!/usr/bin/env node
// The `drover` executable (package.json "bin"). Node 22 runs the CLI's TypeScript directly, but
// loading its type stripper costs about 90 ms at every start; `npm install` bundles the CLI into
// drover.bundle.mjs (scripts/build-cli.ts), which starts in about 180 ms where the sources take
// about 400 (`npm run bench -- bundle`). The bundle runs only while no file it was built from is
// newer than it, so an edited checkout runs its sources, never a stale build.
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
const { run } = await import(bundleIsFresh() ? "./drover.bundle.mjs" : "./program.ts");
process.exitCode = await run(process.argv);

/** @returns {boolean} */
function bundleIsFresh() {
	try {
		const built = statSync(new URL("drover.bundle.mjs", import.meta.url)).mtimeMs;
		/** @type {{ inputs: string[] }} */
		const { inputs } = JSON.parse(readFileSync(new URL("drover.bundle.json", import.meta.url), "utf8"));
		const root = new URL("../", import.meta.url);
		return inputs.every((file) => statSync(new URL(file, root)).mtimeMs <= built);
	} catch {
		// No bundle, or a file it names is gone: the sources are the truth.
		return false;
	}
}
