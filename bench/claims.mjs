// Claim fan-out: how long one cron tick takes to claim the due occurrences of N agents that are all
// due in the same minute, and that a duplicate tick claims nothing.
//
// For each N, on a fresh local Worker (workerd via Miniflare, fresh persist directory):
//   set-up   create N agents through POST /v1/agents (16 in flight), each with a 1-minute interval
//   tick     scheduled() at a minute boundary T: runTick → 16 shards → N AgentDO.tick calls; timed
//            end to end, then GET /v1/status gives the heartbeat (agents_called, claimed, skipped)
//   jobs     each claim is a pending job that the agent's alarm starts at once: it runs against the
//            local Messages API emulator and is indexed in D1. We wait until every job is final, so
//            the next ticks are timed on a quiet Worker (and report how long that took)
//   dup      scheduled() again at T: must add no claim (heartbeat, then the D1 job count)
//   next     scheduled() at T + 1 min: the steady-state tick, every agent claims its next slot
// Goal: N = 10,000 claimed in ≤ 10 s locally, time per agent flat from 1,000 to 10,000 (ratio ≈ 1),
// duplicate tick adds 0.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { bundle, mapLimit, openFilesLimit, ROOT, startEmulator, startLocalWorker, workerdOpenFiles } from "./lib/local-worker.mjs";

export const title = "claim fan-out: one cron tick claiming N due agents, then a duplicate and a next-minute tick";
export const usage = `    --full            also run N = 10,000 (see bench/README.md for how long it takes)
    --sizes=100,1000  the N to run (overrides --full)
    --concurrency=16  agent creations in flight
    --keep            keep the temp directory (bundle, DO/D1/R2 state) for inspection
`;

const DEFAULT_SIZES = [100, 1_000];
const FULL_SIZES = [100, 1_000, 10_000];
const GOAL_SECONDS = 10;
const GOAL_N = 10_000;
const MINUTE = 60_000;
/** Running resources, for the signal handler. */
const running = { worker: null, emulator: null };

export async function run(argv) {
	const { values } = parseArgs({
		args: argv,
		options: {
			full: { type: "boolean", default: false },
			sizes: { type: "string" },
			concurrency: { type: "string", default: "16" },
			keep: { type: "boolean", default: false },
		},
	});
	const sizes = values.sizes ? values.sizes.split(",").map((s) => Number(s.replace(/_/g, ""))) : values.full ? FULL_SIZES : DEFAULT_SIZES;
	if (sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--sizes must be positive integers, got ${values.sizes}`);
	const concurrency = Number(values.concurrency);

	const machine = machineInfo();
	console.log(`machine: ${machine.cpus} × ${machine.cpu_model}, ${machine.memory_gb} GB, node ${machine.node}, workerd ${machine.workerd}`);
	console.log(`sizes: ${sizes.join(", ")}${values.full || values.sizes ? "" : " (pass --full for 10,000)"}`);
	// workerd holds 3 files per loaded agent (see openFilesLimit): say so when N could outgrow it.
	const fileLimit = openFilesLimit();
	if (fileLimit !== null && 3 * Math.max(...sizes) > fileLimit) {
		console.log(`note: open-files limit ${fileLimit}; workerd needs 3 per agent loaded at once, so a large N can run out`);
	}
	console.log();

	const tmp = mkdtempSync(path.join(os.tmpdir(), "drover-bench-claims-"));
	// Ctrl-C mid-run: stop workerd and the emulator and remove the temp directory, leaving nothing behind.
	let stopping = false;
	const interrupted = async (signal) => {
		if (stopping) return; // npm forwards the terminal's signal too: the first one cleans up
		stopping = true;
		console.error(`\n${signal}: stopping the local Worker`);
		const stops = [running.worker?.dispose(), running.emulator?.stop()];
		await Promise.race([Promise.allSettled(stops), new Promise((r) => setTimeout(r, 5000))]);
		if (!values.keep) rmSync(tmp, { recursive: true, force: true });
		process.exit(130);
	};
	process.on("SIGINT", interrupted).on("SIGTERM", interrupted);
	const results = [];
	try {
		const t0 = performance.now();
		const scriptPath = bundle(path.join(tmp, "bundle"));
		console.log(`bundled the Worker (wrangler deploy --dry-run) in ${secs(performance.now() - t0)} s`);
		running.emulator = await startEmulator();
		console.log(`Messages API emulator at ${running.emulator.url}`);
		for (const n of sizes) {
			const options = { scriptPath, stateDir: path.join(tmp, `state-${n}`), concurrency, modelURL: running.emulator.url };
			results.push(await runSize(n, options));
		}
	} finally {
		await running.emulator?.stop();
		if (values.keep) console.log(`kept ${tmp}`);
		else rmSync(tmp, { recursive: true, force: true });
	}

	const report = summarize(results);
	printTable(results, report);
	const out = path.join(ROOT, "bench", "results", "claims.json");
	mkdirSync(path.dirname(out), { recursive: true });
	const doc = { benchmark: "claims", at: new Date().toISOString(), machine: { ...machine, open_files_limit: fileLimit }, concurrency, results, ...report };
	writeFileSync(out, `${JSON.stringify(doc, null, "\t")}\n`);
	console.log(`\nwrote ${path.relative(process.cwd(), out)}`);
	if (report.problems.length > 0) process.exitCode = 1;
}

async function runSize(n, { scriptPath, stateDir, concurrency, modelURL }) {
	console.log(`\n-- N = ${n.toLocaleString("en")}`);
	const logs = logCounter();
	const token = `bench_${crypto.randomUUID().replaceAll("-", "")}`;
	let t = performance.now();
	const w = await startLocalWorker({
		scriptPath,
		persistDir: stateDir,
		secrets: {
			API_TOKENS: `bench:admin:${token}`,
			// No key and a loopback base URL: the Worker's emulator mode (as `npm start` without a key).
			// A key would be refused for a non-Anthropic host (agents auto-pause), and a real host is
			// never what a benchmark should call.
			ANTHROPIC_API_KEY: "",
			ANTHROPIC_BASE_URL: modelURL,
		},
		onLog: logs.onLog,
	});
	running.worker = w;
	const openFiles = workerdOpenFiles() ?? (() => null);
	const startup_s = secs(performance.now() - t);
	try {
		// Set-up: N agents through the public API, bounded concurrency.
		const names = Array.from({ length: n }, (_, i) => `bench-${String(i + 1).padStart(5, "0")}`);
		t = performance.now();
		let done = 0;
		await mapLimit(names, concurrency, async (name) => {
			const res = await w.fetch("/v1/agents", {
				method: "POST",
				headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
				body: JSON.stringify(agentBody(name)),
			});
			if (res.status !== 201) throw new Error(`POST /v1/agents ${name}: ${res.status} ${await res.text()}`);
			await res.arrayBuffer();
			if (++done % 500 === 0) progress(`created ${done}/${n} (${secs(performance.now() - t)} s)`);
		});
		const create_s = secs(performance.now() - t);
		progress(`created ${n} agents in ${create_s} s (${Math.round(n / create_s)}/s)\n`);
		const registered = (await status(w, token)).agents.api;
		if (registered !== n) throw new Error(`GET /v1/status counts ${registered} API agents, expected ${n}`);

		await coldAgents(openFiles);
		const loadBefore = round(os.loadavg()[0], 2);
		const T = tickTime();
		const tick = await timedTick(w, T, logs, token, openFiles);
		console.log(`tick     T=${new Date(T).toISOString()}  ${fmtTick(tick)}`);
		if (tick.skipped > 0) tick.skip_reason = await skipReason(w, token, names[0]);
		const jobs1 = await waitForJobs(w, token, tick.claimed, n);
		console.log(`jobs     ${fmtJobs(jobs1)}`);

		const dup = await timedTick(w, T, logs, token, openFiles);
		const afterDup = await status(w, token);
		dup.jobs_added = totalJobs(afterDup) - jobs1.total;
		console.log(`dup      T again  ${fmtTick(dup)}  jobs in D1 ${totalJobs(afterDup)} (added ${dup.jobs_added})`);

		await coldAgents(openFiles);
		const next = await timedTick(w, T + MINUTE, logs, token, openFiles);
		console.log(`next     T+1min   ${fmtTick(next)}`);
		if (next.skipped > 0) next.skip_reason = await skipReason(w, token, names[0]);
		const jobs2 = await waitForJobs(w, token, tick.claimed + next.claimed, n);
		console.log(`jobs     ${fmtJobs(jobs2)}`);

		return {
			n,
			// Other work on the machine skews the figures: the 1-minute load average before and after.
			load: { before: loadBefore, after: round(os.loadavg()[0], 2) },
			startup_s,
			create_s,
			creates_per_s: Math.round(n / create_s),
			scheduled_time: new Date(T).toISOString(),
			tick,
			jobs_after_tick: jobs1,
			dup,
			next,
			jobs_after_next: jobs2,
			logs: logs.summary(),
		};
	} catch (err) {
		// The Worker's own error lines say more than a 500 does.
		for (const line of logs.summary().errors) console.error(`worker error: ${line.slice(0, 2000)}`);
		throw err;
	} finally {
		running.worker = null;
		await w.dispose();
	}
}

/** The bench agent: a prompt and one schedule due every minute, everything else default. */
function agentBody(name) {
	return { name, prompt: "x", schedules: { "every-minute": { interval: "1m" } } };
}

/**
 * The first minute boundary at least a minute from now. fleet.yaml's scheduled agents fire on
 * quarter hours (site-watch every 15m, daily-digest at 09:00 Berlin), so T and T + 1 min avoid
 * them and every claim counted is a bench agent's. T lies ahead of the wall clock on purpose: the
 * Worker claims by the tick's scheduledTime, and an agent first seen by a tick fires the slot at T.
 */
function tickTime() {
	let T = Math.ceil((Date.now() + MINUTE) / MINUTE) * MINUTE;
	while (T % (15 * MINUTE) === 0 || (T + MINUTE) % (15 * MINUTE) === 0) T += MINUTE;
	return T;
}

async function timedTick(w, T, logs, token, openFiles) {
	const before = await status(w, token);
	const errorsBefore = logs.errors();
	let peakFiles = openFiles();
	const sampler = setInterval(() => (peakFiles = Math.max(peakFiles ?? 0, openFiles() ?? 0)), 250);
	const t = performance.now();
	const result = await w.tick(T).finally(() => clearInterval(sampler));
	const wall_s = secs(performance.now() - t);
	if (result.status !== 200) throw new Error(`scheduled() at ${new Date(T).toISOString()} failed: ${JSON.stringify(result)}`);
	// The heartbeat row is rewritten by every tick; a new last_tick_at tells this tick's row apart.
	const { scheduler: hb } = await status(w, token);
	if (hb.last_tick_at === null || hb.last_tick_at === before.scheduler.last_tick_at) {
		throw new Error(`tick at ${new Date(T).toISOString()} wrote no heartbeat (scheduled: ${JSON.stringify(result)})`);
	}
	return {
		wall_s,
		scheduled_outcome: result.outcome,
		outcome: hb.outcome,
		agents_called: hb.agents_called,
		claimed: hb.claimed,
		skipped: hb.skipped,
		claims_per_s: hb.claimed > 0 ? Math.round(hb.claimed / wall_s) : 0,
		ms_per_agent: hb.agents_called > 0 ? round((wall_s * 1000) / hb.agents_called, 3) : null,
		error: hb.error,
		worker_errors: logs.errors() - errorsBefore,
		workerd_peak_open_files: peakFiles,
	};
}

/**
 * Waits until workerd has evicted the agents that set-up (or the previous tick's jobs) loaded, so
 * a tick wakes cold agents, as at a real cron minute. workerd evicts an idle object about 10 s after
 * its last use; without /proc to watch, 15 s is waited.
 */
async function coldAgents(openFiles) {
	const t = performance.now();
	if (openFiles() === null) return new Promise((r) => setTimeout(r, 15_000));
	// A handful of files stay: D1, R2, the cache, the shards, sockets.
	while ((openFiles() ?? 0) > 200 && performance.now() - t < 60_000) await new Promise((r) => setTimeout(r, 500));
}

/** Why a tick skipped instead of claiming: the newest entry of an agent's occurrence ledger. */
async function skipReason(w, token, agent) {
	const res = await w.fetch(`/v1/agents/${agent}/runs?limit=1`, { headers: { authorization: `Bearer ${token}` } });
	const reason = (await res.json()).runs?.[0]?.skip_reason ?? "unknown";
	console.log(`         skipped, e.g. ${agent}: ${reason}`);
	return reason;
}

/** GET /v1/status: the heartbeat, D1's jobs by status and agent counts, through the public API. */
async function status(w, token) {
	const res = await w.fetch("/v1/status", { headers: { authorization: `Bearer ${token}` } });
	if (res.status !== 200) throw new Error(`GET /v1/status: ${res.status} ${await res.text()}`);
	return res.json();
}

const FINAL = new Set(["completed", "failed", "cancelled", "indeterminate"]);
const totalJobs = (st) => Object.values(st.jobs).reduce((a, b) => a + b, 0);

/**
 * Waits until the D1 job index holds `expected` jobs, all final: each claimed job starts from its
 * agent's alarm, runs against the emulator and reaches D1 through the agent's outbox. Polls the
 * public API; gives up after a generous bound that grows with N.
 */
async function waitForJobs(w, token, expected, n) {
	const t = performance.now();
	const limit = Math.max(3 * MINUTE, n * 60);
	for (;;) {
		const { jobs } = await status(w, token);
		const total = Object.values(jobs).reduce((a, b) => a + b, 0);
		const open = Object.entries(jobs).reduce((a, [k, v]) => a + (FINAL.has(k) ? 0 : v), 0);
		const settled = total >= expected && open === 0;
		if (settled || performance.now() - t > limit) return { s: secs(performance.now() - t), settled, total, by_status: jobs };
		await new Promise((r) => setTimeout(r, 250));
	}
}

/** Counts the Worker's log lines by event; a 10,000-agent tick logs 10,000+ lines. */
function logCounter() {
	const byEvent = {};
	const errorLines = [];
	return {
		onLog({ level, message }) {
			let event = "(unstructured)";
			try {
				const parsed = JSON.parse(message);
				event = parsed.event ?? event;
				level = parsed.level ?? level;
			} catch {}
			byEvent[event] = (byEvent[event] ?? 0) + 1;
			if (level === "error") errorLines.push(message);
		},
		errors: () => errorLines.length,
		summary: () => ({ by_event: byEvent, errors: errorLines.slice(0, 5) }),
	};
}

function summarize(results) {
	const problems = [];
	for (const r of results) {
		if (r.tick.outcome !== "ok") problems.push(`N=${r.n}: first tick outcome ${r.tick.outcome} (${r.tick.error})`);
		if (r.tick.claimed !== r.n) problems.push(`N=${r.n}: first tick claimed ${r.tick.claimed}, expected ${r.n}`);
		if (r.dup.claimed !== 0 || r.dup.jobs_added !== 0) problems.push(`N=${r.n}: duplicate tick claimed ${r.dup.claimed}, added ${r.dup.jobs_added} jobs`);
		if (r.next.claimed !== r.n) problems.push(`N=${r.n}: next-minute tick claimed ${r.next.claimed}, expected ${r.n}`);
		const j = r.jobs_after_next;
		if (j.total !== 2 * r.n || !j.settled) problems.push(`N=${r.n}: D1 job index holds ${j.total} jobs (${j.settled ? "all final" : "not all final"}), expected ${2 * r.n} final`);
		if (r.logs.errors.length > 0) problems.push(`N=${r.n}: the Worker logged errors, e.g. ${r.logs.errors[0]}`);
	}
	const at = (n) => results.find((r) => r.n === n);
	const perAgent = (r, k) => r[k].wall_s / r[k].agents_called;
	const ratio = (k) => (at(1_000) && at(10_000) ? round(perAgent(at(10_000), k) / perAgent(at(1_000), k), 2) : null);
	const big = at(GOAL_N);
	return {
		growth_1k_to_10k: { first_tick: ratio("tick"), next_tick: ratio("next") },
		goal: {
			text: `${GOAL_N.toLocaleString("en")} agents claimed in ≤ ${GOAL_SECONDS} s locally, time per agent flat from 1,000 to 10,000, duplicate tick adds 0`,
			within_10s: big ? big.tick.wall_s <= GOAL_SECONDS : null,
			duplicate_adds_none: results.every((r) => r.dup.claimed === 0 && r.dup.jobs_added === 0),
		},
		problems,
	};
}

function printTable(results, report) {
	const rows = results.map((r) => [
		r.n.toLocaleString("en"),
		`${r.create_s} s (${r.creates_per_s}/s)`,
		`${r.tick.wall_s} s`,
		r.tick.claimed.toLocaleString("en"),
		r.tick.claims_per_s.toLocaleString("en"),
		r.tick.agents_called.toLocaleString("en"),
		`${r.tick.ms_per_agent} ms`,
		`${r.jobs_after_tick.s} s`,
		`${r.dup.wall_s} s / +${r.dup.claimed} (called ${r.dup.agents_called})`,
		`${r.next.wall_s} s / ${r.next.claimed.toLocaleString("en")} (${r.next.claims_per_s.toLocaleString("en")}/s)`,
	]);
	const head = ["N", "create (set-up)", "tick", "claimed", "claims/s", "agents_called", "per agent", "jobs done", "dup tick / added", "next-min tick / claimed"];
	const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
	const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(" | ")} |`;
	console.log(`\n${line(head)}\n| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`);
	for (const r of rows) console.log(line(r));
	console.log(`\n1-min load average before each first tick: ${results.map((r) => `N=${r.n} ${r.load.before}`).join(", ")}`);
	console.log("agents_called includes fleet.yaml's 3 agents on the first tick (new to their shards); claims are bench agents only.");
	console.log("jobs done: from the end of the tick until every claimed job ran (emulator) and is final in the D1 index.");
	const g = report.growth_1k_to_10k;
	if (g.first_tick !== null) console.log(`time per agent, N=10,000 vs N=1,000: first tick ×${g.first_tick}, next-minute tick ×${g.next_tick} (linear ≈ 1)`);
	console.log(`goal: ${report.goal.text}`);
	console.log(
		`  10,000 within ${GOAL_SECONDS} s: ${report.goal.within_10s === null ? "not run (pass --full)" : report.goal.within_10s ? "yes" : "NO"}; duplicate tick adds none: ${report.goal.duplicate_adds_none ? "yes" : "NO"}`,
	);
	for (const p of report.problems) console.log(`  problem: ${p}`);
}

function machineInfo() {
	const cpus = os.cpus();
	return {
		cpus: os.availableParallelism(),
		cpu_model: cpus[0]?.model ?? "unknown",
		memory_gb: Math.round(os.totalmem() / 2 ** 30),
		platform: `${os.platform()} ${os.release()}`,
		node: process.version,
		wrangler: pkgVersion("wrangler"),
		miniflare: pkgVersion("miniflare"),
		workerd: workerdVersion(),
	};
}

function pkgVersion(name) {
	try {
		return JSON.parse(readFileSync(path.join(ROOT, "node_modules", name, "package.json"), "utf8")).version;
	} catch {
		return "unknown";
	}
}

/** The workerd Miniflare runs: miniflare's own dependency when it has one. */
function workerdVersion() {
	for (const dir of [path.join(ROOT, "node_modules", "miniflare", "node_modules", "workerd"), path.join(ROOT, "node_modules", "workerd")]) {
		try {
			return JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")).version;
		} catch {}
	}
	try {
		return execFileSync(path.join(ROOT, "node_modules", ".bin", "workerd"), ["--version"], { encoding: "utf8" }).trim();
	} catch {
		return "unknown";
	}
}

function progress(text) {
	if (process.stdout.isTTY) process.stdout.write(`\r${text}`);
	else process.stdout.write(`${text.trimEnd()}\n`);
}

const fmtJobs = (j) =>
	`${j.total} in D1 (${Object.entries(j.by_status).map(([k, v]) => `${k} ${v}`).join(", ")}) ${j.settled ? "all final" : "NOT all final"} ${j.s} s after the tick`;
const round = (x, digits) => Math.round(x * 10 ** digits) / 10 ** digits;
const secs = (ms) => round(ms / 1000, 2);
const fmtTick = (k) =>
	`${k.wall_s} s  called ${k.agents_called}  claimed ${k.claimed}  skipped ${k.skipped}  (${k.claims_per_s}/s, ${k.ms_per_agent} ms/agent)  outcome ${k.outcome}`;
