/**
 * The Messages API emulator as a local HTTP server, for `npm start` without an API key and for the
 * benchmarks: `node emulator/server.ts [--port 8788] [--host 127.0.0.1] [--keep-requests N]`. Node 22 runs this file
 * directly (type stripping), so it uses only node: built-ins.
 *
 * Point the SDK at it with `baseURL: "http://127.0.0.1:8788"`; script it with
 * `POST /__emulator/script` (a JSON array of steps), `POST /__emulator/model_errors`,
 * `POST /__emulator/reset` and `GET /__emulator/requests`.
 *
 * It is also the local sink for the URLs drover posts to (deliveries, webhook tools, hooks):
 * `POST /__sink/<name>` answers 200 and prints one line with what was sent, so `npm start` can run
 * fleet.yaml's agents without real Slack or ticket URLs (see scripts/start.mjs).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { parseArgs } from "node:util";
import { MessagesEmulator } from "./messages-api.ts";

const { values } = parseArgs({
	options: {
		port: { type: "string", default: "8788" },
		host: { type: "string", default: "127.0.0.1" },
		// How many of the latest requests GET /__emulator/requests keeps (default: all, which a
		// benchmark counts); `npm start`, which runs as long as you do, keeps 1,000.
		"keep-requests": { type: "string" },
	},
});
const port = Number(values.port);
const host = values.host;
if (!Number.isInteger(port) || port < 0 || port > 65535) {
	console.error(`--port must be a port number, got ${JSON.stringify(values.port)}`);
	process.exit(2);
}
const keepRequests = values["keep-requests"] === undefined ? undefined : Number(values["keep-requests"]);
if (keepRequests !== undefined && !(Number.isInteger(keepRequests) && keepRequests >= 0)) {
	console.error(`--keep-requests must be a whole number, got ${JSON.stringify(values["keep-requests"])}`);
	process.exit(2);
}

// No key is needed locally: whatever key drover is configured with (or none) is accepted and recorded.
const emulator = new MessagesEmulator({ requireKey: false, ...(keepRequests === undefined ? {} : { keepRequests }) });

async function toRequest(req: IncomingMessage, signal: AbortSignal): Promise<Request> {
	const headers = new Headers();
	for (const [name, value] of Object.entries(req.headersDistinct)) {
		for (const v of value ?? []) headers.append(name, v);
	}
	// Request bodies are small JSON documents; reading them whole avoids half-duplex stream plumbing.
	const chunks: Buffer[] = [];
	for await (const chunk of req) chunks.push(chunk as Buffer);
	const method = req.method ?? "GET";
	const body = method === "GET" || method === "HEAD" ? undefined : Buffer.concat(chunks);
	return new Request(new URL(req.url ?? "/", `http://${req.headers.host ?? `${host}:${port}`}`), { method, headers, body, signal });
}

/** Writes a web Response to the socket, streaming its body chunk by chunk (SSE arrives as it is sent). */
async function send(response: Response, res: ServerResponse, signal: AbortSignal): Promise<void> {
	const headers: Record<string, string> = {};
	response.headers.forEach((value, name) => {
		headers[name] = value;
	});
	if (!response.body || response.headers.has("content-length")) {
		// A complete body (JSON, a stream with no latency): head and body in one write.
		const body = response.body ? Buffer.from(await response.arrayBuffer()) : undefined;
		res.writeHead(response.status, headers);
		res.end(body);
		return;
	}
	res.writeHead(response.status, headers);
	res.flushHeaders();
	const reader = response.body.getReader();
	const stop = () => void reader.cancel(signal.reason).catch(() => {});
	signal.addEventListener("abort", stop, { once: true });
	try {
		for (;;) {
			const { done, value } = await reader.read();
			if (done) break;
			// Wait for each write so the events before a fault reach the client before the socket dies.
			await new Promise<void>((resolve, reject) => res.write(value, (error) => (error ? reject(error) : resolve())));
		}
		res.end();
	} catch {
		// An emulated drop (or a client gone): break the connection rather than end the body cleanly.
		res.destroy();
	} finally {
		signal.removeEventListener("abort", stop);
	}
}

const SINK = /^\/__sink\/([A-Za-z0-9_]{1,128})(?:[/?]|$)/;
const SINK_SHOWN_CHARS = 300;

/** A POST to the sink: printed, one line, and answered 200. */
async function sink(name: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
	const chunks: Buffer[] = [];
	for await (const chunk of req) chunks.push(chunk as Buffer);
	// One line, and no control characters: the body may carry a model's text to a terminal.
	const body = Buffer.concat(chunks).toString("utf8").replace(/\s+/g, " ").replace(/[\u0000-\u001f\u007f-\u009f]/g, "\u2426");
	const shown = body.length > SINK_SHOWN_CHARS ? `${body.slice(0, SINK_SHOWN_CHARS)}… (${body.length} chars)` : body;
	console.log(`[sink] ${req.method} ${name}: ${shown}`);
	res.writeHead(200, { "content-type": "application/json" });
	res.end('{"ok":true}');
}

const server = createServer((req, res) => {
	const sinkName = SINK.exec(req.url ?? "")?.[1];
	if (sinkName !== undefined) {
		sink(sinkName, req, res).catch(() => res.destroy());
		return;
	}
	const abort = new AbortController();
	// The client went away before the answer finished: release a hang or a delay, stop a stream.
	res.on("close", () => {
		if (!res.writableFinished) abort.abort(new Error("client disconnected"));
	});
	void (async () => {
		try {
			const request = await toRequest(req, abort.signal);
			const response = await emulator.handle(request);
			await send(response, res, abort.signal);
		} catch (error) {
			if (abort.signal.aborted) {
				res.destroy();
				return;
			}
			console.error("emulator: request failed:", error);
			if (!res.headersSent) {
				res.writeHead(500, { "content-type": "application/json" });
				res.end(JSON.stringify({ type: "error", error: { type: "api_error", message: "emulator internal error" } }));
			} else res.destroy();
		}
	})();
});

server.on("error", (error: NodeJS.ErrnoException) => {
	console.error(error.code === "EADDRINUSE" ? `port ${port} on ${host} is already in use (--port to choose another)` : error);
	process.exit(1);
});

server.listen(port, host, () => {
	const address = server.address();
	const shown = typeof address === "object" && address ? address.port : port;
	console.log(`Messages API emulator on http://${host.includes(":") ? `[${host}]` : host}:${shown}`);
});

let stopping = false;
function stop(signal: NodeJS.Signals): void {
	if (stopping) return;
	stopping = true;
	console.log(`\n${signal}: stopping the emulator`);
	// Stop accepting and drop idle keep-alives; waiting requests (hang, delay) are released with a 500
	// so their clients get an answer rather than a reset socket.
	server.close(() => process.exit(0));
	emulator.reset();
	// Whatever is still streaming after a moment is cut, and nothing may keep the process alive.
	setTimeout(() => server.closeAllConnections(), 250).unref();
	setTimeout(() => process.exit(0), 2000).unref();
}
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
