// The drover bin (cli/drover.mjs) runs the bundle `npm install` builds while no file it was built
// from is newer, and the TypeScript sources otherwise: an edited checkout must never run a stale
// build. The choice is checked on a copy of the launcher beside stand-ins whose output says which
// ran; the real bundle (built by the e2e set-up, as npm's prepare step builds it) runs every other
// CLI test.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLI } from "./cli-process.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A checkout in miniature: the real launcher, a bundle and sources that each print their name. */
function miniCheckout(): { cli: string; run: () => string; age: (file: string, seconds: number) => void } {
	const root = mkdtempSync(path.join(tmpdir(), "drover-launcher-"));
	dirs.push(root);
	const cli = path.join(root, "cli");
	mkdirSync(cli);
	copyFileSync(CLI, path.join(cli, "drover.mjs"));
	const says = (what: string) => `export async function run(argv) { console.log(${JSON.stringify(what)}, argv.slice(2).join(" ")); return 3; }\n`;
	writeFileSync(path.join(cli, "program.ts"), says("sources").replace("(argv)", "(argv: string[]): Promise<number>"));
	writeFileSync(path.join(cli, "format.ts"), "export {};\n");
	writeFileSync(path.join(root, "package.json"), "{}\n");
	writeFileSync(path.join(cli, "drover.bundle.json"), JSON.stringify({ inputs: ["cli/program.ts", "cli/format.ts", "package.json"] }));
	writeFileSync(path.join(cli, "drover.bundle.mjs"), says("bundle"));
	const now = Date.now() / 1000;
	const age = (file: string, seconds: number) => utimesSync(path.join(root, file), now - seconds, now - seconds);
	// Stated, not left to the clock: the bundle built 30 s ago from files last changed a minute ago.
	for (const file of ["cli/program.ts", "cli/format.ts", "package.json"]) age(file, 60);
	age("cli/drover.bundle.mjs", 30);
	const run = () => {
		const r = spawnSync(process.execPath, [path.join(cli, "drover.mjs"), "jobs", "--json"], { encoding: "utf8" });
		expect(r.status, r.stderr).toBe(3);
		return r.stdout.trim();
	};
	return { cli, run, age };
}

describe("the drover bin", () => {
	it("runs the bundle while it is newer than every file it was built from, with the arguments and exit code", () => {
		expect(miniCheckout().run()).toBe("bundle jobs --json");
	});

	it("runs the sources once any file the bundle was built from is newer, and the bundle again once rebuilt", () => {
		const checkout = miniCheckout();
		checkout.age("cli/format.ts", 29);
		expect(checkout.run()).toBe("sources jobs --json");
		checkout.age("cli/format.ts", 60);
		checkout.age("package.json", 10);
		expect(checkout.run()).toBe("sources jobs --json");
		checkout.age("cli/drover.bundle.mjs", 5);
		expect(checkout.run()).toBe("bundle jobs --json");
	});

	it("runs the sources when there is no bundle, no list of its files, or a listed file is gone", () => {
		const noBundle = miniCheckout();
		rmSync(path.join(noBundle.cli, "drover.bundle.mjs"));
		expect(noBundle.run()).toBe("sources jobs --json");
		const noList = miniCheckout();
		rmSync(path.join(noList.cli, "drover.bundle.json"));
		expect(noList.run()).toBe("sources jobs --json");
		const gone = miniCheckout();
		rmSync(path.join(gone.cli, "format.ts"));
		expect(gone.run()).toBe("sources jobs --json");
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

	it("is fresh after the build, lists every drover file the CLI imports, and runs as the sources do", () => {
		const { inputs } = JSON.parse(readFileSync(path.join(ROOT, "cli/drover.bundle.json"), "utf8")) as { inputs: string[] };
		expect(inputs).toEqual(expect.arrayContaining(["cli/program.ts", "cli/client.ts", "cli/commands/jobs.ts", "src/shared/sse.ts", "package.json", "package-lock.json"]));
		expect(inputs.filter((file) => file.startsWith("node_modules/"))).toEqual([]);
		const built = statSync(path.join(ROOT, "cli/drover.bundle.mjs")).mtimeMs;
		expect(inputs.filter((file) => statSync(path.join(ROOT, file)).mtimeMs > built)).toEqual([]);
		const version = (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string }).version;
		const viaBundle = spawnSync(process.execPath, ["--input-type=module", "-e", `import { run } from ${JSON.stringify(path.join(ROOT, "cli/drover.bundle.mjs"))}; process.exitCode = await run(["node", "drover", "--version"]);`], { encoding: "utf8" });
		expect(viaBundle.stdout.trim(), viaBundle.stderr).toBe(version);
		const viaBin = spawnSync(process.execPath, [CLI, "jobs", "--status", "nope"], { encoding: "utf8" });
		const viaSources = spawnSync(process.execPath, ["-e", `import(${JSON.stringify(path.join(ROOT, "cli/program.ts"))}).then(async ({ run }) => { process.exitCode = await run(["node", "drover", "jobs", "--status", "nope"]); });`], { encoding: "utf8" });
		expect(viaBin.status).toBe(2);
		expect([viaBin.status, viaBin.stdout, viaBin.stderr]).toEqual([viaSources.status, viaSources.stdout, viaSources.stderr]);
	});
});
