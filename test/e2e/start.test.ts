// `npm start` (scripts/start.mjs) when a port it needs is taken, as by a drover already running: it
// stops before it migrates or starts anything, saying which port and what to do. Run in a scratch
// checkout (the repository's files linked in) so no .dev.vars or .wrangler state of its own is used
// or made.
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ENV_DIR_PREFIX, removeOrphanEnvDirs } from "../../scripts/local-vars.mjs";

const ROOT = path.resolve(import.meta.dirname, "../..");
let checkout = "";

beforeEach(() => {
	checkout = mkdtempSync(path.join(tmpdir(), "drover-start-"));
	for (const name of readdirSync(ROOT)) if (![".git", ".wrangler", ".dev.vars", "dist"].includes(name)) symlinkSync(path.join(ROOT, name), path.join(checkout, name));
});

const servers: Server[] = [];
afterEach(async () => {
	for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve));
	rmSync(checkout, { recursive: true, force: true });
});

/** A server on `port` (0: any free one) of 127.0.0.1 that answers as a running drover's /healthz does. */
async function occupy(port: number): Promise<number> {
	const server = createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}'));
	servers.push(server);
	server.listen(port, "127.0.0.1");
	await once(server, "listening");
	return (server.address() as AddressInfo).port;
}

/** `npm start -- --port <port>` in the scratch checkout, without an API key (so with the emulator on port + 1); killed, with all it started, after 45 s. */
async function start(port: number): Promise<{ status: number | null; output: string }> {
	const child = spawn(process.execPath, ["scripts/start.mjs", "--port", String(port)], {
		cwd: checkout,
		env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" } as unknown as NodeJS.ProcessEnv,
		stdio: ["ignore", "pipe", "pipe"],
		detached: true,
	});
	let output = "";
	child.stdout.setEncoding("utf8").on("data", (d: string) => (output += d));
	child.stderr.setEncoding("utf8").on("data", (d: string) => (output += d));
	const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 45_000);
	const [status] = (await once(child, "close")) as [number | null];
	clearTimeout(timer);
	return { status, output };
}

describe("npm start with a port it needs already taken", () => {
	it("stops at once when drover's own port is taken, naming it and saying what to do; nothing migrated or started", async () => {
		const port = await occupy(0);
		const r = await start(port);
		expect(r.status).toBe(1);
		expect(r.output).toContain(`[drover] port ${port} on 127.0.0.1, drover's HTTP API, is already in use: is another drover running (npm start, in this checkout or another)?`);
		expect(r.output).toContain(`[drover] stop it (Ctrl-C in its terminal), or start this one on other ports: npm start -- --port ${port + 10} (its emulator then takes ${port + 11})`);
		expect(r.output).not.toContain("drover is running");
		expect(r.output).not.toMatch(/migrations|Wrote \.dev\.vars/);
		expect(existsSync(path.join(checkout, ".dev.vars"))).toBe(false);
		expect(existsSync(path.join(checkout, ".wrangler"))).toBe(false);
	});

	it("stops at once when the emulator's port (drover's + 1) is taken", async () => {
		const emulatorPort = await occupy(0);
		const r = await start(emulatorPort - 1);
		expect(r.status).toBe(1);
		expect(r.output).toContain(`[drover] port ${emulatorPort} on 127.0.0.1, the Messages API emulator's (drover's port + 1), is already in use: is another drover (npm start) or emulator (npm run emulator) running?`);
		expect(r.output).not.toContain("drover is running");
		expect(existsSync(path.join(checkout, ".dev.vars"))).toBe(false);
		expect(existsSync(path.join(checkout, ".wrangler"))).toBe(false);
	});
});

describe("npm start's env file", () => {
	it("removes the env files of starts no longer running (killed before they could), and no other's", () => {
		const dir = mkdtempSync(path.join(tmpdir(), "drover-orphans-"));
		try {
			// A pid that was a process and is no more.
			const gone = spawnSync(process.execPath, ["-e", ""]).pid;
			const names = [`${ENV_DIR_PREFIX}${gone}-aB12cd`, `${ENV_DIR_PREFIX}${process.pid}-xY34zw`, "drover-start-Qw12er", `${ENV_DIR_PREFIX}x-1`, "other"];
			for (const name of names) {
				mkdirSync(path.join(dir, name));
				writeFileSync(path.join(dir, name, "run.env"), "A=1\n");
			}
			removeOrphanEnvDirs(dir);
			expect(readdirSync(dir).sort()).toEqual(names.slice(1).sort());
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});
