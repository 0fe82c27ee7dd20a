import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { ALARM_BUDGET_MS } from "../../durable-objects/agent/pass-budget.ts";
import type { JobRecord } from "../../src/jobs/model.ts";
import type { UsageDay } from "../../src/store/usage.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { gate } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, outputOf, trigger } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { captureLogs } from "../helpers/logs.ts";

/**
 * Users reconcile drover's usage with Anthropic's bill: a model call billed while its job was being
 * cancelled, or timed out, is counted like any other (the job's usage, its agent's usage day, the
 * job.finished line, a JSONL line saying what the tokens were for).
 */

const MODEL = "claude-sonnet-5-5";
const USAGE = { input_tokens: 1200, output_tokens: 42, cache_creation_input_tokens: 800, cache_read_input_tokens: 3400 };
// Far from the real clock: the job's day is the usage day read back, and alarms set do not fire mid-test.
const NOW = Date.parse("2031-03-03T10:00:00Z");
const DAY = "2031-03-03";

afterEach(() => {
	vi.restoreAllMocks();
	vi.useRealTimers();
});

const frame = (event: { type: string }) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

const start = (usage = USAGE) => ({
	type: "message_start",
	message: { id: "msg_late", type: "message", role: "assistant", model: MODEL, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
});

/** A whole streamed answer of `text`, billed `usage`, as the API sends it. */
function answer(text: string, usage = USAGE): string {
	return [
		start(usage),
		{ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
		{ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } },
		{ type: "content_block_stop", index: 0 },
		{ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: usage.output_tokens } },
		{ type: "message_stop" },
	]
		.map(frame)
		.join("");
}

const sse = (body: BodyInit) => new Response(body, { headers: { "content-type": "text/event-stream" } });

/** Resolves when `signal` aborts: the moment the caller's cancel (or deadline) reached the request. */
const abortOf = (signal: AbortSignal) => new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));

/**
 * The Messages API answering only once the request was aborted: an answer on its way when the cancel
 * lands, from a transport that has not noticed the abort. `arrived` when the request is in.
 */
function answerAfterAbort(text: string): Promise<void> {
	const { promise: arrived, open } = gate();
	fake("https://api.anthropic.com", async (req) => {
		open();
		await abortOf(req.signal);
		return sse(answer(text));
	});
	return arrived;
}

async function usageDay(agent: string): Promise<UsageDay[]> {
	const res = await call(`/v1/usage?agent=${agent}&since=${DAY}&until=${DAY}`);
	expect(res.status).toBe(200);
	return ((await res.json()) as { days: UsageDay[] }).days;
}

/** What a user reconciling the bill reads for a job: its record, its usage day, its job.finished line, its JSONL. */
async function expectCounted(agent: string, job: JobRecord, logs: Record<string, unknown>[], usage: typeof USAGE): Promise<Record<string, unknown>[]> {
	expect(job.usage.per_model).toEqual({ [MODEL]: usage });
	// Billed, but not a turn of the conversation: the answer was never acted on.
	expect(job.usage.num_turns).toBe(0);
	expect(await usageDay(agent)).toEqual([expect.objectContaining({ day: DAY, agent, jobs: 1, ...usage })]);
	const finished = logs.find((l) => l.event === "job.finished" && l.job_id === job.id);
	expect(finished).toMatchObject({ model_calls: 1, input_tokens: usage.input_tokens, output_tokens: usage.output_tokens });
	const lines = await outputOf(agent, job.id);
	const billed = lines.filter((l) => l.usage !== undefined);
	expect(billed).toEqual([expect.objectContaining({ type: "system", subtype: "call_aborted", model: MODEL, usage: expect.objectContaining(usage) })]);
	// Said once, as aborted: the try is no retry (none followed it), so no retry line names it too.
	expect(lines.filter((l) => l.subtype === "retry")).toEqual([]);
	return lines;
}

describe("a model call's tokens when its job is cancelled or times out mid-call", () => {
	it("counts an answer that arrives after the cancel landed, though the job ends cancelled without acting on it", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: NOW });
		const arrived = answerAfterAbort("Too late.");
		await createAgent({ name: "late-answer" });
		const logs = captureLogs();
		const job = await trigger("late-answer");
		await arrived;
		const res = await call(`/v1/jobs/${job.id}/cancel`, { method: "POST", as: "operate", body: { reason: "changed my mind" } });
		expect(res.status).toBe(200);
		expect(await res.json()).toMatchObject({ status: "cancelled", exit_reason: "cancelled", summary: null, usage: { per_model: { [MODEL]: USAGE } } });
		await settle("late-answer");
		const done = await jobOf("late-answer", job.id);
		expect(done).toMatchObject({ status: "cancelled", summary: null });
		const lines = await expectCounted("late-answer", done, logs, USAGE);
		// Said in the output, the answer itself not shown as the job's: no assistant line.
		expect(lines.find((l) => l.subtype === "call_aborted")).toMatchObject({ whole: true, content: expect.stringContaining("after the job was cancelled") });
		expect(lines.filter((l) => l.type === "assistant")).toEqual([]);
	});

	it("counts the tokens a stream the cancel cut had reported: its start's input and cache tokens", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: NOW });
		const { promise: arrived, open } = gate();
		fake("https://api.anthropic.com", (req) => {
			open();
			// message_start, then the model still writing when the cancel cuts the connection.
			const body = new ReadableStream<Uint8Array>({
				start: (c) => {
					c.enqueue(new TextEncoder().encode(frame(start())));
					// What a real transport does with a body whose request was aborted.
					void abortOf(req.signal).then(() => c.error(new DOMException("The operation was aborted.", "AbortError")));
				},
			});
			return sse(body);
		});
		await createAgent({ name: "cut-stream" });
		const logs = captureLogs();
		const job = await trigger("cut-stream");
		await arrived;
		const res = await call(`/v1/jobs/${job.id}/cancel`, { method: "POST", as: "operate" });
		expect(await res.json()).toMatchObject({ status: "cancelled" });
		await settle("cut-stream");
		const reported = { ...USAGE, output_tokens: 1 };
		const lines = await expectCounted("cut-stream", await jobOf("cut-stream", job.id), logs, reported);
		expect(lines.find((l) => l.subtype === "call_aborted")).toMatchObject({ whole: false, content: expect.stringContaining("cut off") });
	});

	it("counts an answer that arrives after the job's timeout aborted its call", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: NOW });
		// The job's tool call leaves its next model call 30 ms before the deadline: its timeout aborts it.
		fake("https://slow.example.test", () => {
			vi.setSystemTime(NOW + 10 * 60_000 - 30);
			return new Response("slow page");
		});
		const toolTurn = [
			start(),
			{ type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "http_fetch", input: {} } },
			{ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify({ url: "https://slow.example.test/" }) } },
			{ type: "content_block_stop", index: 0 },
			{ type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: USAGE.output_tokens } },
			{ type: "message_stop" },
		];
		let calls = 0;
		fake("https://api.anthropic.com", async (req) => {
			if (++calls === 1) return sse(toolTurn.map(frame).join(""));
			await abortOf(req.signal);
			return sse(answer("Too late."));
		});
		await createAgent({ name: "late-timeout", timeout: "10m", tools: [{ type: "http_fetch", allow_hosts: ["slow.example.test"] }] });
		const logs = captureLogs();
		const job = await trigger("late-timeout");
		await settle("late-timeout");
		const done = await jobOf("late-timeout", job.id);
		expect(done).toMatchObject({ status: "failed", exit_reason: "timeout" });
		// Two billed calls: the tool turn's and the one the timeout cut, whose answer came after.
		expect(done.usage.per_model).toEqual({ [MODEL]: Object.fromEntries(Object.entries(USAGE).map(([k, n]) => [k, 2 * n])) });
		expect(done.usage.num_turns).toBe(1);
		// The agent's usage day counts both, as the bill does.
		expect(await usageDay("late-timeout")).toEqual([expect.objectContaining({ day: DAY, agent: "late-timeout", jobs: 1, ...Object.fromEntries(Object.entries(USAGE).map(([k, n]) => [k, 2 * n])) })]);
		expect(logs.find((l) => l.event === "job.finished" && l.job_id === job.id)).toMatchObject({ model_calls: 2, output_tokens: 2 * USAGE.output_tokens });
		const lines = await outputOf("late-timeout", job.id);
		expect(lines.find((l) => l.subtype === "call_aborted")).toMatchObject({ whole: true, usage: expect.objectContaining(USAGE), content: expect.stringContaining("timed out") });
	});

	it("counts an answer that arrives after the pass's budget is spent: the budget stops new steps, never a call's answer", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: NOW });
		const { promise: held, open: release } = gate();
		const { promise: arrived, open } = gate();
		let calls = 0;
		fake("https://api.anthropic.com", async () => {
			calls++;
			if (calls === 1) {
				open();
				await held;
			}
			return sse(answer(calls === 1 ? "First." : "unused"));
		});
		await createAgent({ name: "late-handover", timeout: "1h" });
		const job = await trigger("late-handover");
		await arrived;
		// The pass's budget runs out while the call is out; its answer is still taken.
		vi.setSystemTime(NOW + ALARM_BUDGET_MS + 1);
		release();
		await runInDurableObject(env.AGENT.getByName("late-handover"), async (instance: AgentDO) => {
			await (instance as unknown as { passes: { working: Promise<void> | null } }).passes.working;
		});
		await settle("late-handover");
		const done = await jobOf("late-handover", job.id);
		expect(done).toMatchObject({ status: "completed", summary: "First.", usage: { num_turns: 1, per_model: { [MODEL]: USAGE } } });
		expect(calls).toBe(1);
	});
});
