// Odd but valid answers of the Messages API, each through a real job: what its record, its JSONL and
// its usage show, and that nothing is asked twice or left running.
import { describe, expect, it } from "vitest";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, outputOf, runToRest } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";

const fetchTool = { type: "http_fetch", allow_hosts: ["status.example.test"] };

/** The status page, counting its fetches. */
function statusPage(): { fetched: string[] } {
	const fetched: string[] = [];
	fake("https://status.example.test", (request) => {
		fetched.push(new URL(request.url).pathname);
		return new Response("ok", { headers: { "content-type": "text/plain" } });
	});
	return { fetched };
}

const fetchCall = (path: string, id: string) => ({ name: "http_fetch", input: { url: `https://status.example.test${path}` }, id });
const tokens = (line: Record<string, unknown>) => (line.usage as Record<string, number>).output_tokens ?? 0;

describe("tool_use ids an answer reuses", () => {
	it("a call given the id of an earlier turn's call is not run: the job fails naming the id, its answer counted once and never asked again", async () => {
		const emulator = useEmulator();
		const { fetched } = statusPage();
		// A model behind a gateway that numbers its calls afresh each turn.
		emulator.enqueue({ tool_use: fetchCall("/first", "call_0") }, { tool_use: fetchCall("/second", "call_0") }, { text: "never asked for" });
		await createAgent({ name: "reused-id", tools: [fetchTool] });
		const job = await runToRest("reused-id");

		expect(job).toMatchObject({
			status: "failed",
			exit_reason: "error",
			error: { type: "tool_use_id_reused", message: "the model's answer reused a tool_use id, which each call must have to itself; none of its calls was run" },
		});
		expect(job.transitions.at(-1)!.reason).toBe("the model's answer used tool_use id call_0 (a call to tool http_fetch) that an earlier call had; none of its calls was run");
		expect(fetched).toEqual(["/first"]);
		// Two answers, each asked for once, each with its assistant line and its tokens counted once.
		expect(emulator.requests).toHaveLength(2);
		const lines = await outputOf("reused-id", job.id);
		const answers = lines.filter((l) => l.type === "assistant");
		expect(answers).toHaveLength(2);
		expect(job.usage.num_turns).toBe(2);
		expect(job.usage.per_model["claude-sonnet-5-5"]!.output_tokens).toBe(tokens(answers[0]!) + tokens(answers[1]!));
		// The second answer's call is neither shown as asked for nor answered.
		expect(lines.filter((l) => l.type === "tool_use").map((l) => l.input)).toEqual([{ url: "https://status.example.test/first" }]);
		expect(lines.filter((l) => l.type === "tool_result")).toHaveLength(1);
		expect(lines.filter((l) => l.type === "system" && l.subtype === "retry")).toEqual([]);
	});

	it("two calls of one answer under one id: neither is run, and a continue goes on from before that answer", async () => {
		const emulator = useEmulator();
		const { fetched } = statusPage();
		emulator.enqueue({ tool_use: [fetchCall("/a", "toolu_twice"), fetchCall("/b", "toolu_twice")] });
		await createAgent({ name: "twice-id", tools: [fetchTool] });
		const job = await runToRest("twice-id");

		expect(job).toMatchObject({ status: "failed", exit_reason: "error", error: { type: "tool_use_id_reused" } });
		expect(job.transitions.at(-1)!.reason).toBe("the model's answer used tool_use id toolu_twice (a call to tool http_fetch) for two of its calls; none of its calls was run");
		expect(fetched).toEqual([]);
		expect(emulator.requests).toHaveLength(1);
		const lines = await outputOf("twice-id", job.id);
		expect(lines.filter((l) => l.type === "assistant")).toHaveLength(1);
		expect(lines.filter((l) => l.type === "tool_use" || l.type === "tool_result")).toEqual([]);

		// The API refuses a conversation holding the id twice: a continue leaves that answer out.
		emulator.enqueue({ text: "Both pages are fine." });
		const res = await call(`/v1/jobs/${job.id}/continue`, { method: "POST", as: "operate", body: { prompt: "Fetch them one at a time." } });
		expect(res.status, await res.clone().text()).toBe(201);
		const { id } = (await res.json()) as { id: string };
		await settle("twice-id");
		expect(await jobOf("twice-id", id)).toMatchObject({ status: "completed", summary: "Both pages are fine." });
		expect(emulator.requests.at(-1)!.messages!.map((m) => m.role)).toEqual(["user"]);
	});

	it("an answer that reuses an id and crosses a token limit too: its preamble is no summary, and a continue still goes on from before it", async () => {
		const emulator = useEmulator();
		const { fetched } = statusPage();
		emulator.enqueue({ text: "Let me fetch both pages.", tool_use: [fetchCall("/a", "toolu_over"), fetchCall("/b", "toolu_over")] });
		await createAgent({ name: "twice-over", tools: [fetchTool], usage_limits: { max_output_tokens: 3 } });
		const job = await runToRest("twice-over");

		expect(job.usage.per_model["claude-sonnet-5-5"]!.output_tokens).toBeGreaterThan(3);
		expect(job).toMatchObject({ status: "failed", error: { type: "tool_use_id_reused" }, summary: null });
		expect(fetched).toEqual([]);

		// The API refuses that answer sent back: the continue's request must not hold it.
		emulator.enqueue({ text: "Both pages are fine." });
		const res = await call(`/v1/jobs/${job.id}/continue`, { method: "POST", as: "operate", body: { prompt: "Fetch them one at a time." } });
		expect(res.status, await res.clone().text()).toBe(201);
		const { id } = (await res.json()) as { id: string };
		await settle("twice-over");
		// Answered (over the agent's limit again, so failed usage_limit, its answer the summary), not refused.
		expect(await jobOf("twice-over", id)).toMatchObject({ error: { type: "usage_limit" }, summary: "Both pages are fine." });
		expect(emulator.requests.at(-1)!.messages!.map((m) => m.role)).toEqual(["user"]);
	});
});

/** The API's answers streamed as `events` (SSE, as the API sends them), one a request, counting the requests. */
function streamedAnswers(...answers: object[][]): { requests: () => number } {
	let n = 0;
	fake("https://api.anthropic.com", () => {
		const events = answers[Math.min(n++, answers.length - 1)]!;
		return new Response(events.map((e) => `event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`).join(""), { headers: { "content-type": "text/event-stream" } });
	});
	return { requests: () => n };
}

/** A text answer's events, its message_start's usage and message_delta's as given (absent when undefined). */
function textAnswer(text: string, startUsage: object | undefined, deltaUsage: object | undefined): object[] {
	return [
		{ type: "message_start", message: { id: "msg_u", type: "message", role: "assistant", model: "claude-sonnet-5-5", content: [], stop_reason: null, stop_sequence: null, ...(startUsage ? { usage: startUsage } : {}) } },
		{ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
		{ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } },
		{ type: "content_block_stop", index: 0 },
		{ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, ...(deltaUsage ? { usage: deltaUsage } : {}) },
		{ type: "message_stop" },
	];
}

describe("an answer's usage as a stream reports it", () => {
	it("none at all (a gateway that leaves it out): the answer is the job's, asked for once, and counts no tokens", async () => {
		const api = streamedAnswers(textAnswer("All green.", undefined, undefined));
		await createAgent({ name: "no-usage" });
		const job = await runToRest("no-usage");
		expect(job).toMatchObject({ status: "completed", exit_reason: "success", summary: "All green." });
		expect(api.requests()).toBe(1);
		expect(job.usage.per_model["claude-sonnet-5-5"]).toEqual({ input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
		const lines = await outputOf("no-usage", job.id);
		expect(lines.filter((l) => l.type === "system" && l.subtype === "retry")).toEqual([]);
		expect(lines.filter((l) => l.type === "assistant")).toEqual([expect.objectContaining({ content: "All green.", usage: {} })]);
	});

	it("only at its end, in message_delta: those counts are the answer's, counted once", async () => {
		const api = streamedAnswers(textAnswer("All green.", undefined, { input_tokens: 120, output_tokens: 9, cache_read_input_tokens: 40 }));
		await createAgent({ name: "late-usage" });
		const job = await runToRest("late-usage");
		expect(job).toMatchObject({ status: "completed", summary: "All green." });
		expect(api.requests()).toBe(1);
		expect(job.usage.per_model["claude-sonnet-5-5"]).toEqual({ input_tokens: 120, output_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 40 });
	});
});

describe("a stop_reason drover does not know (one the API adds later)", () => {
	it("fails the job naming it: its text is not delivered as the answer, its calls are not run, and it is asked for once", async () => {
		const { fetched } = statusPage();
		fake("https://deliver.example.test", () => new Response("ok"));
		const api = streamedAnswers([
			{ type: "message_start", message: { id: "msg_f", type: "message", role: "assistant", model: "claude-sonnet-5-5", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 30, output_tokens: 1 } } },
			{ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
			{ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Let me check the status page first" } },
			{ type: "content_block_stop", index: 0 },
			{ type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_f", name: "http_fetch", input: {} } },
			{ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"url":"https://status.example.test/"}' } },
			{ type: "content_block_stop", index: 1 },
			{ type: "message_delta", delta: { stop_reason: "awaiting_approval", stop_sequence: null }, usage: { output_tokens: 25 } },
			{ type: "message_stop" },
		]);
		await createAgent({ name: "future-stop", tools: [fetchTool], delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		const job = await runToRest("future-stop");

		expect(job).toMatchObject({
			status: "failed",
			exit_reason: "error",
			summary: null,
			delivery: null,
			error: { type: "unknown_stop_reason", message: "the model output ended with stop_reason awaiting_approval, which drover does not know" },
		});
		expect(job.transitions.at(-1)!.reason).toBe("the model stopped with stop_reason awaiting_approval, which drover does not know; its answer was not taken as final");
		// Its incident is the model's doing, as a refusal's is, not an unknown failure.
		const { incidents } = (await (await call("/v1/incidents?agent=future-stop")).json()) as { incidents: { class: string }[] };
		expect(incidents).toMatchObject([{ class: "agent" }]);
		expect(api.requests()).toBe(1);
		expect(fetched).toEqual([]);
		expect(job.usage.per_model["claude-sonnet-5-5"]).toMatchObject({ input_tokens: 30, output_tokens: 25 });
		const lines = await outputOf("future-stop", job.id);
		expect(lines.filter((l) => l.type === "assistant")).toEqual([expect.objectContaining({ content: "Let me check the status page first" })]);
		expect(lines.filter((l) => l.type === "tool_use" || l.type === "tool_result")).toEqual([]);
	});
});

describe("a 200 that is no event stream", () => {
	it("is a try that did not answer, its retry line naming what came instead; the next try's answer is the job's", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "All green." });
		let first = true;
		fake("https://api.anthropic.com", (request) => {
			if (!first) return emulator.handle(request);
			first = false;
			return new Response("<html><body>502 Bad Gateway</body></html>", { headers: { "content-type": "text/html; charset=utf-8" } });
		});
		await createAgent({ name: "html-answer" });
		const job = await runToRest("html-answer");
		expect(job).toMatchObject({ status: "completed", summary: "All green." });
		const retries = (await outputOf("html-answer", job.id)).filter((l) => l.type === "system" && l.subtype === "retry");
		expect(retries.map((l) => l.content)).toEqual(["model claude-sonnet-5-5 did not answer: the answer was not an event stream but text/html, with no message in it"]);
	});

	it("is the answer when it is the whole message as JSON (a gateway that ignores stream: true): taken once, its tokens counted, never asked again", async () => {
		let asked = 0;
		fake("https://api.anthropic.com", () => {
			asked++;
			const message = { id: "msg_j", type: "message", role: "assistant", model: "claude-sonnet-5-5", content: [{ type: "text", text: "All green." }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 40, output_tokens: 4 } };
			return new Response(JSON.stringify(message), { headers: { "content-type": "application/json" } });
		});
		await createAgent({ name: "json-answer" });
		const job = await runToRest("json-answer");
		expect(job).toMatchObject({ status: "completed", summary: "All green." });
		expect(asked).toBe(1);
		expect(job.usage.per_model["claude-sonnet-5-5"]).toMatchObject({ input_tokens: 40, output_tokens: 4 });
		expect((await outputOf("json-answer", job.id)).filter((l) => l.type === "system" && l.subtype === "retry")).toEqual([]);
	});

	it("a JSON body that is no message (a gateway's own error) is still a try that did not answer, said so", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "All green." });
		let first = true;
		fake("https://api.anthropic.com", (request) => {
			if (!first) return emulator.handle(request);
			first = false;
			return new Response(JSON.stringify({ status: "degraded", message: "try later" }), { headers: { "content-type": "application/json" } });
		});
		await createAgent({ name: "json-other" });
		const job = await runToRest("json-other");
		expect(job).toMatchObject({ status: "completed", summary: "All green." });
		const retries = (await outputOf("json-other", job.id)).filter((l) => l.type === "system" && l.subtype === "retry");
		expect(retries.map((l) => l.content)).toEqual(["model claude-sonnet-5-5 did not answer: the answer was not an event stream but application/json, with no message in it"]);
	});
});

describe("a turn a server tool paused (pause_turn), then continued", () => {
	it("is one answer: the job's summary is the whole turn's text, as its delivery is", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ stop_reason: "pause_turn", text: "Three deploys went out overnight." }, { text: " None caused an incident." });
		const delivered: { answer?: string }[] = [];
		fake("https://deliver.example.test", async (request) => (delivered.push((await request.json()) as { answer?: string }), new Response("ok")));
		await createAgent({ name: "paused-answer", delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		const job = await runToRest("paused-answer");

		const whole = "Three deploys went out overnight. None caused an incident.";
		expect(job).toMatchObject({ status: "completed", summary: whole, usage: { num_turns: 1 } });
		expect(delivered).toMatchObject([{ answer: whole }]);
		// The output keeps each response's own text on its own line.
		expect((await outputOf("paused-answer", job.id)).filter((l) => l.type === "assistant").map((l) => l.content)).toEqual(["Three deploys went out overnight.", " None caused an incident."]);
	});
});
