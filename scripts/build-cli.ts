// `npm install`'s prepare step: bundles the drover CLI into cli/drover.bundle.mjs, which cli/drover.mjs
// runs while it is fresh. Node strips the CLI's TypeScript at every start, and loading its stripper
// alone costs about 90 ms of a 400 ms start; the bundle, one plain module, starts in about 180 ms.
import { rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { build } from "esbuild";

const root = path.join(import.meta.dirname, "..");
const bundle = path.join(root, "cli", "drover.bundle.mjs");

const result = await build({
	absWorkingDir: root,
	entryPoints: ["cli/program.ts"],
	bundle: true,
	platform: "node",
	format: "esm",
	target: "node22",
	metafile: true,
	write: false,
	logLevel: "warning",
	// yaml and commander resolve to CommonJS under Node's conditions, and their require() calls of
	// Node's built-ins need a real require in an ES module.
	banner: { js: 'import { createRequire as droverCreateRequire } from "node:module"; const require = droverCreateRequire(import.meta.url);' },
});

// The launcher runs the bundle only while none of these is newer than it: drover's own files (a
// dependency changes only through npm, which runs this again) and the package files.
const inputs = Object.keys(result.metafile.inputs)
	// Anywhere under a node_modules (a symlinked one resolves to its real path, outside the checkout).
	.filter((file) => !file.split("/").includes("node_modules"))
	.concat("package.json", "package-lock.json");
await writeFile(path.join(root, "cli", "drover.bundle.json"), `${JSON.stringify({ inputs }, null, "\t")}\n`);
const [output] = result.outputFiles;
if (!output) throw new Error("esbuild wrote no bundle for cli/program.ts");
// Written beside and renamed, so a drover started meanwhile never imports half a file.
await writeFile(`${bundle}.tmp`, output.contents);
await rename(`${bundle}.tmp`, bundle);
console.log(`cli/drover.bundle.mjs: ${(output.contents.byteLength / 1024).toFixed(0)} KiB from ${inputs.length - 2} drover files`);
