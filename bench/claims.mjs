// Claim fan-out: how long one cron tick takes to claim the due occurrences of N agents that are all
// due in the same minute, and that a duplicate tick claims nothing.
//
// For each N, on a fresh local Worker (workerd via Miniflare, fresh persist directory):
//   set-up   create N agents through POST /v1/agents (16 in flight), each with a 1-minute interval
//   tick     scheduled() at a minute boundary T: runTick → 16 shards → N AgentDO.tick calls; timed
//            end to end, then the D1 heartbeat gives agents_called / claimed
//   index    the claimed jobs reach the D1 job index through each agent's outbox alarm (after the
//            tick, in the background); we wait for it so the next ticks are timed on a quiet Worker
//   dup      scheduled() again at T: must add no claim (heartbeat and D1 job count)
//   next     scheduled() at T + 1 min: the steady-state tick, every agent claims its next slot
// Goal: N = 10,000 claimed in ≤ 10 s locally, time per agent flat from 1,000 to 10,000 (ratio ≈ 1),
// duplicate tick adds 0.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { bundle, mapLimit, ROOT, startLocalWorker } from "./lib/local-worker.mjs";

export const title = "claim fan-out: one cron tick claiming N due agents, then a duplicate and a next-minute tick";
export const usage = `    --full            also run N = 10,000 (about 5-10 minutes on 2 cores; see bench/README.md)
    --sizes=100,1000  the N to run (overrides --full)
    --concurrency=16  agent creations in flight
    --keep            keep the temp directory (bundle, DO/D1 state) for inspection
`;

const DEFAULT_SIZES = [100, 1_000];
const FULL_SIZES = [100, 1_000, 10_000];
const GOAL_SECONDS = 10;
const GOAL_N = 10_000;
const MINUTE = 60_000;
const INDEX_WAIT_MS = 3 * MINUTE;
/** The running local Worker, for the signal handler. */
let current = null;

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
	console.log(`sizes: ${sizes.join(", ")}${values.full || values.sizes ? "" : " (pass --full for 10,000)"}\n`);

	const tmp = mkdtempSync(path.join(os.tmpdir(), "drover-bench-claims-"));
	// Ctrl-C mid-run: stop workerd and remove the temp directory rather than leave them behind.
	let stopping = false;
	const interrupted = async (signal) => {
		if (stopping) return; // npm forwards the terminal's signal too: the first one cleans up
		stopping = true;
		console.error(`\n${signal}: stopping the local Worker`);
		await Promise.race([current?.dispose(), new Promise((r) => setTimeout(r, 5000))]).catch(() => {});
		if (!values.keep) rmSync(tmp, { recursive: true, force: true });
		process.exit(130);
	};
	process.on("SIGINT", interrupted).on("SIGTERM", interrupted);
	const results = [];
	try {
		const t0 = performance.now();
		const scriptPath = bundle(path.join(tmp, "bundle"));
		console.log(`bundled the Worker (wrangler deploy --dry-run) in ${secs(performance.now() - t0)} s`);
		for (const n of sizes) results.push(await runSize(n, { scriptPath, stateDir: path.join(tmp, `state-${n}`), concurrency }));
	} finally {
		if (values.keep) console.log(`kept ${tmp}`);
		else rmSync(tmp, { recursive: true, force: true });
	}

	const report = summarize(results);
	printTable(results, report);
	const out = path.join(ROOT, "bench", "results", "claims.json");
	mkdirSync(path.dirname(out), { recursive: true });
	writeFileSync(out, `${JSON.stringify({ benchmark: "claims", at: new Date().toISOString(), machine, concurrency, results, ...report }, null, "\t")}\n`);
	console.log(`\nwrote ${path.relative(process.cwd(), out)}`);
	if (report.problems.length > 0) process.exitCode = 1;
}

async function runSize(n, { scriptPath, stateDir, concurrency }) {
	console.log(`\n-- N = ${n.toLocaleString("en")}`);
	const logs = logCounter();
	const token = `bench_${crypto.randomUUID().replaceAll("-", "")}`;
	let t = performance.now();
	const w = await startLocalWorker({
		scriptPath,
		persistDir: stateDir,
		secrets: {
			API_TOKENS: `bench:admin:${token}`,
			// Set so agents are not auto-paused for a missing key; no model call happens while claiming.
			ANTHROPIC_API_KEY: "sk-ant-bench-not-used",
		},
		onLog: logs.onLog,
	});
	current = w;
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
			if (++done % 100 === 0) progress(`created ${done}/${n} (${secs(performance.now() - t)} s)`);
		});
		const create_s = secs(performance.now() - t);
		progress(`created ${n} agents in ${create_s} s (${Math.round(n / create_s)}/s)\n`);
		const registered = (await status(w, token)).agents.api;
		if (registered !== n) throw new Error(`GET /v1/status counts ${registered} API agents, expected ${n}`);

		const T = tickTime();
		const tick = await timedTick(w, T, logs, token);
		console.log(`tick     T=${new Date(T).toISOString()}  ${fmtTick(tick)}`);
		if (tick.skipped > 0) tick.skip_reason = await skipReason(w, token, names[0]);
		const index1 = await waitForIndex(w, token, tick.claimed);
		console.log(`index    ${index1.jobs} jobs in D1 ${index1.s} s after the tick`);

		const dup = await timedTick(w, T, logs, token);
		const afterDup = await jobCount(w, token);
		console.log(`dup      T again  ${fmtTick(dup)}  D1 jobs ${afterDup} (added ${afterDup - index1.jobs})`);

		const next = await timedTick(w, T + MINUTE, logs, token);
		console.log(`next     T+1min   ${fmtTick(next)}`);
		if (next.skipped > 0) next.skip_reason = await skipReason(w, token, names[0]);
		const index2 = await waitForIndex(w, token, tick.claimed + next.claimed);
		console.log(`index    ${index2.jobs} jobs in D1 ${index2.s} s after the tick`);

		return {
			n,
			startup_s,
			create_s,
			creates_per_s: Math.round(n / create_s),
			scheduled_time: new Date(T).toISOString(),
			tick,
			index_catchup_s: index1.s,
			dup: { ...dup, jobs_added: afterDup - index1.jobs },
			next: { ...next, index_catchup_s: index2.s },
			jobs_in_index: index2.jobs,
			logs: logs.summary(),
		};
	} finally {
		current = null;
		await w.dispose();
	}
}

/** The bench agent: the brief's minimal agent, plus overlap "queue" (see below). */
function agentBody(name) {
	return {
		name,
		prompt: "x",
		schedules: { "every-minute": { interval: "1m" } },
		// Claimed jobs stay pending (nothing runs them in this bench). With the default overlap "skip"
		// and max_concurrent 1, the next-minute tick would then record a skip instead of a claim;
		// "queue" lets one run wait beyond capacity, so the next-minute tick claims like the first.
		overlap: "queue",
	};
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

async function timedTick(w, T, logs, token) {
	const before = await status(w, token);
	const errorsBefore = logs.errors();
	const t = performance.now();
	const result = await w.tick(T);
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
	};
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

async function jobCount(w, token) {
	const { jobs } = await status(w, token);
	return Object.values(jobs).reduce((a, b) => a + b, 0);
}

/** Jobs reach D1 from each agent's outbox alarm, asynchronously: poll until `expected` are there. */
async function waitForIndex(w, token, expected) {
	const t = performance.now();
	let jobs = await jobCount(w, token);
	while (jobs < expected && performance.now() - t < INDEX_WAIT_MS) {
		await new Promise((r) => setTimeout(r, 200));
		jobs = await jobCount(w, token);
	}
	return { jobs, s: secs(performance.now() - t), complete: jobs >= expected };
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
		if (r.jobs_in_index !== 2 * r.n) problems.push(`N=${r.n}: D1 job index holds ${r.jobs_in_index} jobs, expected ${2 * r.n}`);
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
		`${r.index_catchup_s} s`,
		`${r.dup.wall_s} s / +${r.dup.claimed} (called ${r.dup.agents_called})`,
		`${r.next.wall_s} s / ${r.next.claimed.toLocaleString("en")} (${r.next.claims_per_s.toLocaleString("en")}/s)`,
	]);
	const head = ["N", "create (set-up)", "tick", "claimed", "claims/s", "agents_called", "per agent", "D1 index", "dup tick / added", "next-min tick / claimed"];
	const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
	const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(" | ")} |`;
	console.log(`\n${line(head)}\n| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`);
	for (const r of rows) console.log(line(r));
	console.log("\nagents_called includes fleet.yaml's 3 agents on the first tick (new to their shards); claims are bench agents only.");
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

const round = (x, digits) => Math.round(x * 10 ** digits) / 10 ** digits;
const secs = (ms) => round(ms / 1000, 2);
const fmtTick = (k) =>
	`${k.wall_s} s  called ${k.agents_called}  claimed ${k.claimed}  skipped ${k.skipped}  (${k.claims_per_s}/s, ${k.ms_per_agent} ms/agent)  outcome ${k.outcome}`;
