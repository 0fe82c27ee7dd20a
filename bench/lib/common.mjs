// What the listing, stream, output, overhead and bundle benchmarks share: the machine record,
// percentiles, a scratch directory that is removed on exit or Ctrl-C, a bench-configured local
// Worker with an admin token, the workerd process's memory from /proc, and the report writer.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT, startLocalWorker } from "./local-worker.mjs";

export const round = (x, digits = 1) => (x === null || x === undefined || Number.isNaN(x) ? null : Math.round(x * 10 ** digits) / 10 ** digits);
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const MiB = 1024 * 1024;

/** Nearest-rank percentile of an unsorted array (p in 0..100); null for an empty one. */
export function percentile(values, p) {
	if (values.length === 0) return null;
	const sorted = Float64Array.from(values).sort();
	const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
	return sorted[rank];
}

/**
 * Percentile of whole-millisecond values, each read as the 1 ms interval it stands for (the
 * grouped-data interpolation): a nearest-rank median of clock stamps jumps a whole ms, 13 % of a
 * 7 ms figure, where the distribution moved by a fraction of one.
 */
export function groupedPercentile(values, p) {
	if (values.length === 0) return null;
	const sorted = Float64Array.from(values).sort();
	const target = (p / 100) * sorted.length;
	let below = 0;
	for (let i = 0; i < sorted.length; ) {
		let j = i;
		while (j < sorted.length && sorted[j] === sorted[i]) j++;
		const count = j - i;
		if (below + count >= target) return sorted[i] - 0.5 + (target - below) / count;
		below += count;
		i = j;
	}
	return sorted[sorted.length - 1] + 0.5;
}

/** summary() for whole-millisecond values, its percentiles from groupedPercentile. */
export function summaryMs(values, digits = 2) {
	const s = summary(values, digits);
	if (values.length === 0) return s;
	return { ...s, p50: round(groupedPercentile(values, 50), digits), p90: round(groupedPercentile(values, 90), digits), p99: round(groupedPercentile(values, 99), digits) };
}

/** p50/p90/p99/max/mean/n, rounded to `digits`. */
export function summary(values, digits = 2) {
	if (values.length === 0) return { n: 0, p50: null, p90: null, p99: null, max: null, mean: null };
	let sum = 0;
	let max = -Infinity;
	for (const v of values) {
		sum += v;
		if (v > max) max = v;
	}
	return {
		n: values.length,
		p50: round(percentile(values, 50), digits),
		p90: round(percentile(values, 90), digits),
		p99: round(percentile(values, 99), digits),
		max: round(max, digits),
		mean: round(sum / values.length, digits),
	};
}

export function machineInfo() {
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
		load_avg_1m_at_start: round(os.loadavg()[0], 2),
		state_fs: stateFilesystem(),
	};
}

// statfs(2) magic numbers of the file systems a bench's state is usually on.
const FILESYSTEMS = { 0x01021994: "tmpfs", 0xef53: "ext4", 0x58465342: "xfs", 0x9123683e: "btrfs", 0x794c7630: "overlayfs" };

/**
 * The file system under the benches' state (the temp directory: TMPDIR picks it). Figures that
 * touch SQLite differ several-fold between a disk and tmpfs, so every result says which it was.
 */
function stateFilesystem() {
	try {
		const { type } = statfsSync(os.tmpdir());
		return FILESYSTEMS[type] ?? `0x${type.toString(16)}`;
	} catch {
		return "unknown";
	}
}

export function pkgVersion(name) {
	try {
		return JSON.parse(readFileSync(path.join(ROOT, "node_modules", name, "package.json"), "utf8")).version;
	} catch {
		return "unknown";
	}
}

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

export function printMachine(machine) {
	console.log(`machine: ${machine.cpus} × ${machine.cpu_model}, ${machine.memory_gb} GB, node ${machine.node}, workerd ${machine.workerd}, load ${machine.load_avg_1m_at_start}, state on ${machine.state_fs} (${os.tmpdir()})`);
}

/**
 * A temp directory removed on exit, and a SIGINT/SIGTERM handler that runs `cleanups` (newest
 * first, each bounded) before removing it. Returns { dir, onCleanup(fn), done() }.
 */
export function scratch(name, keep = false) {
	const dir = mkdtempSync(path.join(os.tmpdir(), `drover-bench-${name}-`));
	const cleanups = [];
	let stopping = false;
	const runCleanups = async () => {
		for (const fn of cleanups.splice(0).reverse()) {
			await Promise.race([Promise.resolve().then(fn).catch(() => {}), sleep(5000)]);
		}
		if (keep) console.log(`kept ${dir}`);
		else rmSync(dir, { recursive: true, force: true });
	};
	const interrupted = async (signal) => {
		if (stopping) return;
		stopping = true;
		console.error(`\n${signal}: stopping`);
		await runCleanups();
		process.exit(130);
	};
	process.on("SIGINT", interrupted).on("SIGTERM", interrupted);
	return {
		dir,
		onCleanup: (fn) => cleanups.push(fn),
		done: async () => {
			process.off("SIGINT", interrupted).off("SIGTERM", interrupted);
			await runCleanups();
		},
	};
}

/** Counts the Worker's structured log lines by event and its errors, keeping the first error lines. */
export function logCounter() {
	const byEvent = {};
	const errors = [];
	let errorCount = 0;
	return {
		onLog({ level, message }) {
			let event = "(unstructured)";
			try {
				const parsed = JSON.parse(message);
				event = parsed.event ?? event;
				level = parsed.level ?? level;
			} catch {}
			byEvent[event] = (byEvent[event] ?? 0) + 1;
			if (level !== "error") return;
			errorCount++;
			if (errors.length < 20) errors.push(message.slice(0, 500));
		},
		errorCount: () => errorCount,
		summary: () => ({ by_event: byEvent, errors }),
	};
}

/**
 * startLocalWorker with an admin token and the bench's secrets; returns the harness plus `api`
 * (JSON over HTTP with the token); `pid` is the workerd's, as startLocalWorker finds it.
 */
export async function startBenchWorker({ scriptPath, persistDir, secrets = {}, onLog, inspectorPort, v8Flags }) {
	const token = `bench_${crypto.randomUUID().replaceAll("-", "")}`;
	const w = await startLocalWorker({ scriptPath, persistDir, secrets: { API_TOKENS: `bench:admin:${token}`, ...secrets }, onLog, inspectorPort, v8Flags });
	const auth = { authorization: `Bearer ${token}` };
	/** `api(method, path, body?, headers?)` → { status, headers, json | text }. */
	const api = async (method, pathname, body, headers = {}) => {
		const res = await w.fetch(pathname, {
			method,
			headers: { ...auth, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await res.text();
		let json = null;
		try {
			json = JSON.parse(text);
		} catch {}
		return { status: res.status, headers: res.headers, json, text };
	};
	return { ...w, token, auth, api };
}

/**
 * { rss, hwm, anon, file } of a process in bytes, or null: VmRSS, VmHWM, and RSS split into
 * anonymous memory (heaps) and file-backed pages (mapped files, e.g. SQLite databases read through
 * mmap, which the kernel can drop at will).
 */
export function memoryOf(pid) {
	try {
		const status = readFileSync(`/proc/${pid}/status`, "utf8");
		const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
		return { rss: kb("VmRSS"), hwm: kb("VmHWM"), anon: kb("RssAnon"), file: kb("RssFile") + kb("RssShmem") };
	} catch {
		return null;
	}
}

/**
 * Samples a process's memory every `everyMs` into [t (epoch ms), rss, anon, file] until stop();
 * `peak` and `at` read RSS, or another column by name.
 */
export function rssSampler(pid, everyMs = 5) {
	const samples = [];
	const column = { rss: 1, anon: 2, file: 3 };
	const timer = setInterval(() => {
		const m = memoryOf(pid);
		if (m) samples.push([performance.timeOrigin + performance.now(), m.rss, m.anon, m.file]);
	}, everyMs);
	return {
		samples,
		stop: () => clearInterval(timer),
		/** Max within [from, to] (epoch ms), or null when no sample fell in it. */
		peak(from = -Infinity, to = Infinity, what = "rss") {
			let max = null;
			for (const s of samples) if (s[0] >= from && s[0] <= to && (max === null || s[column[what]] > max)) max = s[column[what]];
			return max;
		},
		/** The last sample at or before `t`. */
		at(t, what = "rss") {
			let last = null;
			for (const s of samples) {
				if (s[0] > t) break;
				last = s[column[what]];
			}
			return last;
		},
	};
}

/** Writes bench/results/<name>.json and says so. */
export function writeResult(name, doc) {
	const out = path.join(ROOT, "bench", "results", `${name}.json`);
	mkdirSync(path.dirname(out), { recursive: true });
	writeFileSync(out, `${JSON.stringify({ benchmark: name, at: new Date().toISOString(), ...doc }, null, "\t")}\n`);
	console.log(`\nwrote ${path.relative(process.cwd(), out)}`);
}

/** A markdown table from a header row and rows of cells. */
export function printTable(head, rows) {
	const widths = head.map((h, i) => Math.max(String(h).length, ...rows.map((r) => String(r[i] ?? "").length)));
	const line = (cells) => `| ${cells.map((c, i) => String(c ?? "").padEnd(widths[i])).join(" | ")} |`;
	console.log(`${line(head)}\n| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`);
	for (const r of rows) console.log(line(r));
}

export function progress(text) {
	if (process.stdout.isTTY) process.stdout.write(`\r${text}\x1b[K`);
	else process.stdout.write(`${text.trimEnd()}\n`);
}

/** "yes"/"NO"/"—" for a goal check. */
export const verdict = (ok) => (ok === null || ok === undefined ? "—" : ok ? "yes" : "NO");

/** The webhook tool every job benchmark gives its agent; its URL is the BENCH_HOOK_URL secret. */
export const BENCH_TOOL = {
	type: "webhook",
	name: "bench_hook",
	description: "Benchmark tool: returns a body of the requested size.",
	url_secret: "BENCH_HOOK_URL",
	input_schema: { type: "object", properties: { bytes: { type: "integer" } } },
};

export const FINAL = new Set(["completed", "failed", "cancelled", "indeterminate"]);

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat; null if unknown. */
export function cpuSecondsOf(pid) {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
		// utime and stime are fields 14 and 15 of stat (11 and 12 after "pid (comm)"), in clock ticks.
		return (Number(fields[11]) + Number(fields[12])) / 100;
	} catch {
		return null;
	}
}

/** Starts a CPU-time window over this process and the given pids; stop() → { wall_s, <name>_cpu_pct }. */
export function cpuWindow(pids) {
	const t0 = performance.now();
	const self0 = process.cpuUsage();
	const start = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, pid ? cpuSecondsOf(pid) : null]));
	return () => {
		const wall = (performance.now() - t0) / 1000;
		const self = process.cpuUsage(self0);
		const out = { wall_s: round(wall, 2), bench_process_cpu_pct: round(((self.user + self.system) / 1e6 / wall) * 100, 0) };
		for (const [name, pid] of Object.entries(pids)) {
			const end = pid ? cpuSecondsOf(pid) : null;
			out[`${name}_cpu_pct`] = start[name] === null || end === null ? null : round(((end - start[name]) / wall) * 100, 0);
		}
		return out;
	};
}

/** A benchmark that could not do its work: the error (and its cause) in the result, a FAILED line, exit code 1. */
export function recordFailure(result, err) {
	result.error = err instanceof Error ? `${err.message}${err.cause ? ` (${err.cause.message ?? err.cause})` : ""}` : String(err);
	console.log(`\nFAILED ${result.error}`);
	process.exitCode = 1;
}
