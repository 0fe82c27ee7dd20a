// The drover bin (cli/drover.mjs) runs the bundle `npm install` builds while every file it was
// built from is as it was then, and the TypeScript sources otherwise: an edited checkout must never
// run a stale build. The choice is checked on a copy of the launcher beside stand-ins whose output says which
// ran; the real bundle (built by the e2e set-up, as npm's prepare step builds it) runs every other
// CLI test.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLI } from "./cli-process.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
/** Node's options that make it report it cannot run TypeScript, as a Node before 22.18. */
const NO_TYPESCRIPT = ["--import", 'data:text/javascript,Object.defineProperty(process.features, "typescript", { value: false })'];
const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A checkout in miniature: the real launcher, a bundle and sources that each print their name. */
function miniCheckout() {
	const root = mkdtempSync(path.join(tmpdir(), "drover-launcher-"));
	dirs.push(root);
	const cli = path.join(root, "cli");
	mkdirSync(cli);
	copyFileSync(CLI, path.join(cli, "drover.mjs"));
	const says = (what: string) => `export async function run(argv) { console.log(${JSON.stringify(what)}, argv.slice(2).join(" ")); return 3; }\n`;
	writeFileSync(path.join(cli, "program.ts"), says("sources").replace("(argv)", "(argv: string[]): Promise<number>"));
	writeFileSync(path.join(cli, "format.ts"), "export {};\n");
	writeFileSync(path.join(root, "package.json"), "{}\n");
	writeFileSync(path.join(cli, "drover.bundle.mjs"), says("bundle"));
	const files = ["cli/program.ts", "cli/format.ts", "package.json"];
	const now = Date.now() / 1000;
	/** Sets a file's time, `seconds` ago: stated, not left to the clock. */
	const age = (file: string, seconds: number) => utimesSync(path.join(root, file), now - seconds, now - seconds);
	/** The list the build writes: each file as it is now. */
	const built = () =>
		writeFileSync(path.join(cli, "drover.bundle.json"), JSON.stringify({ inputs: files.map((file) => ({ file, mtimeMs: statSync(path.join(root, file)).mtimeMs, size: statSync(path.join(root, file)).size })) }));
	for (const file of files) age(file, 60);
	built();
	const run = (env: Record<string, string> = {}, nodeArgs: string[] = []) => {
		const r = spawnSync(process.execPath, [...nodeArgs, path.join(cli, "drover.mjs"), "jobs", "--json"], { encoding: "utf8", env: { ...process.env, ...env } });
		expect(r.status, r.stderr).toBe(3);
		return r.stdout.trim();
	};
	return { root, cli, run, age, built };
}

describe("the drover bin", () => {
	it("runs the bundle while every file it was built from is as it was then, with the arguments and exit code", () => {
		expect(miniCheckout().run()).toBe("bundle jobs --json");
	});

	it("runs the sources once a file the bundle was built from changed (a newer time, an older one restored, another size), and the bundle again once rebuilt", () => {
		const checkout = miniCheckout();
		checkout.age("cli/format.ts", 10);
		expect(checkout.run()).toBe("sources jobs --json");
		// Back to its time: as built again.
		checkout.age("cli/format.ts", 60);
		expect(checkout.run()).toBe("bundle jobs --json");
		// Restored from an older copy (cp -p, tar): older than the bundle, and still not what it was built from.
		checkout.age("package.json", 3_600);
		expect(checkout.run()).toBe("sources jobs --json");
		checkout.age("package.json", 60);
		// The same time, another content's size.
		writeFileSync(path.join(checkout.root, "cli/format.ts"), "export const changed = 1;\n");
		checkout.age("cli/format.ts", 60);
		expect(checkout.run()).toBe("sources jobs --json");
		checkout.built();
		expect(checkout.run()).toBe("bundle jobs --json");
	});

	it("runs the sources when there is no bundle, no list of its files, a list of the earlier form, or a listed file is gone", () => {
		const noBundle = miniCheckout();
		rmSync(path.join(noBundle.cli, "drover.bundle.mjs"));
		expect(noBundle.run()).toBe("sources jobs --json");
		const noList = miniCheckout();
		rmSync(path.join(noList.cli, "drover.bundle.json"));
		expect(noList.run()).toBe("sources jobs --json");
		const earlier = miniCheckout();
		writeFileSync(path.join(earlier.cli, "drover.bundle.json"), JSON.stringify({ inputs: ["cli/program.ts", "cli/format.ts", "package.json"] }));
		expect(earlier.run()).toBe("sources jobs --json");
		const gone = miniCheckout();
		rmSync(path.join(gone.cli, "format.ts"));
		expect(gone.run()).toBe("sources jobs --json");
	});

	it("on a Node that cannot run TypeScript (before 22.18), runs a fresh bundle, and says what to do when it is not", () => {
		const checkout = miniCheckout();
		expect(checkout.run({}, NO_TYPESCRIPT)).toBe("bundle jobs --json");
		checkout.age("cli/format.ts", 10);
		const r = spawnSync(process.execPath, [...NO_TYPESCRIPT, path.join(checkout.cli, "drover.mjs"), "jobs"], { encoding: "utf8" });
		expect([r.status, r.stdout]).toEqual([1, ""]);
		expect(r.stderr).toBe(
			`drover: its bundle is missing or older than its sources, and Node ${process.versions.node} cannot run the TypeScript sources (Node 22.18 or later can): run npm run prepare in the checkout to build it, or run drover with the Node npm install brings, node_modules/.bin/node cli/drover.mjs\n`,
		);
	});

	it("says which Node it needs when run by one older than 22.12, before loading anything of the CLI", () => {
		// The Node reported is changed before the bin runs: Node 20's SyntaxError came from deep inside.
		const asNode = (version: string) =>
			spawnSync(process.execPath, ["--import", `data:text/javascript,Object.defineProperty(process.versions, "node", { value: "${version}" })`, CLI, "--version"], { encoding: "utf8" });
		for (const version of ["20.20.2", "22.11.0"]) {
			const old = asNode(version);
			expect([old.status, old.stdout]).toEqual([1, ""]);
			expect(old.stderr).toBe(
				`drover: needs Node 22.12 or later, and this is Node ${version} (${process.execPath}): run it with the Node npm install brings, node_modules/.bin/node cli/drover.mjs, or npx drover in the checkout\n`,
			);
		}
		const version = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string }).version;
		expect(asNode("22.12.0").stdout.trim()).toBe(version);
	});

	it("is fresh after the build, lists every drover file the CLI imports, is what the bin runs, and answers as the sources do", () => {
		const { inputs } = JSON.parse(readFileSync(path.join(ROOT, "cli/drover.bundle.json"), "utf8")) as { inputs: { file: string; mtimeMs: number; size: number }[] };
		const files = inputs.map((input) => input.file);
		expect(files).toEqual(expect.arrayContaining(["cli/program.ts", "cli/client.ts", "cli/commands/jobs.ts", "src/shared/sse.ts", "package.json", "package-lock.json"]));
		expect(files.filter((file) => file.split("/").includes("node_modules"))).toEqual([]);
		// Each as it is now: the bin runs this bundle.
		expect(inputs.filter(({ file, mtimeMs, size }) => statSync(path.join(ROOT, file)).mtimeMs !== mtimeMs || statSync(path.join(ROOT, file)).size !== size)).toEqual([]);
		const version = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string }).version;
		const viaBundle = spawnSync(process.execPath, ["--input-type=module", "-e", `import { run } from ${JSON.stringify(path.join(ROOT, "cli/drover.bundle.mjs"))}; process.exitCode = await run(["node", "drover", "--version"]);`], { encoding: "utf8" });
		expect(viaBundle.stdout.trim(), viaBundle.stderr).toBe(version);
		// The bin takes it: told that Node cannot run TypeScript, it still answers.
		const bundleOnly = spawnSync(process.execPath, [...NO_TYPESCRIPT, CLI, "--version"], { encoding: "utf8" });
		expect([bundleOnly.status, bundleOnly.stdout.trim()], bundleOnly.stderr).toEqual([0, version]);
		const viaBin = spawnSync(process.execPath, [CLI, "jobs", "--status", "nope"], { encoding: "utf8" });
		const viaSources = spawnSync(process.execPath, ["-e", `import(${JSON.stringify(path.join(ROOT, "cli/program.ts"))}).then(async ({ run }) => { process.exitCode = await run(["node", "drover", "jobs", "--status", "nope"]); });`], { encoding: "utf8" });
		expect(viaBin.status).toBe(2);
		expect([viaBin.status, viaBin.stdout, viaBin.stderr]).toEqual([viaSources.status, viaSources.stdout, viaSources.stderr]);
	});
});
