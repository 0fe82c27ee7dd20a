// Decided tool calls as the agent loop hands them on (durable-objects/agent/runner/approval.ts,
// follow-up.ts), where a mutation walk found the suite blind: a call approved as the model asked is
// reported to the model as it came, with no note of an edit that was never made; and a continue of a
// job cancelled mid-turn tells the model a call an operator denied was denied, not that it never ran.
// So does one whose approved call ran and failed: it is given the call's failure, not told it never ran.
// A decision naming no call, sent once the job waits for none, is told of the call decided last: of
// two decided in turn, the second.
import { describe, expect, it } from "vitest";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { jobOf, outputOf, runToRest } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { ticketTool } from "../helpers/tools.ts";

const post = (path: string, body: unknown) => call(path, { method: "POST", as: "operate", body });

describe("a gated call approved with the model's own input", () => {
	it("gives the model the call's result alone, with no note of an edit", async () => {
		fake("https://tickets.example.test", () => Response.json({ id: 7 }));
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "create_ticket", input: { title: "Disk full" } } }, { text: "Filed." });
		await createAgent({ name: "approved-as-asked", tools: [ticketTool] });
		const job = await runToRest("approved-as-asked");
		expect(job.status).toBe("approval_pending");
		expect((await post(`/v1/jobs/${job.id}/approval`, { decision: "approve" })).status).toBe(200);
		await settle("approved-as-asked");
		expect(await jobOf("approved-as-asked", job.id)).toMatchObject({ status: "completed", summary: "Filed." });
		const result = (await outputOf("approved-as-asked", job.id)).find((l) => l.type === "tool_result")!;
		expect(result).toMatchObject({ success: true });
		expect(result.result as string).not.toContain("edited");
		expect(JSON.stringify(emulator.requests.at(-1)!.messages!.at(-1)!.content)).not.toContain("Run with its input edited");
	});
});

describe("a continue of a job cancelled while the second of a turn's calls waited, the first denied", () => {
	it("tells the model the first was denied, and the second never made", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: [{ name: "create_ticket", input: { title: "one" } }, { name: "create_ticket", input: { title: "two" } }] });
		await createAgent({ name: "denied-then-cancelled", tools: [ticketTool] });
		const job = await runToRest("denied-then-cancelled");
		expect(job.status).toBe("approval_pending");
		expect((await post(`/v1/jobs/${job.id}/approval`, { decision: "deny", reason: "not that one" })).status).toBe(200);
		await settle("denied-then-cancelled");
		expect((await jobOf("denied-then-cancelled", job.id)).status).toBe("approval_pending");
		expect((await post(`/v1/jobs/${job.id}/cancel`, {})).status).toBe(200);
		await settle("denied-then-cancelled");
		emulator.enqueue({ text: "Understood." });
		const res = await post(`/v1/jobs/${job.id}/continue`, { prompt: "What happened?" });
		expect(res.status, await res.clone().text()).toBe(201);
		await settle("denied-then-cancelled");
		const [first, second] = emulator.requests.at(-1)!.messages!.at(-1)!.content as { type: string; content?: string; is_error?: boolean }[];
		expect(first).toMatchObject({ type: "tool_result", is_error: true, content: expect.stringContaining("denied by operator") });
		expect(second).toMatchObject({ type: "tool_result", is_error: true, content: "not run: the job ended before this call was made" });
	});
});

describe("a decision naming no call, sent after two calls were decided in turn", () => {
	it("is refused naming the second, the call decided last", async () => {
		fake("https://tickets.example.test", () => Response.json({ id: 7 }));
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: [{ name: "create_ticket", input: { title: "one" } }, { name: "create_ticket", input: { title: "two" } }] }, { text: "Filed one." });
		await createAgent({ name: "decided-in-turn", tools: [ticketTool] });
		const job = await runToRest("decided-in-turn");
		const first = job.pending_approval!.tool_use_id;
		expect((await post(`/v1/jobs/${job.id}/approval`, { decision: "approve", tool_use_id: first })).status).toBe(200);
		await settle("decided-in-turn");
		const second = (await jobOf("decided-in-turn", job.id)).pending_approval!.tool_use_id;
		expect(second).not.toBe(first);
		expect((await post(`/v1/jobs/${job.id}/approval`, { decision: "deny", tool_use_id: second })).status).toBe(200);
		await settle("decided-in-turn");
		expect((await jobOf("decided-in-turn", job.id)).status).toBe("completed");
		const late = await post(`/v1/jobs/${job.id}/approval`, { decision: "deny" });
		expect(late.status).toBe(409);
		expect((await errorOf(late)).message).toBe(`job ${job.id} is completed, not waiting for an approval; create_ticket (${second}), the call decided last, was already denied by operator`);
	});
});

describe("a continue of a job cancelled while the second of a turn's calls waited, the first approved and failed", () => {
	it("gives the model the first call's failure, and tells it the second was never made", async () => {
		fake("https://tickets.example.test", () => Response.json({ error: "no such queue" }, { status: 404 }));
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: [{ name: "create_ticket", input: { title: "one" } }, { name: "create_ticket", input: { title: "two" } }] });
		await createAgent({ name: "failed-then-cancelled", tools: [ticketTool] });
		const job = await runToRest("failed-then-cancelled");
		expect((await post(`/v1/jobs/${job.id}/approval`, { decision: "approve" })).status).toBe(200);
		await settle("failed-then-cancelled");
		expect((await jobOf("failed-then-cancelled", job.id)).status).toBe("approval_pending");
		expect((await post(`/v1/jobs/${job.id}/cancel`, {})).status).toBe(200);
		await settle("failed-then-cancelled");
		expect(await jobOf("failed-then-cancelled", job.id)).toMatchObject({ status: "cancelled", tool_calls: { made: 1, failed: 1 } });
		emulator.enqueue({ text: "Understood." });
		const res = await post(`/v1/jobs/${job.id}/continue`, { prompt: "What happened?" });
		expect(res.status, await res.clone().text()).toBe(201);
		await settle("failed-then-cancelled");
		const [first, second] = emulator.requests.at(-1)!.messages!.at(-1)!.content as { type: string; content?: string; is_error?: boolean }[];
		expect(first).toMatchObject({ type: "tool_result", is_error: true, content: expect.stringContaining("no such queue") });
		expect(second).toMatchObject({ type: "tool_result", is_error: true, content: "not run: the job ended before this call was made" });
	});
});
