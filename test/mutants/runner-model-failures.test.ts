// How the agent loop ends a model call that failed (durable-objects/agent/runner/model-turn.ts), where a
// mutation walk found the suite blind: a try a cancel aborted before any answer is not a billed call; a
// failure once the job's deadline has passed ends it as a timeout; and only the API's refusal of a
// thinking block's signature leaves the job's thinking out and asks again, never any other 400; and a rate
// limit's wait that ends past the deadline, by however little, fails the job at once.
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAgent, settle } from "../helpers/agents.ts";
import { gate, useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { captureLogs } from "../helpers/logs.ts";
import { jobOf, runToRest, trigger } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";

afterEach(() => {
	vi.restoreAllMocks();
	vi.useRealTimers();
});

describe("a model call cancelled before any of its answer arrived", () => {
	it("is a try sent but not a billed call: job.finished says model_calls 0, model_tries 1", async () => {
		const { promise: arrived, open } = gate();
		fake("https://api.anthropic.com", async (req) => {
			open();
			await new Promise<void>((resolve) => (req.signal.aborted ? resolve() : req.signal.addEventListener("abort", () => resolve(), { once: true })));
			throw new DOMException("The operation was aborted.", "AbortError");
		});
		await createAgent({ name: "cancelled-unanswered" });
		const logs = captureLogs();
		const job = await trigger("cancelled-unanswered");
		await arrived;
		const res = await call(`/v1/jobs/${job.id}/cancel`, { method: "POST", as: "operate", body: { reason: "not now" } });
		expect(res.status).toBe(200);
		await settle("cancelled-unanswered");
		const done = await jobOf("cancelled-unanswered", job.id);
		expect(done).toMatchObject({ status: "cancelled", usage: { num_turns: 0, per_model: {} } });
		expect(logs.find((l) => l.event === "job.finished" && l.job_id === job.id)).toMatchObject({ model_calls: 0, model_tries: 1 });
	});
});

describe("a model call that fails once the job's deadline has passed", () => {
	it("ends the job as a timeout, not as the call's own error", async () => {
		const now = Date.parse("2031-04-04T10:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now });
		const emulator = useEmulator();
		emulator.enqueue({ error: 400, message: "messages: something the API did not like" });
		fake("https://api.anthropic.com", (req) => {
			// The call took the rest of the job's 10 minutes, and then some.
			vi.setSystemTime(now + 10 * 60_000 + 1);
			return emulator.handle(req);
		});
		await createAgent({ name: "failed-past-deadline", timeout: "10m" });
		const job = await runToRest("failed-past-deadline");
		expect(job).toMatchObject({ status: "failed", exit_reason: "timeout", error: { type: "timeout", message: "job exceeded its timeout of 10m" } });
	});
});

describe("a 400 that is not about a thinking block, in a job whose conversation holds thinking", () => {
	it("fails the job as the API refused it, asking nothing again", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", () => new Response("all green"));
		emulator.enqueue(
			{ thinking: "I should look at the page.", tool_use: { name: "http_fetch", input: { url: "https://status.example.test/" } } },
			{ error: 400, message: "messages.2.content.0: something else the API did not like" },
			{ text: "never asked" },
		);
		await createAgent({ name: "other-400", tools: [{ type: "http_fetch", allow_hosts: ["status.example.test"] }] });
		const job = await runToRest("other-400");
		expect(job).toMatchObject({ status: "failed", exit_reason: "error", error: { type: "invalid_request" } });
		expect(emulator.requests).toHaveLength(2);
	});
});

describe("a rate limit whose wait ends a millisecond past the job's deadline", () => {
	it("fails the job at once: no attempt is left within its timeout", async () => {
		const now = Date.parse("2031-04-05T10:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now });
		const emulator = useEmulator();
		emulator.enqueue({ error: 429, retry_after: 30 }, { text: "never asked" });
		fake("https://api.anthropic.com", (req) => {
			// Answered 30 s and 1 ms before the deadline: a wait of 30 s ends 1 ms past it.
			vi.setSystemTime(now + 60_000 - 30_000 + 1);
			return emulator.handle(req);
		});
		await createAgent({ name: "limited-just-past", timeout: "1m" });
		const job = await runToRest("limited-just-past");
		expect(job).toMatchObject({ status: "failed", exit_reason: "error", error: { type: "rate_limit" } });
		expect(emulator.requests).toHaveLength(1);
	});
});
