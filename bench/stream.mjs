// SSE delivery: a job writing L JSONL lines (default 2,000; --full 10,000) watched live through
// GET /v1/jobs/:id/stream, once with 1, 10 and 100 subscribers (a job each, same run), so the cost
// of the fan-out shows beside the goal's 100.
//
//   job          an API agent whose model (bench/lib/fixtures.mjs, on loopback so the Worker runs
//                keyless as with the emulator) answers T turns of C parallel tool_use blocks (default
//                C = 20: 2C + 1 = 41 lines a turn), then a final text. Its webhook tool (url_secret
//                BENCH_HOOK_URL) points at the fixtures' /hook, which answers 200 "ok" at once. The
//                project's emulator answers one tool_use per step, and max_turns ≤ 500 would cap a
//                job at ~1,500 lines at 3 lines a turn.
//   subscribers  the job is triggered with its first model call held (the fixtures' gate); all
//                subscribers connect and have received the stream's opening comment, then the gate
//                opens, so every line after the first is produced while all of them watch live.
//   figures      per line and subscriber: receipt time (this process, performance.now() aligned to
//                Date.now()) minus the line's `timestamp` (ISO, ms, set by the Worker when it
//                commits the line; same machine clock): p50/p90/p99/max over all subscribers and
//                lines committed after the gate opened. Per subscriber: lines lost (ids missing
//                from 1..N, N = the job's line count from GET /v1/jobs/:id/output), duplicated and
//                out of order: all must be 0. CPU shares of workerd and of this process (the
//                subscribers) while the job ran, from /proc.
// Goal: p99 ≤ 50 ms; nothing lost or duplicated.
import { parseArgs } from "node:util";
import { startWorkerWithFixtures } from "./lib/fixtures.mjs";
import { BENCH_TOOL, cpuWindow, FINAL, logCounter, machineInfo, printMachine, printTable, progress, recordFailure, round, scratch, sleep, summary, verdict, writeResult } from "./lib/common.mjs";

export const title = "SSE delivery: a job writing 2,000 lines (--full: 10,000) to 1, 10 and 100 live subscribers (a job each)";
export const usage = `    --lines=2000        lines the job writes (about; rounded up to whole turns)
    --full              10,000 lines
    --subscribers=1,10,100  SSE client counts, one job each (the goal is read at 100)
    --calls=20          parallel tool calls per model turn (2·calls + 1 lines a turn)
    --keep              keep the temp directory
`;

const GOAL_P99_MS = 50;
const AGENT = "bench-stream";

export async function run(argv) {
	const { values } = parseArgs({
		args: argv,
		options: {
			lines: { type: "string" },
			full: { type: "boolean", default: false },
			subscribers: { type: "string", default: "1,10,100" },
			calls: { type: "string", default: "20" },
			keep: { type: "boolean", default: false },
		},
	});
	const target = Number(values.lines ?? (values.full ? 10_000 : 2_000));
	const counts = values.subscribers.split(",").map(Number);
	const calls = Number(values.calls);
	// init line + T turns of (assistant + C tool_use + C tool_result) + final assistant + result line.
	const turns = Math.ceil((target - 3) / (2 * calls + 1));
	if (turns > 500) throw new Error(`${target} lines need ${turns} turns at ${calls} calls a turn; max_turns is 500: raise --calls`);
	const machine = machineInfo();
	printMachine(machine);
	console.log(`job: ${turns} turns × ${calls} tool calls → ${3 + turns * (2 * calls + 1)} lines; one job per subscriber count: ${counts.join(", ")}\n`);

	const tmp = scratch("stream", values.keep);
	const logs = logCounter();
	const result = { target_lines: target, turns, calls_per_turn: calls, runs: [] };
	try {
		const { w, fx } = await startWorkerWithFixtures(tmp, logs);

		const created = await w.api("POST", "/v1/agents", {
			name: AGENT,
			prompt: `BENCH-PLAN turns=${turns} calls=${calls} bytes=2 tool=${BENCH_TOOL.name} gate=1`,
			max_turns: 500,
			timeout: "1h",
			tools: [BENCH_TOOL],
		});
		if (created.status !== 201) throw new Error(`POST /v1/agents: ${created.status} ${created.text.slice(0, 500)}`);
		for (const n of counts) {
			console.log(`-- ${n} subscriber${n === 1 ? "" : "s"}`);
			const r = { subscribers: n };
			result.runs.push(r);
			await runOnce(w, fx, n, r);
		}
	} catch (err) {
		recordFailure(result, err);
	} finally {
		await tmp.done();
	}

	const main = result.runs.find((r) => r.subscribers === 100 && r.latency_ms) ?? null;
	const goalOk = main ? main.latency_ms.p99 <= GOAL_P99_MS && main.delivery.lost_total === 0 && main.delivery.duplicated_total === 0 : null;
	result.goal = { text: `p99 line-committed → received ≤ ${GOAL_P99_MS} ms over 10,000 lines × 100 subscribers, 0 lost, 0 duplicated`, met: goalOk };
	const done = result.runs.filter((r) => r.latency_ms);
	if (done.length > 0) {
		console.log(`\nline committed → received by a subscriber (ms), one job of ~${target} lines per row:`);
		printTable(
			["subscribers", "lines", "job s", "lines/s", "samples", "p50", "p90", "p99", "max", "lost", "dup", "out of order", "no end", "workerd CPU", "bench CPU"],
			done.map((r) => {
				const l = r.latency_ms;
				const d = r.delivery;
				return [r.subscribers, r.lines, r.job_wall_s, r.lines_per_s, l.n.toLocaleString("en"), l.p50, l.p90, l.p99, l.max, d.lost_total, d.duplicated_total, d.out_of_order_total, d.subscribers_without_end_event, `${r.cpu.workerd_cpu_pct} %`, `${r.cpu.bench_process_cpu_pct} %`];
			}),
		);
		console.log("CPU: share of one core while the job streamed (workerd runs the Worker, its Durable Objects and Miniflare's entry worker on one thread).");
		console.log(`goal: ${result.goal.text}: ${verdict(goalOk)}${main && main.lines < 10_000 ? ` (ran ${main.lines} lines; --full for 10,000)` : ""}`);
	}
	result.logs = logs.summary();
	if (result.logs.errors.length > 0) console.log(`worker errors: ${result.logs.errors.length}, e.g. ${result.logs.errors[0].slice(0, 300)}`);
	writeResult("stream", { machine, ...result });
}

/** One job watched by `subscribers` clients; fills `result`. */
async function runOnce(w, fx, subscribers, result) {
	await fx.gate(false);
	const trig = await w.api("POST", `/v1/agents/${AGENT}/jobs`, {});
	if (trig.status !== 201) throw new Error(`POST /v1/agents/${AGENT}/jobs: ${trig.status} ${trig.text.slice(0, 500)}`);
	const jobId = trig.json.id;
	result.job_id = jobId;

	// Connect every subscriber; each resolves `ready` on the stream's opening comment.
	const subs = Array.from({ length: subscribers }, (_, i) => subscriber(w, jobId, i));
	await Promise.all(subs.map((s) => s.ready));
	// Lines committed from here on are produced while every subscriber watches.
	const goWall = Date.now();
	const cpu = cpuWindow({ workerd: w.pid, fixtures: fx.pid });
	await fx.gate(true);
	const t0 = performance.now();
	const ticker = setInterval(() => progress(`lines received by subscriber 0: ${subs[0].ids.length}`), 2000);
	await Promise.all(subs.map((s) => s.done));
	clearInterval(ticker);
	result.cpu = cpu();
	result.job_wall_s = round((performance.now() - t0) / 1000, 2);

	const job = (await w.api("GET", `/v1/jobs/${jobId}`)).json;
	if (!FINAL.has(job?.status)) throw new Error(`streams ended but the job is ${job?.status}`);
	result.job_status = job.status;
	// N from the job's own output (R2 once consolidated, else the agent's SQLite).
	const output = await w.api("GET", `/v1/jobs/${jobId}/output`);
	if (output.status !== 200) throw new Error(`GET /v1/jobs/${jobId}/output: ${output.status}`);
	const n = output.text.split("\n").filter((l) => l !== "").length;
	result.lines = n;
	result.lines_per_s = round(n / result.job_wall_s, 0);

	// Latency over lines committed after the gate opened (line 1, `init`, predates the subscribers).
	const latencies = [];
	const perSub = subs.map((s) => {
		const seen = new Uint8Array(n + 2);
		let dup = 0;
		let outOfOrder = 0;
		let prev = 0;
		let extra = 0;
		for (let k = 0; k < s.ids.length; k++) {
			const id = s.ids[k];
			if (!(id >= 1 && id <= n)) extra++;
			else if (seen[id]) dup++;
			else seen[id] = 1;
			if (id <= prev) outOfOrder++;
			prev = id;
			if (s.stamps[k] >= goWall) latencies.push(s.recv[k] - s.stamps[k]);
		}
		let lost = 0;
		for (let id = 1; id <= n; id++) if (!seen[id]) lost++;
		return { lost, duplicated: dup, out_of_order: outOfOrder, unknown_ids: extra, received: s.ids.length, end_event: s.ended, status_events: s.statusEvents, error: s.error };
	});
	const sum = (k) => perSub.reduce((a, s) => a + s[k], 0);
	result.latency_ms = summary(latencies);
	result.delivery = {
		lost_total: sum("lost"),
		duplicated_total: sum("duplicated"),
		out_of_order_total: sum("out_of_order"),
		unknown_ids_total: sum("unknown_ids"),
		subscribers_with_loss_or_dup: perSub.filter((s) => s.lost + s.duplicated + s.unknown_ids > 0).length,
		subscribers_without_end_event: perSub.filter((s) => !s.end_event).length,
		errors: perSub.filter((s) => s.error).map((s) => s.error).slice(0, 5),
	};
	result.per_subscriber = perSub.map(({ lost, duplicated, out_of_order, received }) => ({ lost, duplicated, out_of_order, received }));
	const l = result.latency_ms;
	console.log(`\n   ${n} lines in ${result.job_wall_s} s; p50 ${l.p50} ms, p99 ${l.p99} ms; lost ${result.delivery.lost_total}, duplicated ${result.delivery.duplicated_total}`);
}

/**
 * One SSE client. Records, per `line` event, its id, its committed timestamp (epoch ms) and its
 * receipt time (epoch ms, sub-millisecond: performance.now() plus a fixed offset to Date.now()).
 */
function subscriber(w, jobId, index) {
	const s = { ids: [], stamps: [], recv: [], statusEvents: 0, ended: false, error: null };
	const offset = Date.now() - performance.now();
	let readyResolve;
	s.ready = new Promise((r) => (readyResolve = r));
	s.done = (async () => {
		try {
			const res = await w.fetch(`/v1/jobs/${jobId}/stream`, { headers: { ...w.auth, accept: "text/event-stream" } });
			if (res.status !== 200) throw new Error(`subscriber ${index}: ${res.status} ${await res.text()}`);
			const reader = res.body.getReader();
			const decoder = new TextDecoder();
			let buffer = "";
			for (;;) {
				const { done, value } = await reader.read();
				const now = performance.now() + offset;
				if (done) break;
				readyResolve();
				buffer += decoder.decode(value, { stream: true });
				let cut;
				while ((cut = buffer.indexOf("\n\n")) !== -1) {
					const block = buffer.slice(0, cut);
					buffer = buffer.slice(cut + 2);
					if (block.startsWith(":")) continue;
					let id = null;
					let event = "message";
					let data = "";
					for (const line of block.split("\n")) {
						if (line.startsWith("id: ")) id = Number(line.slice(4));
						else if (line.startsWith("event: ")) event = line.slice(7);
						else if (line.startsWith("data: ")) data = line.slice(6);
					}
					if (event === "line") {
						const m = /"timestamp":"([^"]+)"/.exec(data.slice(-60)) ?? /"timestamp":"([^"]+)"/.exec(data);
						s.ids.push(id);
						s.stamps.push(m ? Date.parse(m[1]) : NaN);
						s.recv.push(now);
					} else if (event === "status") s.statusEvents++;
					else if (event === "end") s.ended = true;
				}
			}
		} catch (err) {
			s.error = err instanceof Error ? err.message : String(err);
		} finally {
			readyResolve();
		}
	})();
	return s;
}

/** Rows for `npm run bench`'s one table. */
export function tableRows(doc) {
	const main = [...doc.runs].filter((r) => r.latency_ms).sort((a, b) => b.subscribers - a.subscribers)[0];
	if (!main) return [];
	const d = main.delivery;
	return [
		{
			figure: `${main.lines.toLocaleString("en")} lines × ${main.subscribers} subscribers: latency p50 / p99; lost, duplicated`,
			measured: `${main.latency_ms.p50} / ${main.latency_ms.p99} ms; ${d.lost_total}, ${d.duplicated_total}`,
			goal: "p99 ≤ 50 ms; 0, 0 (judged at 10,000 × 100: --full)",
			met: doc.target_lines >= 10_000 ? doc.goal.met : null,
		},
	];
}
