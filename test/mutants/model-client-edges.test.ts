// The Messages API client (src/agent/model-client.ts) seen through a job, where a mutation walk found
// the suite blind: the waits it holds by default (a 429 that names no retry-after waits 5 s, a stream
// that sends nothing is given up after 60 s, an aborted call waits up to 1 s for what it was billed),
// and the status a mid-stream `error` event is taken for, as its type names it (a rate limit, a server
// error, a refused key, or one it does not know: a server error), so that the job retries, waits or fails as it would on the same HTTP error.
// A gateway's answer that is no answer is told as the API would: a 503 saying overloaded_error is an
// overloaded model, a 300 a redirect not followed.
// Waits are held by hand (timersByHand): each test says when they end, none sleeps.
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, onTestFinished, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent, restoreEnv, settle } from "../helpers/agents.ts";
import { gate, useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, outputOf, trigger } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { timersByHand } from "../helpers/timers.ts";

const MODEL = "claude-sonnet-5-5";
// Far from the real clock: alarms set do not fire mid-test.
const NOW = Date.parse("2031-07-07T10:00:00Z");

afterEach(() => {
	vi.useRealTimers();
});

/**
 * The model client's waits between tries (a backoff, a rate limit's pause: from 0.5 s to the 10 s a
 * call may hold) held by hand: `next` resolves once one is set, `pending` says their delays, `fire`
 * ends them in the object that set them.
 */
function pausesByHand(agent: string) {
	let set = gate();
	const timers = timersByHand((ms) => {
		const pause = ms >= 500 && ms <= 10_000;
		if (pause) set.open();
		return pause;
	});
	onTestFinished(() => timers.restore());
	return {
		next: () => set.promise,
		pending: () => timers.pending(),
		fire: async () => {
			set = gate();
			await runInDurableObject(env.AGENT.getByName(agent), () => timers.fire());
		},
	};
}

const retries = async (agent: string, id: string) =>
	(await outputOf(agent, id)).filter((l) => l.subtype === "retry").map((l) => ({ content: l.content, waited_ms: l.waited_ms }));

describe("a 429 that names no retry-after", () => {
	it("waits 5 s before the one try more, and hands back a 5 s wait when limited again: the job waits until then", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: NOW });
		const emulator = useEmulator();
		emulator.enqueue({ error: 429, retry_after: null }, { error: 429, retry_after: null });
		await createAgent({ name: "limited-unsaid", timeout: "1h" });
		const pauses = pausesByHand("limited-unsaid");
		const job = await trigger("limited-unsaid");
		const settled = settle("limited-unsaid");
		await Promise.race([pauses.next(), settled]);
		expect(pauses.pending()).toEqual([5_000]);
		await pauses.fire();
		await settled;
		expect(await retries("limited-unsaid", job.id)).toEqual([
			{ content: `model ${MODEL} answered 429`, waited_ms: 0 },
			{ content: `model ${MODEL} answered 429`, waited_ms: 5_000 },
		]);
		expect(await jobOf("limited-unsaid", job.id)).toMatchObject({ status: "running", rate_limited_until: new Date(NOW + 5_000).toISOString() });
		// Ended here: its wait's alarm would fire in a later test.
		expect((await call(`/v1/jobs/${job.id}/cancel`, { method: "POST", as: "operate" })).status).toBe(200);
		await settle("limited-unsaid");
	});
});

describe("an event in the middle of a streamed answer", () => {
	it("of type rate_limit_error is a 429: the call waits as for one, and the retry line says 429", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ error: 429, after_events: 2 }, { text: "Done after the limit." });
		await createAgent({ name: "limited-mid-stream" });
		const pauses = pausesByHand("limited-mid-stream");
		const job = await trigger("limited-mid-stream");
		const settled = settle("limited-mid-stream");
		await Promise.race([pauses.next(), settled]);
		// A 200's stream says no retry-after: the default wait, not a backoff's 0.5 s.
		expect(pauses.pending()).toEqual([5_000]);
		await pauses.fire();
		await settled;
		expect(await jobOf("limited-mid-stream", job.id)).toMatchObject({ status: "completed", summary: "Done after the limit." });
		expect(await retries("limited-mid-stream", job.id)).toEqual([{ content: `model ${MODEL} answered 429`, waited_ms: 0 }]);
	});

	it("of type api_error is a 500: tried again after a backoff, and the job completes", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ error: 500, after_events: 2 }, { text: "Done on the retry." });
		await createAgent({ name: "server-mid-stream" });
		const pauses = pausesByHand("server-mid-stream");
		const job = await trigger("server-mid-stream");
		const settled = settle("server-mid-stream");
		await Promise.race([pauses.next(), settled]);
		expect(pauses.pending()).toEqual([500]);
		await pauses.fire();
		await settled;
		expect(await jobOf("server-mid-stream", job.id)).toMatchObject({ status: "completed", summary: "Done on the retry." });
		expect(await retries("server-mid-stream", job.id)).toEqual([{ content: `model ${MODEL} answered 500`, waited_ms: 0 }]);
	});

	it("of a type drover does not know is a server error: tried again, not taken for a bad request", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "Done on the retry." });
		let tries = 0;
		fake("https://api.anthropic.com", (request) => {
			if (tries++ > 0) return emulator.handle(request);
			const start = { type: "message_start", message: { id: "msg_e", type: "message", role: "assistant", model: MODEL, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } };
			const error = { type: "error", error: { type: "brand_new_error", message: "something new went wrong" } };
			return new Response(`event: message_start\ndata: ${JSON.stringify(start)}\n\nevent: error\ndata: ${JSON.stringify(error)}\n\n`, { headers: { "content-type": "text/event-stream" } });
		});
		await createAgent({ name: "unknown-mid-stream" });
		const pauses = pausesByHand("unknown-mid-stream");
		const job = await trigger("unknown-mid-stream");
		const settled = settle("unknown-mid-stream");
		await Promise.race([pauses.next(), settled]);
		expect(pauses.pending()).toEqual([500]);
		await pauses.fire();
		await settled;
		expect(await jobOf("unknown-mid-stream", job.id)).toMatchObject({ status: "completed", summary: "Done on the retry." });
		expect(await retries("unknown-mid-stream", job.id)).toEqual([{ content: `model ${MODEL} answered 500`, waited_ms: 0 }]);
	});

	it("of empty data (a gateway's keep-alive) is passed over: the answer is taken at once, not tried again", async () => {
		const frame = (event: { type: string }) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
		let tries = 0;
		fake("https://api.anthropic.com", () => {
			tries++;
			const body = [
				frame({ type: "message_start", message: { id: "msg_k", type: "message", role: "assistant", model: MODEL, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } } as { type: string }),
				"event: keepalive\ndata:\n\n",
				frame({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } as { type: string }),
				frame({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Kept alive." } } as { type: string }),
				frame({ type: "content_block_stop", index: 0 } as { type: string }),
				frame({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } } as { type: string }),
				frame({ type: "message_stop" }),
			].join("");
			return new Response(body, { headers: { "content-type": "text/event-stream" } });
		});
		await createAgent({ name: "kept-alive" });
		const job = await trigger("kept-alive");
		await settle("kept-alive");
		expect(await jobOf("kept-alive", job.id)).toMatchObject({ status: "completed", summary: "Kept alive." });
		expect(tries).toBe(1);
		expect(await retries("kept-alive", job.id)).toEqual([]);
	});

	it("of type authentication_error is a refused key: the job fails as auth, asking nothing again", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ error: 401, after_events: 2 }, { text: "never asked" });
		await createAgent({ name: "refused-mid-stream" });
		const job = await trigger("refused-mid-stream");
		await settle("refused-mid-stream");
		expect(await jobOf("refused-mid-stream", job.id)).toMatchObject({ status: "failed", exit_reason: "error", error: { type: "auth" } });
		expect(emulator.requests).toHaveLength(1);
	});
});

describe("a streamed answer that stops sending", () => {
	it("is given up after 60 s of nothing, as README says, and tried again", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "Answered on the retry." });
		let answered = false;
		const { promise: reading, open: readBegun } = gate();
		const idle = timersByHand((ms) => {
			const mine = ms >= 60_000 && ms <= 600_000;
			if (mine && answered) readBegun();
			return mine;
		});
		onTestFinished(() => idle.restore());
		let stalled = 0;
		fake("https://api.anthropic.com", (request) => {
			if (stalled > 0) return emulator.handle(request);
			stalled++;
			const start = { type: "message_start", message: { id: "msg_s", type: "message", role: "assistant", model: MODEL, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } };
			const body = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new TextEncoder().encode(`event: message_start\ndata: ${JSON.stringify(start)}\n\n`)) });
			answered = true;
			return new Response(body, { headers: { "content-type": "text/event-stream" } });
		});
		await createAgent({ name: "stalled-default" });
		const job = await trigger("stalled-default");
		const settled = settle("stalled-default");
		await reading;
		expect(idle.pending().at(-1)).toBe(60_000);
		await runInDurableObject(env.AGENT.getByName("stalled-default"), () => idle.fire());
		await settled;
		expect(await jobOf("stalled-default", job.id)).toMatchObject({ status: "completed", summary: "Answered on the retry." });
		expect((await retries("stalled-default", job.id)).map((r) => r.content)).toEqual([`model ${MODEL} did not answer: the stream stalled: nothing arrived for 60 s`]);
	});
});

describe("an answer still on its way when the job is cancelled", () => {
	it("is waited for, up to 1 s, and its tokens count in the job's usage", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: NOW });
		const { promise: arrived, open } = gate();
		const { promise: sent, open: send } = gate();
		fake("https://api.anthropic.com", async (req) => {
			open();
			await new Promise<void>((resolve) => (req.signal.aborted ? resolve() : req.signal.addEventListener("abort", () => resolve(), { once: true })));
			// The answer comes some while after the abort, from a transport that had not noticed it.
			await sent;
			return useEmulatorAnswer();
		});
		// The call's wait for its exchange to end after the abort, held: the answer comes within it.
		const { promise: waiting, open: waits } = gate();
		const read = timersByHand((ms) => {
			if (ms === 1_000) waits();
			return ms === 1_000;
		});
		onTestFinished(() => read.restore());
		await createAgent({ name: "late-within-bound" });
		const job = await trigger("late-within-bound");
		await arrived;
		const cancelled = call(`/v1/jobs/${job.id}/cancel`, { method: "POST", as: "operate" });
		await Promise.race([waiting, cancelled]);
		expect(read.pending()).toEqual([1_000]);
		send();
		expect((await cancelled).status).toBe(200);
		await settle("late-within-bound");
		const done = await jobOf("late-within-bound", job.id);
		expect(done.status).toBe("cancelled");
		expect(done.usage.per_model[MODEL]).toMatchObject({ input_tokens: 1200, output_tokens: 42 });
	});
});

describe("an answer that is no answer, from a gateway in front of the API", () => {
	it("a 503 whose body says overloaded_error is an overloaded model: tried three times, then the job fails as overloaded", async () => {
		let tries = 0;
		fake("https://api.anthropic.com", () => {
			tries++;
			return Response.json({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, { status: 503 });
		});
		await createAgent({ name: "overloaded-503" });
		const pauses = pausesByHand("overloaded-503");
		const job = await trigger("overloaded-503");
		const settled = settle("overloaded-503");
		for (const wait of [500, 1_500]) {
			await Promise.race([pauses.next(), settled]);
			expect(pauses.pending()).toEqual([wait]);
			await pauses.fire();
		}
		await settled;
		expect(tries).toBe(3);
		expect(await jobOf("overloaded-503", job.id)).toMatchObject({ status: "failed", error: { type: "overloaded" } });
	});

	it("a 300 pointing elsewhere is a redirect not followed with the key: the job fails saying where it points", async () => {
		fake("https://api.anthropic.com", () => new Response("pick one", { status: 300, headers: { location: "https://mirror.example.test/v1/messages?token=abc" } }));
		await createAgent({ name: "multiple-choices" });
		const job = await trigger("multiple-choices");
		await settle("multiple-choices");
		const done = await jobOf("multiple-choices", job.id);
		expect(done).toMatchObject({ status: "failed", error: { type: "invalid_request" } });
		expect(done.error!.message).toContain("answered 300, a redirect to mirror.example.test");
		expect(done.error!.message).not.toContain("token=abc");
	});

});

describe("what a failed try's line and a failed job say", () => {
	it("a stream cut after its headers: the retry line carries the answer's request-id", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ drop_after_events: 2 }, { text: "Done on the retry." });
		const ids: string[] = [];
		fake("https://api.anthropic.com", async (request) => {
			const response = await emulator.handle(request);
			ids.push(response.headers.get("request-id")!);
			return response;
		});
		await createAgent({ name: "cut-with-id" });
		const pauses = pausesByHand("cut-with-id");
		const job = await trigger("cut-with-id");
		const settled = settle("cut-with-id");
		await Promise.race([pauses.next(), settled]);
		await pauses.fire();
		await settled;
		expect(await jobOf("cut-with-id", job.id)).toMatchObject({ status: "completed" });
		const retry = (await outputOf("cut-with-id", job.id)).filter((l) => l.subtype === "retry");
		expect(ids[0]).toMatch(/^req_/);
		expect(retry).toEqual([expect.objectContaining({ request_id: ids[0] })]);
	});

	it("a pool whose two keys are both refused: the job's error says so, naming the last refusal", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ error: 401 }, { error: 401 });
		await createAgent({ name: "pool-refused" });
		await runInDurableObject(env.AGENT.getByName("pool-refused"), (instance: AgentDO) => {
			const self = instance as unknown as { env: Env };
			self.env = { ...self.env, ANTHROPIC_API_KEY: "sk-ant-api03-first-refused-0000, sk-ant-api03-second-refused-0000" };
		});
		onTestFinished(() => restoreEnv("pool-refused"));
		const job = await trigger("pool-refused");
		await settle("pool-refused");
		expect(emulator.requests.map((r) => r.apiKey)).toEqual(["sk-ant-api03-first-refused-0000", "sk-ant-api03-second-refused-0000"]);
		const done = await jobOf("pool-refused", job.id);
		expect(done).toMatchObject({ status: "failed", error: { type: "auth" } });
		expect(done.error!.message).toMatch(new RegExp(`^${MODEL}: all 2 keys in the pool were refused; last: authentication_error: `));
	});
});

/** A whole streamed answer billed 1,200 input and 42 output tokens. */
function useEmulatorAnswer(): Response {
	const frame = (event: { type: string }) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
	const body = [
		{ type: "message_start", message: { id: "msg_late", type: "message", role: "assistant", model: MODEL, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1200, output_tokens: 1 } } },
		{ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
		{ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Too late." } },
		{ type: "content_block_stop", index: 0 },
		{ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 42 } },
		{ type: "message_stop" },
	]
		.map(frame)
		.join("");
	return new Response(body, { headers: { "content-type": "text/event-stream" } });
}
