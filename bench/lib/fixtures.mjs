// Local peers for the job benchmarks, run as a child process so their work never shares the
// benchmark's event loop (which times SSE receipt and samples /proc):
//
//   POST …/v1/messages   a minimal Messages API model (streamed SSE in the real wire format) that
//                        follows a plan written into the job's prompt:
//                          BENCH-PLAN turns=<T> calls=<C> bytes=<B> tool=<name> [gate=1]
//                        For the first T turns it answers with C tool_use blocks of tool <name>
//                        (input { bytes: B }), then a final text. The turn number is the number of
//                        assistant messages already in the conversation, so it is stateless per job.
//                        With gate=1 the first turn waits until POST /__gate/open.
//                        The project's emulator (emulator/) answers one tool_use per step and records
//                        every request body; a 10,000-line job needs many tool calls per turn, and a
//                        100 MB job resends a growing conversation that the emulator would keep.
//   POST /hook           the webhook tool's target: answers 200 at once with `input.bytes` bytes of
//                        text (default 2), so tool results can be made as large as a test needs.
//   POST /__gate/close|open, GET /__stats
//
// startFixtures() spawns this file and resolves to { url, hookUrl, gate(open), stats(), stop() }.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import { startBenchWorker } from "./common.mjs";
import { bundle } from "./local-worker.mjs";

const SELF = fileURLToPath(import.meta.url);

export async function startFixtures() {
	// stdin is a pipe the child watches: if this process dies without stopping it, the child exits too.
	const child = spawn(process.execPath, [SELF, "--serve"], { stdio: ["pipe", "pipe", "inherit"] });
	const url = await new Promise((resolve, reject) => {
		let out = "";
		child.stdout.on("data", (chunk) => {
			out += chunk;
			const m = /listening on (http:\/\/\S+)/.exec(out);
			if (m) resolve(m[1]);
		});
		child.once("exit", (code) => reject(new Error(`fixtures exited (${code}) before listening: ${out}`)));
	});
	child.stdout.resume();
	const post = (path) => fetch(`${url}${path}`, { method: "POST" }).then((r) => r.json());
	return {
		url,
		hookUrl: `${url}/hook`,
		pid: child.pid,
		gate: (open) => post(open ? "/__gate/open" : "/__gate/close"),
		stats: () => fetch(`${url}/__stats`).then((r) => r.json()),
		stop: () =>
			new Promise((resolve) => {
				if (child.exitCode !== null) return resolve();
				child.once("exit", resolve);
				child.kill("SIGTERM");
			}),
	};
}

// ── The child ────────────────────────────────────────────────────────────────────────────────
if (process.argv[1] === SELF && process.argv.includes("--serve")) serve();

function serve() {
	const stats = { messages: 0, hooks: 0, hook_bytes: 0, max_request_bytes: 0 };
	let gateOpen = true;
	let gateWaiters = [];
	const filler = new Map();
	/** `n` bytes of plain prose: no quotes or backslashes, so JSON-escaping does not grow it. */
	const text = (n) => {
		if (!filler.has(n)) {
			const unit = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore ";
			filler.set(n, Buffer.from(unit.repeat(Math.ceil(n / unit.length)).slice(0, n)));
		}
		return filler.get(n);
	};
	let ids = 0;
	const id = (prefix) => `${prefix}${(++ids).toString(36).padStart(12, "0")}${Math.random().toString(36).slice(2, 12)}`;

	const server = createServer(async (req, res) => {
		const chunks = [];
		try {
			for await (const c of req) chunks.push(c);
		} catch {
			return; // the caller gave up mid-request (its timeout): nothing to answer
		}
		const body = Buffer.concat(chunks);
		const path = (req.url ?? "/").split("?")[0];
		try {
			if (path === "/hook" && req.method === "POST") {
				stats.hooks++;
				let bytes = 2;
				try {
					bytes = Number(JSON.parse(body.toString()).input?.bytes ?? 2) || 2;
				} catch {}
				const payload = bytes === 2 ? Buffer.from("ok") : text(bytes);
				stats.hook_bytes += payload.length;
				res.writeHead(200, { "content-type": "text/plain", "content-length": payload.length });
				res.end(payload);
				return;
			}
			if (path.endsWith("/v1/messages") && req.method === "POST") {
				stats.messages++;
				stats.max_request_bytes = Math.max(stats.max_request_bytes, body.length);
				await answer(body.toString(), res);
				return;
			}
			if (path === "/__gate/close") {
				gateOpen = false;
				return json(res, { gate: "closed" });
			}
			if (path === "/__gate/open") {
				gateOpen = true;
				for (const w of gateWaiters) w();
				gateWaiters = [];
				return json(res, { gate: "open" });
			}
			if (path === "/__stats") return json(res, stats);
			res.writeHead(404).end();
		} catch (err) {
			console.error("fixtures:", err);
			if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
			res.end(JSON.stringify({ type: "error", error: { type: "api_error", message: String(err) } }));
		}
	});

	async function answer(raw, res) {
		const plan = /BENCH-PLAN turns=(\d+) calls=(\d+) bytes=(\d+) tool=([A-Za-z0-9_-]+)(?: gate=(\d))?/.exec(raw);
		const turns = Number(plan?.[1] ?? 0);
		const calls = Number(plan?.[2] ?? 1);
		const bytes = Number(plan?.[3] ?? 2);
		const tool = plan?.[4] ?? "bench_hook";
		// The SDK serializes with JSON.stringify: a role key appears exactly like this, and text inside
		// a string value would carry escaped quotes instead.
		let turn = 0;
		for (let at = raw.indexOf('"role":"assistant"'); at !== -1; at = raw.indexOf('"role":"assistant"', at + 1)) turn++;
		if (plan?.[5] === "1" && turn === 0 && !gateOpen) await new Promise((r) => gateWaiters.push(r));
		const model = /"model":"([^"]+)"/.exec(raw)?.[1] ?? "claude-sonnet-5-5";
		const content =
			turn < turns
				? Array.from({ length: calls }, (_, i) => ({ type: "tool_use", id: id("toolu_01"), name: tool, input: { bytes, turn, call: i } }))
				: [{ type: "text", text: `done after ${turn} turns` }];
		const stop = turn < turns ? "tool_use" : "end_turn";
		const usage = {
			input_tokens: Math.ceil(raw.length / 4),
			output_tokens: 10 * content.length,
			cache_creation_input_tokens: 0,
			cache_read_input_tokens: 0,
			cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
			service_tier: "standard",
		};
		const message = { id: id("msg_01"), type: "message", role: "assistant", model, content, stop_reason: stop, stop_sequence: null, usage };
		if (!raw.includes('"stream":true')) {
			return json(res, message);
		}
		// The event sequence the real API streams (as emulator/messages-api.ts does).
		const events = [
			["message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } }],
			["ping", { type: "ping" }],
		];
		content.forEach((block, index) => {
			if (block.type === "text") {
				events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "", citations: null } }]);
				events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } }]);
			} else {
				events.push(["content_block_start", { type: "content_block_start", index, content_block: { ...block, input: {} } }]);
				events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: "" } }]);
				events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } }]);
			}
			events.push(["content_block_stop", { type: "content_block_stop", index }]);
		});
		events.push(["message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }]);
		events.push(["message_stop", { type: "message_stop" }]);
		res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "request-id": id("req_011C") });
		res.end(events.map(([type, data]) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`).join(""));
	}

	function json(res, value) {
		const text = JSON.stringify(value);
		res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
		res.end(text);
	}

	server.keepAliveTimeout = 60_000;
	server.listen(0, "127.0.0.1", () => console.log(`fixtures listening on http://127.0.0.1:${server.address().port}`));
	const stop = () => {
		server.close(() => process.exit(0));
		server.closeAllConnections();
		setTimeout(() => process.exit(0), 1000).unref();
	};
	process.on("SIGTERM", stop).on("SIGINT", stop);
	process.stdin.on("end", stop).on("error", stop).resume();
}

/**
 * The real bundle in workerd, talking to the model stand-in and hook target above: what the
 * stream and output benchmarks both run against. Both are stopped by the scratch dir's cleanup.
 */
export async function startWorkerWithFixtures(tmp, logs, { inspectorPort } = {}) {
	const scriptPath = bundle(`${tmp.dir}/bundle`);
	const fx = await startFixtures();
	tmp.onCleanup(() => fx.stop());
	const w = await startBenchWorker({
		scriptPath,
		persistDir: `${tmp.dir}/state`,
		secrets: { ANTHROPIC_API_KEY: "", ANTHROPIC_BASE_URL: fx.url, BENCH_HOOK_URL: fx.hookUrl },
		onLog: logs.onLog,
		inspectorPort,
	});
	tmp.onCleanup(() => w.dispose());
	return { w, fx };
}
