#!/usr/bin/env node
// `npm start`: drover on this machine, on embedded defaults. Local DO, D1 and R2 state live under
// .wrangler/; the first run writes .dev.vars with a fresh admin token.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { parse as parseYaml } from "yaml";
import { ENV_DIR_PREFIX, localVars, readDevVars, removeOrphanEnvDirs, runEnvFile } from "./local-vars.mjs";
import { localD1Files, localMigrationsCurrent, recordLocalMigrations } from "./local-d1.mjs";
import { migrationsLine } from "./migrations.mjs";
import { modelLine } from "./model-line.mjs";
import { portProblem, portsRefused } from "./ports.mjs";
import { tickEachMinute } from "./ticks.mjs";

// The emulator is TypeScript run by Node's type stripping, and wrangler wants Node 22 too. `npm start`
// puts the project's own Node 22 (the `node` package) first on PATH; a bare `node` may be older.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
	console.error(`drover needs Node 22.12 or later; this is ${process.version}. Run \`npm start\`, which uses the project's own Node.`);
	process.exit(1);
}

const { values } = parseArgs({ options: { port: { type: "string", default: process.env.PORT ?? "8787" } } });
const port = Number(values.port);
const base = `http://localhost:${port}`;
// No network but package registries here: keep wrangler from phoning home.
const env = {
	...process.env,
	WRANGLER_SEND_METRICS: "false",
	WRANGLER_SEND_ERROR_REPORTS: "false",
	// The Request.cf placeholder is fine locally; fetching the real one needs the internet.
	CLOUDFLARE_CF_FETCH_ENABLED: "false",
};

/** .dev.vars's entries (nothing when there is none yet), as wrangler dev reads them. */
function devVarsNow() {
	return existsSync(".dev.vars") ? readDevVars(readFileSync(".dev.vars", "utf8")) : {};
}

function devVars() {
	if (!existsSync(".dev.vars")) {
		const token = `drover_local_${randomBytes(24).toString("hex")}`;
		writeFileSync(
			".dev.vars",
			[
				"# Local secrets for `npm start` (never committed). Format: name:role:token, comma-separated.",
				`API_TOKENS=local:admin:${token}`,
				"# Set a real key to call the Messages API; empty uses the bundled emulator.",
				"ANTHROPIC_API_KEY=",
				"",
			].join("\n"),
			{ mode: 0o600 },
		);
		console.log("Wrote .dev.vars with a new local admin token.");
	}
	const vars = devVarsNow();
	const token = (vars.API_TOKENS ?? "").split(",")[0]?.split(":").slice(2).join(":");
	return { token, apiKey: vars.ANTHROPIC_API_KEY ?? "", vars };
}

/**
 * The Worker secrets fleet.yaml names: those its agents post to (`url_secret`: deliveries, webhook
 * tools, hooks), and those its webhook triggers are signed with (`webhook.secret`).
 */
function fleetSecrets() {
	const urls = new Set();
	const webhooks = new Set();
	const walk = (node) => {
		if (Array.isArray(node)) node.forEach(walk);
		else if (node && typeof node === "object")
			for (const [key, value] of Object.entries(node)) {
				if (key === "url_secret" && typeof value === "string") urls.add(value);
				else if (key === "webhook" && typeof value?.secret === "string") webhooks.add(value.secret);
				else walk(value);
			}
	};
	walk(parseYaml(readFileSync("fleet.yaml", "utf8")));
	return { urls: [...urls].sort(), webhooks: [...webhooks].sort() };
}

function run(cmd, args) {
	const r = spawnSync(cmd, args, { stdio: "inherit", env });
	if (r.status !== 0) process.exit(r.status ?? 1);
}

// Before anything is checked, migrated or started: a drover already running holds these ports, and
// answers the readiness probe below as if it were this one. The emulator runs only without a key.
const emulatorPort = port + 1;
const needed = [{ port, what: "drover's HTTP API" }];
if (!devVarsNow().ANTHROPIC_API_KEY) needed.push({ port: emulatorPort, what: "the Messages API emulator's (drover's port + 1)" });
const refused = [];
for (const need of needed) {
	const problem = await portProblem(need.port, "127.0.0.1");
	if (problem !== null) refused.push({ ...need, problem });
}
if (refused.length > 0) {
	for (const line of portsRefused(refused, port)) console.error(line);
	process.exit(1);
}

// wrangler's build step runs the same check, but a failing build leaves `wrangler dev` waiting for a
// fix behind a page of its own stack trace: say it plainly here instead, before starting anything.
if (spawnSync(process.execPath, ["scripts/check-fleet.ts"], { stdio: "inherit", env }).status !== 0) {
	console.error("[drover] fix fleet.yaml as above, then run `npm start` again.");
	process.exit(1);
}
const { token, apiKey, vars } = devVars();
// A webhook trigger's secret not set locally is made once, into .dev.vars, so the example fleet's
// webhook answers signed requests out of the box (unset, it answers 503 "webhook not configured").
const secrets = fleetSecrets();
const local = localVars({ devVars: vars, env: process.env, base, urlSecrets: secrets.urls, webhookSecrets: secrets.webhooks, sink: apiKey ? null : `http://127.0.0.1:${emulatorPort}` });
const { madeHooks, sunk } = local;
for (const name of local.envOnly)
	console.log(
		name === "ANTHROPIC_API_KEY"
			? "ANTHROPIC_API_KEY is set in the environment, which wrangler dev does not read for the Worker while .dev.vars exists: the local emulator answers for Claude. Put the key in .dev.vars (ANTHROPIC_API_KEY=…) to run real Claude."
			: `${name} is set in the environment, which wrangler dev does not read for the Worker while .dev.vars exists: set it in .dev.vars instead (replacing any npm start writes there).`,
	);
if (madeHooks.length > 0) {
	const text = readFileSync(".dev.vars", "utf8");
	appendFileSync(".dev.vars", `${text === "" || text.endsWith("\n") ? "" : "\n"}${madeHooks.map((name) => `${name}=${randomBytes(24).toString("hex")}\n`).join("")}`);
	for (const name of madeHooks) vars[name] = "(made)";
	console.log(`Wrote ${madeHooks.join(", ")} to .dev.vars: fleet.yaml's webhook triggers are signed with ${madeHooks.length === 1 ? "it" : "them"}.`);
}
// Kept, not shown: wrangler redraws the table of every migration after each one it applies (~400
// lines on a first start). One line says what it did; a failure shows all of it. No stdin: wrangler
// then takes its "continue?" as yes, as it does in any non-interactive run.
// Skipped when the database the last apply noted, for the same wrangler.toml, records them all (every
// start after the first, until a pull brings a new one): wrangler takes about 3 s to find nothing.
if (!(await localMigrationsCurrent(process.cwd()))) {
	const before = localD1Files(process.cwd());
	const migrated = spawnSync("npx", ["wrangler", "d1", "migrations", "apply", "DB", "--local"], { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", maxBuffer: 64 * 1024 * 1024, env });
	if (migrated.status !== 0) {
		process.stdout.write(migrated.stdout ?? "");
		process.stderr.write(migrated.stderr ?? "");
		console.error(`[drover] applying the D1 migrations to the local database failed (${migrated.error?.message ?? `exit code ${migrated.status ?? migrated.signal}`}): see wrangler's output above.`);
		process.exit(migrated.status || 1);
	}
	const migrationsSaid = migrationsLine(`${migrated.stdout}${migrated.stderr}`);
	if (migrationsSaid !== null) console.log(migrationsSaid);
	recordLocalMigrations(process.cwd(), before);
}

// Without a key, the bundled Messages API emulator serves the model; the key guard lets a
// loopback base URL through only when there is no key to leak.
const children = [];
let stopping = false;
const devArgs = ["wrangler", "dev", "--port", String(port), "--ip", "127.0.0.1", "--test-scheduled", "--show-interactive-dev-session=false"];
if (!apiKey) {
	// It runs as long as `npm start` does: the latest thousand requests are kept, where every request's
	// whole conversation was (a fleet of every-minute agents grew it by about 20 MB an hour).
	const emulator = spawn(process.execPath, ["emulator/server.ts", "--port", String(emulatorPort), "--keep-requests", "1000"], { stdio: ["ignore", "inherit", "inherit"], env });
	// Without it every job fails at its first model call: stop rather than run a Worker that cannot work.
	emulator.on("exit", (code, signal) => {
		if (stopping) return;
		console.error(`[drover] the Messages API emulator stopped (${signal ?? `exit code ${code}`}); stopping drover.`);
		children.forEach((c) => c.kill());
		process.exit(1);
	});
	children.push(emulator);
	devArgs.push("--var", `ANTHROPIC_BASE_URL:http://127.0.0.1:${emulatorPort}`);
}
// fleet.yaml's URL secrets not set in .dev.vars point at the emulator's sink, which prints what is
// posted: locally the fleet runs and delivers without real Slack or ticket URLs. Deployed, such a
// secret left unset auto-pauses its agent (or fails the hook) instead. Deliveries link to the job's
// dashboard page only when the Worker knows its public origin: locally it is this server's, unless
// the environment or .dev.vars sets one (the environment's first).
for (const value of local.vars) devArgs.push("--var", value);
// The secrets made for the run (sunk URLs' signing keys) go in an env file only this user can read,
// made after .dev.vars's last write and removed on exit, not on wrangler's command line (which ps
// shows any local user). Given an env file, wrangler reads .dev.vars only when named as one too; it
// then reads process.env as well if CLOUDFLARE_INCLUDE_PROCESS_ENV says so, which it never did here.
const devEnv = { ...env, DROVER_DEV_BUILD: "1" };
// Whether or not this start makes one: a start killed outright left its own behind.
removeOrphanEnvDirs(tmpdir());
if (local.secrets.length > 0) {
	const dir = mkdtempSync(path.join(tmpdir(), `${ENV_DIR_PREFIX}${process.pid}-`));
	process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
	const file = path.join(dir, "run.env");
	writeFileSync(file, runEnvFile(readFileSync(".dev.vars", "utf8"), local.secrets), { mode: 0o600 });
	devArgs.push("--env-file", path.resolve(".dev.vars"), "--env-file", file);
	devEnv.CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV = "true";
	delete devEnv.CLOUDFLARE_INCLUDE_PROCESS_ENV;
}
// wrangler's build step checks fleet.yaml on each save; here an invalid one is reported, not fatal.
// wrangler itself, not through npx: a signal to this script reaches wrangler, which stops its
// workerd; npx passed none on, and left the Worker running on the port after the emulator stopped.
const wrangler = path.join(import.meta.dirname, "..", "node_modules", "wrangler", "bin", "wrangler.js");
const dev = spawn(process.execPath, [wrangler, ...devArgs.slice(1)], { stdio: ["ignore", "inherit", "inherit"], env: devEnv });
children.push(dev);
// SIGHUP too (its terminal closed): stopped the same way, so the env file above is removed on exit.
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"])
	process.on(sig, () => {
		stopping = true;
		children.forEach((c) => c.kill(sig));
	});
dev.on("exit", (code) => {
	stopping = true;
	children.forEach((c) => c.kill());
	process.exit(code ?? 0);
});

// Deployed, Cloudflare fires the `* * * * *` trigger; `wrangler dev` does not, so tick here on each
// minute boundary with that minute as the scheduled time, exactly as the platform would.
const tickUrl = (minute) => `${base}/cdn-cgi/local/scheduled?cron=${encodeURIComponent("* * * * *")}&time=${minute}`;
const tickFailed = async (minute, r) => console.error(`[drover] tick ${new Date(minute).toISOString()} failed: ${r.status} ${await r.text()}`);
async function tickAt(minute) {
	try {
		const r = await fetch(tickUrl(minute));
		if (!r.ok) await tickFailed(minute, r);
	} catch (err) {
		console.error(`[drover] tick ${new Date(minute).toISOString()} failed: ${err.message}`);
	}
}

// The first tick is the readiness probe, repeated until the Worker answers it. A probe of /healthz
// came before any tick and got its 503 ("no tick yet"), which the Worker logs as an error: a red
// ✘ [ERROR] line on every first start. Ticked first, /healthz answers 200 by the time the banner
// says to try it. Only this one's wrangler: never once it (or the emulator) stopped. Its minute (the
// one it was sent in), or null when the Worker never answered.
async function firstTick() {
	for (let i = 0; i < 240; i++) {
		if (stopping || dev.exitCode !== null) return null;
		const minute = Math.floor(Date.now() / 60_000) * 60_000;
		let r;
		try {
			r = await fetch(tickUrl(minute));
		} catch {
			await new Promise((resolve) => setTimeout(resolve, 500));
			continue;
		}
		if (!r.ok) await tickFailed(minute, r);
		return minute;
	}
	return null;
}
const first = await firstTick();
const ready = first !== null;
if (!stopping && dev.exitCode === null) {
	// Each minute after the first tick's, counted from it: its request can run past the minute
	// boundary (the Worker's first request starts it up), and the clock's next minute then skipped one.
	// Not given up when the Worker never answered the first: from the clock's next minute, then.
	tickEachMinute(first ?? Math.floor(Date.now() / 60_000) * 60_000, {
		tick: tickAt,
		running: () => !stopping && dev.exitCode === null,
		skipped: (from, to) => console.log(`[drover] not ticked ${new Date(from).toISOString()} to ${new Date(to).toISOString()}: this machine was asleep (Cloudflare fires no tick while a Worker is down); the agents' catch-up rules decide from now`),
	});
	// Tell the newcomer what to do.
	if (ready) {
		console.log(`
drover is running at ${base}
  model:  ${modelLine({ apiKey, baseUrl: vars.ANTHROPIC_BASE_URL, allowed: vars.ANTHROPIC_ALLOWED_BASE_URLS, emulator: `http://127.0.0.1:${emulatorPort}` })}
  token:  ${token ? "the local admin token, API_TOKENS in .dev.vars (not printed: terminals keep scrollback and logs)" : "none: set API_TOKENS in .dev.vars"}${
			sunk.length > 0 ? `\n  posts:  ${sunk.join(", ")} (fleet.yaml; not in .dev.vars) go to the emulator's sink, printed here as [sink] lines` : ""
		}${
			secrets.webhooks.length > 0 ? `\n  hooks:  POST ${base}/v1/hooks/<agent> is signed with its webhook secret (${secrets.webhooks.join(", ")}) from .dev.vars: see README, HTTP API` : ""
		}
  try:    export DROVER_URL=${base} DROVER_TOKEN="$(sed -n 's/^API_TOKENS=[^:]*:[^:]*://p' .dev.vars | cut -d, -f1)"
          npx drover status
          curl -H "Authorization: Bearer $DROVER_TOKEN" ${base}/v1/jobs
          curl ${base}/healthz
          ${base}/openapi.json  (the API, as OpenAPI)
  ticks:  the scheduler ticks every minute, as the deployed cron trigger does
`);
	}
}
