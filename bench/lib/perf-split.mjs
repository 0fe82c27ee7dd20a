// Where a workerd process's CPU goes, by `perf` with V8's perf map: the one view that sees the
// platform's own work (HTTP, SQLite commits and file I/O, Miniflare's D1 and R2 simulators, GC)
// beside the Worker's JS. The V8 inspector's profile (profile.mjs) sees only the isolate's JS, and
// attributes to whatever JS frame is on the stack the native work under it.
//
// Needs Linux `perf` and the right to attach to workerd (root, or perf_event_paranoid ≤ 1), and V8
// flags set before Miniflare starts workerd (V8_FLAGS, through MINIFLARE_WORKERD_V8_FLAGS): V8 then
// writes /tmp/perf-<pid>.map, which names JIT code as `JS:<tier><function> <script>:<line>:<col>`.
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { createInterface } from "node:readline";

// Perf flags also turn on V8's event log, one isolate-*-v8.log per isolate in the working directory;
// the log is not needed, so it goes nowhere.
export const V8_FLAGS = "--perf-basic-prof --interpreted-frames-native-stack --no-logfile-per-isolate --logfile=/dev/null";

/** Why perf cannot be used here, or null when it can. */
export function perfUnavailable() {
	const version = spawnSync("perf", ["--version"], { encoding: "utf8" });
	if (version.error || version.status !== 0) return "the `perf` command is not installed (Debian: linux-perf)";
	if (process.getuid?.() === 0) return null;
	let paranoid = 2;
	try {
		paranoid = Number(readFileSync("/proc/sys/kernel/perf_event_paranoid", "utf8"));
	} catch {}
	return paranoid <= 1 ? null : "attaching to workerd needs root or kernel.perf_event_paranoid ≤ 1";
}

/**
 * Records `pid` at `hz` with call graphs into `file` until stop(), which classifies every sample
 * and resolves to { samples, seconds, hz, categories: [{ name, samples, share }], drover: {...} }.
 * `entry` is the file name of the Worker's bundle (its JS frames are drover's own).
 */
export function startPerf(pid, file, { hz = 4000, entry = "index.js" } = {}) {
	const started = Date.now();
	const rec = spawn("perf", ["record", "-F", String(hz), "-g", "-p", String(pid), "-o", file, "-q"], { stdio: ["ignore", "ignore", "pipe"] });
	let stderr = "";
	rec.stderr.on("data", (d) => (stderr += d));
	const exited = new Promise((resolve) => rec.once("exit", resolve));
	return {
		async stop() {
			const seconds = (Date.now() - started) / 1000;
			rec.kill("SIGINT");
			const code = await exited;
			if (code !== 0 && code !== null) throw new Error(`perf record exited ${code}: ${stderr.slice(0, 300)}`);
			const split = await classify(file, entry);
			return { ...split, seconds: Math.round(seconds * 10) / 10, hz };
		},
	};
}

/** V8 appends to the map while workerd runs: remove it once the process's last recording is read. */
export function removePerfMap(pid) {
	rmSync(`/tmp/perf-${pid}.map`, { force: true });
}

/** Prints a split: each category's share and its CPU ms per `unit` (of `count` units recorded). */
export function printPerfSplit(split, count, unit, printTable) {
	const per = (n) => Math.round(((n / split.hz) * 1000 * 100) / count) / 100;
	printTable(["spent on", "share", `ms ${unit}`], split.categories.map((c) => [c.name, `${c.share} %`, per(c.samples)]));
	console.log(`of drover's JS: its SQLite statements (the SQL API's cursors included) ${split.drover.sqlite_share} % of the process; by innermost drover function:`);
	printTable(["function", "share"], split.drover.top.map((r) => [r.fn, `${r.share} %`]));
}

const KERNEL = /\(\[kernel\.kallsyms\]\)|\[unknown\] \(\[unknown\]\)$/;
const JS_FRAME = /\bJS:[~^+*']*(\S*) (\S+?):(\d+):\d+/;
const SQLITE = /sqlite3|Sqlite/;
// Under drover's JS, the SQL API's own work (cursors turning rows into objects) counts as SQLite too.
const SQL_API = /SqlStorage|sqlite3|Sqlite/;
const GC = /v8::internal::(Heap|Scavenger|MarkCompact|MinorMarkSweep|ConcurrentMarking|Sweeper)|cppgc::internal::(Marker|Sweeper)/;

/** Whose JS an outermost frame's script is. */
function scriptOwner(script, entry) {
	if (script === entry) return "drover's JS (and what it calls synchronously)";
	if (/^database\.worker\.js$|d1-api/.test(script)) return "D1: binding and Miniflare's simulator";
	if (/^(bucket|object-entry)\.worker\.js$|r2-/.test(script)) return "R2: binding and Miniflare's simulator";
	if (/entry\.worker\.js$|^miniflare:/.test(script)) return "Miniflare's entry (requests into workerd)";
	return "other JS (runtime internals)";
}

async function classify(file, entry) {
	const script = spawn("perf", ["script", "-i", file, "-F", "ip,sym,dso"], { stdio: ["ignore", "pipe", "ignore"] });
	const counts = new Map();
	const droverInner = new Map();
	let droverSql = 0;
	let total = 0;
	let frames = [];
	const add = (map, key) => map.set(key, (map.get(key) ?? 0) + 1);
	const flush = () => {
		if (frames.length === 0) return;
		total++;
		const js = frames.findIndex((f) => JS_FRAME.test(f));
		if (js >= 0) {
			const outer = JS_FRAME.exec(frames.findLast((f) => JS_FRAME.test(f)));
			const owner = scriptOwner(outer[2], entry);
			add(counts, owner);
			if (owner.startsWith("drover")) {
				const inner = JS_FRAME.exec(frames.find((f) => JS_FRAME.test(f) && f.includes(` ${entry}:`)) ?? frames[js]);
				add(droverInner, `${inner[1] || "(anonymous)"} ${inner[2]}:${inner[3]}`);
				if (frames.slice(0, js).some((f) => SQL_API.test(f))) droverSql++;
			}
		} else if (frames.some((f) => SQLITE.test(f))) add(counts, "SQLite outside JS (commits, WAL and file I/O)");
		else if (frames.some((f) => GC.test(f))) add(counts, "garbage collection");
		else if (KERNEL.test(frames[0])) add(counts, "kernel (syscalls, I/O, scheduling)");
		else add(counts, "workerd's own work (HTTP, promises, locks, RPC)");
		frames = [];
	};
	for await (const line of createInterface({ input: script.stdout })) {
		const frame = line.trim();
		if (frame === "") flush();
		else frames.push(frame);
	}
	flush();
	const share = (n) => Math.round((n / Math.max(total, 1)) * 1000) / 10;
	const droverSamples = [...counts].filter(([k]) => k.startsWith("drover")).reduce((n, [, v]) => n + v, 0);
	return {
		samples: total,
		categories: [...counts].sort((a, b) => b[1] - a[1]).map(([name, samples]) => ({ name, samples, share: share(samples) })),
		drover: {
			share: share(droverSamples),
			sqlite_share: share(droverSql),
			top: [...droverInner].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([fn, n]) => ({ fn, share: share(n) })),
		},
	};
}
