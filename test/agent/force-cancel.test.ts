import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { jobOf, outputOf, trigger } from "../helpers/jobs.ts";
import { killSwitch } from "../helpers/kill.ts";
import { fake } from "../helpers/outbound.ts";

/** A webhook tool whose target (faked below) may have done its work before it answers: its effect matters. */
const chargeTool = {
	type: "webhook",
	name: "charge_card",
	description: "Charge the customer's card.",
	url_secret: "TEST_TICKETS_URL",
	input_schema: { type: "object", properties: { amount: { type: "number" } }, required: ["amount"] },
};

const CUT_OFF = "cut off by a forced cancel while it ran: whether it took effect is unknown";

async function post(path: string, body?: unknown): Promise<Response> {
	return call(path, { method: "POST", as: "operate", body });
}

/**
 * The tool's target: it never answers, as a hung payment gateway would, until the request is
 * aborted. `reached` when a request arrives; `aborted` says whether the request saw its abort.
 */
function hungTarget(): { reached: Promise<void>; calls: () => number; aborted: () => boolean } {
	let calls = 0;
	let aborted = false;
	const reached = new Promise<void>((arrived) =>
		fake("https://tickets.example.test", (req) => {
			calls++;
			arrived();
			return new Promise<Response>((_resolve, reject) => {
				req.signal.addEventListener("abort", () => {
					aborted = true;
					reject(new Error("aborted"));
				});
			});
		}),
	);
	return { reached, calls: () => calls, aborted: () => aborted };
}

/** An agent whose job is now in a charge_card call that hangs; the job is running. */
async function jobInToolCall(name: string) {
	const emulator = useEmulator();
	emulator.enqueue({ tool_use: { name: "charge_card", input: { amount: 120 } } }, { text: "never reached" });
	const target = hungTarget();
	await createAgent({ name, tools: [chargeTool] });
	const job = await trigger(name);
	await target.reached;
	return { emulator, target, job };
}

async function toolCallStatus(agent: string, jobId: string): Promise<string[]> {
	return runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) =>
		state.storage.sql.exec<{ status: string }>("SELECT status FROM tool_calls WHERE job_id = ?", jobId).toArray().map((r) => r.status),
	);
}

describe("cancel with force", () => {
	it("cuts off a tool call in flight, records its effect as unknown, and answers cancelled", async () => {
		const { emulator, target, job } = await jobInToolCall("force-tool");
		const res = await post(`/v1/jobs/${job.id}/cancel`, { reason: "gateway hung", force: true });
		expect(res.status).toBe(200);
		const answer = await res.json();
		const reason = `force-cancelled by operator: gateway hung; tool call charge_card (${(await toolUseIdOf("force-tool", job.id))}) was cut off, its effect unknown`;
		expect(answer).toMatchObject({ status: "cancelled", exit_reason: "cancelled", cancel_requested: null });
		expect((answer as { transitions: { reason: string }[] }).transitions.at(-1)!.reason).toBe(reason);
		// The request itself was aborted, not left to run out its 30 s behind the job's back.
		expect(target.aborted()).toBe(true);
		await settle("force-tool");

		const lines = await outputOf("force-tool", job.id);
		expect(lines.filter((l) => l.type === "tool_result")).toEqual([{ type: "tool_result", tool_use_id: expect.any(String), success: false, error: CUT_OFF, timestamp: expect.any(String) }]);
		expect(lines.at(-1)).toMatchObject({ type: "system", subtype: "result", status: "cancelled", content: reason });
		expect(await toolCallStatus("force-tool", job.id)).toEqual(["interrupted"]);
		// Made (it left), and failed: the job's tally counts a call cut off, as max_tool_calls does.
		expect((await jobOf("force-tool", job.id)).tool_calls).toEqual({ made: 1, failed: 1 });
		// The model is not called again after the cut.
		expect(emulator.requests).toHaveLength(1);

		// Continued, the model is told the charge's effect is unknown, never that it was not made: told
		// so, it could charge the card again. Nor does the continue run the call again itself.
		const next = useEmulator();
		next.enqueue({ text: "I will check the gateway first." });
		const cont = await post(`/v1/jobs/${job.id}/continue`, { prompt: "Was the card charged?" });
		expect(cont.status).toBe(201);
		await settle("force-tool");
		expect(next.requests.at(-1)!.messages!.at(-1)!.content).toEqual([
			{
				type: "tool_result",
				tool_use_id: expect.any(String),
				content: "interrupted: a forced cancel cut this call off while it ran, so whether it took effect is unknown; check before making it again",
				is_error: true,
			},
			{ type: "text", text: "Was the card charged?", cache_control: { type: "ephemeral" } },
		]);
		expect(target.calls()).toBe(1);
	});

	it("cuts off an http_fetch call in flight too: its request is aborted", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "http_fetch", input: { url: "https://slow.example.test/restart", method: "POST", body: "db-1" } } });
		let aborted = false;
		const reached = new Promise<void>((arrived) =>
			fake("https://slow.example.test", (req) => {
				arrived();
				return new Promise<Response>((_resolve, reject) => req.signal.addEventListener("abort", () => ((aborted = true), reject(new Error("aborted")))));
			}),
		);
		await createAgent({ name: "force-fetch", tools: [{ type: "http_fetch", allow_hosts: ["slow.example.test"], methods: ["GET", "POST"] }] });
		const job = await trigger("force-fetch");
		await reached;
		const logged: Record<string, unknown>[] = [];
		for (const method of ["log", "warn"] as const) vi.spyOn(console, method).mockImplementation((line: unknown) => void logged.push(JSON.parse(String(line)) as Record<string, unknown>));
		const res = await post(`/v1/jobs/${job.id}/cancel`, { force: true });
		expect(await res.json()).toMatchObject({ status: "cancelled", exit_reason: "cancelled" });
		expect(aborted).toBe(true);
		await settle("force-fetch");
		vi.restoreAllMocks();
		// Its line says it was cut off, not that it timed out.
		expect(logged.filter((l) => l.event === "tool.call" && l.job_id === job.id)).toEqual([expect.objectContaining({ ok: false, failure: "cut_off" })]);
		expect((await outputOf("force-fetch", job.id)).filter((l) => l.type === "tool_result")).toMatchObject([{ success: false, error: CUT_OFF }]);
	});

	it("escalates a plain cancel that waits for a tool call; a second plain cancel is still a 409", async () => {
		const { target, job } = await jobInToolCall("force-escalate");
		const plain = await post(`/v1/jobs/${job.id}/cancel`, { reason: "wrong customer" });
		expect(await plain.json()).toMatchObject({ status: "running", cancel_requested: "cancelled by operator: wrong customer" });
		const again = await post(`/v1/jobs/${job.id}/cancel`, { reason: "clicked twice" });
		expect(again.status).toBe(409);
		expect((await errorOf(again)).message).toBe(`job ${job.id} is already being cancelled (cancelled by operator: wrong customer)`);
		expect(target.aborted()).toBe(false);

		const forced = await post(`/v1/jobs/${job.id}/cancel`, { force: true });
		expect(forced.status).toBe(200);
		const answer = (await forced.json()) as { status: string; transitions: { reason: string }[] };
		expect(answer.status).toBe("cancelled");
		expect(answer.transitions.at(-1)!.reason).toMatch(/^force-cancelled by operator \(after "cancelled by operator: wrong customer"\); tool call charge_card \(.+\) was cut off, its effect unknown$/);
		expect(target.aborted()).toBe(true);
		await settle("force-escalate");
		expect(await toolCallStatus("force-escalate", job.id)).toEqual(["interrupted"]);
		// Over, a job takes no more cancels, forced or not.
		const late = await post(`/v1/jobs/${job.id}/cancel`, { force: true });
		expect(late.status).toBe(409);
		expect((await errorOf(late)).message).toBe(`job ${job.id} is already cancelled (${answer.transitions.at(-1)!.reason})`);
	});

	it("cancels a pending job as a plain cancel does", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "charge_card", input: { amount: 1 } } });
		const target = hungTarget();
		await createAgent({ name: "force-pending", tools: [chargeTool] });
		const first = await trigger("force-pending");
		await target.reached;
		// The agent's one slot is held by the first job's call: the second waits, pending.
		const second = await trigger("force-pending");
		expect((await jobOf("force-pending", second.id)).status).toBe("pending");
		const res = await post(`/v1/jobs/${second.id}/cancel`, { reason: "not needed", force: true });
		expect(res.status).toBe(200);
		const answer = (await res.json()) as { status: string; transitions: { reason: string }[] };
		expect(answer).toMatchObject({ status: "cancelled", exit_reason: "cancelled" });
		expect(answer.transitions.at(-1)!.reason).toBe("cancelled by operator: not needed");
		// The other job's call is not touched by it.
		expect(target.aborted()).toBe(false);
		expect((await post(`/v1/jobs/${first.id}/cancel`, { force: true })).status).toBe(200);
		await settle("force-pending");
	});

	it("refuses a force that is not a boolean", async () => {
		const res = await post(`/v1/jobs/job-2026-12-02-abcdef/cancel`, { force: "yes" });
		expect(res.status).toBe(400);
		expect((await errorOf(res)).details?.issues).toEqual([{ path: "force", message: 'expected true or false, got the text "yes": write true, without quotes' }]);
	});
});

async function toolUseIdOf(agent: string, jobId: string): Promise<string> {
	return runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) =>
		state.storage.sql.exec<{ tool_use_id: string }>("SELECT tool_use_id FROM tool_calls WHERE job_id = ?", jobId).one().tool_use_id,
	);
}

describe("cancel with force, the call left by an instance that is gone", () => {
	it("cannot cut it off: the job ends indeterminate, as a plain cancel's would, and the answer says so", async () => {
		useEmulator().enqueue({ tool_use: { name: "charge_card", input: { amount: 120 } } }, { text: "never reached" });
		await createAgent({ name: "force-gone", tools: [chargeTool] });
		const killed = await killSwitch("force-gone");
		let calls = 0;
		// Made here, not in the object: a promise the object made cannot be settled from the test.
		let kill = () => {};
		const go = new Promise<void>((resolve) => (kill = resolve));
		const { promise: reached, resolve: reach } = Promise.withResolvers<void>();
		fake("https://tickets.example.test", async () => {
			calls++;
			reach();
			await go;
			// The object dies while the call is out (killed from its own work, as a crash would): its
			// row stays `executing`, its outcome unknown.
			return killed.kill();
		});
		const job = await trigger("force-gone");
		await reached;
		expect(calls).toBe(1);
		kill();
		// (Nothing the dead object was running goes on after, nor settles anything the test waits on:
		// the count is the sign it is gone.)
		await expect.poll(() => killed.fired).toBe(1);

		// A fresh instance has no call of this job in flight to abort.
		const res = await post(`/v1/jobs/${job.id}/cancel`, { reason: "looks stuck", force: true });
		expect(res.status).toBe(200);
		const answer = (await res.json()) as { status: string; transitions: { reason: string }[] };
		expect(answer.status).toBe("indeterminate");
		expect(answer.transitions.at(-1)!.reason).toMatch(/^tool call charge_card \(.+\) was interrupted; it is not re-run; cancelled by operator: looks stuck since$/);
		await settle("force-gone");
		expect(await toolCallStatus("force-gone", job.id)).toEqual(["executing"]);
		expect(calls).toBe(1);
	});
});
