// `npm install`'s prepare step: bundles the drover CLI into cli/drover.bundle.mjs, which cli/drover.mjs
// runs while it is fresh. Node strips the CLI's TypeScript at every start, and loading its stripper
// alone costs about 90 ms of a 400 ms start; the bundle, one plain module, starts in about 180 ms.
import { stat, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { build } from "esbuild";

const root = path.join(import.meta.dirname, "..");
const cli = path.join(root, "cli");

/** A file the bundle was built from, as it was: the launcher runs the bundle only while each is so. */
interface Input {
	file: string;
	mtimeMs: number;
	size: number;
}

async function bundleOnce(): Promise<{ code: Uint8Array; inputs: Input[]; changedMeanwhile: boolean }> {
	const began = Date.now();
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
	const [output] = result.outputFiles;
	if (!output) throw new Error("esbuild wrote no bundle for cli/program.ts");
	// drover's own files (anywhere under a node_modules is a dependency, which changes only through
	// npm, which runs this again; a symlinked one resolves outside the checkout) and the package files.
	const files = Object.keys(result.metafile.inputs)
		.filter((file) => !file.split("/").includes("node_modules"))
		.concat("package.json", "package-lock.json");
	const inputs = await Promise.all(
		files.map(async (file) => {
			const { mtimeMs, size } = await stat(path.join(root, file));
			return { file, mtimeMs, size };
		}),
	);
	// A file saved while esbuild read the files may be in the bundle as it was before: built again.
	return { code: output.contents, inputs, changedMeanwhile: inputs.some((input) => input.mtimeMs >= began) };
}

let built = await bundleOnce();
for (let tries = 1; built.changedMeanwhile && tries < 3; tries++) built = await bundleOnce();
if (built.changedMeanwhile) throw new Error("drover's CLI sources kept changing while they were bundled: run npm run prepare again");

/** Written beside and renamed (per process: two builds at once), so nothing reads half a file. */
async function replace(file: string, contents: Uint8Array | string): Promise<void> {
	const temporary = `${file}.${process.pid}.tmp`;
	await writeFile(temporary, contents);
	await rename(temporary, file);
}
// The bundle first: a list naming files as they are now never stands beside an older bundle.
await replace(path.join(cli, "drover.bundle.mjs"), built.code);
await replace(path.join(cli, "drover.bundle.json"), `${JSON.stringify({ inputs: built.inputs }, null, "\t")}\n`);
console.log(`cli/drover.bundle.mjs: ${(built.code.byteLength / 1024).toFixed(0)} KiB from ${built.inputs.length - 2} drover files`);
