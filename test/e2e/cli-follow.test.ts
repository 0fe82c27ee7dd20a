// The CLI's SSE follower against fake servers (node:http) that break connections on purpose: the
// parts of `drover logs --follow` / `trigger --wait` that the real Worker never does on demand.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { childEnv, CLI, runCliProcess } from "./cli-process.ts";
import { ApiClient, ApiError, CliError } from "../../cli/client.ts";
import { followJob } from "../../cli/sse.ts";
import { agentSink, followAgent } from "../../cli/agent-logs.ts";
import type { Context } from "../../cli/context.ts";
import { paint } from "../../cli/format.ts";
import type { JobSummary } from "../../cli/types.ts";
import { serversClosedAfterEach } from "./test-servers.ts";

const JOB = "job-2026-01-01-abcdef";
const TOKEN = "fake-token-0123456789";

interface FakeOptions {
	total: number;
	/** Line events served by each connection before it is cut (the last connection is never cut). */
	cutAfter: (connection: number) => number | null;
	finalStatus?: string;
	/** Frames a misbehaving server sends again after a resume (must not be printed twice). */
	replay?: number;
}

const lineBody = (n: number) => JSON.stringify({ type: "assistant", content: `line ${n}`, model: "m" });

/** A fake /v1/jobs/:id/stream that cuts connections and honours Last-Event-ID. */
function fakeStream(options: FakeOptions) {
	const seen: (string | null)[] = [];
	const handler = (req: IncomingMessage, res: ServerResponse) => {
		if (req.headers.authorization !== `Bearer ${TOKEN}`) {
			res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "unauthorized", message: "invalid token" } }));
			return;
		}
		if (req.url !== `/v1/jobs/${JOB}/stream`) {
			res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "not_found", message: `no job at ${req.url}` } }));
			return;
		}
		const connection = seen.length;
		const lastId = (req.headers["last-event-id"] as string | undefined) ?? null;
		seen.push(lastId);
		res.writeHead(200, { "content-type": "text/event-stream" });
		res.write(": fake\nretry: 2000\n\n");
		res.write(`event: status\ndata: {"status":"running","revision":2}\n\n`);
		const cut = options.cutAfter(connection);
		let from = Number(lastId ?? 0) + 1;
		if (lastId !== null && options.replay) from = Math.max(1, from - options.replay);
		let sent = 0;
		for (let n = from; n <= options.total; n++) {
			// Split a frame across writes, and use CRLF in places, as proxies may.
			const frame = `id: ${n}\nevent: line\ndata: ${lineBody(n)}\n\n`;
			const crlf = n % 3 === 0 ? frame.replace(/\n/g, "\r\n") : frame;
			res.write(crlf.slice(0, 7));
			res.write(crlf.slice(7));
			sent++;
			if (cut !== null && sent >= cut) {
				// Let the frames reach the socket, then break it without ending the chunked body.
				setTimeout(() => res.socket?.destroy(), 20);
				return;
			}
		}
		res.write(`event: status\ndata: {"status":"${options.finalStatus ?? "completed"}","revision":9}\n\n`);
		res.end(`event: end\ndata: {"status":"${options.finalStatus ?? "completed"}"}\n\n`);
	};
	return { handler, seen };
}

const { servers, listen } = serversClosedAfterEach();

/** The URL of a port nothing listens on: a connection to it is refused at once. */
async function closedPort(): Promise<string> {
	const server = createServer();
	server.listen(0, "127.0.0.1");
	await once(server, "listening");
	const { port } = server.address() as AddressInfo;
	await new Promise((resolve) => server.close(resolve));
	return `http://127.0.0.1:${port}`;
}

function runCli(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
	return runCliProcess(args, env);
}

describe("followJob", () => {
	it("resumes after every dropped connection with Last-Event-ID: every line once, in order", async () => {
		const fake = fakeStream({ total: 25, cutAfter: (c) => (c < 4 ? 5 : null) });
		const url = await listen(fake.handler);
		const lines: number[] = [];
		const reconnects: number[] = [];
		const result = await followJob(new ApiClient({ url, token: TOKEN }), JOB, {
			onLine: (n, body) => {
				expect(JSON.parse(body)).toMatchObject({ content: `line ${n}` });
				lines.push(n);
			},
			onReconnect: (r) => reconnects.push(r.after),
			backoffMs: () => 5,
		});
		expect(lines).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
		expect(fake.seen).toEqual([null, "5", "10", "15", "20"]);
		expect(reconnects).toEqual([5, 10, 15, 20]);
		expect(result).toEqual({ status: "completed", lastLine: 25 });
	});

	it("skips lines a server sends again after a resume", async () => {
		const fake = fakeStream({ total: 12, cutAfter: (c) => (c === 0 ? 6 : null), replay: 3 });
		const url = await listen(fake.handler);
		const lines: number[] = [];
		await followJob(new ApiClient({ url, token: TOKEN }), JOB, { onLine: (n) => lines.push(n), backoffMs: () => 5 });
		expect(lines).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
	});

	it("gives up after a bounded number of reconnects that bring nothing new", async () => {
		// Every connection is cut before its first line: no progress, ever.
		let connections = 0;
		const url = await listen((_req, res) => {
			connections++;
			res.writeHead(200, { "content-type": "text/event-stream" });
			res.write(": hello\n\n");
			setTimeout(() => res.socket?.destroy(), 5);
		});
		const waits: { attempt: number; delayMs: number }[] = [];
		const err = await followJob(new ApiClient({ url, token: TOKEN }), JOB, {
			onLine: () => {},
			onReconnect: ({ attempt, delayMs }) => waits.push({ attempt, delayMs }),
			retries: 3,
			backoffMs: () => 10,
		}).catch((e: unknown) => e);
		expect(err).toBeInstanceOf(CliError);
		expect((err as Error).message).toMatch(/lost the stream of job .* after 3 reconnects/);
		// Not a failed job's 1 nor a cancelled one's 2: the outcome is unknown, and a script can tell.
		expect((err as CliError).exitCode).toBe(3);
		expect((err as CliError).hint).toBe(`the job may still be running: drover job ${JOB} says how it stands, drover logs --job ${JOB} --follow --from 1 goes on after the last line seen`);
		expect(connections).toBe(4);
		// It waited only between connections, each time the backoff it was given: no other wait, and none after the last.
		expect(waits).toEqual([1, 2, 3].map((attempt) => ({ attempt, delayMs: 10 })));
	});

	it("rides out a restart's worth of refused connections by default once the server has answered (a deploy, a restarted wrangler dev)", async () => {
		// The server is down for its first 20 connections (8 s of the old 5-reconnect budget gave up on
		// jobs that then completed), then serves the whole job.
		const fake = fakeStream({ total: 3, cutAfter: () => null });
		let connections = 0;
		const url = await listen((req, res) => {
			if (++connections <= 20) {
				res.socket?.destroy();
				return;
			}
			fake.handler(req, res);
		});
		const lines: number[] = [];
		const result = await followJob(new ApiClient({ url, token: TOKEN }), JOB, { onLine: (n) => lines.push(n), backoffMs: () => 1, serverAnswered: true });
		expect(lines).toEqual([1, 2, 3]);
		expect(result.lastLine).toBe(3);
		expect(connections).toBe(21);
	});

	it("keeps waiting through silent connections that an idle timeout cuts (a job waiting for approval)", async () => {
		const fake = fakeStream({ total: 2, cutAfter: () => null });
		let connections = 0;
		const url = await listen((req, res) => {
			// Six silent connections, each cut after a while, then the job goes on: more cuts than
			// `retries`, but none of them was a quick failure.
			if (++connections <= 6) {
				res.writeHead(200, { "content-type": "text/event-stream" });
				res.write(": quiet\n\n");
				setTimeout(() => res.socket?.destroy(), 60);
				return;
			}
			fake.handler(req, res);
		});
		const lines: number[] = [];
		const result = await followJob(new ApiClient({ url, token: TOKEN }), JOB, { onLine: (n) => lines.push(n), retries: 2, healthyAfterMs: 40, backoffMs: () => 5 });
		expect(connections).toBe(7);
		expect(lines).toEqual([1, 2]);
		expect(result.status).toBe("completed");
	});

	it("fails at once when the first connection fails and no stream ever opened (a wrong URL, a stopped server)", async () => {
		const url = await closedPort();
		const reconnects: number[] = [];
		const err = await followJob(new ApiClient({ url, token: TOKEN }), JOB, { onLine: () => {}, onReconnect: (r) => reconnects.push(r.attempt) }).catch((e: unknown) => e);
		expect(err).toBeInstanceOf(CliError);
		expect((err as Error).message).toMatch(new RegExp(`^cannot reach ${url.replace(/[.]/g, "\\.")}: .*ECONNREFUSED`));
		expect(reconnects).toEqual([]);
		// A server that answers the first connection with a 503 has not opened a stream either.
		let calls = 0;
		const down = await listen((_req, res) => {
			calls++;
			res.writeHead(503, { "content-type": "text/html" }).end("<h1>Service Unavailable</h1>");
		});
		const unavailable = await followJob(new ApiClient({ url: down, token: TOKEN }), JOB, { onLine: () => {}, onReconnect: (r) => reconnects.push(r.attempt) }).catch((e: unknown) => e);
		expect((unavailable as ApiError).status).toBe(503);
		expect(calls).toBe(1);
		expect(reconnects).toEqual([]);
	});

	it("does not retry what retrying cannot fix: a 404 or 401 is thrown at once", async () => {
		const fake = fakeStream({ total: 1, cutAfter: () => null });
		const url = await listen(fake.handler);
		const notFound = await followJob(new ApiClient({ url, token: TOKEN }), "job-2026-01-01-zzzzzz", { onLine: () => {}, backoffMs: () => 5 }).catch((e: unknown) => e);
		expect(notFound).toBeInstanceOf(ApiError);
		expect((notFound as ApiError).status).toBe(404);
		const unauthorized = await followJob(new ApiClient({ url, token: "wrong-token-0000000000" }), JOB, { onLine: () => {}, backoffMs: () => 5 }).catch((e: unknown) => e);
		expect((unauthorized as ApiError).status).toBe(401);
		expect(fake.seen).toEqual([]);
	});

	it("retries the 404 of a job it just created while the job's index row waits for D1, and no other 404", async () => {
		const fake = fakeStream({ total: 3, cutAfter: (c) => (c === 0 ? 1 : null) });
		let calls = 0;
		const url = await listen((req, res) => {
			calls++;
			// The agent's first writes of the row to D1 were refused: the route cannot find the job yet.
			if (calls <= 3) {
				res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "not_found", message: `no job ${JOB}` } }));
				return;
			}
			// Once streamed, a 404 is final (the job was deleted).
			if (calls === 5) {
				res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "not_found", message: `no job ${JOB}` } }));
				return;
			}
			fake.handler(req, res);
		});
		const reasons: string[] = [];
		const lines: number[] = [];
		const follow = (created: boolean) =>
			followJob(new ApiClient({ url, token: TOKEN }), JOB, { onLine: (n) => lines.push(n), onReconnect: (r) => reasons.push(r.reason), backoffMs: () => 5, sleep: async () => {}, serverAnswered: true, created });
		const gone = await follow(true).catch((e: unknown) => e);
		// Three 404s ridden out, then the cut of the stream that opened (its reason is the socket's).
		expect(reasons).toHaveLength(4);
		expect(reasons.slice(0, 3)).toEqual(Array.from({ length: 3 }, () => `job ${JOB} is not in the API's index yet (its agent writes it there once D1 takes it): no job ${JOB}`));
		expect(lines).toEqual([1]);
		expect((gone as ApiError).status).toBe(404);
		expect(calls).toBe(5);

		// Without `created` (logs --follow of a job given by id), the first 404 is final.
		calls = 0;
		const notFound = await follow(false).catch((e: unknown) => e);
		expect((notFound as ApiError).status).toBe(404);
		expect(calls).toBe(1);
	});

	it("waits what a 429's Retry-After asks before reconnecting (a job's streams at their cap), not its own quicker backoff", async () => {
		const fake = fakeStream({ total: 4, cutAfter: (c) => (c === 0 ? 2 : null) });
		let calls = 0;
		const url = await listen((req, res) => {
			calls++;
			// The reconnect finds the job's 100 streams taken, as the agent's object answers then.
			if (calls === 2) {
				res.writeHead(429, { "content-type": "application/json", "retry-after": "30" });
				res.end(JSON.stringify({ error: { code: "rate_limited", message: `job ${JOB} already has 100 live streams` } }));
				return;
			}
			fake.handler(req, res);
		});
		const waits: { after: number; delayMs: number }[] = [];
		const lines: number[] = [];
		const result = await followJob(new ApiClient({ url, token: TOKEN }), JOB, {
			onLine: (n) => lines.push(n),
			onReconnect: ({ after, delayMs }) => waits.push({ after, delayMs }),
			// The waits themselves are not sat out here: the delays asked for are what is checked.
			backoffMs: () => 5,
			sleep: async () => {},
		});
		expect(waits).toEqual([
			{ after: 2, delayMs: 5 },
			{ after: 2, delayMs: 30_000 },
		]);
		expect(lines).toEqual([1, 2, 3, 4]);
		expect(result.status).toBe("completed");
	});

	it("retries a server that is briefly down (connection refused, 503) and then resumes", async () => {
		const fake = fakeStream({ total: 6, cutAfter: (c) => (c === 0 ? 3 : null) });
		let calls = 0;
		const url = await listen((req, res) => {
			calls++;
			// The second and third attempts find a proxy in front answering 503.
			if (calls === 2 || calls === 3) {
				res.writeHead(503, { "content-type": "text/html" }).end("<h1>Service Unavailable</h1>");
				return;
			}
			fake.handler(req, res);
		});
		const lines: number[] = [];
		const result = await followJob(new ApiClient({ url, token: TOKEN }), JOB, { onLine: (n) => lines.push(n), backoffMs: () => 5 });
		expect(lines).toEqual([1, 2, 3, 4, 5, 6]);
		expect(fake.seen).toEqual([null, "3"]);
		expect(result.status).toBe("completed");
	});
});

describe("the drover binary following through dropped connections", () => {
	it("logs --job --follow --json prints every line once and exits with the job's outcome", async () => {
		const fake = fakeStream({ total: 9, cutAfter: (c) => (c < 2 ? 4 : null), finalStatus: "cancelled" });
		const url = await listen(fake.handler);
		const r = await runCli(["logs", "--job", JOB, "--follow", "--json"], { DROVER_URL: url, DROVER_TOKEN: TOKEN });
		expect(r.stdout.trim().split("\n")).toEqual(Array.from({ length: 9 }, (_, i) => lineBody(i + 1)));
		expect(fake.seen).toEqual([null, "4", "8"]);
		expect(r.stderr).toMatch(/resuming after line 4/);
		expect(r.stderr).toMatch(/resuming after line 8/);
		// cancelled → 2, as for trigger --wait.
		expect(r.status).toBe(2);
	});

	it("renders lines for a person and exits 0 for a completed job", async () => {
		const fake = fakeStream({ total: 3, cutAfter: (c) => (c === 0 ? 2 : null) });
		const url = await listen(fake.handler);
		const r = await runCli(["logs", "--job", JOB, "--follow"], { DROVER_URL: url, DROVER_TOKEN: TOKEN });
		expect(r.stdout).toBe("line 1\nline 2\nline 3\n");
		expect(r.status).toBe(0);
	});
});

describe("logs --job --follow --lines N", () => {
	/** The fake stream, and a /v1/jobs/:id/output that serves `?lines=N` (naming its first line unless told not to) and the whole output. */
	function withOutput(options: FakeOptions, namesFirstLine: boolean) {
		const stream = fakeStream(options);
		const outputs: string[] = [];
		const handler = (req: IncomingMessage, res: ServerResponse) => {
			const url = new URL(req.url!, "http://fake");
			if (url.pathname !== `/v1/jobs/${JOB}/output`) return stream.handler(req, res);
			outputs.push(url.search);
			const n = url.searchParams.has("lines") ? Number(url.searchParams.get("lines")) : options.total;
			const first = Math.max(1, options.total - n + 1);
			const body = Array.from({ length: options.total - first + 1 }, (_, i) => `${lineBody(first + i)}\n`).join("");
			res.writeHead(200, { "content-type": "application/x-ndjson", ...(namesFirstLine ? { "x-drover-first-line": String(first) } : {}) }).end(body);
		};
		return { handler, outputs, seen: stream.seen };
	}

	it("starts N lines back from a one-line tail, without downloading the whole output", async () => {
		const fake = withOutput({ total: 5_000, cutAfter: () => null }, true);
		const url = await listen(fake.handler);
		const r = await runCli(["logs", "--job", JOB, "--follow", "--lines", "3", "--json"], { DROVER_URL: url, DROVER_TOKEN: TOKEN });
		expect(r.stdout.trim().split("\n")).toEqual([4_998, 4_999, 5_000].map(lineBody));
		expect(fake.outputs).toEqual(["?lines=1"]);
		expect(fake.seen).toEqual(["4997"]);
		expect(r.status).toBe(0);
	});

	it("counts the lines of the whole output from a server that does not name a tail's first line (an older release)", async () => {
		const fake = withOutput({ total: 12, cutAfter: () => null }, false);
		const url = await listen(fake.handler);
		const r = await runCli(["logs", "--job", JOB, "--follow", "--lines", "2", "--json"], { DROVER_URL: url, DROVER_TOKEN: TOKEN });
		expect(r.stdout.trim().split("\n")).toEqual([11, 12].map(lineBody));
		expect(fake.outputs).toEqual(["?lines=1", ""]);
		expect(fake.seen).toEqual(["10"]);
	});
});

describe("logs <agent> --follow through an outage", () => {
	const A = "job-2026-01-01-aaaaaa";
	const B = "job-2026-01-01-bbbbbb";
	const summary = (id: string, status: string): JobSummary => ({ id, agent: "fake", status, trigger_type: "schedule" }) as JobSummary;
	const text = (content: string) => JSON.stringify({ type: "assistant", content });

	it("tries again until the server is back, the waits doubling to 30 s, said once each way on stderr; every line once", async () => {
		// A's stream sends a1, then the server goes away: every request is cut before an answer until
		// A's stream has been refused 40 times (past the 30 reconnects `logs --job --follow` allows).
		// Back, A resumes after a1 and ends; B, started meanwhile, is found and followed; then the
		// agent is deleted, which ends the follow once both have ended.
		let down = false;
		let refused = 0;
		let deleted = false;
		const resumedAfter: (string | null)[] = [];
		const url = await listen((req, res) => {
			if (down) {
				if (req.url === `/v1/jobs/${A}/stream` && ++refused >= 40) down = false;
				res.socket?.destroy();
				return;
			}
			const sse = (frames: string) => res.writeHead(200, { "content-type": "text/event-stream" }).end(frames);
			const json = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
			if (req.url === "/v1/agents/fake") {
				json(deleted ? 404 : 200, deleted ? { error: { code: "not_found", message: "no agent named fake" } } : { name: "fake" });
			} else if (req.url === "/v1/agents/fake/jobs?limit=50") {
				json(200, { jobs: refused === 0 ? [summary(A, "running")] : [summary(B, "running"), summary(A, "running")], next_cursor: null });
			} else if (req.url === `/v1/jobs/${A}/stream`) {
				const last = (req.headers["last-event-id"] as string | undefined) ?? null;
				resumedAfter.push(last);
				if (last === null) {
					res.writeHead(200, { "content-type": "text/event-stream" }).write(`id: 1\nevent: line\ndata: ${text("a1")}\n\n`);
					setTimeout(() => ((down = true), res.socket?.destroy()), 20);
				} else {
					sse(`id: 2\nevent: line\ndata: ${text("a2")}\n\nevent: end\ndata: {"status":"completed"}\n\n`);
				}
			} else if (req.url === `/v1/jobs/${B}/stream`) {
				deleted = true;
				sse(`id: 1\nevent: line\ndata: ${text("b1")}\n\nevent: end\ndata: {"status":"completed"}\n\n`);
			} else {
				json(404, { error: { code: "not_found", message: `no route for ${req.url}` } });
			}
		});
		const out: string[] = [];
		const err: string[] = [];
		const plain = paint(false);
		const ctx: Context = { client: new ApiClient({ url, token: TOKEN }), p: plain, ep: plain, width: undefined, stdoutIsTTY: false, stderrIsTTY: false, stdinIsTTY: false, globalArgs: [], out: (t) => out.push(t), err: (t) => err.push(t), json: () => {} };
		const waits: number[] = [];
		// Each wait is recorded and not sat out.
		const sleep = (ms: number) => (waits.push(ms), new Promise<void>((resolve) => setTimeout(resolve, 1)));
		const sink = agentSink(ctx, true, (raw) => out.push(raw));
		const ended = await followAgent(ctx, "fake", [summary(A, "running")], [{ job: summary(A, "running"), lines: [], total: 0 }], sink, { sleep }).catch((e: unknown) => e);
		expect((ended as Error).message).toBe("agent fake was deleted: none of its jobs will start any more");
		expect(refused).toBe(40);
		// A and B are followed side by side once the server is back: each job's lines once, in order.
		expect(out.filter((l) => l.includes('"content":"a'))).toEqual([text("a1"), text("a2")]);
		expect(out.filter((l) => !l.includes('"content":"a'))).toEqual([text("b1")]);
		expect(resumedAfter).toEqual([null, "1"]);
		expect(err).toEqual([
			// Whichever request failed first: A's stream, or a poll of the list.
			expect.stringMatching(new RegExp(`^drover: (job ${A}: the connection broke|listing agent fake's jobs: cannot reach ${url}): .*; trying again until the server answers, at most 30s apart \\(Ctrl-C to stop\\)$`)),
			"drover: the server answers again; following on",
		]);
		// A's reconnects double from 250 ms, and the list's polls from 2 s (4 s after a failure), each up to 30 s.
		expect(Math.max(...waits)).toBe(30_000);
		expect(waits.filter((ms) => ms === 30_000).length).toBeGreaterThanOrEqual(40 - 8);
		for (const ms of [250, 500, 1000, 2000, 4000, 8000, 16_000]) expect(waits).toContain(ms);
		expect(waits.every((ms) => [250, 500, 1000, 2000, 4000, 8000, 16_000, 30_000].includes(ms))).toBe(true);
	}, 20_000);
});

describe("logs --follow against a server that cannot be reached", () => {
	it("fails at once with the message logs gives without --follow, no reconnects", async () => {
		const url = await closedPort();
		const env = { DROVER_URL: url, DROVER_TOKEN: TOKEN };
		const once_ = await runCli(["logs", "--job", JOB], env);
		expect(once_.status).toBe(5);
		expect(once_.stderr).toMatch(/^drover: cannot reach http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/);
		const follow = await runCli(["logs", "--job", JOB, "--follow"], env);
		expect(follow.status).toBe(5);
		expect(follow.stdout).toBe("");
		expect(follow.stderr).toBe(once_.stderr);
		// Each reconnect says so on stderr: there was none.
		expect(follow.stderr).not.toContain("resuming");
	});

	it("makes as many connections with --follow as without, when each is cut before an answer: it never reconnects", async () => {
		let connections = 0;
		const url = await listen((_req, res) => {
			connections++;
			res.socket?.destroy();
		});
		const env = { DROVER_URL: url, DROVER_TOKEN: TOKEN };
		const once_ = await runCli(["logs", "--job", JOB], env);
		expect(once_.status).toBe(5);
		expect(once_.stderr).toMatch(/^drover: cannot reach http:\/\/127\.0\.0\.1:\d+: /);
		const without = connections;
		expect(without).toBeGreaterThan(0);
		const follow = await runCli(["logs", "--job", JOB, "--follow"], env);
		expect(follow).toMatchObject({ status: 5, stdout: "", stderr: once_.stderr });
		expect(connections - without).toBe(without);
	});
});

describe("trigger --wait's progress", () => {
	/** Just what `drover trigger --wait` reads of a job record. */
	const record = (status: string) => ({
		id: JOB,
		agent: "fake",
		status,
		exit_reason: status === "completed" ? "success" : null,
		duration_seconds: status === "completed" ? 1.5 : null,
		usage: { num_turns: status === "completed" ? 1 : 0, total_cost_usd: null, per_model: {} },
		error: null,
	});
	const assistant = JSON.stringify({ type: "assistant", content: "done thinking", model: "m", usage: { input_tokens: 10, output_tokens: 4 } });

	it("never shows a status older than the job's: the lines the stream replays first wait for its status", async () => {
		// The job was pending when the trigger answered and has run a turn by the time the stream opens:
		// the stream replays that turn, then says the job is running, as the Worker's does.
		const url = await listen((req, res) => {
			if (req.method === "POST" && req.url === "/v1/agents/fake/jobs") {
				res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify(record("pending")));
			} else if (req.url === `/v1/jobs/${JOB}/stream`) {
				res.writeHead(200, { "content-type": "text/event-stream" });
				res.write(`id: 1\nevent: line\ndata: {"type":"system","subtype":"init"}\n\nid: 2\nevent: line\ndata: ${assistant}\n\n`);
				res.write(`event: status\ndata: {"status":"running","revision":2}\n\n`);
				setTimeout(() => res.end(`event: status\ndata: {"status":"completed","revision":3}\n\nevent: end\ndata: {"status":"completed"}\n\n`), 100);
			} else if (req.url === `/v1/jobs/${JOB}`) {
				res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(record("completed")));
			} else {
				res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "not_found", message: `no route for ${req.url}` } }));
			}
		});
		const r = await runCli(["trigger", "fake", "--wait"], { DROVER_URL: url, DROVER_TOKEN: TOKEN });
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toBe(`${JOB}\n`);
		// Not a pipe's terminal: a line per change, each one true when printed.
		expect(r.stderr.split("\n").filter(Boolean)).toEqual([
			`${JOB} pending · 0 turns · 0 in / 0 out tokens · 0 tool calls`,
			`${JOB} running · 1 turn · 10 in / 4 out tokens · 0 tool calls`,
			`${JOB} completed · 1 turn · 10 in / 4 out tokens · 0 tool calls`,
			`✓ ${JOB} completed in 1.5s · 1 turn · 10 in / 4 out tokens · 0 tool calls`,
		]);
	});

	it("follows the job it triggered while the API cannot find it yet (its index row waiting for D1), and exits with its outcome", async () => {
		let refused = 0;
		const url = await listen((req, res) => {
			if (req.method === "POST" && req.url === "/v1/agents/fake/jobs") {
				res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify(record("pending")));
			} else if (req.url === `/v1/jobs/${JOB}/stream` && refused < 2) {
				refused++;
				res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "not_found", message: `no job ${JOB}` } }));
			} else if (req.url === `/v1/jobs/${JOB}/stream`) {
				res.writeHead(200, { "content-type": "text/event-stream" });
				res.end(`id: 1\nevent: line\ndata: ${assistant}\n\nevent: status\ndata: {"status":"completed","revision":3}\n\nevent: end\ndata: {"status":"completed"}\n\n`);
			} else if (req.url === `/v1/jobs/${JOB}`) {
				res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ...record("completed"), summary: "done thinking" }));
			} else {
				res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "not_found", message: `no route for ${req.url}` } }));
			}
		});
		const r = await runCli(["trigger", "fake", "--wait"], { DROVER_URL: url, DROVER_TOKEN: TOKEN });
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toBe(`${JOB}\ndone thinking\n`);
		expect(refused).toBe(2);
		expect(r.stderr).toContain(`drover: job ${JOB} is not in the API's index yet`);
	});

	it("exits 3, not a failed job's 1, when the job's record cannot be read after its stream ended, naming the status the stream said", async () => {
		const url = await listen((req, res) => {
			if (req.method === "POST" && req.url === "/v1/agents/fake/jobs") {
				res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify(record("pending")));
			} else if (req.url === `/v1/jobs/${JOB}/stream`) {
				res.writeHead(200, { "content-type": "text/event-stream" });
				res.end(`id: 1\nevent: line\ndata: ${assistant}\n\nevent: status\ndata: {"status":"completed","revision":3}\n\nevent: end\ndata: {"status":"completed"}\n\n`);
			} else {
				// The Worker gone between the stream's end and the record's read: a gateway's 502.
				res.writeHead(502, { "content-type": "text/html" }).end("<html>Bad gateway</html>");
			}
		});
		const r = await runCli(["trigger", "fake", "--wait"], { DROVER_URL: url, DROVER_TOKEN: TOKEN });
		expect(r.status, r.stderr).toBe(3);
		expect(r.stdout).toBe(`${JOB}\n`);
		expect(r.stderr).toContain(`drover: job ${JOB} ended (its stream said: completed), but its record could not be read: `);
		expect(r.stderr).toContain(`drover job ${JOB} says how it ended`);
	});
});

describe("a stderr closed early", () => {
	/** Runs the CLI in bash with its stderr into a pipe whose reader is gone (`| true`), stdout kept; the CLI's own exit code. */
	function withStderrClosed(args: string[], url: string): Promise<{ status: number | null; stdout: string }> {
		const child = spawn("bash", ["-c", '{ "$NODE" "$CLI" "$@" 2>&1 1>&3 | true; exit "${PIPESTATUS[0]}"; } 3>&1', "bash", ...args], {
			env: childEnv({ NODE: process.execPath, CLI, DROVER_URL: url, DROVER_TOKEN: TOKEN }),
			stdio: ["ignore", "pipe", "ignore"],
		});
		let stdout = "";
		child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
		return new Promise((resolve) => child.on("close", (status) => resolve({ status, stdout })));
	}

	it("trigger --wait still follows the job to its end and exits with its outcome (2>&1 | head -1)", async () => {
		const seen: string[] = [];
		const url = await listen((req, res) => {
			seen.push(`${req.method} ${req.url}`);
			if (req.method === "POST" && req.url === "/v1/agents/fake/jobs") {
				res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ id: JOB, agent: "fake", status: "pending", usage: { num_turns: 0, per_model: {} } }));
			} else if (req.url === `/v1/jobs/${JOB}/stream`) {
				res.writeHead(200, { "content-type": "text/event-stream" });
				res.write(`event: status\ndata: {"status":"running","revision":2}\n\n`);
				// Progress lines go to stderr after the reader of `head -1` is gone.
				setTimeout(() => res.end(`id: 1\nevent: line\ndata: ${lineBody(1)}\n\nevent: status\ndata: {"status":"cancelled","revision":3}\n\nevent: end\ndata: {"status":"cancelled"}\n\n`), 500);
			} else if (req.url === `/v1/jobs/${JOB}`) {
				res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: JOB, agent: "fake", status: "cancelled", exit_reason: "cancelled", duration_seconds: 1, usage: { num_turns: 1, per_model: {} }, error: null }));
			} else {
				res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "not_found", message: `no route for ${req.url}` } }));
			}
		});
		const child = spawn("bash", ["-c", '"$NODE" "$CLI" trigger fake --wait 2>&1 | head -1; exit "${PIPESTATUS[0]}"'], {
			env: childEnv({ NODE: process.execPath, CLI, DROVER_URL: url, DROVER_TOKEN: TOKEN }),
			stdio: ["ignore", "pipe", "pipe"],
		});
		let stdout = "";
		child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
		const [status] = (await once(child, "close")) as [number | null];
		expect(stdout).toBe(`${JOB}\n`);
		// It waited for the end (it read the finished job), and the exit code is the job's: cancelled, 2.
		expect(seen).toContain(`GET /v1/jobs/${JOB}`);
		expect(status).toBe(2);

		// Nothing reads stderr at all: the same.
		const again = await withStderrClosed(["trigger", "fake", "--wait"], url);
		expect(again).toEqual({ status: 2, stdout: `${JOB}\n` });

		// A stdout closed before the finished job's record is written (EPIPE there ends the CLI): still the job's outcome.
		const noReader = spawn("bash", ["-c", '"$NODE" "$CLI" trigger fake --wait --json 2>/dev/null | true; exit "${PIPESTATUS[0]}"'], {
			env: childEnv({ NODE: process.execPath, CLI, DROVER_URL: url, DROVER_TOKEN: TOKEN }),
			stdio: "ignore",
		});
		expect((await once(noReader, "close"))[0]).toBe(2);
	});

	it("logs --follow prints every line through reconnects whose notices cannot be written, and exits with the outcome", async () => {
		const fake = fakeStream({ total: 6, cutAfter: (c) => (c < 2 ? 2 : null), finalStatus: "completed" });
		const url = await listen(fake.handler);
		const r = await withStderrClosed(["logs", "--job", JOB, "--follow"], url);
		expect(fake.seen).toEqual([null, "2", "4"]);
		expect(r).toEqual({ status: 0, stdout: "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n" });
	});
});
