import { env, runInDurableObject } from "cloudflare:test";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { log, setLogLevel } from "../../src/log.ts";
import { currentDefinition, readState } from "../../durable-objects/agent/state.ts";
import { triggerJob } from "../../durable-objects/agent/triggers.ts";
import { drawnJobId } from "../../src/jobs/id-blocks.ts";
import { createAgent, runsOf, settle } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { jobOf, runToRest, trigger } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { ticketTool } from "../helpers/tools.ts";
import { captureLogs } from "../helpers/logs.ts";

afterEach(() => {
	vi.restoreAllMocks();
	setLogLevel("info");
});

const linesOf = (lines: Record<string, unknown>[], jobId: string) => lines.filter((l) => l.job_id === jobId);

describe("one job followed through the logs by its id", () => {
	it("says what a job's model calls came to on its last line; a call of its own is a debug line", async () => {
		useEmulator().enqueue({ text: "All quiet." });
		await createAgent({ name: "logged-call" });
		const lines = captureLogs();
		const job = await runToRest("logged-call");
		expect(job.status).toBe("completed");
		const mine = linesOf(lines, job.id);
		// At the default level (info) a turn writes no line: a busy alarm run's turns filled Workers Logs' 256 KB.
		expect(mine.map((l) => l.event)).toEqual(["job.triggered", "job.started", "job.finished"]);
		const [model, usage] = Object.entries(job.usage.per_model)[0]!;
		expect(model).toBeTruthy();
		expect(mine[2]).toMatchObject({
			level: "info",
			status: "completed",
			exit_reason: "success",
			turns: 1,
			model_calls: 1,
			model_tries: 1,
			input_tokens: usage.input_tokens,
			output_tokens: usage.output_tokens,
			// The cache's tokens apart: input_tokens is the uncached input alone.
			cache_creation_input_tokens: usage.cache_creation_input_tokens,
			cache_read_input_tokens: usage.cache_read_input_tokens,
		});
	});

	it("says each model call at LOG_LEVEL debug: the model, how it stopped, its tries, time and tokens", async () => {
		useEmulator().enqueue({ text: "All quiet." });
		await createAgent({ name: "logged-call-debug" });
		setLogLevel("debug");
		const lines = captureLogs();
		const job = await runToRest("logged-call-debug");
		const mine = linesOf(lines, job.id);
		expect(mine.map((l) => l.event)).toEqual(["job.triggered", "job.started", "model.call", "job.finished"]);
		expect(mine[2]).toMatchObject({ level: "debug", agent: "logged-call-debug", model: expect.any(String), stop_reason: "end_turn", tries: 1, ms: expect.any(Number) });
		expect(mine[2]!.input_tokens).toBe(job.usage.per_model[mine[2]!.model as string]?.input_tokens);
	});

	it("says a model call retried at info whatever the level", async () => {
		useEmulator().enqueue({ error: 529, message: "overloaded" }, { text: "All quiet." });
		await createAgent({ name: "logged-call-retried" });
		const lines = captureLogs();
		const job = await runToRest("logged-call-retried");
		expect(job.status).toBe("completed");
		const call = linesOf(lines, job.id).find((l) => l.event === "model.call");
		expect(call).toMatchObject({ level: "info", tries: 2 });
		// The job's totals count the failed try it sent, apart from the billed calls.
		expect(linesOf(lines, job.id).find((l) => l.event === "job.finished")).toMatchObject({ model_calls: 1, model_tries: 2 });
	});

	it("says why a failed job failed: the model's refusal of the key, on the call's line and the job's last", async () => {
		useEmulator().enqueue({ error: 401, message: "invalid x-api-key" });
		await createAgent({ name: "logged-auth" });
		const lines = captureLogs();
		const job = await runToRest("logged-auth");
		expect(job.status).toBe("failed");
		const mine = linesOf(lines, job.id);
		expect(mine.map((l) => l.event)).toEqual(["job.triggered", "job.started", "model.call_failed", "job.finished", "incident.opened"]);
		expect(mine[2]).toMatchObject({ level: "warn", kind: "auth", status: 401, error_message: expect.stringContaining("invalid x-api-key") });
		// A failed job's last line is a warning, where a level filter finds it.
		expect(mine[3]).toMatchObject({ level: "warn", status: "failed", error_type: "auth", error_message: expect.stringContaining("invalid x-api-key") });
		// No call answered (none billed), but one was sent: the line says so, where model_calls 0 alone read as none made.
		expect(mine[3]).toMatchObject({ model_calls: 0, model_tries: 1 });
	});

	it("names the API's request id of each try that did not answer, on the call's line, and of the answer a failed call ended on", async () => {
		const emulator = useEmulator();
		const ids: string[] = [];
		fake("https://api.anthropic.com", async (req) => {
			const res = await emulator.handle(req);
			ids.push(res.headers.get("request-id")!);
			return res;
		});
		await createAgent({ name: "logged-request-ids" });
		const lines = captureLogs();
		emulator.enqueue({ error: 529, message: "overloaded" }, { text: "All quiet." });
		const retried = await runToRest("logged-request-ids");
		expect(linesOf(lines, retried.id).find((l) => l.event === "model.call")).toMatchObject({ level: "info", tries: 2, request_ids: [ids[0]] });

		emulator.enqueue({ error: 401, message: "invalid x-api-key" });
		const failed = await runToRest("logged-request-ids");
		expect(failed.status).toBe("failed");
		expect(linesOf(lines, failed.id).find((l) => l.event === "model.call_failed")).toMatchObject({ kind: "auth", request_id: ids[2], request_ids: [ids[2]] });
	});

	it("names the incident a clean run resolves by the id it was opened with, on the resolving job's line", async () => {
		useEmulator().enqueue({ error: 401, message: "invalid x-api-key" }, { text: "All quiet." });
		await createAgent({ name: "logged-resolve" });
		const lines = captureLogs();
		const failed = await runToRest("logged-resolve");
		await settle("logged-resolve");
		const opened = lines.find((l) => l.event === "incident.opened" && l.agent === "logged-resolve");
		expect(opened).toMatchObject({ job_id: failed.id, incident: expect.any(String) });
		const clean = await runToRest("logged-resolve");
		expect(clean.status).toBe("completed");
		await settle("logged-resolve");
		expect(lines.filter((l) => l.event === "incident.resolved" && l.agent === "logged-resolve")).toEqual([
			expect.objectContaining({ level: "info", incident: opened!.incident, job_id: clean.id }),
		]);
	});

	it("says a job waits, why and until when: a rate limit's wait", async () => {
		useEmulator().enqueue({ error: 429, retry_after: 600 }, { error: 429, retry_after: 600 });
		await createAgent({ name: "logged-wait" });
		const lines = captureLogs();
		const job = await trigger("logged-wait");
		await settle("logged-wait");
		expect((await jobOf("logged-wait", job.id)).status).toBe("running");
		const waiting = linesOf(lines, job.id).find((l) => l.event === "job.waiting");
		expect(waiting).toMatchObject({ agent: "logged-wait", reason: "rate_limited", until: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
	});

	it("says a job waits for an approval: which call, and until when", async () => {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
		await createAgent({ name: "logged-approval", tools: [ticketTool] });
		const lines = captureLogs();
		const job = await runToRest("logged-approval");
		expect(job.status).toBe("approval_pending");
		const waiting = linesOf(lines, job.id).filter((l) => l.event === "job.waiting");
		expect(waiting).toEqual([
			expect.objectContaining({ reason: "approval", tool: "create_ticket", tool_use_id: job.pending_approval!.tool_use_id, until: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }),
		]);
		await call(`/v1/jobs/${job.id}/cancel`, { method: "POST", as: "operate" });
		await settle("logged-approval");
	});

	it("names a scheduled job from its claim, with the id the ledger gives it", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2026-11-01T10:00:10Z") });
		try {
			await createAgent({ name: "logged-claim", schedules: { q: { interval: "15m" } } });
			const lines = captureLogs();
			await env.AGENT.getByName("logged-claim").tick("logged-claim", "api", Date.parse("2026-11-01T10:15:00Z"));
			const [run] = (await runsOf("logged-claim")).filter((r) => r.status === "claimed");
			expect(run?.job_id).toBeTruthy();
			expect(linesOf(lines, run!.job_id!)).toEqual([
				expect.objectContaining({ event: "job.claimed", agent: "logged-claim", schedule: "q", scheduled_instant: "2026-11-01T10:15:00.000Z", minute: "2026-11-01T10:15:00.000Z" }),
			]);
			expect(linesOf(lines, run!.job_id!)[0]).not.toHaveProperty("tick");
		} finally {
			vi.useRealTimers();
		}
		useEmulator().enqueue({ text: "done" });
		await settle("logged-claim");
	});

	it("says each failed delivery try that will be retried, an HTTP error's as a network error's", async () => {
		useEmulator().enqueue({ text: "done" });
		let busy = true;
		fake("https://deliver.example.test", () => (busy ? new Response("busy", { status: 503 }) : new Response("ok")));
		await createAgent({ name: "logged-delivery", delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		const lines = captureLogs();
		const job = await runToRest("logged-delivery");
		expect(job.delivery).toMatchObject({ target: "webhook", outcome: "pending", error: expect.stringMatching(/^delivery target answered 503; attempt 1 of 6, the next at /) });
		expect(linesOf(lines, job.id).filter((l) => String(l.event).startsWith("delivery."))).toEqual([
			expect.objectContaining({ event: "delivery.attempt_failed", level: "warn", target: "webhook", url_secret: "TEST_DELIVERY_URL", attempt: 1, error_message: "delivery target answered 503" }),
		]);
		// The retry goes now, not by its own alarm 5 s on, which would post it during a later test of this
		// file, whose fakes do not expect it.
		busy = false;
		await runInDurableObject(env.AGENT.getByName("logged-delivery"), (_i: AgentDO, state) => {
			state.storage.sql.exec("UPDATE deliveries SET next_at = 0 WHERE status = 'pending'");
		});
		await settle("logged-delivery");
		expect(linesOf(lines, job.id).filter((l) => String(l.event).startsWith("delivery.")).map((l) => [l.event, l.outcome])).toEqual([
			["delivery.attempt_failed", undefined],
			["delivery.done", "delivered"],
		]);
		expect((await jobOf("logged-delivery", job.id)).delivery).toEqual({ target: "webhook", outcome: "delivered" });
	});
});

describe("a tool call", () => {
	it("is one line whether it worked or failed: a failing fetch says its kind of failure, never its URL; job.finished counts them", async () => {
		useEmulator().enqueue(
			{ tool_use: { name: "http_fetch", input: { url: "https://flaky.example.test/oauth?code=sekrit-code-123" } } },
			{ tool_use: { name: "http_fetch", input: { url: "https://flaky.example.test/ok" } } },
			{ text: "done" },
		);
		fake("https://flaky.example.test", (req) => {
			if (new URL(req.url).pathname === "/oauth") throw new TypeError("Network connection lost");
			return new Response("fine");
		});
		await createAgent({ name: "logged-tools", tools: [{ type: "http_fetch", allow_hosts: ["flaky.example.test"] }] });
		const lines = captureLogs();
		const job = await runToRest("logged-tools");
		expect(job.status).toBe("completed");
		const mine = linesOf(lines, job.id);
		expect(mine.filter((l) => l.event === "tool.call")).toEqual([
			expect.objectContaining({ level: "warn", agent: "logged-tools", tool: "http_fetch", tool_use_id: expect.any(String), ok: false, failure: "network", ms: expect.any(Number) }),
			expect.objectContaining({ level: "info", tool: "http_fetch", ok: true }),
		]);
		expect(mine.find((l) => l.event === "job.finished")).toMatchObject({ tool_calls: { made: 2, failed: 1 } });
		expect(JSON.stringify(lines)).not.toContain("sekrit-code-123");
		expect(JSON.stringify(lines.filter((l) => l.event === "tool.call"))).not.toContain("flaky.example.test");
	});
});

describe("an approval's decision", () => {
	async function waiting(name: string) {
		fake("https://tickets.example.test", () => Response.json({ id: 7 }));
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } }, { text: "Done." });
		await createAgent({ name, tools: [ticketTool] });
		const job = await runToRest(name);
		expect(job.status).toBe("approval_pending");
		return job;
	}

	it("says which call a person decided, by whom, whether its input was edited and a changed definition allowed", async () => {
		const job = await waiting("logged-decided");
		const lines = captureLogs();
		const res = await call(`/v1/jobs/${job.id}/approval`, { method: "POST", as: "operate", body: { decision: "approve", tool_use_id: job.pending_approval!.tool_use_id, tool_input: { title: "y" }, allow_definition_change: true } });
		expect(res.status).toBe(200);
		await settle("logged-decided");
		expect(linesOf(lines, job.id).filter((l) => l.event === "job.approval_decided")).toEqual([
			expect.objectContaining({
				level: "info",
				decision: "approve",
				by: "operator",
				tool: "create_ticket",
				tool_use_id: job.pending_approval!.tool_use_id,
				input_edited: true,
				allow_definition_change: true,
			}),
		]);
	});

	it("is logged when the approval expires: a denial by expiry, at warn, naming the call", async () => {
		const job = await waiting("logged-expired");
		const lines = captureLogs();
		await runInDurableObject(env.AGENT.getByName("logged-expired"), async (instance: AgentDO, state) => {
			state.storage.sql.exec("UPDATE job_setup SET approval_expires_at = ?, next_step_at = ? WHERE job_id = ?", Date.now() - 1, Date.now() - 1, job.id);
			await AgentDO.settle(instance);
		});
		expect((await jobOf("logged-expired", job.id)).status).toBe("completed");
		const decided = linesOf(lines, job.id).filter((l) => l.event === "job.approval_decided");
		expect(decided).toEqual([
			expect.objectContaining({ level: "warn", decision: "deny", by: expect.stringMatching(/^expiry after /), tool: "create_ticket", tool_use_id: job.pending_approval!.tool_use_id }),
		]);
		// Before the job's last line, which follows from it.
		const events = linesOf(lines, job.id).map((l) => l.event);
		expect(events.indexOf("job.approval_decided")).toBeLessThan(events.indexOf("job.finished"));
	});
});

describe("a cancelled job", () => {
	/** A run queued and left queued: no alarm is set to start it. */
	async function queued(agent: string): Promise<string> {
		return runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) => {
			const sql = state.storage.sql;
			const agentState = readState(sql)!;
			const made = triggerJob(sql, { agent: currentDefinition(agentState)!, state: agentState, definitionRevision: agentState.definitionRevision!, now: Date.now(), drawJobId: drawnJobId }, { kind: "manual", prompt: "later", owner: "test" });
			return (made as { job: { id: string } }).job.id;
		});
	}
	const finishedLines = (lines: Record<string, unknown>[], jobId: string) => linesOf(lines, jobId).filter((l) => l.event === "job.finished" || l.event === "job.cancelled");

	it("ends a queued job's lines with one job.finished, with the operator's reason and who", async () => {
		await createAgent({ name: "logged-cancel-queued" });
		const id = await queued("logged-cancel-queued");
		const lines = captureLogs();
		// Straight to its object: a run queued this way is not in D1's index, by which the route finds it.
		expect(await env.AGENT.getByName("logged-cancel-queued").cancel(id, "not today", "operator")).toMatchObject({ status: "cancelled" });
		expect(finishedLines(lines, id)).toEqual([
			expect.objectContaining({ level: "info", event: "job.finished", status: "cancelled", reason: "cancelled by operator: not today", by: "operator" }),
		]);
	});

	it("ends a job waiting for an approval with one job.finished saying who, and no second line", async () => {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
		await createAgent({ name: "logged-cancel-waiting", tools: [ticketTool] });
		const job = await runToRest("logged-cancel-waiting");
		expect(job.status).toBe("approval_pending");
		const lines = captureLogs();
		expect((await call(`/v1/jobs/${job.id}/cancel`, { method: "POST", as: "admin", body: { reason: "no" } })).status).toBe(200);
		await settle("logged-cancel-waiting");
		expect(finishedLines(lines, job.id)).toEqual([expect.objectContaining({ event: "job.finished", status: "cancelled", reason: "cancelled by root: no", by: "root" })]);
	});

	it("says a running job's cancel was asked, with its reason and force, then ends it with one job.finished saying who", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ hang: true });
		const arrived = new Promise<void>((resolve) =>
			fake("https://api.anthropic.com", (req) => {
				resolve();
				return emulator.handle(req);
			}),
		);
		await createAgent({ name: "logged-cancel-running" });
		const job = await trigger("logged-cancel-running");
		const running = settle("logged-cancel-running");
		await arrived;
		const lines = captureLogs();
		expect((await call(`/v1/jobs/${job.id}/cancel`, { method: "POST", as: "operate", body: { reason: "wrong prompt" } })).status).toBe(200);
		await running;
		const mine = linesOf(lines, job.id).filter((l) => ["job.cancel_requested", "job.cancelled", "job.finished"].includes(String(l.event)));
		expect(mine).toEqual([
			expect.objectContaining({ event: "job.cancel_requested", by: "operator", reason: "wrong prompt", force: false }),
			expect.objectContaining({ event: "job.finished", status: "cancelled", reason: "cancelled by operator: wrong prompt", by: "operator" }),
		]);
	});

	it("of a deleted agent ends with one job.finished each, and agent.deleted says how many it cancelled", async () => {
		await createAgent({ name: "logged-cancel-deleted" });
		const a = await queued("logged-cancel-deleted");
		const b = await queued("logged-cancel-deleted");
		const lines = captureLogs();
		expect((await call("/v1/agents/logged-cancel-deleted", { method: "DELETE", as: "admin" })).status).toBe(200);
		for (const id of [a, b]) expect(finishedLines(lines, id)).toEqual([expect.objectContaining({ event: "job.finished", status: "cancelled", reason: "agent deleted" })]);
		expect(lines.filter((l) => l.event === "agent.deleted")).toEqual([expect.objectContaining({ agent: "logged-cancel-deleted", by: "root", cancelled_jobs: 2 })]);
	});
});

describe("who started a job", () => {
	it("is named on job.triggered by the token's name, as a cancelled job's job.finished names who cancelled it", async () => {
		useEmulator().enqueue({ text: "done" });
		await createAgent({ name: "logged-by" });
		const lines = captureLogs();
		const job = await trigger("logged-by");
		await settle("logged-by");
		expect(linesOf(lines, job.id).filter((l) => l.event === "job.triggered")).toEqual([expect.objectContaining({ agent: "logged-by", trigger_type: "manual", by: "operator" })]);
	});
});

describe("who acted", () => {
	it("is named by the token's name on a resume, as on the pause before it", async () => {
		await createAgent({ name: "logged-resume" });
		const lines = captureLogs();
		expect((await call("/v1/agents/logged-resume/pause", { method: "POST", as: "operate", body: {} })).status).toBe(200);
		expect((await call("/v1/agents/logged-resume/resume", { method: "POST", as: "admin" })).status).toBe(200);
		expect(lines.filter((l) => l.event === "agent.paused" || l.event === "agent.resumed")).toEqual([
			expect.objectContaining({ event: "agent.paused", agent: "logged-resume", by: "operator" }),
			expect.objectContaining({ event: "agent.resumed", agent: "logged-resume", by: "root" }),
		]);
		expect(JSON.stringify(lines)).not.toContain("token-");
	});

	it("is named on a notepad's set and delete, never the value", async () => {
		await createAgent({ name: "logged-notes" });
		const lines = captureLogs();
		expect((await call("/v1/agents/logged-notes/notepad/k", { method: "PUT", as: "operate", body: { value: "v-private" } })).status).toBe(200);
		expect((await call("/v1/agents/logged-notes/notepad/k", { method: "DELETE", as: "admin" })).status).toBe(200);
		expect((await call("/v1/agents/logged-notes/notepad", { method: "DELETE", as: "operate" })).status).toBe(200);
		expect(lines.filter((l) => String(l.event).startsWith("notepad."))).toEqual([
			expect.objectContaining({ event: "notepad.set", agent: "logged-notes", key: "k", by: "operator" }),
			expect.objectContaining({ event: "notepad.deleted", agent: "logged-notes", key: "k", deleted: 1, by: "root" }),
			expect.objectContaining({ event: "notepad.deleted", agent: "logged-notes", key: null, deleted: 0, by: "operator" }),
		]);
		expect(JSON.stringify(lines)).not.toContain("v-private");
	});

	it("is named on a continue and a fork", async () => {
		useEmulator().enqueue({ text: "one" }, { text: "two" }, { text: "three" });
		await createAgent({ name: "logged-follow" });
		const first = await runToRest("logged-follow");
		const lines = captureLogs();
		const cont = await call(`/v1/jobs/${first.id}/continue`, { method: "POST", as: "operate", body: { prompt: "more" } });
		expect(cont.status).toBe(201);
		const fork = await call(`/v1/jobs/${first.id}/fork`, { method: "POST", as: "admin", body: {} });
		expect(fork.status).toBe(201);
		await settle("logged-follow");
		expect(lines.filter((l) => l.event === "job.continue" || l.event === "job.fork")).toEqual([
			expect.objectContaining({ event: "job.continue", from: first.id, by: "operator" }),
			expect.objectContaining({ event: "job.fork", from: first.id, by: "root" }),
		]);
	});
});

describe("an agent's alarm that throws", () => {
	it("is logged as agent.alarm_failed at error with the agent's name and the error, and still thrown (the platform retries it)", async () => {
		await createAgent({ name: "logged-alarm" });
		const lines = captureLogs();
		await runInDurableObject(env.AGENT.getByName("logged-alarm"), async (instance: AgentDO) => {
			const passes = (instance as unknown as { passes: { work: () => Promise<void> } }).passes;
			const work = passes.work;
			passes.work = () => Promise.reject(new Error("storage fault in the pass"));
			try {
				await expect(instance.alarm()).rejects.toThrow("storage fault in the pass");
			} finally {
				passes.work = work;
			}
		});
		expect(lines.filter((l) => l.event === "agent.alarm_failed")).toEqual([
			expect.objectContaining({ level: "error", agent: "logged-alarm", error_name: "Error", error_message: "storage fault in the pass", stack: expect.any(String) }),
		]);
	});
});

describe("a webhook tool call that fails", () => {
	it("says why under error_message, never the webhook's URL", async () => {
		useEmulator().enqueue({ tool_use: { name: "open_ticket", input: { title: "x" } } }, { text: "done" });
		// A runtime's message quoting the URL it failed on.
		fake("https://tickets.example.test", (req) => {
			throw new TypeError(`Network connection lost to ${req.url}`);
		});
		const tool = { type: "webhook", name: "open_ticket", description: "Open a ticket.", url_secret: "TEST_TICKETS_URL", input_schema: { type: "object", properties: { title: { type: "string" } } } };
		await createAgent({ name: "logged-webhook-tool", tools: [tool] });
		const lines = captureLogs();
		const job = await runToRest("logged-webhook-tool");
		const failed = linesOf(lines, job.id).filter((l) => l.event === "tool.webhook.failed");
		// Scrubbed to a placeholder where it stood, not left for redaction to catch.
		expect(failed).toEqual([expect.objectContaining({ level: "warn", tool: "open_ticket", error_message: expect.stringContaining("Network connection lost to <webhook url>") })]);
		expect(failed[0]).not.toHaveProperty("reason");
		expect(JSON.stringify(failed)).not.toContain("tickets.example.test");
		// Its tool.call line says the kind, as http_fetch's does, not a plain error_result.
		expect(linesOf(lines, job.id).filter((l) => l.event === "tool.call")).toEqual([expect.objectContaining({ level: "warn", tool: "open_ticket", ok: false, failure: "network" })]);
	});

	it("names its kind on tool.call: an HTTP error's status, input its schema refuses", async () => {
		useEmulator().enqueue({ tool_use: { name: "open_ticket", input: { title: "x" } } }, { tool_use: { name: "close_ticket", input: { id: "seven" } } }, { text: "done" });
		fake("https://tickets.example.test", () => new Response("down", { status: 502 }));
		const tool = { type: "webhook", name: "open_ticket", description: "Open a ticket.", url_secret: "TEST_TICKETS_URL", input_schema: { type: "object", properties: { title: { type: "string" } } } };
		const strict = { type: "webhook", name: "close_ticket", description: "Close a ticket.", url_secret: "TEST_TICKETS_URL", input_schema: { type: "object", properties: { id: { type: "integer" } } } };
		await createAgent({ name: "logged-webhook-kinds", tools: [tool, strict] });
		const lines = captureLogs();
		const job = await runToRest("logged-webhook-kinds");
		expect(linesOf(lines, job.id).filter((l) => l.event === "tool.call").map((l) => [l.tool, l.failure])).toEqual([
			["open_ticket", "http_502"],
			["close_ticket", "bad_input"],
		]);
	});
});

describe("a delivery given up on", () => {
	it("is said at error, not at info under a retried try's warnings", async () => {
		useEmulator().enqueue({ text: "done" });
		fake("https://deliver.example.test", () => new Response("gone", { status: 410 }));
		await createAgent({ name: "logged-delivery-failed", delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		const lines = captureLogs();
		const job = await runToRest("logged-delivery-failed");
		expect(job.delivery).toEqual({ target: "webhook", outcome: "failed", error: "delivery target answered 410; 1 attempt" });
		// Which secret's URL to fix, by its name: never the URL it holds.
		expect(linesOf(lines, job.id).filter((l) => l.event === "delivery.done")).toEqual([expect.objectContaining({ level: "error", outcome: "failed", target: "webhook", url_secret: "TEST_DELIVERY_URL" })]);
		expect(JSON.stringify(lines)).not.toContain("deliver.example.test");
	});
});

describe("a log line", () => {
	it("keeps its own level, event and time whatever its fields are named, and cuts a field long enough to crowd out later lines", () => {
		const lines = captureLogs();
		log.info("probe.event", { event: "forged", level: "error", stack: "x".repeat(10_000) });
		expect(lines).toEqual([{ level: "info", event: "probe.event", ts: expect.any(String), stack: `${"x".repeat(4096)}… [5904 more characters]` }]);
	});

	it("cuts long strings inside a field's objects and arrays too, never inside an emoji, and names a reference back to an enclosing object", () => {
		const lines = captureLogs();
		const cause: Record<string, unknown> = { detail: `${"y".repeat(4095)}😀${"z".repeat(100)}` };
		cause.self = cause;
		log.warn("probe.nested", { issues: [{ message: "m".repeat(9_000) }], cause });
		expect(lines).toEqual([
			{
				level: "warn",
				event: "probe.nested",
				ts: expect.any(String),
				issues: [{ message: `${"m".repeat(4096)}… [4904 more characters]` }],
				cause: { detail: `${"y".repeat(4095)}… [102 more characters]`, self: "[circular]" },
			},
		]);
	});

	it("logs a Date or URL as JSON would, by its toJSON, not as {}, and redacts what that gives", () => {
		const lines = captureLogs();
		const at = new Date(Date.UTC(2024, 0, 2, 3, 4, 5));
		log.info("probe.objects", { at, url: new URL("https://example.test/a?b=1"), nested: { at, bad: new Date(Number.NaN) }, leaky: new URL("https://user:hunter2secret@example.test/"), rows: 10n });
		expect(lines).toHaveLength(1);
		expect(lines[0]).toMatchObject({ at: "2024-01-02T03:04:05.000Z", url: "https://example.test/a?b=1", nested: { at: "2024-01-02T03:04:05.000Z", bad: null }, rows: "10" });
		expect(JSON.stringify(lines[0])).not.toContain("hunter2secret");
	});

	it("stays bounded however many strings or items its fields hold: past 16,384 characters in all, or 100 items, the rest is cut with a note", () => {
		const lines = captureLogs();
		const many = Array.from({ length: 10_000 }, (_, i) => `item-${i}`);
		const wide = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, i]));
		log.error("probe.big", { many, problems: Array.from({ length: 50 }, () => "p".repeat(4000)), wide, after: "still here?" });
		expect(lines).toHaveLength(1);
		const line = lines[0]!;
		expect(JSON.stringify(line).length).toBeLessThan(24_000);
		const kept = line.many as string[];
		expect(kept).toHaveLength(101);
		expect(kept.slice(0, 3)).toEqual(["item-0", "item-1", "item-2"]);
		expect(kept[100]).toBe("… [9900 more items]");
		const problems = line.problems as string[];
		expect(problems.at(-1)).toMatch(/^… \[\d+ more items\]$/);
		expect(problems.length).toBeLessThan(10);
		expect(line.wide).toEqual({ "…": "[500 more keys]" });
		expect(line.after).toBe("… [11 more characters]");
	});
});
