// The Worker's isolate (Durable Objects included) through workerd's V8 inspector: a CPU profile,
// with self time summed by function so the hot path reads without DevTools (the raw profile is
// written too: open it in Chrome DevTools → Performance), and JS heap sampling.
import { writeFileSync } from "node:fs";

/** Connects to the inspector on `port` and starts sampling; resolves to { stop() → summary }. */
export async function startProfile(port, { intervalUs = 200 } = {}) {
	const { send, close } = await connectInspector(port);
	await send("Profiler.enable");
	await send("Profiler.setSamplingInterval", { interval: intervalUs });
	await send("Profiler.start");
	return {
		async stop(file) {
			const { result } = await send("Profiler.stop");
			close();
			if (file) writeFileSync(file, JSON.stringify(result.profile));
			return summarize(result.profile);
		},
	};
}

/**
 * The Worker isolate's JS heap (V8's usedSize: live objects plus garbage not yet collected), sampled
 * every `everyMs` through the inspector: the memory drover's own code holds, without workerd's
 * other isolates (Miniflare's D1 and R2 simulators) and the heap V8 keeps reserved, which RSS counts.
 */
export async function heapSampler(port, everyMs = 10) {
	const { send, close } = await connectInspector(port);
	const usage = async () => (await send("Runtime.getHeapUsage")).result.usedSize;
	// workerd's inspector does not answer HeapProfiler.collectGarbage, so the baseline is the lowest
	// reading over a second of idle (the closest to the live size; it makes "above" no smaller).
	let baseline = Infinity;
	for (const until = Date.now() + 1000; Date.now() < until; ) {
		baseline = Math.min(baseline, await usage());
		await new Promise((r) => setTimeout(r, everyMs));
	}
	return sampling(usage, everyMs, baseline, close);
}

/**
 * The Worker isolate's live JS heap: V8 collects garbage before it takes a heap snapshot (and
 * workerd's inspector answers nothing else that forces a collection), so each sample takes one and
 * reads the heap right after: live objects plus ArrayBuffer backing stores. A snapshot pauses the
 * isolate while it is taken, so samples are spaced `gapMs` apart to let the work go on between
 * them, and a peak between two of them can be missed: the figure is a lower bound of the true live
 * peak, the used-size sampler above an upper bound.
 */
export async function liveHeapSampler(port, { gapMs = 500, peakSnapshot = null } = {}) {
	// With `peakSnapshot` (a path), the snapshot of the largest sample is written there on stop():
	// open it in Chrome DevTools (Memory) to see what the isolate held at its peak.
	let chunks = null;
	let peak = { size: 0, chunks: null };
	const { send, close } = await connectInspector(port, peakSnapshot ? (chunk) => chunks.push(chunk) : null);
	await send("HeapProfiler.enable");
	const live = async () => {
		chunks = [];
		await send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
		const u = (await send("Runtime.getHeapUsage")).result;
		const size = u.usedSize + (u.backingStorageSize ?? 0);
		if (peakSnapshot && size > peak.size) peak = { size, chunks };
		return size;
	};
	const baseline = Math.min(await live(), await live());
	const sampler = sampling(live, gapMs, baseline, close);
	if (!peakSnapshot) return sampler;
	return {
		...sampler,
		async stop() {
			await sampler.stop();
			writeFileSync(peakSnapshot, peak.chunks.join(""));
		},
	};
}

/** Calls `read` every `gapMs` into [t, value] samples until stop(); `peak(from, to)` over a window. */
function sampling(read, gapMs, baseline, close) {
	const samples = [];
	let running = true;
	const loop = (async () => {
		while (running) {
			samples.push([Date.now(), await read()]);
			await new Promise((r) => setTimeout(r, gapMs));
		}
	})();
	return {
		baseline,
		samples,
		peak: (from, to) => Math.max(0, ...samples.filter(([t]) => t >= from && t <= to).map(([, v]) => v)),
		async stop() {
			running = false;
			await loop;
			close();
		},
	};
}

async function connectInspector(port, onSnapshotChunk = null) {
	const targets = await fetch(`http://127.0.0.1:${port}/json`).then((r) => r.json());
	const target = targets.find((t) => /drover/.test(t.title ?? t.id ?? "")) ?? targets[0];
	if (!target) throw new Error(`no inspector target on port ${port}`);
	const ws = new WebSocket(target.webSocketDebuggerUrl ?? `ws://127.0.0.1:${port}/${target.id}`);
	await new Promise((resolve, reject) => {
		ws.onopen = resolve;
		ws.onerror = reject;
	});
	let id = 0;
	const pending = new Map();
	ws.onmessage = (event) => {
		const data = String(event.data);
		// A heap snapshot streams as thousands of chunk events, read only when asked for.
		if (data.startsWith('{"method":"HeapProfiler.addHeapSnapshotChunk"')) {
			if (onSnapshotChunk) onSnapshotChunk(JSON.parse(data).params.chunk);
			return;
		}
		const msg = JSON.parse(data);
		if (msg.id && pending.has(msg.id)) {
			pending.get(msg.id)(msg);
			pending.delete(msg.id);
		}
	};
	const send = (method, params = {}) =>
		new Promise((resolve) => {
			pending.set(++id, resolve);
			ws.send(JSON.stringify({ id, method, params }));
		});
	return { send, close: () => ws.close() };
}

/** Self time by function (name and file:line), largest first, as shares of all samples. */
export function summarize(profile, top = 25) {
	const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
	const counts = new Map();
	for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
	const total = profile.samples.length;
	const self = new Map();
	for (const [nodeId, n] of counts) {
		const { functionName, url, lineNumber } = byNode.get(nodeId).callFrame;
		const file = (url || "").split("/").pop();
		const key = `${functionName || "(anonymous)"} ${file ? `${file}:${lineNumber + 1}` : ""}`.trim();
		self.set(key, (self.get(key) ?? 0) + n);
	}
	const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
	return { samples: total, top: rows.map(([fn, n]) => ({ fn, share: Math.round((n / total) * 1000) / 10 })) };
}
