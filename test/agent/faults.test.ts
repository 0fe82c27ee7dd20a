import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { HEARTBEAT_MS } from "../../durable-objects/agent/runner/step-common.ts";
import { transition } from "../../src/jobs/model.ts";
import { call } from "../helpers/http.ts";
import { createModelClient } from "../../src/agent/model-client.ts";
import { ModelCallError } from "../../src/agent/contracts.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import type { MessagesEmulator } from "../../emulator/messages-api.ts";
import { jobOf, outputOf, runToRest, trigger } from "../helpers/jobs.ts";
import { fake, outboundLog } from "../helpers/outbound.ts";

// What is durable at the moment a call is in flight, and what the object does when it finds exactly
// that state on disk with nothing of the job in memory. test/faults/kills.test.ts kills the object
// for real at each of these points.
afterEach(() => {
	vi.useRealTimers();
});

describe("a Durable Object that dies mid-run", () => {
	it("keeps an alarm set ahead while a model call is in flight, so a dead object wakes up", async () => {
		// A clock of the test's, standing still: the alarm is read against the instant the call went
		// out. Far from the real clock, so the alarm does not fire on its own mid-test.
		const start = Date.parse("2031-06-02T10:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: start });
		const emulator = useEmulator();
		emulator.enqueue({ hang: true });
		let arrived!: () => void;
		const inFlight = new Promise<void>((r) => (arrived = r));
		fake("https://api.anthropic.com", (req) => {
			arrived();
			return emulator.handle(req);
		});
		await createAgent({ name: "heartbeat" });
		const job = await trigger("heartbeat");
		const running = settle("heartbeat");
		await inFlight;
		const { alarm, last } = await runInDurableObject(env.AGENT.getByName("heartbeat"), async (_i: AgentDO, state) => ({
			alarm: await state.storage.getAlarm(),
			last: state.storage.sql.exec<{ role: string }>("SELECT role FROM messages WHERE job_id = ? ORDER BY seq DESC LIMIT 1", job.id).one().role,
		}));
		// A whole heartbeat ahead of the call: a dead object is woken 30 s after its last sign of life.
		expect(alarm).toBe(start + HEARTBEAT_MS);
		expect(last).toBe("user"); // the conversation up to this call is already on disk
		await call(`/v1/jobs/${job.id}/cancel`, { method: "POST", as: "operate" });
		await running;
	});

	it("repeats the model call from its checkpoint, and finishes", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ error: 429, retry_after: 120 });
		await createAgent({ name: "resumed" });
		const job = await trigger("resumed", "Summarize.");
		await settle("resumed"); // rate-limited: the job waits, running, its conversation checkpointed
		const first = emulator.requests[0]!;
		const stub = env.AGENT.getByName("resumed");
		// Nothing of this job is held in memory now: the next step works from storage alone.
		await runInDurableObject(stub, (_i: AgentDO, state) => {
			state.storage.sql.exec("UPDATE job_setup SET next_step_at = 0 WHERE job_id = ?", job.id);
		});
		emulator.enqueue({ text: "Resumed and done." });
		await settle("resumed");
		const done = await jobOf("resumed", job.id);
		expect(done).toMatchObject({ status: "completed", summary: "Resumed and done." });
		expect(JSON.stringify(emulator.requests.at(-1)!.messages)).toBe(JSON.stringify(first.messages));
		expect(done.usage.num_turns).toBe(1);
	});

	it("records a tool call as executing before its request leaves", async () => {
		useEmulator().enqueue({ tool_use: { name: "http_fetch", input: { url: "https://side-effect.example.test/charge", method: "POST", body: "{}" } } });
		let seen: string | undefined;
		let arrived!: () => void;
		const inTool = new Promise<void>((r) => (arrived = r));
		fake("https://side-effect.example.test", async () => {
			seen = await runInDurableObject(env.AGENT.getByName("in-tool"), (_i: AgentDO, state) =>
				state.storage.sql.exec<{ status: string }>("SELECT status FROM tool_calls").one().status,
			);
			arrived();
			return new Response("charged");
		});
		await createAgent({ name: "in-tool", tools: [{ type: "http_fetch", allow_hosts: ["side-effect.example.test"], methods: ["POST"] }] });
		const job = await trigger("in-tool");
		const running = settle("in-tool");
		await inTool;
		expect(seen).toBe("executing");
		await call(`/v1/jobs/${job.id}/cancel`, { method: "POST", as: "operate" });
		await running;
	});

	it("ends a job indeterminate when it finds a tool left executing, and never runs it again", async () => {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "charge card" } } });
		let calls = 0;
		fake("https://tickets.example.test", () => {
			calls++;
			return Response.json({ ok: true });
		});
		await createAgent({
			name: "died-in-tool",
			tools: [{ type: "webhook", name: "create_ticket", description: "Create a ticket.", url_secret: "TEST_TICKETS_URL", requires_approval: true }],
		});
		const job = await trigger("died-in-tool");
		await settle("died-in-tool"); // waits for approval with the call recorded, not yet run
		const stub = env.AGENT.getByName("died-in-tool");
		// The state a crash leaves between "executing" being recorded and the result being recorded.
		await runInDurableObject(stub, async (instance: AgentDO, state) => {
			const waiting = (await instance.getJob(job.id))!;
			await AgentDO.saveJob(instance, transition(waiting, "running", { reason: "approved by operator", at: new Date() }));
			state.storage.sql.exec("UPDATE tool_calls SET status = 'executing', decision = 'approve', started_at = ? WHERE job_id = ?", Date.now(), job.id);
			state.storage.sql.exec("UPDATE job_setup SET next_step_at = 0, approval_expires_at = NULL WHERE job_id = ?", job.id);
		});
		await settle("died-in-tool");
		const done = await jobOf("died-in-tool", job.id);
		expect(done.status).toBe("indeterminate");
		expect(done.exit_reason).toBe("error");
		expect(done.error?.message).toMatch(/while tool create_ticket was executing; its effect is unknown/);
		expect(calls).toBe(0);
		expect((await stub.runs(10))[0]).toMatchObject({ job_id: job.id, status: "unknown" });
		// Cut off by the run's end, its effect unknown: counted failed, as a forced cancel's cut is.
		expect(done.tool_calls).toEqual({ made: 1, failed: 1 });
	});
});

/** The `request-id` of each answer the emulator gives from here on, in order: the ids the API's support asks for. */
function answeredRequestIds(emulator: MessagesEmulator): string[] {
	const ids: string[] = [];
	fake("https://api.anthropic.com", async (req) => {
		const res = await emulator.handle(req);
		ids.push(res.headers.get("request-id")!);
		return res;
	});
	return ids;
}

describe("the model provider failing", () => {
	it("falls back to the next model when the primary is overloaded", async () => {
		const emulator = useEmulator({ modelErrors: { "claude-opus-5-5": { error: 529 } } });
		emulator.enqueue({ text: "Answered by the fallback." });
		await createAgent({ name: "fallback", model: "claude-opus-5-5", fallback_models: ["claude-haiku-5-5"] });
		const job = await runToRest("fallback");
		expect(job).toMatchObject({ status: "completed", summary: "Answered by the fallback." });
		expect(Object.keys(job.usage.per_model)).toEqual(["claude-haiku-5-5"]);
		expect(emulator.requests.map((r) => r.model)).toEqual(["claude-opus-5-5", "claude-opus-5-5", "claude-opus-5-5", "claude-haiku-5-5"]);
		const lines = await outputOf("fallback", job.id);
		expect(lines.filter((l) => l.subtype === "retry")).toHaveLength(3);
		expect(lines.find((l) => l.subtype === "fallback")).toMatchObject({ model: "claude-haiku-5-5" });
	});

	it("falls back at once past a model the API does not know (retired, or not offered to the key), and fails at once with none left", async () => {
		const emulator = useEmulator({ modelErrors: { "claude-opus-5-5": { error: 404 } } });
		emulator.enqueue({ text: "Answered by the fallback." });
		await createAgent({ name: "unknown-model", model: "claude-opus-5-5", fallback_models: ["claude-haiku-5-5"] });
		const job = await runToRest("unknown-model");
		expect(job).toMatchObject({ status: "completed", summary: "Answered by the fallback." });
		expect(emulator.requests.map((r) => r.model)).toEqual(["claude-opus-5-5", "claude-haiku-5-5"]);

		await createAgent({ name: "unknown-only", model: "claude-opus-5-5" });
		const alone = await runToRest("unknown-only");
		expect(alone).toMatchObject({ status: "failed", error: { type: "invalid_request", message: expect.stringContaining("not_found_error") } });
		expect(emulator.requests.map((r) => r.model)).toEqual(["claude-opus-5-5", "claude-haiku-5-5", "claude-opus-5-5"]);
	});

	it("sends a refused request, unchanged, to the next fallback model, and counts the refused answer's tokens", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ stop_reason: "refusal", text: "I can" }, { text: "Answered by the fallback." });
		await createAgent({ name: "refused-once", model: "claude-opus-5-5", fallback_models: ["claude-haiku-5-5"] });
		const job = await runToRest("refused-once");
		expect(job).toMatchObject({ status: "completed", summary: "Answered by the fallback." });
		const [refused, retried] = emulator.requests;
		expect([refused!.model, retried!.model]).toEqual(["claude-opus-5-5", "claude-haiku-5-5"]);
		// The refused turn is not part of the conversation: the fallback gets the same messages.
		expect(retried!.messages).toEqual(refused!.messages);
		expect(job.usage.num_turns).toBe(1);
		expect(Object.keys(job.usage.per_model).sort()).toEqual(["claude-haiku-5-5", "claude-opus-5-5"]);
		expect(job.usage.per_model["claude-opus-5-5"]!.output_tokens).toBeGreaterThan(0);
		const lines = await outputOf("refused-once", job.id);
		const retry = lines.find((l) => l.subtype === "retry");
		// With the answer's request id, as every try the API answered has.
		expect(retry).toMatchObject({ model: "claude-opus-5-5", content: expect.stringContaining("refused"), request_id: expect.stringMatching(/^req_/) });
		expect(retry!.usage).toEqual(expect.objectContaining({ output_tokens: job.usage.per_model["claude-opus-5-5"]!.output_tokens }));
		expect(lines.find((l) => l.subtype === "fallback")).toMatchObject({ model: "claude-haiku-5-5" });
	});

	it("sends a refused request to no fallback once max_requests is used: the job fails at the limit, one request billed", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ stop_reason: "refusal", text: "I can" });
		await createAgent({ name: "refused-at-limit", model: "claude-opus-5-5", fallback_models: ["claude-haiku-5-5"], usage_limits: { max_requests: 1 } });
		const job = await runToRest("refused-at-limit");
		expect(emulator.requests.map((r) => r.model)).toEqual(["claude-opus-5-5"]);
		expect(job).toMatchObject({
			status: "failed",
			exit_reason: "usage_limit",
			error: { type: "usage_limit", message: "usage limit reached: max_requests 1" },
		});
		expect(job.transitions.at(-1)!.reason).toBe("max_requests 1 reached (1 used): claude-opus-5-5 refused, and its fallback would have been a request past it");
		expect(Object.keys(job.usage.per_model)).toEqual(["claude-opus-5-5"]);
		// With a request to spare, the fallback answers as before.
		emulator.enqueue({ stop_reason: "refusal", text: "I can" }, { text: "Answered by the fallback." });
		await createAgent({ name: "refused-within-limit", model: "claude-opus-5-5", fallback_models: ["claude-haiku-5-5"], usage_limits: { max_requests: 2 } });
		expect(await runToRest("refused-within-limit")).toMatchObject({ status: "completed", summary: "Answered by the fallback." });
	});

	it("fails with refusal when the last model refuses too, every refused answer counted", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ stop_reason: "refusal", text: "I can" }, { stop_reason: "refusal" });
		await createAgent({ name: "refused-twice", model: "claude-opus-5-5", fallback_models: ["claude-haiku-5-5"] });
		const job = await runToRest("refused-twice");
		expect(job).toMatchObject({ status: "failed", error: { type: "refusal" } });
		expect(emulator.requests.map((r) => r.model)).toEqual(["claude-opus-5-5", "claude-haiku-5-5"]);
		expect(Object.keys(job.usage.per_model).sort()).toEqual(["claude-haiku-5-5", "claude-opus-5-5"]);
	});

	it("counts a refused answer's tokens when the fallback then fails", async () => {
		const emulator = useEmulator({ modelErrors: { "claude-haiku-5-5": { error: 529 } } });
		emulator.enqueue({ stop_reason: "refusal", text: "I can" });
		await createAgent({ name: "refused-then-down", model: "claude-opus-5-5", fallback_models: ["claude-haiku-5-5"] });
		const job = await runToRest("refused-then-down");
		expect(job).toMatchObject({ status: "failed", error: { type: "overloaded" } });
		expect(job.usage.per_model["claude-opus-5-5"]!.output_tokens).toBeGreaterThan(0);
		expect(job.usage.num_turns).toBe(0);
	});

	it("gives up a stream that stalls after its headers and retries it, instead of holding the job until its deadline", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "Answered on the retry." });
		let stalled = 0;
		fake("https://api.anthropic.com", (request) => {
			if (stalled > 0) return emulator.handle(request);
			stalled++;
			const start = { type: "message_start", message: { id: "msg_s", type: "message", role: "assistant", model: "claude-sonnet-5-5", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } };
			// message_start, then nothing more, the connection held open.
			const body = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new TextEncoder().encode(`event: message_start\ndata: ${JSON.stringify(start)}\n\n`)) });
			return new Response(body, { headers: { "content-type": "text/event-stream" } });
		});
		await createAgent({ name: "stalled-stream" });
		// The 60 s of production, shortened so the test does not wait.
		await runInDurableObject(env.AGENT.getByName("stalled-stream"), (instance: AgentDO) => AgentDO.setModelIdleTimeout(instance, 50));
		const job = await runToRest("stalled-stream");
		expect(job).toMatchObject({ status: "completed", summary: "Answered on the retry." });
		const lines = await outputOf("stalled-stream", job.id);
		expect(lines.filter((l) => l.subtype === "retry").map((l) => l.content)).toEqual(["model claude-sonnet-5-5 did not answer: the stream stalled: nothing arrived for 0.05 s"]);
	});

	it("retries a stream that stops without a stop reason (no message_delta) rather than take it as the answer", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "The whole answer." });
		let broken = 0;
		fake("https://api.anthropic.com", (request) => {
			if (broken > 0) return emulator.handle(request);
			broken++;
			const events = [
				{ type: "message_start", message: { id: "msg_n", type: "message", role: "assistant", model: "claude-sonnet-5-5", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } },
				{ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
				{ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Half an ans" } },
				{ type: "content_block_stop", index: 0 },
				{ type: "message_stop" },
			];
			return new Response(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""), { headers: { "content-type": "text/event-stream" } });
		});
		await createAgent({ name: "no-stop-reason" });
		const job = await runToRest("no-stop-reason");
		expect(job).toMatchObject({ status: "completed", summary: "The whole answer." });
		const lines = await outputOf("no-stop-reason", job.id);
		expect(lines.filter((l) => l.subtype === "retry").map((l) => l.content)).toEqual(["model claude-sonnet-5-5 did not answer: the stream ended without a stop reason (no message_delta before message_stop)"]);
	});

	it("fails the job with the classified error when every model is overloaded", async () => {
		useEmulator({ modelErrors: { "claude-opus-5-5": { error: 529 } } });
		await createAgent({ name: "no-fallback", model: "claude-opus-5-5" });
		const job = await runToRest("no-fallback");
		expect(job).toMatchObject({ status: "failed", exit_reason: "error", error: { type: "overloaded" } });
		// Each try is in the output, as a good call's retries are, before the error that ended the job.
		const lines = await outputOf("no-fallback", job.id);
		const kinds = lines.map((l) => (l.type === "system" ? `system:${String(l.subtype)}` : String(l.type)));
		expect(kinds).toEqual(["system:init", "system:retry", "system:retry", "system:retry", "error", "system:result"]);
		expect(lines.filter((l) => l.subtype === "retry").every((l) => String(l.content) === "model claude-opus-5-5 answered 529")).toBe(true);
		// Each dated when its try ended, the backoff (0.5 s, then 1.5 s) between them, not all at the call's end.
		const at = lines.filter((l) => l.subtype === "retry").map((l) => Date.parse(String(l.timestamp)));
		expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(500);
		expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(1500);
	});

	it("shows the API's request id of the answer a failed call ended on, beside its error's text, and of each try in the output; the incident still counts", async () => {
		const emulator = useEmulator({ modelErrors: { "claude-opus-5-5": { error: 529 } } });
		const ids = answeredRequestIds(emulator);
		await createAgent({ name: "request-ids", model: "claude-opus-5-5" });
		const job = await runToRest("request-ids");
		expect(ids).toHaveLength(3);
		expect(ids.every((id) => /^req_011C/.test(id))).toBe(true);
		const shown = (await (await call(`/v1/jobs/${job.id}`)).json()) as { status: string; error: { type: string; message: string; request_id?: string } };
		expect(shown).toMatchObject({ status: "failed", error: { type: "overloaded", request_id: ids[2] } });
		// Not in the text, which is the incident's signature.
		expect(shown.error.message).not.toContain("req_");
		const lines = await outputOf("request-ids", job.id);
		expect(lines.filter((l) => l.subtype === "retry").map((l) => l.request_id)).toEqual(ids);
		expect(lines.find((l) => l.type === "error")).toMatchObject({ code: "overloaded", request_id: ids[2] });

		// Another run fails alike, with other ids: the same incident, counted.
		const again = await runToRest("request-ids");
		expect(again.error).toMatchObject({ message: shown.error.message, request_id: ids[5] });
		expect(ids[5]).not.toBe(ids[2]);
		const incidents = ((await (await call("/v1/incidents?agent=request-ids")).json()) as { incidents: { count: number }[] }).incidents;
		expect(incidents).toMatchObject([{ count: 2 }]);
	});

	it("fails the job at once when every key is rate-limited past its deadline, rather than hold it there to time out", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ error: 429, retry_after: 600 });
		await createAgent({ name: "limited-past-deadline", timeout: "2m" });
		const job = await runToRest("limited-past-deadline");
		expect(job).toMatchObject({ status: "failed", exit_reason: "error", error: { type: "rate_limit", message: "rate limited past the job's deadline: no attempt was left within its timeout of 2m" } });
		expect(Date.parse(job.finished_at!) - Date.parse(job.started_at!)).toBeLessThan(60_000);
		// When the limit ends and the deadline fell: in the record, not in the error (an incident's signature).
		const until = Date.parse(job.started_at!) + 600_000;
		const [, limitEnd, deadline] = /^model call failed: rate_limit until (\S+), past the job's deadline at (\S+)$/.exec(job.transitions.at(-1)!.reason)!;
		expect(Math.abs(Date.parse(limitEnd!) - until)).toBeLessThan(60_000);
		expect(Date.parse(deadline!)).toBe(Date.parse(job.started_at!) + 120_000);
		const lines = await outputOf("limited-past-deadline", job.id);
		expect(lines.some((l) => l.subtype === "rate_limited")).toBe(false);
	});

	it("fails at once, without waiting, retrying or a fallback model, when the organisation has reached its monthly spend cap", async () => {
		// The API's 429 for it: rate_limit_error, its cause in error.details, no retry-after.
		const emulator = useEmulator({ modelErrors: { "claude-opus-5-5": { error: 429, error_code: "enforced_spend_limit_reached" } } });
		await createAgent({ name: "spend-capped", model: "claude-opus-5-5", fallback_models: ["claude-haiku-5-5"] });
		const job = await runToRest("spend-capped");
		// One request: the cap is the organisation's, so no wait, no second try, no fallback model.
		expect(emulator.requests.map((r) => r.model)).toEqual(["claude-opus-5-5"]);
		const shown = (await (await call(`/v1/jobs/${job.id}`)).json()) as { status: string; exit_reason: string; rate_limited_until: string | null; error: { type: string; message: string } };
		const at = new Date(job.finished_at!);
		const reset = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
		expect(shown).toMatchObject({
			status: "failed",
			exit_reason: "error",
			rate_limited_until: null,
			error: {
				type: "spend_limit",
				message: `the organisation's monthly spend limit is reached (enforced_spend_limit_reached): its requests are forbidden until the limit resets at 00:00 UTC on ${reset}, unless it is raised sooner in the Claude Console`,
			},
		});
		expect(Date.parse(job.finished_at!) - Date.parse(job.started_at!)).toBeLessThan(5_000);
		const lines = await outputOf("spend-capped", job.id);
		expect(lines.some((l) => l.subtype === "rate_limited" || l.subtype === "fallback")).toBe(false);

		// Run after run of it is one incident, an account's (auth), not a rate limit to wait out.
		const again = await runToRest("spend-capped");
		expect(again).toMatchObject({ status: "failed", error: { type: "spend_limit" } });
		expect(emulator.requests).toHaveLength(2);
		const incidents = ((await (await call("/v1/incidents?agent=spend-capped")).json()) as { incidents: { class: string; count: number; error: string }[] }).incidents;
		expect(incidents).toHaveLength(1);
		expect(incidents[0]).toMatchObject({ class: "auth", count: 2, error: shown.error.message });
	});

	it("comes back later, by alarm, when every key is rate-limited for longer than it may wait", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ error: 429, retry_after: 120 });
		await createAgent({ name: "rate-limited" });
		const job = await trigger("rate-limited");
		const before = Date.now();
		await settle("rate-limited");
		expect((await jobOf("rate-limited", job.id)).status).toBe("running");
		const alarm = await runInDurableObject(env.AGENT.getByName("rate-limited"), (_i: AgentDO, state) => state.storage.getAlarm());
		expect(alarm! - before).toBeGreaterThanOrEqual(119_000);
		const lines = await outputOf("rate-limited", job.id);
		const note = lines.find((l) => l.subtype === "rate_limited")!;
		const next = Date.parse(String(note.content).replace(/^rate limited; next attempt at /, ""));
		expect(next - before).toBeGreaterThanOrEqual(119_000);
		// The record says so too, where it was only "running": until when it waits.
		const waiting = (await (await call(`/v1/jobs/${job.id}`)).json()) as { status: string; rate_limited_until: string | null; revision: number };
		expect(waiting).toMatchObject({ status: "running", rate_limited_until: new Date(next).toISOString() });
		// Its wait over, the call is made and the record says nothing of a wait.
		emulator.enqueue({ text: "Done after the wait." });
		await runInDurableObject(env.AGENT.getByName("rate-limited"), (_i: AgentDO, state) => {
			state.storage.sql.exec("UPDATE job_setup SET next_step_at = 0 WHERE job_id = ?", job.id);
		});
		await settle("rate-limited");
		expect(await (await call(`/v1/jobs/${job.id}`)).json()).toMatchObject({ status: "completed", rate_limited_until: null, summary: "Done after the wait." });
	});

	it("rotates to the next key of the pool on a 429, against the emulator", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ error: 429, retry_after: 1 }, { text: "ok" });
		const client = createModelClient({ ANTHROPIC_API_KEY: "sk-ant-first-0000, sk-ant-second-0000" }, { sleep: async () => {} });
		const res = await client.call({ models: ["claude-sonnet-5-5"], system: [], messages: [{ role: "user", content: "hi" }], tools: [], max_tokens: 100 });
		expect(res.model).toBe("claude-sonnet-5-5");
		expect(emulator.requests.map((r) => r.apiKey)).toEqual(["sk-ant-first-0000", "sk-ant-second-0000"]);
		expect(res.attempts.map((a) => [a.key, a.status])).toEqual([
			[0, 429],
			[1, "ok"],
		]);
	});

	it("moves past a key whose organisation is spend-capped to the next key of the pool (perhaps another organisation's), without waiting", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ error: 429, error_code: "enforced_spend_limit_reached" }, { text: "ok" });
		const waits: number[] = [];
		const client = createModelClient({ ANTHROPIC_API_KEY: "sk-ant-first-0000, sk-ant-second-0000" }, { sleep: async (ms) => void waits.push(ms) });
		const res = await client.call({ models: ["claude-sonnet-5-5"], system: [], messages: [{ role: "user", content: "hi" }], tools: [], max_tokens: 100 });
		expect(emulator.requests.map((r) => r.apiKey)).toEqual(["sk-ant-first-0000", "sk-ant-second-0000"]);
		expect(res.attempts.map((a) => [a.key, a.status])).toEqual([
			[0, 429],
			[1, "ok"],
		]);
		expect(waits).toEqual([]);
	});

	it("never sends a key to a base URL that is not allowed", async () => {
		const client = createModelClient({ ANTHROPIC_API_KEY: "sk-ant-secret-0000", ANTHROPIC_BASE_URL: "https://collector.evil.test" });
		const err = await client
			.call({ models: ["claude-sonnet-5-5"], system: [], messages: [{ role: "user", content: "hi" }], tools: [], max_tokens: 100 })
			.catch((e: unknown) => e);
		expect(err).toBeInstanceOf(ModelCallError);
		expect((err as ModelCallError).kind).toBe("guard");
		expect((err as Error).message).not.toContain("sk-ant-secret");
		expect(outboundLog).toEqual([]);
	});
});

describe("an agent whose model endpoint may not receive the key", () => {
	it("is paused at dispatch, saying why, before any request leaves, and the key is nowhere a user or log can read", async () => {
		const secret = "sk-ant-api03-guarded-key-value-0000";
		await createAgent({ name: "key-guard" });
		await runInDurableObject(env.AGENT.getByName("key-guard"), (instance: AgentDO) => {
			const self = instance as unknown as { env: Env };
			self.env = { ...self.env, ANTHROPIC_API_KEY: secret, ANTHROPIC_BASE_URL: "https://collector.evil.test" };
		});
		const lines: string[] = [];
		for (const level of ["log", "info", "warn", "error", "debug"] as const) vi.spyOn(console, level).mockImplementation((line: unknown) => void lines.push(String(line)));
		const refused = await call("/v1/agents/key-guard/jobs", { method: "POST", as: "operate", body: { prompt: "Go." } });
		await settle("key-guard");
		vi.restoreAllMocks();
		const why = /ANTHROPIC_BASE_URL points at collector\.evil\.test, which may not receive ANTHROPIC_API_KEY.*no request was sent/;
		expect(refused.status).toBe(409);
		const answer = await refused.text();
		expect(answer).toMatch(why);
		const agent = await (await call("/v1/agents/key-guard")).text();
		expect(JSON.parse(agent)).toMatchObject({ paused: { by: "auto", reason: expect.stringMatching(why) } });
		const listed = (await (await call("/v1/jobs?agent=key-guard")).json()) as { jobs: unknown[] };
		expect(listed.jobs).toEqual([]);
		expect(outboundLog.filter((r) => r.url.includes("evil.test"))).toEqual([]);
		for (const [where, text] of Object.entries({ answer, agent, logs: lines.join("\n") })) {
			expect(text, where).not.toContain(secret);
			expect(text, where).not.toContain("guarded-key");
		}
	});
});
