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
//   floor    then, in a workerd of its own, the same fan-out with nothing but the claim: 16 shards
//            calling N cold objects that each write one ledger row and set an alarm; the same three
//            ticks timed, so drover's tick reads as a ratio to the least any design of this shape costs
//   split    workerd holds ~3 open files per loaded agent (~5 while its job runs) and the open-files
//            limit is per process: an N past it runs on P workerd processes (--processes, auto by
//            the limit), process p holding the agents of its share of the 16 shards, each with its own
//            state; every tick is sent to all of them at once and timed until the last answers. The
//            floor is split the same way
// Goal: N = 10,000 claimed in ≤ 10 s locally, time per agent flat from 1,000 to 10,000 (ratio ≈ 1),
// duplicate tick adds 0.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { FINAL, logCounter, machineInfo, printMachine, printTable as printRows, progress, round } from "./lib/common.mjs";
import { startFloorWorker } from "./lib/floor-worker.mjs";
import { perfUnavailable, printPerfSplit, removePerfMap, startPerf, V8_FLAGS } from "./lib/perf-split.mjs";
import { startProfile } from "./lib/profile.mjs";
import { bundle, mapLimit, openFilesLimit, openFilesOf, ROOT, startEmulator, startLocalWorker } from "./lib/local-worker.mjs";
import { SCHEDULER_SHARDS, shardOf } from "../src/scheduler/shards.ts";

export const title = "claim fan-out: one cron tick claiming N due agents, then a duplicate and a next-minute tick";
export const usage = `    --full            also run N = 10,000 (over several workerd where the open-files limit needs it; see bench/README.md)
    --sizes=100,1000  the N to run (overrides --full)
    --concurrency=16  agent creations in flight
    --processes=auto  workerd processes the 16 shards (and their agents) are split over; auto: 1, or as
                      many as the open-files limit needs (8 files an agent), e.g. 4 for 10,000 under 20,000
    --keep            keep the temp directory (bundle, DO/D1/R2 state) for inspection
    --profile         CPU-profile the Worker's isolate over each first and next-minute tick (bench/results/claims-<N>[-next].cpuprofile)
    --perf            split drover's workerd CPU over each first and next-minute tick by what spends it (Linux perf,
                      as root; sampling slows workerd, so read times from a run without it)
`;

const DEFAULT_SIZES = [100, 1_000];
const FULL_SIZES = [100, 1_000, 10_000];
const GOAL_SECONDS = 10;
const GOAL_N = 10_000;
const MINUTE = 60_000;
/**
 * Open files to allow per agent when splitting N over processes: ~3 an object loaded, more while
 * the claimed jobs run (sockets to the emulator, R2's files); 4,000 agents in one workerd already
 * ran out of 20,000 while their jobs ran, and 5,000 per process did at N = 10,000.
 */
const FILES_PER_AGENT = 8;
/** Running resources, for the signal handler: drover's workerd or the floor's, and the emulator. */
const running = { workers: [], emulator: null };

export async function run(argv) {
	const { values } = parseArgs({
		args: argv,
		options: {
			full: { type: "boolean", default: false },
			sizes: { type: "string" },
			concurrency: { type: "string", default: "16" },
			processes: { type: "string", default: "auto" },
			keep: { type: "boolean", default: false },
			profile: { type: "boolean", default: false },
			perf: { type: "boolean", default: false },
		},
	});
	const noPerf = values.perf ? perfUnavailable() : null;
	if (noPerf) throw new Error(`--perf: ${noPerf}`);
	const sizes = values.sizes ? values.sizes.split(",").map((s) => Number(s.replace(/_/g, ""))) : values.full ? FULL_SIZES : DEFAULT_SIZES;
	if (sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--sizes must be positive integers, got ${values.sizes}`);
	const concurrency = Number(values.concurrency);
	if (values.processes !== "auto" && !(Number.isInteger(Number(values.processes)) && Number(values.processes) >= 1 && Number(values.processes) <= SCHEDULER_SHARDS)) {
		throw new Error(`--processes must be auto or 1–${SCHEDULER_SHARDS}, got ${values.processes}`);
	}

	const machine = machineInfo();
	printMachine(machine);
	console.log(`sizes: ${sizes.join(", ")}${values.full || values.sizes ? "" : " (pass --full for 10,000)"}`);
	// workerd holds ~3 files per agent a tick loads and ~5 while its job runs (see openFilesLimit); the
	// limit is per process, so a size over it is split over several workerd, each with its shards.
	const fileLimit = openFilesLimit();
	const processesFor = (n) => (values.processes !== "auto" ? Number(values.processes) : fileLimit === null ? 1 : Math.min(SCHEDULER_SHARDS, Math.max(1, Math.ceil((FILES_PER_AGENT * n) / fileLimit))));
	for (const n of sizes) {
		const p = processesFor(n);
		if (p > 1) console.log(`N = ${n.toLocaleString("en")}: ${p} workerd processes (${fileLimit ?? "?"} open files each, ~${FILES_PER_AGENT} an agent), each running its share of the 16 shards and their agents`);
		if ((values.perf || values.profile) && p > 1) throw new Error(`--perf and --profile watch one workerd: N = ${n} needs ${p} (pass --processes=1 or smaller --sizes)`);
	}
	console.log();

	const tmp = mkdtempSync(path.join(os.tmpdir(), "drover-bench-claims-"));
	// Ctrl-C mid-run: stop workerd and the emulator and remove the temp directory, leaving nothing behind.
	let stopping = false;
	const interrupted = async (signal) => {
		if (stopping) return; // npm forwards the terminal's signal too: the first one cleans up
		stopping = true;
		console.error(`\n${signal}: stopping the local Worker`);
		const stops = [...running.workers.map((w) => w.dispose()), running.emulator?.stop()];
		await Promise.race([Promise.allSettled(stops), new Promise((r) => setTimeout(r, 5000))]);
		if (!values.keep) rmSync(tmp, { recursive: true, force: true });
		process.exit(130);
	};
	process.on("SIGINT", interrupted).on("SIGTERM", interrupted);
	const results = [];
	try {
		const t0 = performance.now();
		const scriptPath = bundle(path.join(tmp, "bundle"), { readableNames: values.profile || values.perf });
		console.log(`bundled the Worker (wrangler deploy --dry-run) in ${secs(performance.now() - t0)} s`);
		running.emulator = await startEmulator();
		console.log(`Messages API emulator at ${running.emulator.url}`);
		for (const n of sizes) {
			const options = { scriptPath, stateDir: path.join(tmp, `state-${n}`), concurrency, modelURL: running.emulator.url, profile: values.profile, perf: values.perf, processes: processesFor(n) };
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

/**
 * One N on fresh Workers. Fills `r` as it goes, so a size that fails part-way (workerd out of
 * files, a crash) still reports what it measured; the error is recorded and the run goes on.
 */
async function runSize(n, { scriptPath, stateDir, concurrency, modelURL, profile, perf, processes }) {
	console.log(`\n-- N = ${n.toLocaleString("en")}${processes > 1 ? ` (${processes} workerd processes)` : ""}`);
	const r = { n, processes };
	const logs = logCounter();
	const token = `bench_${crypto.randomUUID().replaceAll("-", "")}`;
	let t = performance.now();
	const fleet = await startFleet(processes, (p) =>
		startLocalWorker({
			scriptPath,
			persistDir: processes > 1 ? `${stateDir}-p${p}` : stateDir,
			secrets: {
				API_TOKENS: `bench:admin:${token}`,
				// No key and a loopback base URL: the Worker's emulator mode (as `npm start` without a key).
				// A key would be refused for a non-Anthropic host (agents auto-pause), and a real host is
				// never what a benchmark should call.
				ANTHROPIC_API_KEY: "",
				ANTHROPIC_BASE_URL: modelURL,
			},
			onLog: logs.onLog,
			inspectorPort: profile ? 9300 + Math.floor(Math.random() * 500) : undefined,
			// V8's perf map names drover's JIT code for perf.
			v8Flags: perf ? V8_FLAGS : undefined,
		}),
	);
	const w = fleet.workers[0];
	const { pid } = w;
	/** Records drover's workerd over `during()`; prints and returns the split per agent. */
	const perfOver = async (label, during) => {
		if (!perf || pid === null) return { value: await during(), split: null };
		const rec = startPerf(pid, path.join(path.dirname(stateDir), `perf-${n}-${label}.data`));
		const value = await during();
		const split = await rec.stop();
		console.log(`drover's workerd CPU over the ${label} tick (perf, ${split.samples} samples at ${split.hz} Hz in ${split.seconds} s; the claimed jobs starting meanwhile included):`);
		printPerfSplit(split, n, "an agent", printRows);
		return { value, split };
	};
	r.startup_s = secs(performance.now() - t);
	try {
		// Set-up: N agents through the public API, bounded concurrency, each through the process
		// that runs its shard.
		const names = Array.from({ length: n }, (_, i) => `bench-${String(i + 1).padStart(5, "0")}`);
		t = performance.now();
		let done = 0;
		await mapLimit(names, concurrency, async (name) => {
			const res = await fleet.workerOf(name).fetch("/v1/agents", {
				method: "POST",
				headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
				body: JSON.stringify(agentBody(name)),
			});
			if (res.status !== 201) throw new Error(`POST /v1/agents ${name}: ${res.status} ${await res.text()}`);
			await res.arrayBuffer();
			if (++done % 500 === 0) progress(`created ${done}/${n} (${secs(performance.now() - t)} s)`);
		});
		r.create_s = secs(performance.now() - t);
		r.creates_per_s = Math.round(n / r.create_s);
		progress(`created ${n} agents in ${r.create_s} s (${r.creates_per_s}/s)\n`);
		const registered = (await fleet.status(token)).agents_api;
		if (registered !== n) throw new Error(`GET /v1/status counts ${registered} API agents, expected ${n}`);

		await coldAgents(fleet.openFiles);
		// Other work on the machine skews the figures: the 1-minute load average before and after.
		r.load = { before: round(os.loadavg()[0], 2) };
		const T = tickTime();
		r.scheduled_time = new Date(T).toISOString();
		const profiler = profile ? await startProfile(w.inspectorPort) : null;
		const first = await perfOver("first", () => timedTick(fleet, T, logs, token));
		r.tick = first.value;
		if (first.split) r.perf = first.split;
		if (profiler) {
			r.profile = await profiler.stop(path.join(ROOT, "bench", "results", `claims-${n}.cpuprofile`));
			console.log(`CPU profile of the Worker's isolate over the tick (${r.profile.samples} samples), self time by function:`);
			for (const row of r.profile.top.slice(0, 15)) console.log(`  ${String(row.share).padStart(5)} %  ${row.fn}`);
		}
		console.log(`tick     T=${r.scheduled_time}  ${fmtTick(r.tick)}`);
		if (r.tick.skipped > 0) r.tick.skip_reason = await skipReason(fleet, token, names[0]);
		r.jobs_after_tick = await waitForJobs(fleet, token, r.tick.claimed, n);
		console.log(`jobs     ${fmtJobs(r.jobs_after_tick)}`);

		r.dup = await timedTick(fleet, T, logs, token);
		const afterDup = (await fleet.status(token)).jobs_total;
		r.dup.jobs_added = afterDup - r.jobs_after_tick.total;
		// The heartbeat keeps a minute's figures when the same minute arrives again (it claims
		// nothing), so the duplicate's own claims are the jobs it added.
		Object.assign(r.dup, { claimed: r.dup.jobs_added, agents_called: null, claims_per_s: 0, ms_per_agent: null });
		console.log(`dup      T again  ${fmtTick(r.dup)}  jobs in D1 ${afterDup} (added ${r.dup.jobs_added})`);

		await coldAgents(fleet.openFiles);
		const nextProfiler = profile ? await startProfile(w.inspectorPort) : null;
		const next = await perfOver("next-minute", () => timedTick(fleet, T + MINUTE, logs, token));
		r.next = next.value;
		if (next.split) r.next_perf = next.split;
		if (nextProfiler) {
			r.next_profile = await nextProfiler.stop(path.join(ROOT, "bench", "results", `claims-${n}-next.cpuprofile`));
			console.log(`CPU profile over the next-minute tick (${r.next_profile.samples} samples), self time by function:`);
			for (const row of r.next_profile.top.slice(0, 15)) console.log(`  ${String(row.share).padStart(5)} %  ${row.fn}`);
		}
		console.log(`next     T+1min   ${fmtTick(r.next)}`);
		if (r.next.skipped > 0) r.next.skip_reason = await skipReason(fleet, token, names[0]);
		r.jobs_after_next = await waitForJobs(fleet, token, r.tick.claimed + r.next.claimed, n);
		console.log(`jobs     ${fmtJobs(r.jobs_after_next)}`);
		r.load.after = round(os.loadavg()[0], 2);
	} catch (err) {
		r.error = err instanceof Error ? `${err.message}${err.cause ? ` (${err.cause.message ?? err.cause})` : ""}` : String(err);
		console.log(`FAILED   ${r.error}`);
		// The Worker's own error lines say more than a 500 or a reset connection does.
		for (const line of logs.summary().errors.slice(0, 2)) console.log(`         worker error: ${line.slice(0, 300)}`);
	} finally {
		await fleet.dispose();
		if (pid !== null) removePerfMap(pid);
	}
	r.logs = logs.summary();
	if (!r.error) r.floor = await runFloor(n, `${stateDir}-floor`, processes);
	return r;
}

/** The shards process `p` of `processes` runs: [from, to) of the 16. */
function shardRange(p, processes) {
	return { from: Math.ceil((SCHEDULER_SHARDS * p) / processes), to: Math.ceil((SCHEDULER_SHARDS * (p + 1)) / processes) };
}

/**
 * `processes` workerd of the same kind, each started by `start(p)` with its own state, for a size
 * the open-files limit (per process) will not hold in one: process p runs its shards (shardRange).
 * Tracked in `running` from the first start, so Ctrl-C stops them; `openFiles` reads the most any
 * one of them has open now (the limit is per process), or null where /proc cannot tell.
 */
async function startProcesses(processes, start) {
	const all = [];
	running.workers = all;
	const dispose = async () => {
		running.workers = [];
		await Promise.allSettled(all.map((x) => x.dispose()));
	};
	try {
		for (let p = 0; p < processes; p++) all.push(await start(p));
	} catch (err) {
		await dispose();
		throw err;
	}
	const readers = all.map((x) => openFilesOf(x.pid));
	const openFiles = () => (readers.some((read) => read === null) ? null : Math.max(...readers.map((read) => read() ?? 0)));
	return { all, openFiles, dispose };
}

/**
 * drover's local Workers (startProcesses), answering as one: an agent is created in the process that
 * runs its shard, as deployed the shards and their agents run on separate machines; status is
 * summed; a tick goes to every process at once.
 */
async function startFleet(processes, start) {
	const { all: workers, openFiles, dispose } = await startProcesses(processes, start);
	const byShard = Array.from({ length: SCHEDULER_SHARDS }, (_, shard) => Math.floor((shard * processes) / SCHEDULER_SHARDS));
	return {
		workers,
		workerOf: (agent) => workers[byShard[shardOf(agent)]],
		openFiles,
		/** GET /v1/status of every process: API agents and D1's jobs by status summed, each heartbeat. */
		async status(token) {
			const all = await Promise.all(workers.map((w) => status(w, token)));
			const jobs = {};
			for (const st of all) for (const [k, v] of Object.entries(st.jobs)) jobs[k] = (jobs[k] ?? 0) + v;
			return { agents_api: all.reduce((a, st) => a + st.agents.api, 0), jobs, jobs_total: Object.values(jobs).reduce((a, b) => a + b, 0), heartbeats: all.map((st) => st.scheduler) };
		},
		tick: (T) => Promise.all(workers.map((w) => w.tick(T))),
		dispose,
	};
}

/**
 * The claim floor for N agents, in workerd of its own once drover's are gone (bench/lib/floor-worker.mjs):
 * the same 16-shard fan-out, 32 calls in flight a shard, to objects that only write one ledger row
 * and set an alarm, over as many processes as drover's tick had (each with its shards' agents).
 * Set-up wakes every object once; the ticks are timed on cold objects, as drover's.
 */
async function runFloor(n, persistDir, processes) {
	const f = {};
	let floors = null;
	try {
		floors = await startProcesses(processes, (p) => {
			const dir = processes > 1 ? `${persistDir}-p${p}` : persistDir;
			mkdirSync(dir, { recursive: true });
			return startFloorWorker({ persistDir: dir });
		});
		const { openFiles } = floors;
		const tick = async (instant) => {
			const counts = await Promise.all(floors.all.map((fl, p) => fl.claimsTick(n, instant, shardRange(p, processes))));
			return counts.reduce((a, b) => a + b, 0);
		};
		const T = tickTime();
		if ((await tick(T - MINUTE)) !== n) throw new Error("set-up tick did not claim every agent");
		await coldAgents(openFiles);
		const timed = async (instant) => {
			const t = performance.now();
			const claimed = await tick(instant);
			const wall_s = secs(performance.now() - t);
			return { wall_s, claimed, ms_per_agent: round((wall_s * 1000) / n, 3) };
		};
		f.tick = await timed(T);
		f.dup = await timed(T);
		await coldAgents(openFiles);
		f.next = await timed(T + MINUTE);
		console.log(`floor    tick ${f.tick.wall_s} s (${f.tick.ms_per_agent} ms/agent, claimed ${f.tick.claimed})  dup +${f.dup.claimed}  next-minute ${f.next.wall_s} s (${f.next.ms_per_agent} ms/agent)`);
	} catch (err) {
		f.error = err instanceof Error ? err.message : String(err);
		console.log(`floor FAILED ${f.error}`);
	} finally {
		await floors?.dispose();
	}
	return f;
}

/** The bench agent: a prompt and one schedule due every minute, everything else default. */
function agentBody(name) {
	return { name, prompt: "x", schedules: { "every-minute": { interval: "1m" } } };
}

/**
 * The first minute boundary at least a minute from now. fleet.yaml's scheduled agents fire on
 * quarter hours (an interval of 15m, crons at whole hours), so T and T + 1 min avoid them and every
 * claim counted is a bench agent's; should fleet.yaml gain one that fires then, the claim counts no
 * longer match N and the run says so. T lies ahead of the wall clock on purpose: the Worker claims
 * by the tick's scheduledTime, and an agent first seen by a tick fires the slot at T.
 */
function tickTime() {
	let T = Math.ceil((Date.now() + MINUTE) / MINUTE) * MINUTE;
	while (T % (15 * MINUTE) === 0 || (T + MINUTE) % (15 * MINUTE) === 0) T += MINUTE;
	return T;
}

/**
 * One tick at T, sent to every process of the fleet at once and timed until the last has answered;
 * the heartbeats (one per process) summed.
 */
async function timedTick(fleet, T, logs, token) {
	const before = (await fleet.status(token)).heartbeats;
	const errorsBefore = logs.errorCount();
	let peakFiles = fleet.openFiles();
	const sampler = setInterval(() => (peakFiles = Math.max(peakFiles ?? 0, fleet.openFiles() ?? 0)), 250);
	const t = performance.now();
	const results = await fleet.tick(T).finally(() => clearInterval(sampler));
	const wall_s = secs(performance.now() - t);
	const failed = results.find((result) => result.status !== 200);
	if (failed) throw new Error(`scheduled() at ${new Date(T).toISOString()} failed: ${JSON.stringify(failed)}`);
	// The heartbeat row is rewritten by every tick; a new last_tick_at tells this tick's row apart.
	const hbs = (await fleet.status(token)).heartbeats;
	for (const [p, hb] of hbs.entries()) {
		if (hb.last_tick_at === null || hb.last_tick_at === before[p].last_tick_at) {
			throw new Error(`tick at ${new Date(T).toISOString()} wrote no heartbeat${hbs.length > 1 ? ` in process ${p}` : ""} (scheduled: ${JSON.stringify(results[p])})`);
		}
	}
	const sum = (k) => hbs.reduce((a, hb) => a + hb[k], 0);
	const agentsCalled = sum("agents_called");
	const claimed = sum("claimed");
	const outcomes = new Set(hbs.map((hb) => hb.outcome));
	return {
		wall_s,
		scheduled_outcome: results.every((result) => result.outcome === "ok") ? "ok" : results.map((result) => result.outcome).join(", "),
		outcome: outcomes.size === 1 ? [...outcomes][0] : outcomes.has("failed") || outcomes.has("partial") ? "partial" : "ok",
		agents_called: agentsCalled,
		claimed,
		skipped: sum("skipped"),
		claims_per_s: claimed > 0 ? Math.round(claimed / wall_s) : 0,
		ms_per_agent: agentsCalled > 0 ? round((wall_s * 1000) / agentsCalled, 3) : null,
		error: hbs.map((hb) => hb.error).filter(Boolean).join("; ") || null,
		worker_errors: logs.errorCount() - errorsBefore,
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
async function skipReason(fleet, token, agent) {
	const res = await fleet.workerOf(agent).fetch(`/v1/agents/${agent}/runs?limit=1`, { headers: { authorization: `Bearer ${token}` } });
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

/**
 * Waits until the D1 job index holds `expected` jobs, all final: each claimed job starts from its
 * agent's alarm, runs against the emulator and reaches D1 through the agent's outbox. Polls the
 * public API; gives up after a generous bound that grows with N.
 */
async function waitForJobs(fleet, token, expected, n) {
	const t = performance.now();
	const limit = Math.max(3 * MINUTE, n * 60);
	let peak = fleet.openFiles();
	for (;;) {
		const { jobs, jobs_total: total } = await fleet.status(token);
		const open = Object.entries(jobs).reduce((a, [k, v]) => a + (FINAL.has(k) ? 0 : v), 0);
		const settled = total >= expected && open === 0;
		peak = Math.max(peak ?? 0, fleet.openFiles() ?? 0);
		if (settled || performance.now() - t > limit) {
			return { s: secs(performance.now() - t), settled, total, by_status: jobs, workerd_peak_open_files: peak };
		}
		await new Promise((r) => setTimeout(r, 250));
	}
}

function summarize(results) {
	const problems = [];
	for (const r of results) {
		if (r.error) problems.push(`N=${r.n}: ${r.error}`);
		if (r.tick && r.tick.outcome !== "ok") problems.push(`N=${r.n}: first tick outcome ${r.tick.outcome} (${r.tick.error})`);
		if (r.tick && r.tick.claimed !== r.n) problems.push(`N=${r.n}: first tick claimed ${r.tick.claimed}, expected ${r.n}`);
		if (r.dup && (r.dup.claimed !== 0 || r.dup.jobs_added !== 0)) problems.push(`N=${r.n}: duplicate tick claimed ${r.dup.claimed}, added ${r.dup.jobs_added} jobs`);
		if (r.next && r.next.claimed !== r.n) problems.push(`N=${r.n}: next-minute tick claimed ${r.next.claimed}, expected ${r.n}`);
		const j = r.jobs_after_next;
		if (j && (j.total !== 2 * r.n || !j.settled)) problems.push(`N=${r.n}: D1 job index holds ${j.total} jobs (${j.settled ? "all final" : "not all final"}), expected ${2 * r.n} final`);
		if (r.floor?.error) problems.push(`N=${r.n}: floor: ${r.floor.error}`);
		if (r.floor?.tick && (r.floor.tick.claimed !== r.n || r.floor.dup.claimed !== 0 || r.floor.next.claimed !== r.n)) problems.push(`N=${r.n}: the floor's claims do not add up: ${JSON.stringify(r.floor)}`);
		if (!r.error && r.logs.errors.length > 0) problems.push(`N=${r.n}: the Worker logged errors, e.g. ${r.logs.errors[0].slice(0, 300)}`);
	}
	// Growth: time per agent called at the largest complete N against N = 1,000, as it is and against
	// the floor's at the same N. A size split over processes runs on more of the machine's cores than
	// one workerd's thread, so only the second compares across a split: the floor is split alike.
	// A tick counts only if it claimed for every agent (a size that failed later still has its tick).
	const whole = (r, k) => r[k]?.outcome === "ok" && r[k].claimed === r.n;
	const perAgent = (r, k) => r[k].wall_s / r[k].agents_called;
	const ratio = (k) => {
		const base = results.find((r) => r.n === 1_000 && whole(r, k));
		const top = results.filter((r) => r.n > 1_000 && whole(r, k)).at(-1);
		if (!base || !top) return null;
		const toFloor = (r) => (r.floor?.[k] ? r[k].wall_s / r.floor[k].wall_s : null);
		const against = toFloor(top) !== null && toFloor(base) !== null ? round(toFloor(top) / toFloor(base), 2) : null;
		return { from: 1_000, to: top.n, processes: top.processes, ratio: round(perAgent(top, k) / perAgent(base, k), 2), against_floor: against };
	};
	const growth = { first_tick: ratio("tick"), next_tick: ratio("next") };
	const big = results.find((r) => r.n === GOAL_N);
	return {
		growth,
		goal: {
			text: `${GOAL_N.toLocaleString("en")} agents claimed in ≤ ${GOAL_SECONDS} s locally, time per agent flat from 1,000 to 10,000, duplicate tick adds 0`,
			within_10s: big?.tick ? big.tick.outcome === "ok" && big.tick.claimed === GOAL_N && big.tick.wall_s <= GOAL_SECONDS : null,
			duplicate_adds_none: results.filter((r) => r.dup).every((r) => r.dup.claimed === 0 && r.dup.jobs_added === 0),
		},
		problems,
	};
}

function printTable(results, report) {
	const num = (x) => (x === undefined ? "—" : x.toLocaleString("en"));
	const rows = results.map((r) => [
		`${num(r.n)}${r.processes > 1 ? ` (${r.processes} workerd)` : ""}`,
		r.create_s === undefined ? "—" : `${r.create_s} s (${r.creates_per_s}/s)`,
		r.tick ? `${r.tick.wall_s} s` : "—",
		num(r.tick?.claimed),
		num(r.tick?.claims_per_s),
		num(r.tick?.agents_called),
		r.tick ? `${r.tick.ms_per_agent} ms` : "—",
		r.jobs_after_tick ? `${r.jobs_after_tick.s} s` : "—",
		r.dup ? `${r.dup.wall_s} s / +${r.dup.claimed} (called ${r.dup.agents_called})` : "—",
		r.next ? `${r.next.wall_s} s / ${num(r.next.claimed)} (${num(r.next.claims_per_s)}/s)` : "—",
		r.floor?.tick && r.tick ? `${r.floor.tick.wall_s} s (drover ×${round(r.tick.wall_s / r.floor.tick.wall_s, 1)})` : "—",
		r.floor?.next && r.next ? `${r.floor.next.wall_s} s (drover ×${round(r.next.wall_s / r.floor.next.wall_s, 1)})` : "—",
	]);
	const head = ["N", "create (set-up)", "tick", "claimed", "claims/s", "agents_called", "per agent", "jobs done", "dup tick / added", "next-min tick / claimed", "floor tick", "floor next-min"];
	const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
	const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(" | ")} |`;
	console.log(`\n${line(head)}\n| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`);
	for (const r of rows) console.log(line(r));
	console.log(`\n1-min load average before each first tick: ${results.map((r) => `N=${r.n} ${r.load?.before ?? "—"}`).join(", ")}`);
	console.log("agents_called includes fleet.yaml's 3 agents on the first tick (new to their shards; 3 in each workerd); claims are bench agents only.");
	if (results.some((r) => r.processes > 1)) console.log("N (P workerd): the 16 shards and their agents split over P workerd processes (the open-files limit is per process), the tick sent to all at once; per agent is the tick's wall time over N.");
	console.log("jobs done: from the end of the tick until every claimed job ran (emulator) and is final in the D1 index.");
	console.log("floor: the same 16-shard fan-out to objects that only write one ledger row and set an alarm (bench/lib/floor-worker.mjs), its own workerd.");
	for (const [k, g] of Object.entries(report.growth)) {
		if (!g) continue;
		const split = g.processes > 1 ? ` (over ${g.processes} workerd, on more cores than N=1,000's one thread)` : "";
		const against = g.against_floor === null ? "" : `; drover's over the floor's ×${g.against_floor} (≈ 1 or less: drover's cost grows as the floor's does)`;
		console.log(`time per agent, ${k.replace("_", " ")}, N=${num(g.to)} vs N=1,000: ×${g.ratio}${split}${against}`);
	}
	console.log(`goal: ${report.goal.text}`);
	const within = report.goal.within_10s;
	console.log(`  10,000 within ${GOAL_SECONDS} s: ${within === null ? "not run (pass --full)" : within ? "yes" : "NO"}; duplicate tick adds none: ${report.goal.duplicate_adds_none ? "yes" : "NO"}`);
	for (const p of report.problems) console.log(`  problem: ${p}`);
}

const fmtJobs = (j) =>
	`${j.total} in D1 (${Object.entries(j.by_status).map(([k, v]) => `${k} ${v}`).join(", ")}) ${j.settled ? "all final" : "NOT all final"} ${j.s} s after the tick  workerd files ≤ ${j.workerd_peak_open_files ?? "?"}`;
const secs = (ms) => round(ms / 1000, 2);
const fmtTick = (k) =>
	`${k.wall_s} s  called ${k.agents_called}  claimed ${k.claimed}  skipped ${k.skipped}  (${k.claims_per_s}/s, ${k.ms_per_agent} ms/agent)  outcome ${k.outcome}  workerd files ≤ ${k.workerd_peak_open_files ?? "?"}`;

/** Rows for `npm run bench`'s one table. */
export function tableRows(doc) {
	const rows = [];
	for (const r of doc.results) {
		if (!r.tick) continue;
		const floor = (k) => (r.floor?.[k] ? `; floor ${r.floor[k].wall_s} s (×${round(r[k].wall_s / r.floor[k].wall_s, 1)})` : "");
		const split = r.processes > 1 ? ` (${r.processes} workerd, shards split)` : "";
		rows.push({ figure: `one tick, ${r.n.toLocaleString("en")} agents due${split}`, measured: `${r.tick.wall_s} s${floor("tick")}`, goal: `10,000 in ≤ ${GOAL_SECONDS} s`, met: r.n === GOAL_N ? r.tick.wall_s <= GOAL_SECONDS : null });
		if (r.next) rows.push({ figure: `next-minute tick, ${r.n.toLocaleString("en")} agents${split}`, measured: `${r.next.wall_s} s${floor("next")}`, goal: "", met: null });
	}
	rows.push({ figure: "a duplicate tick", measured: `adds ${doc.results.reduce((n, r) => n + (r.dup?.claimed ?? 0), 0)} claims`, goal: "adds none", met: doc.goal.duplicate_adds_none });
	return rows;
}
