import { describe, expect, it } from "vitest";
import { ApiClient, ApiError, CliError, NoAnswerError } from "../../cli/client.ts";
import { followJob, type FollowOptions } from "../../cli/sse.ts";
import { fake } from "../helpers/outbound.ts";

// The follower of a job's stream (cli/sse.ts) that `--wait` and `logs --job --follow` run: every line
// once across reconnects, the backoff and Retry-After it waits (an injected sleep records them, so
// none is sat out), when it gives up (exit 3) and what it never retries. test/e2e/cli-follow.test.ts
// runs it against node:http servers that cut connections; here each rule is pinned against a fake.

const URL_ = "http://drover.example.test";
const JOB = "job-2026-01-01-abcdef";
const client = new ApiClient({ url: URL_, token: "tok-0123" });

const line = (n: number) => `id: ${n}\nevent: line\ndata: {"n":${n}}\n\n`;
const status = (s: string) => `event: status\ndata: {"status":"${s}"}\n\n`;
const end = (s: string) => `event: end\ndata: {"status":"${s}"}\n\n`;
/** An event stream of these chunks, each arriving on its own. */
const stream = (...chunks: string[]) => () =>
	new Response(
		new ReadableStream({
			start(c) {
				for (const chunk of chunks) c.enqueue(new TextEncoder().encode(chunk));
				c.close();
			},
		}),
		{ headers: { "content-type": "text/event-stream" } },
	);
const apiError = (status: number, headers: Record<string, string> = {}) => () => Response.json({ error: { code: "x", message: `answered ${status}` } }, { status, headers });
const refused = () => {
	throw Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:80"), { code: "ECONNREFUSED" }) });
};

/**
 * Follows JOB against a server answering each connection with the next of `connections` (the last
 * one again once they run out); what was printed, the Last-Event-ID each connection sent and the
 * waits between them.
 */
async function follow(connections: (() => Response)[], options: Partial<FollowOptions> = {}) {
	const lastEventIds: (string | null)[] = [];
	const lines: [number, string][] = [];
	const statuses: string[] = [];
	const sleeps: number[] = [];
	const reasons: string[] = [];
	let batches = 0;
	fake(URL_, (req) => {
		expect(new URL(req.url).pathname).toBe(`/v1/jobs/${JOB}/stream`);
		lastEventIds.push(req.headers.get("last-event-id"));
		return connections[Math.min(lastEventIds.length, connections.length) - 1]!();
	});
	const result = await followJob(client, JOB, {
		onLine: (n, body) => lines.push([n, body]),
		onStatus: (s) => statuses.push(s),
		onBatch: () => batches++,
		onReconnect: ({ reason }) => reasons.push(reason),
		sleep: async (ms) => void sleeps.push(ms),
		...options,
	}).catch((err: unknown) => err);
	return { result, lastEventIds, lines, statuses, sleeps, reasons, batches };
}

describe("following a job's stream", () => {
	it("resumes after the last line seen with Last-Event-ID (none on the first connection), skipping a line sent again and a status said already", async () => {
		const run = await follow([stream(status("running"), line(1), line(2)), stream(status("running"), line(2), line(3), status("completed"), end("completed"))]);
		expect(run.result).toEqual({ status: "completed", lastLine: 3 });
		expect(run.lastEventIds).toEqual([null, "2"]);
		expect(run.lines).toEqual([
			[1, '{"n":1}'],
			[2, '{"n":2}'],
			[3, '{"n":3}'],
		]);
		expect(run.statuses).toEqual(["running", "completed"]);
		expect(run.sleeps).toEqual([250]);
	});

	it("prints a line that has no id, or one that is no number, rather than lose it", async () => {
		const run = await follow([stream(line(1), 'event: line\ndata: {"n":"?"}\n\n', 'id: x\nevent: line\ndata: {"n":"x"}\n\n', end("completed"))]);
		expect(run.lines).toEqual([
			[1, '{"n":1}'],
			[1, '{"n":"?"}'],
			[1, '{"n":"x"}'],
		]);
	});

	it("takes the last status said for an end that names none", async () => {
		expect((await follow([stream(status("failed"), "event: end\ndata: {}\n\n")])).result).toEqual({ status: "failed", lastLine: 0 });
	});

	it("shows nothing that arrives after the end", async () => {
		const run = await follow([stream(line(1) + status("running"), end("cancelled") + line(2), line(3))]);
		expect(run.result).toEqual({ status: "cancelled", lastLine: 1 });
		expect(run.lines.map(([n]) => n)).toEqual([1]);
		expect(run.batches).toBe(1);
	});
});

describe("reconnecting", () => {
	it("backs off from 250 ms, doubling to 5 s, from the first reconnect after progress; gives up after `retries` in a row, exit 3, naming the next line", async () => {
		const run = await follow([stream(line(1)), stream()], { retries: 7 });
		expect(run.sleeps).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000]);
		expect(run.result).toBeInstanceOf(CliError);
		expect(run.result).toMatchObject({
			exitCode: 3,
			message: `lost the stream of job ${JOB} after 7 reconnects (last line seen: 1): the stream closed before the job ended`,
			hint: `the job may still be running: drover job ${JOB} says how it stands, drover logs --job ${JOB} --follow --from 2 goes on after the last line seen`,
		});
	});

	it("gives up after 30 reconnects by default", async () => {
		const run = await follow([stream(status("running")), stream()]);
		expect(run.sleeps.length).toBe(30);
		expect(run.result).toMatchObject({ exitCode: 3, message: expect.stringContaining("after 30 reconnects") });
	});

	it("waits what a 429's or 503's Retry-After asks, at most 5 minutes; a 500 is retried too", async () => {
		const run = await follow([stream(status("running")), apiError(503, { "retry-after": "30" }), apiError(429, { "retry-after": "600" }), apiError(500), stream(end("completed"))]);
		expect(run.result).toEqual({ status: "completed", lastLine: 0 });
		expect(run.sleeps).toEqual([250, 30_000, 300_000, 2000]);
	});

	it("counts a connection that stayed open long enough as healthy, though it brought nothing", async () => {
		const run = await follow([stream(status("running")), stream(), stream(), stream(), stream(end("completed"))], { retries: 1, healthyAfterMs: 0 });
		expect(run.result).toEqual({ status: "completed", lastLine: 0 });
	});
});

describe("what is not retried", () => {
	it("a first connection that fails, before any stream opened: as the request would without --follow", async () => {
		const run = await follow([refused]);
		expect(run.result).toBeInstanceOf(NoAnswerError);
		expect(run.sleeps).toEqual([]);
	});

	it("unless the server answered already in this command (a restart to ride out)", async () => {
		const run = await follow([refused, stream(end("completed"))], { serverAnswered: true });
		expect(run.result).toEqual({ status: "completed", lastLine: 0 });
		expect(run.sleeps).toEqual([250]);
	});

	it("a 404, unless of a job this command just created whose stream has not opened yet", async () => {
		const lost = await follow([stream(status("running")), apiError(404)]);
		expect(lost.result).toBeInstanceOf(ApiError);
		expect(lost.result).toMatchObject({ status: 404, exitCode: 4 });
		const byId = await follow([apiError(404), stream(end("completed"))], { serverAnswered: true });
		expect(byId.result).toMatchObject({ status: 404, exitCode: 4 });
		expect(byId.sleeps).toEqual([]);
		const unindexed = await follow([apiError(404), apiError(404), stream(end("completed"))], { serverAnswered: true, created: true });
		expect(unindexed.result).toEqual({ status: "completed", lastLine: 0 });
		expect(unindexed.reasons[0]).toMatch(/^job job-2026-01-01-abcdef is not in the API's index yet/);
		const afterOpen = await follow([stream(status("running")), apiError(404)], { serverAnswered: true, created: true });
		expect(afterOpen.result).toMatchObject({ status: 404 });
	});

	it("a 500 config_invalid (the Worker's API_TOKENS made unusable mid-wait): said at once, exit 1, not 30 reconnects", async () => {
		const invalid = () => Response.json({ error: { code: "config_invalid", message: "API_TOKENS is invalid" } }, { status: 500 });
		const run = await follow([stream(status("running")), invalid, stream(end("completed"))]);
		expect(run.result).toMatchObject({ status: 500, code: "config_invalid", exitCode: 1, message: "API_TOKENS is invalid" });
		// The one wait before the reconnect that met it; none after.
		expect(run.sleeps).toEqual([250]);
	});

	it("an answer that is not an event stream, first or after a reconnect", async () => {
		const notStream = () => Response.json({ ok: true });
		const first = await follow([notStream]);
		expect(first.result).toMatchObject({ exitCode: 1, message: `${URL_} does not answer as a drover API (GET /v1/jobs/${JOB}/stream: answered application/json, not an event stream)` });
		const later = await follow([stream(status("running")), notStream, stream(end("completed"))]);
		expect(later.result).toMatchObject({ exitCode: 1, message: expect.stringContaining("not an event stream") });
		expect(later.sleeps).toEqual([250]);
	});
});
