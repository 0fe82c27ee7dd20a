import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { appendLines, type OutputLine } from "../../durable-objects/agent/runner/output.ts";
import { CATCH_UP_BUDGET_BYTES, MAX_BACKLOG_BYTES, MAX_HELD_BYTES, MAX_STREAMS_PER_AGENT, MAX_STREAMS_PER_JOB, StreamHub, STREAM_RETRY_AFTER_SECONDS } from "../../durable-objects/agent/streams.ts";
import { SseParser, type SseEvent } from "../../src/shared/sse.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { gate, useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { jobOf, runToRest, trigger } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { followEvents, readEvents } from "../helpers/sse.ts";

/** A job held open waiting for an approval, with its first 4 lines written; approving lets it finish. */
async function waitingJob(name: string) {
	const emulator = useEmulator();
	emulator.enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } }, { text: "Filed." });
	fake("https://tickets.example.test", () => Response.json({ id: 7 }));
	await createAgent({
		name,
		tools: [{ type: "webhook", name: "create_ticket", description: "Create.", url_secret: "TEST_TICKETS_URL", requires_approval: true }],
	});
	const job = await runToRest(name);
	expect(job.status).toBe("approval_pending");
	return job;
}

async function finish(name: string, jobId: string) {
	expect((await call(`/v1/jobs/${jobId}/approval`, { method: "POST", as: "operate", body: { decision: "approve" } })).status).toBe(200);
	await settle(name);
	expect((await jobOf(name, jobId)).status).toBe("completed");
}

/** Appends lines to the job's output and publishes them, as a turn of the job does. */
async function append(agent: string, jobId: string, lines: OutputLine[]) {
	await runInDurableObject(env.AGENT.getByName(agent), (instance: AgentDO) => AgentDO.appendOutput(instance, jobId, lines));
}

const liveStreams = (agent: string) => runInDurableObject(env.AGENT.getByName(agent), (instance: AgentDO) => AgentDO.liveStreams(instance));
const note = (content: string): OutputLine => ({ type: "system", subtype: "note", content });
const lineIds = (events: SseEvent[]) => events.filter((e) => e.event === "line").map((e) => Number(e.id));
const oneTo = (n: number, from = 1) => Array.from({ length: n - from + 1 }, (_, i) => from + i);

/** A stream read as its events come (followEvents), refused if it did not open. */
function follow(res: Response) {
	expect(res.status).toBe(200);
	return followEvents(res);
}

describe("GET /v1/jobs/:id/stream: caps", () => {
	it(`answers the job's stream ${MAX_STREAMS_PER_JOB + 1} with a 429 saying the limit, and Retry-After; the others stream on, and a closed one frees its slot`, async () => {
		const name = "sse-cap";
		const job = await waitingJob(name);
		const open = [];
		for (let i = 0; i < MAX_STREAMS_PER_JOB; i++) open.push(follow(await call(`/v1/jobs/${job.id}/stream`)));
		// Every one is served: its lines so far, then the job's status.
		for (const s of open) expect(await s.until((es) => es.some((e) => e.event === "status"))).toBe(true);
		for (const s of open) expect(lineIds(s.events)).toEqual([1, 2, 3, 4]);
		expect(await liveStreams(name)).toBe(MAX_STREAMS_PER_JOB);

		const refused = await call(`/v1/jobs/${job.id}/stream`, { headers: { "last-event-id": "2" } });
		expect(refused.status).toBe(429);
		expect(refused.headers.get("retry-after")).toBe(String(STREAM_RETRY_AFTER_SECONDS));
		expect(refused.headers.get("content-type")).toMatch(/^application\/json/);
		const error = await errorOf(refused);
		expect(error.code).toBe("rate_limited");
		expect(error.message).toBe(
			`job ${job.id} already has ${MAX_STREAMS_PER_JOB} live streams, the most one job may have (${MAX_STREAMS_PER_JOB}): close one, or try again after Retry-After`,
		);

		// Nothing else changed: the same streams, each still given the job's new lines.
		expect(await liveStreams(name)).toBe(MAX_STREAMS_PER_JOB);
		await append(name, job.id, [note("fifth")]);
		for (const s of open) expect(await s.until((es) => lineIds(es).includes(5))).toBe(true);
		for (const s of open) expect(lineIds(s.events)).toEqual([1, 2, 3, 4, 5]);
		// Another job of the agent is not capped by this one's streams (this one waits its turn).
		const queued = await trigger(name);
		const other = follow(await call(`/v1/jobs/${queued.id}/stream`));
		expect(await other.until((es) => es.some((e) => e.event === "status"))).toBe(true);
		expect(JSON.parse(other.events.at(-1)!.data).status).toBe("pending");
		expect(await liveStreams(name)).toBe(MAX_STREAMS_PER_JOB + 1);
		// Its stream ends with it, freeing its slot.
		expect((await call(`/v1/jobs/${queued.id}/cancel`, { method: "POST", as: "operate", body: {} })).status).toBe(200);
		expect(await other.until((es) => es.some((e) => e.event === "end"))).toBe(true);
		expect(await liveStreams(name)).toBe(MAX_STREAMS_PER_JOB);

		// A client that goes away frees its slot: the next stream is accepted, from where it asks.
		await open.pop()!.cancel();
		expect(await liveStreams(name)).toBe(MAX_STREAMS_PER_JOB - 1);
		const late = follow(await call(`/v1/jobs/${job.id}/stream`, { headers: { "last-event-id": "3" } }));
		expect(await late.until((es) => es.some((e) => e.event === "status"))).toBe(true);
		expect(lineIds(late.events)).toEqual([4, 5]);
		open.push(late);
		expect((await call(`/v1/jobs/${job.id}/stream`)).status).toBe(429);

		// Streams that end with their job free their slots too.
		await finish(name, job.id);
		for (const s of open) expect(await s.until((es) => es.some((e) => e.event === "end"))).toBe(true);
		expect(await liveStreams(name)).toBe(0);
		const after = await readEvents(await call(`/v1/jobs/${job.id}/stream`, { headers: { "last-event-id": "5" } }));
		expect(after.at(-1)).toMatchObject({ event: "end" });
	}, 30_000);

	it(`refuses a stream beyond ${MAX_STREAMS_PER_AGENT} over all of an object's jobs, whichever job it is for`, async () => {
		await createAgent({ name: "sse-cap-agent" });
		await runInDurableObject(env.AGENT.getByName("sse-cap-agent"), async (_i: AgentDO, state) => {
			const hub = new StreamHub(state.storage.sql, () => null);
			const jobs = Math.ceil(MAX_STREAMS_PER_AGENT / MAX_STREAMS_PER_JOB);
			const streams = [];
			for (let i = 0; i < MAX_STREAMS_PER_AGENT; i++) {
				const jobId = `job-2026-12-01-cap00${i % jobs}`;
				expect(hub.refusal(jobId)).toBeNull();
				streams.push(hub.subscribe(jobId, 0));
			}
			expect(hub.size).toBe(MAX_STREAMS_PER_AGENT);
			expect(hub.refusal("job-2026-12-01-other1")).toBe(
				`this agent's jobs already have ${MAX_STREAMS_PER_AGENT} live streams, the most one agent may have (${MAX_STREAMS_PER_AGENT}): close one, or try again after Retry-After`,
			);
			// A stream its client cancels frees its slot.
			await streams.pop()!.cancel();
			expect(hub.size).toBe(MAX_STREAMS_PER_AGENT - 1);
			expect(hub.refusal("job-2026-12-01-other1")).toBeNull();
			await Promise.all(streams.map((s) => s.cancel()));
			expect(hub.size).toBe(0);
		});
	});

	it("documents the 429 and its Retry-After in the OpenAPI description of the route", async () => {
		const doc = (await (await call("/openapi.json", { as: null })).json()) as {
			paths: Record<string, Record<string, { description: string; responses: Record<string, { description: string; headers?: Record<string, unknown> }> }>>;
		};
		const op = doc.paths["/v1/jobs/{id}/stream"]!.get!;
		expect(op.responses["429"]).toMatchObject({
			content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
			headers: { "Retry-After": { schema: { type: "string" } } },
		});
		expect(op.responses["429"]!.description).toContain(`${MAX_STREAMS_PER_JOB} live streams`);
		expect(op.description).toContain(`${MAX_STREAMS_PER_AGENT}`);
		expect(op.description).toMatch(/dropped/);
	});
});

describe("GET /v1/jobs/:id/stream: a client that does not read", () => {
	it("is dropped once more than the limit waits for it, while a reading one on the same job gets every line; the dropped one resumes losslessly", async () => {
		const name = "sse-stalled";
		const job = await waitingJob(name);
		const reading = follow(await call(`/v1/jobs/${job.id}/stream`));
		// Its body is never read until the end of the test.
		const stalled = follow(await call(`/v1/jobs/${job.id}/stream`));
		expect(await reading.until((es) => es.some((e) => e.event === "status"))).toBe(true);
		expect(await liveStreams(name)).toBe(2);

		// Lines of 256 KiB, published one at a time, each read by the reading stream before the next.
		const big = "x".repeat(256 * 1024);
		const lines = Math.ceil(MAX_BACKLOG_BYTES / big.length) + 4;
		for (let n = 5; n < 5 + lines; n++) {
			await append(name, job.id, [note(`${n}:${big}`)]);
			expect(await reading.until((es) => lineIds(es).includes(n))).toBe(true);
		}
		// The stalled one was let go; what waited for it too.
		expect(await liveStreams(name)).toBe(1);

		// A burst bigger than the limit in one publish: a stream that reads takes it all, batch by batch.
		const burst = Array.from({ length: Math.ceil(MAX_BACKLOG_BYTES / big.length) + 4 }, (_, i) => note(`burst ${i}:${big}`));
		await append(name, job.id, burst);
		const last = 4 + lines + burst.length;
		expect(await reading.until((es) => lineIds(es).includes(last))).toBe(true);
		expect(await liveStreams(name)).toBe(1);

		await finish(name, job.id);
		expect(await reading.until((es) => es.some((e) => e.event === "end"))).toBe(true);
		const total = (await (await call(`/v1/jobs/${job.id}/output`)).text()).trimEnd().split("\n").length;
		expect(total).toBeGreaterThan(last);
		expect(lineIds(reading.events)).toEqual(oneTo(total));

		// The stalled stream was closed without an end event, after a run of whole lines from the first.
		await stalled.rest();
		expect(stalled.events.some((e) => e.event === "end")).toBe(false);
		const got = lineIds(stalled.events);
		expect(got).toEqual(oneTo(got.length));
		// Reconnecting after the last line it got gives it the rest, none lost or repeated.
		const resumed = await readEvents(await call(`/v1/jobs/${job.id}/stream`, { headers: { "last-event-id": String(got.length) } }));
		expect([...got, ...lineIds(resumed)]).toEqual(oneTo(total));
		expect(resumed.at(-1)).toMatchObject({ event: "end" });
		expect(await liveStreams(name)).toBe(0);
	}, 30_000);
});

describe("GET /v1/jobs/:id/stream: many clients that do not read while catching up", () => {
	it(`hold no more than ${CATCH_UP_BUDGET_BYTES / 1024 / 1024} MiB in the object together, however long the lines: the longest stalled are dropped, a reading one is served whole, and a dropped one resumes losslessly`, async () => {
		const name = "sse-stalled-many";
		const job = await waitingJob(name);
		// Tool results of 1 MB are ordinary (http_fetch's max_response_bytes); a catch-up batch is a line at least.
		const big = "z".repeat(1_000_000);
		for (let i = 0; i < 5; i++) await append(name, job.id, [note(`${i} ${big}`)]);
		const reading = follow(await call(`/v1/jobs/${job.id}/stream`));
		expect(await reading.until((es) => es.some((e) => e.event === "status"))).toBe(true);

		const stalled = [];
		for (let i = 0; i < MAX_STREAMS_PER_JOB - 1; i++) stalled.push(follow(await call(`/v1/jobs/${job.id}/stream`, { headers: { "last-event-id": String(4 + (i % 5)) } })));
		const held = await runInDurableObject(env.AGENT.getByName(name), (instance: AgentDO) => AgentDO.streamBytesHeld(instance));
		expect(held).toBeGreaterThan(0);
		expect(held).toBeLessThanOrEqual(CATCH_UP_BUDGET_BYTES + 2_000_000);
		const open = await liveStreams(name);
		expect(open).toBeLessThan(MAX_STREAMS_PER_JOB);

		await append(name, job.id, [note("after the crowd")]);
		expect(await reading.until((es) => lineIds(es).includes(10))).toBe(true);
		expect(lineIds(reading.events)).toEqual(oneTo(10));

		// The first stalled one was dropped: closed after whole lines, without the end event.
		const first = stalled[0]!;
		await first.rest();
		expect(first.events.some((e) => e.event === "end")).toBe(false);
		const got = lineIds(first.events);
		expect(got).toEqual(got.length === 0 ? [] : oneTo(4 + got.length, 5));
		const resumed = follow(await call(`/v1/jobs/${job.id}/stream`, { headers: { "last-event-id": String(4 + got.length) } }));
		expect(await resumed.until((es) => lineIds(es).includes(10))).toBe(true);
		expect([...got, ...lineIds(resumed.events)]).toEqual(oneTo(10, 5));
		for (const s of [...stalled.slice(1), reading, resumed]) await s.cancel();
	}, 30_000);
});

describe("GET /v1/jobs/:id/stream: clients that do not read, of many live jobs", () => {
	it(`hold no more than ${MAX_HELD_BYTES / 1024 / 1024} MiB in the object together: those with the most waiting are dropped, a reading one is served every line, and a dropped one ends after whole lines`, async () => {
		await createAgent({ name: "sse-many-jobs" });
		await runInDurableObject(env.AGENT.getByName("sse-many-jobs"), async (_i: AgentDO, state) => {
			const sql = state.storage.sql;
			const hub = new StreamHub(sql, () => ({ status: "running", revision: 1, final: false }));
			// 16 of an agent's jobs running at once (max_concurrent allows 100), each watched by a client that stopped reading.
			const jobs = Array.from({ length: 16 }, (_, i) => `job-2026-12-01-many${String(i).padStart(2, "0")}`);
			const stalled = jobs.map((j) => hub.subscribe(j, 0));
			const reading = follow(new Response(hub.subscribe(jobs[0]!, 0)));
			expect(await reading.until((es) => es.some((e) => e.event === "status"))).toBe(true);
			const line = "y".repeat(900_000);
			let peak = 0;
			const rounds = 8;
			for (let round = 1; round <= rounds; round++) {
				for (const job of jobs) {
					appendLines(sql, job, [note(`${round} ${line}`)], Date.now());
					hub.publish(job);
					// The send runs in the microtask publish queued, before this continuation.
					await undefined;
					peak = Math.max(peak, hub.heldBytes());
					expect(hub.heldBytes()).toBeLessThanOrEqual(MAX_HELD_BYTES);
				}
				expect(await reading.until((es) => lineIds(es).includes(round))).toBe(true);
			}
			// Each job's stalled client alone would have held ~4.5 MB before its own limit: 16 of them, 72 MB.
			expect(peak).toBeGreaterThan(MAX_HELD_BYTES - 2 * 900_000);
			expect(lineIds(reading.events)).toEqual(oneTo(rounds));
			expect(hub.size).toBe(1);
			// A dropped one: closed without an end event, after a run of whole lines from the first.
			const dropped = follow(new Response(stalled[5]!));
			await dropped.rest();
			expect(dropped.events.some((e) => e.event === "end")).toBe(false);
			const got = lineIds(dropped.events);
			expect(got).toEqual(oneTo(got.length));
			await reading.cancel();
		});
	}, 30_000);
});

describe("GET /v1/jobs/:id/stream: an idle stream", () => {
	it("is kept open through a long tool call that writes nothing, by a comment every 25 s (proxies cut a connection idle ~100 s), then gets the call's lines and the end", async () => {
		const name = "sse-idle";
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "http_fetch", input: { url: "https://slow.example.test/report" } } }, { text: "All green." });
		const reached = gate();
		const release = gate();
		fake("https://slow.example.test", async () => {
			reached.open();
			await release.promise;
			return new Response("green");
		});
		await createAgent({ name, tools: [{ type: "http_fetch", allow_hosts: ["slow.example.test"] }] });
		const job = await trigger(name);
		const running = settle(name);
		await reached.promise;

		// The object's timers, as it sets them, to fire them here rather than wait for them.
		const timers: { fire: () => void; ms: number }[] = [];
		const realSetInterval = globalThis.setInterval;
		globalThis.setInterval = ((fn: () => void, ms?: number) => {
			timers.push({ fire: fn, ms: ms ?? 0 });
			return realSetInterval(fn, ms);
		}) as typeof setInterval;
		let res: Response;
		try {
			res = await call(`/v1/jobs/${job.id}/stream`);
		} finally {
			globalThis.setInterval = realSetInterval;
		}
		expect(timers.map((t) => t.ms)).toEqual([25_000]);
		const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
		let text = "";
		const events: SseEvent[] = [];
		const parser = new SseParser((e) => events.push(e));
		const readUntil = async (seen: () => boolean) => {
			while (!seen()) {
				const { done, value } = await reader.read();
				if (done) return false;
				text += value;
				parser.feed(value);
			}
			return true;
		};
		const pings = () => text.split(": ping\n\n").length - 1;
		expect(await readUntil(() => events.some((e) => e.event === "status"))).toBe(true);
		const toolUse = lineIds(events).at(-1)!;
		expect(JSON.parse(events.find((e) => e.id === String(toolUse))!.data)).toMatchObject({ type: "tool_use" });
		expect(pings()).toBe(0);

		// 100 s of the call with nothing written: a comment each 25 s, the stream open throughout.
		for (let n = 1; n <= 4; n++) {
			await runInDurableObject(env.AGENT.getByName(name), () => timers[0]!.fire());
			expect(await readUntil(() => pings() === n)).toBe(true);
		}
		expect(lineIds(events).at(-1)).toBe(toolUse);

		release.open();
		await running;
		expect(await readUntil(() => events.some((e) => e.event === "end"))).toBe(true);
		expect(JSON.parse(events.at(-1)!.data).status).toBe("completed");
		const total = (await (await call(`/v1/jobs/${job.id}/output`)).text()).trimEnd().split("\n").length;
		expect(lineIds(events)).toEqual(oneTo(total));
		expect(await liveStreams(name)).toBe(0);
	});
});

describe("GET /v1/jobs/:id/stream: the object reset or the output moved while streaming", () => {
	it("errors the stream when the agent's object is reset, and a reconnect after the last line gets the lines written since, none repeated", async () => {
		const name = "sse-reset";
		const job = await waitingJob(name);
		const before = follow(await call(`/v1/jobs/${job.id}/stream`));
		expect(await before.until((es) => es.some((e) => e.event === "status"))).toBe(true);
		expect(lineIds(before.events)).toEqual([1, 2, 3, 4]);
		// As the runtime resets an object (a deploy, a crash): the instance and its streams are gone.
		await expect(runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => state.abort("reset by the test"))).rejects.toThrow("reset by the test");
		// A broken transfer, not a close a client could take for the job's end, nor a silent stream.
		await expect(before.until(() => false)).rejects.toThrow("reset by the test");
		expect(before.events.some((e) => e.event === "end")).toBe(false);

		await append(name, job.id, [note("written by the new instance")]);
		const after = follow(await call(`/v1/jobs/${job.id}/stream`, { headers: { "last-event-id": "4" } }));
		expect(await after.until((es) => es.some((e) => e.event === "status"))).toBe(true);
		expect(lineIds(after.events)).toEqual([5]);
		await finish(name, job.id);
		expect(await after.until((es) => es.some((e) => e.event === "end"))).toBe(true);
		const total = (await (await call(`/v1/jobs/${job.id}/output`)).text()).trimEnd().split("\n").length;
		expect([...lineIds(before.events), ...lineIds(after.events)]).toEqual(oneTo(total));
	});

	it("carries on from R2 after the last line it sent when the job ends mid-catch-up and its lines leave SQLite", async () => {
		const name = "sse-moving";
		const job = await waitingJob(name);
		const big = "y".repeat(4000);
		await runInDurableObject(env.AGENT.getByName(name), (instance: AgentDO) => {
			for (let i = 0; i < 1500; i++) AgentDO.appendOutput(instance, job.id, [note(`${i} ${big}`)]);
		});
		const stream = follow(await call(`/v1/jobs/${job.id}/stream`));
		expect(await stream.until((es) => lineIds(es).length >= 10)).toBe(true);
		// The job ends and is consolidated while the stream is still catching up from SQLite.
		await finish(name, job.id);
		const left = await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) =>
			state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM output_lines WHERE job_id = ?", job.id).one().n,
		);
		expect(left).toBe(0);
		expect(lineIds(stream.events).length).toBeLessThan(1500);
		expect(await stream.until((es) => es.some((e) => e.event === "end"))).toBe(true);
		const stored = (await (await env.OUTPUT.get(`jobs/${name}/${job.id}.jsonl`))!.text()).trimEnd().split("\n");
		expect(stored.length).toBe(1508);
		expect(lineIds(stream.events)).toEqual(oneTo(stored.length));
		expect(stream.events.filter((e) => e.event === "line").map((e) => e.data)).toEqual(stored);
		expect(JSON.parse(stream.events.at(-1)!.data).status).toBe("completed");
	}, 30_000);
});
