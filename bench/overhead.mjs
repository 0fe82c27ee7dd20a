// Job overhead against a floor: what a one-tool-call job costs drover, in time and in what
// Cloudflare bills, against the same storage writes done directly.
//
//   drover   an API agent with one webhook tool (BENCH_HOOK_URL → bench/lib/fixtures.mjs /hook,
//            answering 200 "ok" at once). Per job the project's Messages API emulator is scripted
//            with [tool_use bench_hook, text "done"] (POST /__emulator/script): one tool call, then
//            the final answer. Jobs run one at a time. Each is timed from the trigger
//            (POST /v1/agents/:agent/jobs, Date.now() as it is sent) to its final row in the D1
//            index: the row's updated_at, which D1 stamps with its own clock as it writes the row,
//            read from D1 once the run is over. The Durable Object writes that row only after the
//            R2 object is written, and every job's R2 object is checked at the end. To know when to
//            start the next job the bench polls GET /v1/jobs?agent=…&limit=1 every --poll-ms. A poll
//            is an API request that workerd serves on the one thread the job runs on (about
//            1.5–2 ms of it, D1 included), and the floor is never polled: so after the first jobs
//            the first poll waits until the job is expected to be over (the median time to its
//            finished_at so far, plus --poll-margin-ms), and the table says how many polls were
//            still sent before the job's final row was written. --eager-poll polls from the
//            trigger's answer on, as before.
//   floor    bench/lib/floor-worker.mjs, a Worker of our own in its own workerd, doing per request
//            one Durable Object call with the same number of SQLite rows written, D1 write
//            statements (upserts into drover's `jobs` table and indexes) and R2 puts (of the same
//            size) as drover's job, measured below, in drover's order (the last upsert after the R2
//            put); timed the same way, from the request to its final row's updated_at. Drover and
//            floor jobs alternate, so machine noise falls on both alike. A second floor adds the
//            job's own calls (2 streamed requests to the emulator, 1 to the hook, before the R2
//            put): the agent's own time.
//   billing  a separate run of the same jobs on an instrumented copy of the bundle
//            (bench/lib/instrument.mjs: counting wrappers at the bindings, the product's source
//            untouched): per job, Durable Object requests (RPC and fetch calls at their callers,
//            plus alarm invocations), DO SQLite rows written and read, D1 rows written and read
//            (D1's own meta), R2 class A and B operations. The trigger request's own operations
//            are counted; the bench's polling is not. Each counted job runs on a history one job
//            longer than the last, so the slope of rows read per job over them says whether some
//            statement's cost grows with the agent's history (it should be 0).
//   cpu      the CPU time (/proc) each workerd process spends over the timed jobs, per job: drover's
//            (its polling included) and the floor's; locally one thread runs each process.
// Goals: drover/floor ≤ 2 (median per job); ≤ 12 D1 rows written and ≤ 4 R2 class-A operations per
// one-tool-call job.
import path from "node:path";
import { parseArgs } from "node:util";
import { startFixtures } from "./lib/fixtures.mjs";
import { startFloorWorker } from "./lib/floor-worker.mjs";
import { instrumentBundle, readCounters } from "./lib/instrument.mjs";
import { bundle, ROOT, startEmulator } from "./lib/local-worker.mjs";
import { perfUnavailable, printPerfSplit, removePerfMap, startPerf, V8_FLAGS } from "./lib/perf-split.mjs";
import { startProfile } from "./lib/profile.mjs";
import { BENCH_TOOL, cpuSecondsOf, FINAL, logCounter, machineInfo, printMachine, printTable, progress, recordFailure, round, scratch, sleep, startBenchWorker, summary, summaryMs, verdict, writeResult } from "./lib/common.mjs";

export const title = "job overhead: 200 one-tool-call jobs, trigger → final in D1 with R2 output, against a floor of the same writes; billed operations per job";
export const usage = `    --jobs=200        timed jobs (and as many floor requests)
    --count-jobs=20   jobs run on the instrumented bundle to count billed operations
    --poll-ms=5       pause between polls of the D1 index
    --poll-margin-ms=8  the first poll waits for the median time to finished_at so far plus this
    --eager-poll      poll from the trigger's answer on (polls then share workerd's thread with the job)
    --profile         CPU-profile the Worker's isolate over the timed jobs (bench/results/overhead.cpuprofile)
    --perf            split drover's workerd CPU over the timed jobs by what spends it (Linux perf, as root;
                      sampling slows workerd, so read times from a run without it)
    --keep            keep the temp directory
`;

const AGENT = "bench-overhead";
const GOALS = { ratio: 2, d1_rows_written: 12, r2_class_a: 4 };

export async function run(argv) {
	const { values } = parseArgs({
		args: argv,
		options: {
			jobs: { type: "string", default: "200" },
			"count-jobs": { type: "string", default: "20" },
			"poll-ms": { type: "string", default: "5" },
			"poll-margin-ms": { type: "string", default: "8" },
			"eager-poll": { type: "boolean", default: false },
			profile: { type: "boolean", default: false },
			perf: { type: "boolean", default: false },
			full: { type: "boolean", default: false },
			keep: { type: "boolean", default: false },
		},
	});
	const jobs = Number(values.jobs);
	const countJobs = Number(values["count-jobs"]);
	const pollMs = Number(values["poll-ms"]);
	const pollMarginMs = Number(values["poll-margin-ms"]);
	const eagerPoll = values["eager-poll"];
	const noPerf = values.perf ? perfUnavailable() : null;
	if (noPerf) throw new Error(`--perf: ${noPerf}`);
	const machine = machineInfo();
	printMachine(machine);
	console.log(`${jobs} timed jobs (+ as many floor requests), ${countJobs} counted jobs, polling D1 every ${pollMs} ms\n`);

	const tmp = scratch("overhead", values.keep);
	const logs = logCounter();
	const result = { jobs, count_jobs: countJobs, poll_ms: pollMs, first_poll: eagerPoll ? "at the trigger's answer" : `median time to finished_at + ${pollMarginMs} ms` };
	try {
		const scriptPath = bundle(path.join(tmp.dir, "bundle"), { readableNames: values.profile || values.perf });
		const instrumented = instrumentBundle(scriptPath, path.join(tmp.dir, "bundle-instrumented"));
		const emulator = await startEmulator();
		tmp.onCleanup(() => emulator.stop());
		const fx = await startFixtures();
		tmp.onCleanup(() => fx.stop());
		const secrets = { ANTHROPIC_API_KEY: "", ANTHROPIC_BASE_URL: emulator.url, BENCH_HOOK_URL: fx.hookUrl };
		const script = () =>
			fetch(`${emulator.url}/__emulator/script`, {
				method: "POST",
				body: JSON.stringify([{ tool_use: { name: BENCH_TOOL.name, input: {} } }, { text: "done" }]),
			}).then((r) => r.json());

		// ── 1. Billed operations, on the instrumented bundle ─────────────────────────────────────
		console.log("-- counting billed operations (instrumented bundle)");
		{
			const w = await startBenchWorker({ scriptPath: instrumented, persistDir: path.join(tmp.dir, "state-count"), secrets, onLog: logs.onLog });
			try {
				await createAgent(w);
				const perJob = [];
				for (let i = 0; i < countJobs + 2; i++) {
					await script();
					await readCounters(w, true);
					const trig = await trigger(w);
					// The trigger request's own operations: the Worker's, before any polling.
					const afterTrigger = await readCounters(w);
					await waitFinal(w, trig.json.id, pollMs);
					const settled = await quiescent(w);
					if (i < 2) continue; // warm-up: the agent's first jobs also create its tables
					perJob.push(combine(afterTrigger.worker ?? {}, settled));
					progress(`counted ${perJob.length}/${countJobs}`);
				}
				console.log();
				result.billing = billingSummary(perJob);
			} finally {
				await w.dispose();
			}
		}
		const b = result.billing.mean;
		const plan = {
			sql_rows: Math.round(b.sql_rows_written),
			d1_writes: Math.round(b.d1_write_statements),
			d1_batches: Math.round(b.d1_batches ?? b.d1_write_statements),
			r2_puts: Math.round(b.r2_class_a),
			r2_bytes: Math.round(b.r2_bytes_put / Math.max(1, b.r2_put ?? 1)),
			agent: "floor",
		};
		result.floor_plan = plan;
		console.log(`floor per job: ${plan.sql_rows} SQLite rows, ${plan.d1_writes} D1 upserts in ${plan.d1_batches} round trips, ${plan.r2_puts} R2 puts of ${plan.r2_bytes} B (drover's measured means)`);

		// ── 2. Timing: drover jobs and floor requests, alternating ───────────────────────────────
		console.log("-- timing (plain bundle) against the floor");
		const inspectorPort = values.profile ? 9300 + Math.floor(Math.random() * 500) : undefined;
		// Only drover's timed workerd gets V8's perf map.
		const v8Flags = values.perf ? V8_FLAGS : undefined;
		const w = await startBenchWorker({ scriptPath, persistDir: path.join(tmp.dir, "state"), secrets, onLog: logs.onLog, inspectorPort, v8Flags });
		tmp.onCleanup(() => w.dispose());
		let profiler = null;
		let perf = null;
		const floor = await startFloorWorker({ persistDir: path.join(tmp.dir, "state-floor") });
		// The agent's own time in a drover job: its 2 model requests (the emulator) and 1 tool request.
		const ownCalls = { model_calls: 2, model_url: emulator.url, tool_calls: 1, tool_url: fx.hookUrl };
		tmp.onCleanup(() => floor.dispose());
		await createAgent(w);
		const droverMs = [];
		const writtenMs = [];
		const floorMs = [];
		const ownMs = [];
		const floorWrittenMs = [];
		const ownWrittenMs = [];
		const starts = new Map();
		const phases = { trigger_response: [], created_to_started: [], started_to_finished: [], finished_to_indexed: [] };
		const ids = [];
		let floorCounts = null;
		const WARMUP = 5;
		// Trigger → the job's finished_at, per job so far (ms, the Worker's clock): when a job is
		// expected to be over, so that polls do not land inside it.
		const toFinish = [];
		const pollsOf = new Map();
		// CPU seconds of each workerd (drover's; the floor's) spent in the timed parts, summed: /proc
		// counts in 10 ms ticks, so only the sum over all jobs means anything.
		const cpu = { drover: 0, floor: 0, floor_own: 0 };
		const cpuOf = (pid) => cpuSecondsOf(pid) ?? NaN;
		for (let i = 0; i < jobs + WARMUP; i++) {
			await script();
			const wall0 = Date.now();
			const c0 = cpuOf(w.pid);
			const t0 = performance.now();
			const trig = await trigger(w);
			const tTrig = performance.now();
			const firstPollAt = eagerPoll || toFinish.length < 3 ? 0 : t0 + summary(toFinish).p50 + pollMarginMs;
			const { row, pollsAt } = await waitFinal(w, trig.json.id, pollMs, firstPollAt);
			const t1 = performance.now();
			const wall1 = Date.now();
			const c1 = cpuOf(w.pid);
			if (row.status !== "completed") throw new Error(`job ${row.id} ended ${row.status}`);
			ids.push(row.id);
			const finishedAt = Date.parse(row.finished_at);
			toFinish.push(finishedAt - wall0);

			const fc0 = cpuOf(floor.pid);
			const fw0 = Date.now();
			const f0 = performance.now();
			const counts = await floor.job(plan);
			const f1 = performance.now();
			const fc1 = cpuOf(floor.pid);
			const ow0 = Date.now();
			const o0 = performance.now();
			const ownCounts = await floor.job({ ...plan, ...ownCalls });
			const o1 = performance.now();
			const fc2 = cpuOf(floor.pid);
			if (i < WARMUP) continue;
			cpu.drover += c1 - c0;
			cpu.floor += fc1 - fc0;
			cpu.floor_own += fc2 - fc1;
			if (i === WARMUP - 1 + 1 && inspectorPort && !profiler) profiler = await startProfile(inspectorPort);
			if (i === WARMUP && values.perf && !perf) perf = startPerf(w.pid, path.join(tmp.dir, "perf.data"), { entry: path.basename(scriptPath) });
			starts.set(row.id, wall0);
			pollsOf.set(row.id, pollsAt);
			floorCounts ??= counts;
			droverMs.push(t1 - t0);
			floorMs.push(f1 - f0);
			ownMs.push(o1 - o0);
			for (const c of [counts, ownCounts]) {
				if (!Number.isInteger(c.final_written_at)) throw new Error(`the floor answered without its final row's updated_at: ${JSON.stringify(c)}`);
			}
			floorWrittenMs.push(counts.final_written_at - fw0);
			ownWrittenMs.push(ownCounts.final_written_at - ow0);
			phases.trigger_response.push(tTrig - t0);
			// The record's own instants (ms precision, the Worker's clock): where the time went.
			const created = Date.parse(row.created_at);
			const started = Date.parse(row.started_at);
			const finished = Date.parse(row.finished_at);
			phases.created_to_started.push(started - created);
			phases.started_to_finished.push(finished - started);
			phases.finished_to_indexed.push(wall1 - finished);
			if ((i + 1 - WARMUP) % 20 === 0) progress(`timed ${i + 1 - WARMUP}/${jobs}: drover median ${round(summary(droverMs).p50, 1)} ms (seen), floor ${round(summary(floorWrittenMs).p50, 1)} ms`);
		}
		console.log();
		if (perf) {
			const split = await perf.stop();
			removePerfMap(w.pid);
			// Timed jobs after the first (the recording starts as the first one ends) and the floor's
			// requests, which run in their own workerd: drover's process is idle or finishing a job then.
			result.perf = { ...split, jobs: jobs - 1 };
			console.log(`drover's workerd CPU over ${jobs - 1} timed jobs (perf, ${split.samples} samples at ${split.hz} Hz in ${split.seconds} s; polls and each job's work after its final row included):`);
			printPerfSplit(split, jobs - 1, "a job", printTable);
		}
		if (profiler) {
			result.profile = await profiler.stop(path.join(ROOT, "bench", "results", "overhead.cpuprofile"));
			console.log(`CPU profile of the Worker's isolate (${result.profile.samples} samples), self time by function:`);
			printTable(["function", "% of samples"], result.profile.top.map((r) => [r.fn, r.share]));
		}
		// When the final row reached D1, by the row's own updated_at (the Worker's clock, which is this
		// machine's): the time polling adds to the figure above is the bench's, not drover's.
		const db = await w.mf.getD1Database("DB");
		const { results: written } = await db.prepare(`SELECT id, updated_at FROM jobs WHERE agent = ?`).bind(AGENT).all();
		let pollsDuring = 0;
		let pollsTotal = 0;
		for (const r of written) {
			if (!starts.has(r.id)) continue;
			writtenMs.push(r.updated_at - starts.get(r.id));
			const sent = pollsOf.get(r.id) ?? [];
			pollsTotal += sent.length;
			pollsDuring += sent.filter((at) => at < r.updated_at).length;
		}
		// Every job's output must be in R2 (read through Miniflare's proxy now that the Worker is idle).
		const bucket = await w.mf.getR2Bucket("OUTPUT");
		let missing = 0;
		for (const id of ids) if (!(await bucket.head(`jobs/${AGENT}/${id}.jsonl`))) missing++;
		if (missing > 0) throw new Error(`${missing} of ${ids.length} jobs have no R2 output object`);
		const requests = await fetch(`${emulator.url}/__emulator/requests`).then((r) => r.json());
		// The emulator also answered the second floor's 2 requests per timed round (5 of them warm-up).
		result.checks = { r2_objects: ids.length - missing, model_requests: requests.length, jobs_run: ids.length + countJobs + 2, floor_model_requests: 2 * (jobs + 5), hook_calls: (await fx.stats()).hooks };
		if (result.checks.model_requests !== 2 * result.checks.jobs_run + 2 * (jobs + 5)) throw new Error(`the emulator saw ${requests.length} requests for ${result.checks.jobs_run} jobs and ${jobs + 5} floor rounds; expected 2 each`);
		// Locally one workerd thread runs drover's isolate, Miniflare's D1 and R2 simulators and its
		// HTTP entry: what the whole process burns per job bounds how fast a job can go.
		result.workerd_cpu_ms_per_job = {
			drover_with_polling: round((cpu.drover / jobs) * 1000, 1),
			floor: round((cpu.floor / jobs) * 1000, 1),
			floor_with_own_calls: round((cpu.floor_own / jobs) * 1000, 1),
		};
		result.drover_ms = summary(droverMs);
		// Clock stamps in whole ms on both sides (Date.now() as the request leaves, D1's stamp): the
		// percentiles read each as the 1 ms interval it stands for.
		result.drover_written_ms = summaryMs(writtenMs);
		result.floor_answered_ms = summary(floorMs);
		result.floor_with_own_calls_answered_ms = summary(ownMs);
		result.floor_written_ms = summaryMs(floorWrittenMs);
		result.floor_with_own_calls_written_ms = summaryMs(ownWrittenMs);
		result.ratio_written = { p50: round(result.drover_written_ms.p50 / result.floor_written_ms.p50, 2), p99: round(result.drover_written_ms.p99 / result.floor_written_ms.p99, 2) };
		result.ratio_with_own_calls = {
			p50: round(result.drover_written_ms.p50 / result.floor_with_own_calls_written_ms.p50, 2),
			p99: round(result.drover_written_ms.p99 / result.floor_with_own_calls_written_ms.p99, 2),
		};
		result.polls_per_job = { total: round(pollsTotal / jobs, 2), before_final_row: round(pollsDuring / jobs, 2) };
		result.drover_phases_ms = Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, summary(v, 1)]));
		result.floor_counts_per_request = floorCounts;
	} catch (err) {
		recordFailure(result, err);
	} finally {
		await tmp.done();
	}

	const b = result.billing?.mean;
	result.goal = {
		text: `drover/floor ≤ ${GOALS.ratio} (median per job); ≤ ${GOALS.d1_rows_written} D1 rows written and ≤ ${GOALS.r2_class_a} R2 class-A operations per one-tool-call job`,
		ratio_met: result.ratio_written ? result.ratio_written.p50 <= GOALS.ratio : null,
		ratio_with_own_calls_met: result.ratio_with_own_calls ? result.ratio_with_own_calls.p50 <= GOALS.ratio : null,
		d1_met: b ? b.d1_rows_written <= GOALS.d1_rows_written : null,
		r2_met: b ? b.r2_class_a <= GOALS.r2_class_a : null,
	};
	if (result.drover_ms) {
		console.log(`\nper job, ms (${jobs} jobs each, alternating):`);
		printTable(
			["", "p50", "p90", "p99", "max"],
			[
				["drover: trigger → final row written in D1, R2 written (D1's updated_at)", result.drover_written_ms.p50, result.drover_written_ms.p90, result.drover_written_ms.p99, result.drover_written_ms.max],
				["floor: same writes, request → final row written in D1 (same stamp)", result.floor_written_ms.p50, result.floor_written_ms.p90, result.floor_written_ms.p99, result.floor_written_ms.max],
				["floor + the job's own calls (2 model, 1 tool), → final row", result.floor_with_own_calls_written_ms.p50, result.floor_with_own_calls_written_ms.p90, result.floor_with_own_calls_written_ms.p99, result.floor_with_own_calls_written_ms.max],
				["ratio drover / floor", result.ratio_written.p50, "", result.ratio_written.p99, ""],
				["ratio drover / floor + own calls", result.ratio_with_own_calls.p50, "", result.ratio_with_own_calls.p99, ""],
				["for reference — floor: request → answer", result.floor_answered_ms.p50, result.floor_answered_ms.p90, result.floor_answered_ms.p99, result.floor_answered_ms.max],
				["for reference — drover: trigger → seen final by polling", result.drover_ms.p50, result.drover_ms.p90, result.drover_ms.p99, result.drover_ms.max],
			],
		);
		const p = result.drover_phases_ms;
		console.log(
			`drover's time, medians from the job record: trigger answered ${p.trigger_response.p50} ms; created → started ${p.created_to_started.p50} ms; ` +
				`started → finished ${p.started_to_finished.p50} ms (2 model calls, 1 tool call); finished → seen final in D1 ${p.finished_to_indexed.p50} ms (R2 consolidation, index flush, polling)`,
		);
		console.log(
			`polls of the D1 index per job: ${result.polls_per_job.total}, of which ${result.polls_per_job.before_final_row} sent before the final row was written (first poll: ${result.first_poll})`,
		);
		const c = result.workerd_cpu_ms_per_job;
		console.log(
			`workerd CPU per job (the whole process: isolates, simulators, HTTP): drover ${c.drover_with_polling} ms (its polling included), floor ${c.floor} ms, floor + own calls ${c.floor_with_own_calls} ms`,
		);
	}
	if (b) {
		const m = result.billing;
		console.log(`\nbilled operations per job (measured on the instrumented bundle, mean of ${m.jobs} jobs; min–max):`);
		const row = (label, key, goal) => [label, round(m.mean[key] ?? 0, 1), `${m.min[key] ?? 0}–${m.max[key] ?? 0}`, goal ?? "", result.floor_counts_per_request?.[key] ?? ""];
		printTable(
			["operation", "per job", "range", "goal", "floor"],
			[
				row("DO requests (RPC/fetch + alarms)", "do_requests"),
				row("  of which alarms", "do_alarms"),
				row("DO SQLite rows written", "sql_rows_written"),
				row("DO SQLite rows read", "sql_rows_read"),
				row("DO SQLite statements", "sql_execs"),
				row("D1 rows written", "d1_rows_written", `≤ ${GOALS.d1_rows_written}`),
				row("D1 rows read", "d1_rows_read"),
				row("D1 write statements", "d1_write_statements"),
				row("R2 class A", "r2_class_a", `≤ ${GOALS.r2_class_a}`),
				row("R2 class B", "r2_class_b"),
			],
		);
		console.log(`  DO SQLite rows read per job grow by ${m.rows_read_growth_per_history_job} for each job already in the agent's history (0: flat; the counted jobs run on histories of 2 to ${m.jobs + 1} jobs)`);
		console.log(`  R2 class A by operation: ${Object.entries(m.mean).filter(([k]) => /^r2_(put|list|createMultipartUpload|uploadPart|completeMultipartUpload)$/.test(k)).map(([k, v]) => `${k.slice(3)} ${round(v, 2)}`).join(", ")}`);
		console.log(`  DO requests by call: ${Object.entries(m.mean).filter(([k]) => k.startsWith("do_call ")).map(([k, v]) => `${k.slice(8)} ${round(v, 2)}`).join(", ")}, alarm ${round(m.mean.do_alarms ?? 0, 2)}`);
	}
	console.log(`\ngoal: ${result.goal.text}: ratio ${verdict(result.goal.ratio_met)} (with the job's own calls in the floor: ${verdict(result.goal.ratio_with_own_calls_met)}), D1 ${verdict(result.goal.d1_met)}, R2 ${verdict(result.goal.r2_met)}`);
	result.logs = logs.summary();
	if (result.logs.errors.length > 0) console.log(`worker errors: ${result.logs.errors.length}, e.g. ${result.logs.errors[0].slice(0, 300)}`);
	writeResult("overhead", { machine, ...result });
}

async function createAgent(w) {
	const r = await w.api("POST", "/v1/agents", { name: AGENT, prompt: "Call bench_hook once, then answer.", tools: [BENCH_TOOL] });
	if (r.status !== 201) throw new Error(`POST /v1/agents: ${r.status} ${r.text.slice(0, 300)}`);
}

async function trigger(w) {
	const r = await w.api("POST", `/v1/agents/${AGENT}/jobs`, {});
	if (r.status !== 201) throw new Error(`POST /v1/agents/${AGENT}/jobs: ${r.status} ${r.text.slice(0, 300)}`);
	return r;
}

/**
 * Polls the D1 index (GET /v1/jobs?agent=…&limit=1) until job `id` is final, starting no earlier
 * than `firstPollAt` (performance.now()); returns its row and when each poll was sent (Date.now()).
 */
async function waitFinal(w, id, pollMs, firstPollAt = 0) {
	const t = performance.now();
	if (firstPollAt > t) await sleep(firstPollAt - t);
	const pollsAt = [];
	for (;;) {
		pollsAt.push(Date.now());
		const res = await w.fetch(`/v1/jobs?agent=${AGENT}&limit=1`, { headers: w.auth });
		const page = await res.json();
		const row = page.jobs?.[0];
		if (row?.id === id && FINAL.has(row.status)) return { row, pollsAt };
		if (performance.now() - t > 60_000) throw new Error(`job ${id} not final in D1 after 60 s (last seen ${row?.id} ${row?.status})`);
		await sleep(pollMs);
	}
}

/** Counters once the agent's object has stopped working (two reads 300 ms apart agree). */
async function quiescent(w) {
	let last = JSON.stringify(withoutWorker(await readCounters(w)));
	for (let i = 0; i < 20; i++) {
		await sleep(300);
		const now = await readCounters(w);
		const s = JSON.stringify(withoutWorker(now));
		if (s === last) return now;
		last = s;
	}
	return readCounters(w);
}

const withoutWorker = (c) => Object.fromEntries(Object.entries(c).filter(([k]) => k !== "worker"));

/** One job's operations: the trigger request's (worker origin) plus everything its objects did. */
function combine(workerAtTrigger, all) {
	const out = { ...workerAtTrigger };
	for (const [origin, c] of Object.entries(all)) {
		if (origin === "worker") continue;
		for (const [k, v] of Object.entries(c)) out[k] = (out[k] ?? 0) + v;
	}
	return out;
}

function billingSummary(perJob) {
	const keys = [...new Set(perJob.flatMap((j) => Object.keys(j)))].sort();
	const stat = (f) => Object.fromEntries(keys.map((k) => [k, f(perJob.map((j) => j[k] ?? 0))]));
	return {
		jobs: perJob.length,
		mean: stat((v) => round(v.reduce((a, b) => a + b, 0) / v.length, 2)),
		min: stat((v) => Math.min(...v)),
		max: stat((v) => Math.max(...v)),
		// Each counted job runs on a history one job longer than the one before: a statement whose
		// cost grows with the agent's history (the jobs a month of retention keeps) shows as a slope.
		rows_read_growth_per_history_job: round(slope(perJob.map((j) => j.sql_rows_read ?? 0)), 2),
	};
}

/** The least-squares slope of `ys` against their index. */
function slope(ys) {
	const n = ys.length;
	if (n < 2) return 0;
	const mx = (n - 1) / 2;
	const my = ys.reduce((a, b) => a + b, 0) / n;
	let num = 0;
	let den = 0;
	for (let i = 0; i < n; i++) {
		num += (i - mx) * (ys[i] - my);
		den += (i - mx) ** 2;
	}
	return num / den;
}

/** Rows for `npm run bench`'s one table. */
export function tableRows(doc) {
	const rows = [];
	if (doc.drover_written_ms) {
		rows.push({
			figure: "one-tool job, trigger → final row in D1 (R2 written), p50 / p99, against the floor",
			measured: `${doc.drover_written_ms.p50} / ${doc.drover_written_ms.p99} ms vs ${doc.floor_written_ms.p50} / ${doc.floor_written_ms.p99} ms (×${doc.ratio_written.p50}; with the job's own calls ×${doc.ratio_with_own_calls.p50})`,
			goal: `ratio ≤ ${GOALS.ratio}`,
			met: doc.ratio_written.p50 <= GOALS.ratio,
		});
	}
	const b = doc.billing?.mean;
	if (b) {
		rows.push({
			figure: "billed per job: D1 rows written; R2 class A; DO requests; DO SQLite rows written; rows read (growth per job of history)",
			measured: `${b.d1_rows_written}; ${b.r2_class_a}; ${b.do_requests}; ${b.sql_rows_written}; ${b.sql_rows_read} (${doc.billing.rows_read_growth_per_history_job ?? "?"})`,
			goal: `≤ ${GOALS.d1_rows_written} D1 rows, ≤ ${GOALS.r2_class_a} R2 class A`,
			met: b.d1_rows_written <= GOALS.d1_rows_written && b.r2_class_a <= GOALS.r2_class_a,
		});
	}
	return rows;
}
