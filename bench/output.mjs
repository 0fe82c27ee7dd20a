// Large output: one job whose JSONL output is ~20 MB (--full: ~100 MB), made of big lines, and
// what it costs to consolidate it into one R2 object when the job ends.
//
//   job      an API agent whose model (bench/lib/fixtures.mjs) calls its webhook tool once a turn
//            for T turns; the tool's target answers each call with a body of --line-kb (default
//            900 KB; webhook tools keep up to 1,000,000 bytes), so each turn adds a ~900 KB
//            tool_result line. The job ends with a final text.
//   figures  consolidation: from the final status (the `timestamp` of the job's last JSONL line,
//            the `result` line committed with the final status) to the R2 object
//            jobs/<agent>/<id>.jsonl existing (its `uploaded` instant, read through Miniflare's R2
//            binding once the Worker is idle); MB/s = object bytes / that time. An upper bound is
//            given too: final status → the D1 index showing the job final (the agent's object
//            writes that row only after the object is written), polled over HTTP every 50 ms.
//            memory: workerd's VmRSS sampled every 5 ms from /proc: the idle baseline before the
//            job, the peak while the job ran, the RSS at the final status, and the peak from the
//            final status to the object's existence, i.e. during consolidation; plus VmHWM. RSS
//            counts all of workerd (Miniflare's D1 and R2 simulators too) and heap V8 keeps, so the
//            Worker isolate's JS heap (V8 usedSize, through the inspector, every 10 ms; baseline the
//            lowest reading over a second of idle) is reported beside it, RSS split into anonymous
//            and file-backed pages.
//   lines    the ended job's lines by number, 3 at a time (?after=A&lines=3, as the dashboard's
//            earlier-lines reader and `drover logs --from` ask): the first, from the middle (R2
//            keeps no index of lines: the object is streamed from the last line mark, about every
//            MiB, that the agent noted at consolidation before them) and the
//            last (a window read from the object's end); each request's time, and workerd's RSS
//            peak during the three above what it was before them.
//   live     the same job again, with a heap snapshot every ~100 ms (V8 collects garbage before
//            each): the isolate's live heap plus ArrayBuffer stores. Snapshots pause the isolate,
//            so this run's timings are not reported, and a peak between samples can be missed.
//   floor    bench/lib/floor-worker.mjs in its own workerd: the same lines written to a Durable
//            Object's SQLite one commit each, then read back into one multipart R2 object; its RSS
//            gain is what the platform takes for this much output, drover's beyond it its own. A
//            second floor first fetches each line from the same tool target, as the job's tool
//            calls do: the platform plus the job's own I/O.
// Goals: consolidation ≥ 20 MB/s; ≤ 32 MB above baseline (judged on RSS beyond the floor's; the
// live heap and the raw RSS are reported too).
import path from "node:path";
import { parseArgs } from "node:util";
import { startWorkerWithFixtures } from "./lib/fixtures.mjs";
import { startFloorWorker } from "./lib/floor-worker.mjs";
import { ROOT } from "./lib/local-worker.mjs";
import { heapSampler, liveHeapSampler } from "./lib/profile.mjs";
import { BENCH_TOOL, FINAL, logCounter, machineInfo, memoryOf, MiB, printMachine, printTable, progress, recordFailure, round, rssSampler, scratch, sleep, verdict, writeResult } from "./lib/common.mjs";

export const title = "large output: one job writing ~20 MB of JSONL (--full: ~100 MB) in ~900 KB lines; R2 consolidation throughput and workerd memory";
export const usage = `    --mb=20           output size to aim for (MB of tool results)
    --full            100 MB
    --line-kb=900     size of each tool result line (≤ 1000: a webhook tool keeps 1,000,000 bytes)
    --keep            keep the temp directory
    --peak-snapshot   write the live-heap run's largest heap snapshot (bench/results/output-live-peak.heapsnapshot)
`;

const AGENT = "bench-output";
const GOAL_MBPS = 20;
const GOAL_RSS_MB = 32;

export async function run(argv) {
	const { values } = parseArgs({
		args: argv,
		options: {
			mb: { type: "string" },
			full: { type: "boolean", default: false },
			"line-kb": { type: "string", default: "900" },
			keep: { type: "boolean", default: false },
			"peak-snapshot": { type: "boolean", default: false },
		},
	});
	const targetMB = Number(values.mb ?? (values.full ? 100 : 20));
	const lineBytes = Number(values["line-kb"]) * 1000;
	if (lineBytes > 1_000_000) throw new Error("--line-kb must be at most 1000 (a webhook tool result is capped at 1,000,000 bytes)");
	const turns = Math.ceil((targetMB * 1e6) / lineBytes);
	if (turns > 499) throw new Error(`${targetMB} MB in ${lineBytes} B lines needs ${turns} turns; max_turns is 500`);
	const machine = machineInfo();
	printMachine(machine);
	console.log(`job: ${turns} turns, each one tool result of ${(lineBytes / 1000).toLocaleString("en")} KB → ~${round((turns * lineBytes) / 1e6, 0)} MB of JSONL\n`);

	const tmp = scratch("output", values.keep);
	const logs = logCounter();
	const result = { target_mb: targetMB, line_bytes: lineBytes, turns };
	try {
		const inspectorPort = 9300 + Math.floor(Math.random() * 500);
		const { w, fx } = await startWorkerWithFixtures(tmp, logs, { inspectorPort });
		if (!w.pid) throw new Error("could not find the workerd process in /proc");

		const created = await w.api("POST", "/v1/agents", {
			name: AGENT,
			prompt: `BENCH-PLAN turns=${turns} calls=1 bytes=${lineBytes} tool=${BENCH_TOOL.name}`,
			max_turns: 500,
			timeout: "1h",
			tools: [BENCH_TOOL],
		});
		if (created.status !== 201) throw new Error(`POST /v1/agents: ${created.status} ${created.text.slice(0, 300)}`);

		// Baseline: workerd idle with the agent created, before the job.
		await sleep(1500);
		const sampler = rssSampler(w.pid, 5);
		await sleep(1000);
		const baseline = median(sampler.samples.map(([, rss]) => rss));
		const baselineAnon = median(sampler.samples.map(([, , anon]) => anon));
		const baselineFile = median(sampler.samples.map(([, , , file]) => file));
		result.workerd_baseline_mb = round(baseline / MiB, 1);
		const heap = await heapSampler(inspectorPort, 10);

		const { jobId, row, tTrigger, tFinal, tIndexed } = await runJob(w, fx, turns);
		sampler.stop();
		await heap.stop();
		// The object, through the binding now that the Worker is idle.
		const bucket = await w.mf.getR2Bucket("OUTPUT");
		const head = await objectHead(bucket, `jobs/${AGENT}/${jobId}.jsonl`);
		const leftover = await bucket.list({ prefix: `jobs/${AGENT}/${jobId}/` });
		const tObject = head.uploaded.getTime();
		const range = await w.api("GET", `/v1/jobs/${jobId}/output`, undefined, { range: "bytes=0-99" });
		if (range.status !== 206 || !range.headers.get("content-range")?.endsWith(`/${head.size}`)) {
			throw new Error(`Range read: ${range.status} ${range.headers.get("content-range")} (object ${head.size} B)`);
		}
		result.lines_read = await readByLineNumbers(w, jobId, Number(head.customMetadata?.lines));
		// Per turn an assistant, a tool_use and a tool_result line, plus the start, the final answer and
		// the result; and a context_cleared line whenever old results left the model's conversation.
		const types = await lineTypes(await bucket.get(`jobs/${AGENT}/${jobId}.jsonl`));
		const cleared = types.get("system/context_cleared") ?? 0;
		const expectedLines = 3 * turns + 3 + cleared;
		result.job = {
			id: jobId,
			status: row.status,
			lines: Number(head.customMetadata?.lines),
			expected_lines: expectedLines,
			tool_result_lines: types.get("tool_result") ?? 0,
			context_cleared_lines: cleared,
			run_s: round((Date.parse(row.finished_at) - Date.parse(row.started_at)) / 1000, 2),
			largest_model_request_mb: round((await fx.stats()).max_request_bytes / 1e6, 1),
		};
		if (result.job.lines !== expectedLines) throw new Error(`object has ${result.job.lines} lines, expected ${expectedLines}`);
		if (result.job.tool_result_lines !== turns) throw new Error(`object has ${result.job.tool_result_lines} tool_result lines, expected ${turns}`);
		const consolidationMs = tObject - tFinal;
		result.object = { bytes: head.size, mb: round(head.size / 1e6, 1), chunks_left: leftover.objects.length, multipart_etag: head.etag.includes("-") };
		result.consolidation = {
			ms: consolidationMs,
			mb_per_s: round(head.size / 1e6 / (consolidationMs / 1000), 1),
			upper_bound_ms: tIndexed - tFinal,
			upper_bound_mb_per_s: round(head.size / 1e6 / ((tIndexed - tFinal) / 1000), 1),
		};
		const atFinal = sampler.at(tFinal);
		const peakJob = sampler.peak(tTrigger, tFinal);
		const peakConsolidation = sampler.peak(tFinal, Math.max(tObject, tFinal + 10));
		result.memory_mb = {
			baseline: round(baseline / MiB, 1),
			peak_while_running: round(peakJob / MiB, 1),
			at_final_status: round(atFinal / MiB, 1),
			peak_during_consolidation: round(peakConsolidation / MiB, 1),
			consolidation_above_final: round((peakConsolidation - atFinal) / MiB, 1),
			consolidation_above_baseline: round((peakConsolidation - baseline) / MiB, 1),
			job_peak_above_baseline: round((Math.max(peakJob, peakConsolidation) - baseline) / MiB, 1),
			// RSS in two parts: anonymous memory (V8 heaps, malloc) and file-backed pages (mapped files)
			anon_peak_above_baseline: round((sampler.peak(tTrigger, Math.max(tObject, tFinal + 10), "anon") - baselineAnon) / MiB, 1),
			file_peak_above_baseline: round((sampler.peak(tTrigger, Math.max(tObject, tFinal + 10), "file") - baselineFile) / MiB, 1),
			vm_hwm: round(memoryOf(w.pid).hwm / MiB, 1),
			samples: sampler.samples.length,
			samples_in_consolidation: sampler.samples.filter(([t]) => t >= tFinal && t <= tObject).length,
		};
		const heapJob = heap.peak(tTrigger, tFinal);
		const heapConsolidation = heap.peak(tFinal, Math.max(tObject, tFinal + 10));
		result.heap_mb = {
			baseline: round(heap.baseline / MiB, 1),
			peak_while_running_above_baseline: round((heapJob - heap.baseline) / MiB, 1),
			peak_during_consolidation_above_baseline: round((heapConsolidation - heap.baseline) / MiB, 1),
			samples: heap.samples.length,
		};

		// Live memory: the same job again, with V8 collecting garbage at every sample (heap snapshots
		// pause the isolate, so this run's timings are not reported).
		console.log("the same job again, sampling the isolate's live heap (garbage collected at every sample)");
		const peakSnapshot = values["peak-snapshot"] ? path.join(ROOT, "bench", "results", "output-live-peak.heapsnapshot") : null;
		const live = await liveHeapSampler(inspectorPort, { gapMs: 100, peakSnapshot });
		const again = await runJob(w, fx, turns);
		const object = await objectHead(bucket, `jobs/${AGENT}/${again.jobId}.jsonl`);
		await live.stop();
		result.live_heap_mb = {
			baseline: round(live.baseline / MiB, 1),
			peak_while_running_above_baseline: round((live.peak(again.tTrigger, again.tFinal) - live.baseline) / MiB, 1),
			peak_during_consolidation_above_baseline: round((live.peak(again.tFinal, object.uploaded.getTime() + 1) - live.baseline) / MiB, 1),
			samples: live.samples.length,
			samples_while_running: live.samples.filter(([t]) => t >= again.tTrigger && t <= again.tFinal).length,
		};

		// The floor, in a workerd of its own: the same lines through SQLite into one multipart object,
		// nothing else. What its RSS gains is what the platform (workerd, SQLite, Miniflare's R2) takes
		// for this much output; drover's own memory is what its RSS gains beyond that. A second floor
		// also fetches each line's content from the same tool target first: the job's own I/O.
		console.log("the floor: the same lines into SQLite, then one multipart R2 object (bench/lib/floor-worker.mjs); then with the tool fetches");
		result.floor = await runOutputFloor(`${tmp.dir}/floor`, turns, lineBytes);
		result.floor_with_own_calls = await runOutputFloor(`${tmp.dir}/floor-calls`, turns, lineBytes, fx.hookUrl);
		result.memory_mb.drover_above_floor = round(result.memory_mb.job_peak_above_baseline - result.floor.rss_peak_above_baseline_mb, 1);
		result.memory_mb.drover_above_floor_with_own_calls = round(result.memory_mb.job_peak_above_baseline - result.floor_with_own_calls.rss_peak_above_baseline_mb, 1);
	} catch (err) {
		recordFailure(result, err);
	} finally {
		await tmp.done();
	}

	const c = result.consolidation;
	const m = result.memory_mb;
	const h = result.heap_mb;
	result.goal = {
		text: `consolidation ≥ ${GOAL_MBPS} MB/s and workerd ≤ ${GOAL_RSS_MB} MB above baseline, for ~100 MB of output`,
		throughput_met: c ? c.mb_per_s >= GOAL_MBPS : null,
		memory_met: m ? m.job_peak_above_baseline <= GOAL_RSS_MB : null,
		consolidation_memory_met: m ? m.consolidation_above_baseline <= GOAL_RSS_MB : null,
		heap_met: h ? Math.max(h.peak_while_running_above_baseline, h.peak_during_consolidation_above_baseline) <= GOAL_RSS_MB : null,
		beyond_floor_met: result.memory_mb?.drover_above_floor !== undefined ? result.memory_mb.drover_above_floor <= GOAL_RSS_MB : null,
		live_heap_met: result.live_heap_mb
			? Math.max(result.live_heap_mb.peak_while_running_above_baseline, result.live_heap_mb.peak_during_consolidation_above_baseline) <= GOAL_RSS_MB
			: null,
	};
	const l = result.live_heap_mb;
	const r = result.lines_read;
	if (c) {
		const j = result.job;
		console.log(`\njob: ${j.lines} lines, ${result.object.mb} MB of JSONL in ${j.run_s} s of running; the last model request carried ${j.largest_model_request_mb} MB (the whole conversation, resent every turn)`);
		printTable(
			["figure", "measured", "goal"],
			[
				["consolidation: final status → R2 object", `${c.ms} ms (${c.mb_per_s} MB/s)`, `≥ ${GOAL_MBPS} MB/s`],
				["  upper bound: final status → final in D1", `${c.upper_bound_ms} ms (${c.upper_bound_mb_per_s} MB/s)`, ""],
				["workerd RSS baseline (idle, before the job)", `${m.baseline} MB`, ""],
				["  peak while the job ran", `${m.peak_while_running} MB (+${round(m.peak_while_running - m.baseline, 1)})`, ""],
				["  at the final status", `${m.at_final_status} MB`, ""],
				["  peak during consolidation", `${m.peak_during_consolidation} MB (+${m.consolidation_above_final} over the final-status RSS, +${m.consolidation_above_baseline} over baseline)`, `≤ +${GOAL_RSS_MB} MB`],
				["  of it, anonymous (heaps) / file-backed (mapped files): peak above baseline", `+${m.anon_peak_above_baseline} / +${m.file_peak_above_baseline} MB`, ""],
				["  VmHWM (process lifetime)", `${m.vm_hwm} MB`, ""],
				...(result.floor
					? [
							[`floor (same lines via SQLite into one multipart object): workerd RSS peak above its baseline`, `+${result.floor.rss_peak_above_baseline_mb} MB (${result.floor.s} s)`, ""],
							["  drover's RSS peak beyond the floor's", `${m.drover_above_floor >= 0 ? "+" : ""}${m.drover_above_floor} MB`, `≤ +${GOAL_RSS_MB} MB`],
							[`floor + the job's tool fetches (each line fetched from the tool target first): RSS peak above its baseline`, `+${result.floor_with_own_calls.rss_peak_above_baseline_mb} MB (${result.floor_with_own_calls.s} s)`, ""],
							["  drover's RSS peak beyond that floor's", `${m.drover_above_floor_with_own_calls >= 0 ? "+" : ""}${m.drover_above_floor_with_own_calls} MB`, ""],
						]
					: []),
				...(r
					? [
							[`${r.page_lines} lines by number (?after=A&lines=${r.page_lines}), the job ended, median of 3 rounds (the first round's, which may carry a GC pause, in brackets): the first`, `${r.start.ms} ms [${r.start.first_ms}] (${r.start.kb} KB)`, ""],
							[`  from the middle (after line ${r.middle.after}: the object read from the last line mark before them)`, `${r.middle.ms} ms [${r.middle.first_ms}] (${r.middle.kb} KB)`, ""],
							[`  the last ${r.page_lines} (a window read from the object's end)`, `${r.end.ms} ms [${r.end.first_ms}] (${r.end.kb} KB)`, ""],
							["  workerd RSS peak during the nine reads (three rounds), above the RSS before them", `+${r.rss_peak_above_before_mb} MB`, `≤ +${GOAL_RSS_MB} MB`],
						]
					: []),
				["Worker isolate JS heap (used) baseline", `${h.baseline} MB`, ""],
				["  peak while the job ran, above baseline", `+${h.peak_while_running_above_baseline} MB`, `≤ +${GOAL_RSS_MB} MB`],
				["  peak during consolidation, above baseline", `+${h.peak_during_consolidation_above_baseline} MB`, `≤ +${GOAL_RSS_MB} MB`],
				...(l
					? [
							[`live JS heap after a forced GC, baseline (second run, ${l.samples_while_running} samples while running)`, `${l.baseline} MB`, ""],
							["  peak while the job ran, above baseline", `+${l.peak_while_running_above_baseline} MB`, `≤ +${GOAL_RSS_MB} MB`],
							["  peak during consolidation, above baseline", `+${l.peak_during_consolidation_above_baseline} MB`, `≤ +${GOAL_RSS_MB} MB`],
						]
					: []),
			],
		);
		console.log(`R2: one object of ${result.object.bytes.toLocaleString("en")} B (${result.object.multipart_etag ? "multipart" : "single put"}), ${result.object.chunks_left} chunk objects left; ${m.samples_in_consolidation} RSS samples fell inside the consolidation window`);
		console.log(`goal: ${result.goal.text}: throughput ${verdict(result.goal.throughput_met)}, workerd RSS over the whole job ${verdict(result.goal.memory_met)} (during consolidation alone ${verdict(result.goal.consolidation_memory_met)}), the isolate's JS heap ${verdict(result.goal.heap_met)} (used, garbage included), live ${verdict(result.goal.live_heap_met)}; RSS beyond the floor's ${verdict(result.goal.beyond_floor_met)}${targetMB < 100 ? ` (ran ${targetMB} MB; --full for 100)` : ""}`);
	}
	result.logs = logs.summary();
	if (result.logs.errors.length > 0) console.log(`worker errors: ${result.logs.errors.length}, e.g. ${result.logs.errors[0].slice(0, 300)}`);
	writeResult("output", { machine, ...result });
}

/** Lines of a JSONL object by type (system lines by type/subtype), read as a stream. */
async function lineTypes(object) {
	const types = new Map();
	let rest = "";
	const count = (line) => {
		if (!line) return;
		const l = JSON.parse(line);
		const key = l.type === "system" ? `system/${l.subtype}` : l.type;
		types.set(key, (types.get(key) ?? 0) + 1);
	};
	for await (const chunk of object.body.pipeThrough(new TextDecoderStream())) {
		const parts = (rest + chunk).split("\n");
		rest = parts.pop();
		parts.forEach(count);
	}
	count(rest);
	return types;
}

/** One output floor in a fresh workerd: its RSS peak above its own idle baseline while it writes. */
async function runOutputFloor(persistDir, lines, lineBytes, toolUrl) {
	const floor = await startFloorWorker({ persistDir });
	try {
		if (!floor.pid) throw new Error("could not find the floor's workerd process in /proc");
		await sleep(1500);
		const sampler = rssSampler(floor.pid, 5);
		await sleep(1000);
		const baseline = median(sampler.samples.map(([, rss]) => rss));
		const t0 = Date.now();
		const done = await floor.output(lines, lineBytes, toolUrl);
		const t1 = Date.now();
		await sleep(200);
		sampler.stop();
		return {
			bytes: done.bytes,
			parts: done.parts,
			s: round((t1 - t0) / 1000, 2),
			rss_baseline_mb: round(baseline / MiB, 1),
			rss_peak_above_baseline_mb: round((sampler.peak(t0, t1 + 200) - baseline) / MiB, 1),
		};
	} finally {
		await floor.dispose();
	}
}

/** Triggers the bench agent's job and waits until the D1 index shows it final. */
async function runJob(w, fx, turns) {
	const tTrigger = Date.now();
	const trig = await w.api("POST", `/v1/agents/${AGENT}/jobs`, {});
	if (trig.status !== 201) throw new Error(`POST /v1/agents/${AGENT}/jobs: ${trig.status} ${trig.text.slice(0, 300)}`);
	const jobId = trig.json.id;
	console.log(`job ${jobId} running`);
	const hooksBefore = (await fx.stats()).hooks;
	// The D1 index only: polling the agent's object would read from its SQLite while it works.
	let row;
	let polls = 0;
	for (;;) {
		const page = (await w.api("GET", `/v1/jobs?agent=${AGENT}&limit=1`)).json;
		row = page.jobs?.[0];
		if (row?.id === jobId && FINAL.has(row.status)) break;
		if (Date.now() - tTrigger > 30 * 60_000) throw new Error(`job not final after 30 min (${row?.status})`);
		if (++polls % 40 === 0) {
			const st = await fx.stats();
			progress(`${round((Date.now() - tTrigger) / 1000, 0)} s: ${st.hooks - hooksBefore}/${turns} tool calls answered, last model request ${round(st.max_request_bytes / 1e6, 1)} MB`);
		}
		await sleep(50);
	}
	const tIndexed = Date.now();
	await sleep(500);
	console.log();
	if (row.status !== "completed") throw new Error(`job ended ${row.status}: ${JSON.stringify(row)}`);
	// The final status instant: the timestamp of the last line (the `result` line).
	const tail = await w.api("GET", `/v1/jobs/${jobId}/output?lines=1`);
	const last = JSON.parse(tail.text.trim());
	if (last.type !== "system" || last.subtype !== "result") throw new Error(`last line is not the result line: ${tail.text.slice(0, 200)}`);
	return { jobId, row, tTrigger, tFinal: Date.parse(last.timestamp), tIndexed };
}

/** The job's R2 object; the index shows the job final only once it is written, so it is there. */
async function objectHead(bucket, key) {
	const head = await bucket.head(key);
	if (!head) throw new Error(`no R2 object ${key}`);
	return head;
}

function median(values) {
	const s = [...values].sort((a, b) => a - b);
	return s[Math.floor(s.length / 2)] ?? null;
}

/** Rows for `npm run bench`'s one table. */
export function tableRows(doc) {
	if (!doc.consolidation) return [];
	const m = doc.memory_mb;
	const l = doc.live_heap_mb;
	const size = `${doc.object.mb} MB job`;
	// The goals are for ~100 MB of output (--full); a smaller run reports without judging.
	const judged = (met) => (doc.target_mb >= 100 ? met : null);
	const at100 = doc.target_mb >= 100 ? "" : " (judged at 100 MB: --full)";
	return [
		{ figure: `${size}: consolidation into R2`, measured: `${doc.consolidation.mb_per_s} MB/s`, goal: `≥ ${GOAL_MBPS} MB/s${at100}`, met: judged(doc.goal.throughput_met) },
		...(l ? [{ figure: `${size}: the isolate's live JS heap, peak above baseline`, measured: `+${Math.max(l.peak_while_running_above_baseline, l.peak_during_consolidation_above_baseline)} MB`, goal: `≤ ${GOAL_RSS_MB} MB${at100}`, met: judged(doc.goal.live_heap_met) }] : []),
		{
			figure: `${size}: workerd RSS peak above baseline${m.drover_above_floor !== undefined ? ", and beyond the floor's" : ""}`,
			measured: `+${m.job_peak_above_baseline} MB${m.drover_above_floor !== undefined ? `; +${m.drover_above_floor} MB` : ""}`,
			goal: `≤ ${GOAL_RSS_MB} MB${at100}`,
			met: judged(doc.goal.beyond_floor_met ?? doc.goal.memory_met),
		},
		...(m.drover_above_floor_with_own_calls !== undefined
			? [{ figure: `${size}: workerd RSS beyond a floor that also fetches the tool results`, measured: `${m.drover_above_floor_with_own_calls >= 0 ? "+" : ""}${m.drover_above_floor_with_own_calls} MB`, goal: `≤ ${GOAL_RSS_MB} MB${at100}`, met: judged(m.drover_above_floor_with_own_calls <= GOAL_RSS_MB) }]
			: []),
	];
}

/**
 * An ended job's lines by their numbers, as the dashboard's earlier-lines reader and `drover logs
 * --from` ask for them: a page at the start, in the middle and at the end of the R2 object. R2 keeps
 * no index of lines: a page in the middle is read from the last line mark before it (one about every
 * MiB, noted by the agent when it consolidated the output). Read three times: a large job leaves the
 * isolate's heap at ~54 MB, and whichever request after it sets off V8's major collection pays a
 * pause of 40–63 ms (seen with --trace-gc; about two runs in three, the others collect during the
 * job), so the first round may carry it and the median of three is the read's own time.
 */
async function readByLineNumbers(w, jobId, lines) {
	const pageLines = 3;
	const rounds = 3;
	const before = memoryOf(w.pid).rss;
	const sampler = rssSampler(w.pid, 5);
	const read = {};
	try {
		for (let r = 0; r < rounds; r++) {
			for (const [at, after] of [["start", 0], ["middle", Math.floor(lines / 2)], ["end", lines - pageLines]]) {
				const t0 = performance.now();
				const answer = await w.api("GET", `/v1/jobs/${jobId}/output?after=${after}&lines=${pageLines}`);
				const ms = performance.now() - t0;
				const got = answer.text.split("\n").filter((l) => l.trim() !== "").length;
				if (answer.status !== 200 || answer.headers.get("x-drover-first-line") !== String(after + 1) || got !== pageLines) {
					throw new Error(`?after=${after}&lines=${pageLines}: ${answer.status}, first line ${answer.headers.get("x-drover-first-line")}, ${got} lines`);
				}
				read[at] ??= { after, kb: round(Buffer.byteLength(answer.text) / 1e3, 1), rounds_ms: [] };
				read[at].rounds_ms.push(round(ms, 1));
			}
		}
	} finally {
		sampler.stop();
	}
	for (const at of Object.values(read)) {
		at.first_ms = at.rounds_ms[0];
		at.ms = [...at.rounds_ms].sort((a, b) => a - b)[Math.floor(rounds / 2)];
	}
	return { page_lines: pageLines, ...read, rss_peak_above_before_mb: round((Math.max(before, sampler.peak() ?? before) - before) / MiB, 1) };
}
