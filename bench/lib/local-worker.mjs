// The real drover Worker, bundled as `wrangler deploy` would ship it and run in workerd through
// Miniflare, with its Durable Objects, D1 and R2 persisted to a throwaway directory. Benchmarks
// drive it over its public HTTP API and its `scheduled()` handler; nothing here reaches into a
// Durable Object.
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions, unstable_readConfig, unstable_splitSqlQuery } from "wrangler";

export const ROOT = path.resolve(import.meta.dirname, "..", "..");
const CONFIG = path.join(ROOT, "wrangler.toml");

// No network here but the npm registry: keep wrangler and Miniflare from phoning home.
process.env.WRANGLER_SEND_METRICS = "false";
process.env.WRANGLER_SEND_ERROR_REPORTS = "false";
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
// unstable_getMiniflareWorkerOptions announces the developer's .dev.vars; its values are replaced
// below (see `bindings`), so the announcement is noise.
process.env.WRANGLER_LOG ??= "warn";

/**
 * Bundles the Worker exactly as `wrangler deploy` does (same esbuild settings, same module rules:
 * fleet.yaml becomes a Data module beside index.js). Run with this Node, not whatever `node` is on
 * PATH: wrangler refuses Node < 22.12. `readableNames` builds it unminified, for profiles.
 */
export function bundle(outdir, { readableNames = false } = {}) {
	const wranglerBin = path.join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
	// The shipped bundle is minified; a profile reads function names, so it asks for them kept.
	const args = ["deploy", "--dry-run", "--outdir", outdir, ...(readableNames ? ["--minify=false"] : [])];
	const r = spawnSync(process.execPath, [wranglerBin, ...args], {
		cwd: ROOT,
		env: process.env,
		encoding: "utf8",
	});
	if (r.status !== 0) throw new Error(`wrangler deploy --dry-run failed:\n${r.stdout}\n${r.stderr}`);
	return path.join(outdir, "index.js");
}

/**
 * Starts the bundled Worker in workerd. `secrets` become the Worker's secrets (nothing is read from
 * .dev.vars). Worker console output arrives as structured logs: `onLog` sees every line, and without
 * it they are dropped (a tick over 10,000 agents logs 10,000+ lines; printing them would be the cost
 * measured).
 */
export async function startLocalWorker({ scriptPath, persistDir, secrets, onLog, inspectorPort, v8Flags }) {
	// The same binding translation `wrangler dev` uses, so a binding added to wrangler.toml is here too.
	const { workerOptions } = unstable_getMiniflareWorkerOptions(CONFIG);
	const config = unstable_readConfig({ config: CONFIG });
	const before = new Set(workerdPids());
	// Miniflare hands this variable to the workerd it starts (e.g. V8's perf map for `--perf`); only
	// this workerd gets it.
	if (v8Flags) process.env.MINIFLARE_WORKERD_V8_FLAGS = v8Flags;
	// Miniflare 5 has a new options shape; wrangler's translation produces the v4 one, which
	// wrangler itself converts with convertV4MiniflareOptions before starting Miniflare. So do we.
	const mf = new Miniflare(
		convertV4MiniflareOptions({
			workers: [
				{
					...workerOptions,
					name: "drover",
					modulesRules: undefined,
					...bundleModules(scriptPath, workerOptions.modulesRules),
					// Only [vars] and the bench's own secrets: never a developer's local token or API key.
					bindings: { ...config.vars, ...secrets },
					// The cron trigger is fired by hand (`tick`): Miniflare never fires crons on its own.
					cronTriggers: [],
				},
			],
			// Serves /cdn-cgi/local/scheduled (what `wrangler dev --test-scheduled` turns on).
			unsafeTriggerHandlers: true,
			resourcePersistencePath: persistDir,
			handleStructuredLogs: onLog ?? (() => {}),
			// For CPU profiles (overhead --profile): the V8 inspector of the Worker's isolate.
			...(inspectorPort ? { inspectorPort } : {}),
		}),
	);
	try {
		await mf.ready;
	} finally {
		if (v8Flags) delete process.env.MINIFLARE_WORKERD_V8_FLAGS;
	}
	const pid = workerdPids().find((p) => !before.has(p)) ?? null;
	// Through Miniflare's proxy, which is safe only while the Worker is idle (see `tick`).
	await applyMigrations(await mf.getD1Database("DB"));
	const fetch = (pathname, init) => mf.dispatchFetch(new URL(pathname, "http://drover.local"), init);
	return {
		/** Miniflare itself; its get*() proxies block Node (see `tick`), so use them only while idle. */
		mf,
		/** The V8 inspector's port when one was asked for (bench/lib/profile.mjs). */
		inspectorPort,
		/** The pid of the workerd running it, or null where /proc cannot tell. */
		pid,
		/** A request to the Worker's fetch handler, e.g. fetch("/v1/status", { headers }). */
		fetch,
		/**
		 * One cron tick, end to end: Miniflare's /cdn-cgi/local/scheduled answers once `scheduled()`
		 * (runTick, every shard) has returned. Not `(await mf.getWorker()).scheduled()`: Miniflare's
		 * Node-side proxy blocks Node's main thread until the call returns, so Node stops reading
		 * workerd's stdout; a tick over a few hundred agents logs more than the pipe holds, workerd
		 * blocks writing its logs and the tick never finishes. The same goes for any proxy call
		 * (getD1Database, …) while the Worker is busy logging: read state over HTTP instead.
		 */
		async tick(scheduledTime) {
			const res = await fetch(`/cdn-cgi/local/scheduled?cron=${encodeURIComponent("* * * * *")}&time=${scheduledTime}&format=json`);
			return { status: res.status, ...(await res.json()) };
		},
		dispose: () => mf.dispose(),
	};
}

/** Pids of the workerd processes this process started (Miniflare spawns workerd as a direct child). */
export function workerdPids() {
	const pids = [];
	for (const entry of readdirSync("/proc")) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
			// "pid (comm) state ppid ...": comm may hold spaces, so read past the last ")".
			const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
			const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
			if (comm === "workerd" && ppid === process.pid) pids.push(Number(entry));
		} catch {}
	}
	return pids;
}

/**
 * workerd keeps each loaded SQLite-backed Durable Object's database open as three files (.sqlite,
 * -wal, -shm) and evicts an object about 10 s after its last use; it inherits this process's
 * open-files limit, which an unprivileged process cannot raise past the hard limit. A tick that
 * loads more objects than the limit holds fails those agents' calls (SQLite cannot open) and can
 * bring workerd down. These two report the limit and how many files workerd has open now.
 */
export function openFilesLimit() {
	try {
		const line = readFileSync("/proc/self/limits", "utf8")
			.split("\n")
			.find((l) => l.startsWith("Max open files"));
		const soft = Number(line?.split(/\s{2,}/)[1]);
		return Number.isFinite(soft) ? soft : null;
	} catch {
		return null;
	}
}

/** A reader of how many files process `pid` has open now (Linux /proc); null where unknown. */
export function openFilesOf(pid) {
	if (pid === null) return null;
	return () => {
		try {
			return readdirSync(`/proc/${pid}/fd`).length;
		} catch {
			return null;
		}
	};
}

/**
 * The bundle's files as an explicit module list: v5 cannot take `modulesRules`, so each file beside
 * index.js gets its type from wrangler.toml's rules here (fleet.yaml → Data).
 */
export function bundleModules(scriptPath, rules) {
	const dir = path.dirname(scriptPath);
	const modules = [{ type: "ESModule", path: scriptPath }];
	for (const file of readdirSync(dir)) {
		if (file === path.basename(scriptPath) || file.endsWith(".map") || file === "README.md") continue;
		const rule = rules.find((r) => r.include.some((glob) => path.matchesGlob(file, glob)));
		if (!rule) throw new Error(`bundle file ${file} matches no module rule in wrangler.toml`);
		modules.push({ type: rule.type, path: path.join(dir, file) });
	}
	return { modulesRoot: dir, modules };
}

/** migrations/*.sql in order, through the D1 binding (what `wrangler d1 migrations apply --local` does). */
async function applyMigrations(db) {
	const dir = path.join(ROOT, "migrations");
	// Recorded as `wrangler d1 migrations apply` records them: /healthz reads the record (its `d1`).
	await db.prepare("CREATE TABLE IF NOT EXISTS d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)").run();
	for (const file of readdirSync(dir).filter((f) => f.endsWith(".sql")).sort()) {
		const statements = unstable_splitSqlQuery(readFileSync(path.join(dir, file), "utf8"));
		await db.batch([...statements.map((s) => db.prepare(s)), db.prepare("INSERT INTO d1_migrations (name) VALUES (?)").bind(file)]);
	}
}

/** Runs `fn(item)` over `items` with at most `limit` in flight; resolves to the results in order. */
export async function mapLimit(items, limit, fn) {
	const results = new Array(items.length);
	let next = 0;
	const lane = async () => {
		for (let i = next++; i < items.length; i = next++) results[i] = await fn(items[i], i);
	};
	await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
	return results;
}

/**
 * The project's Messages API emulator (emulator/server.ts) as a child process on a free port. With
 * no ANTHROPIC_API_KEY and a loopback ANTHROPIC_BASE_URL the Worker talks to it keyless (the key
 * guard never sends a key to a non-Anthropic host), so jobs that benchmarks cause run to completion
 * locally and nothing leaves the machine.
 */
export async function startEmulator() {
	const child = spawn(process.execPath, [path.join(ROOT, "emulator", "server.ts"), "--port", "0"], {
		cwd: ROOT,
		stdio: ["ignore", "pipe", "inherit"],
	});
	const url = await new Promise((resolve, reject) => {
		let out = "";
		child.stdout.on("data", (chunk) => {
			out += chunk;
			const m = /on (http:\/\/\S+)/.exec(out);
			if (m) resolve(m[1]);
		});
		child.once("exit", (code) => reject(new Error(`emulator exited (${code}) before listening: ${out}`)));
	});
	child.stdout.resume();
	return {
		url,
		stop: () =>
			new Promise((resolve) => {
				if (child.exitCode !== null) return resolve();
				child.once("exit", resolve);
				child.kill("SIGTERM");
			}),
	};
}
