// A job waiting for an approval, stepped at the very millisecond a wait ends (durable-objects/agent/
// runner/step.ts), where a mutation walk found the suite blind: the tests moved the clock a
// millisecond past each end. At its approval's expires_at the call is denied by the expiry; at its
// deadline the job times out; neither waits on.
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { jobOf, runToRest } from "../helpers/jobs.ts";
import { outboundLog } from "../helpers/outbound.ts";
import { ticketTool } from "../helpers/tools.ts";

afterEach(() => vi.useRealTimers());

describe("a job whose approval expires before its timeout, stepped at the approval's expires_at", () => {
	it("goes on with the call denied by the expiry", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2031-07-01T09:00:00Z") });
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } }, { text: "Not filed." });
		await createAgent({ name: "expiry-on-the-dot", timeout: "2h", approval_timeout: "1h", tools: [ticketTool] });
		const job = await runToRest("expiry-on-the-dot");
		expect(job.status).toBe("approval_pending");
		vi.setSystemTime(Date.parse(job.pending_approval!.expires_at!));
		await settle("expiry-on-the-dot");
		const done = await jobOf("expiry-on-the-dot", job.id);
		expect(done).toMatchObject({ status: "completed", summary: "Not filed." });
		expect(done.transitions.map((t) => t.reason)).toContain("approval expired: treated as denied");
		expect(outboundLog.filter((r) => r.url.startsWith("https://tickets"))).toEqual([]);
	});
});

describe("a job whose timeout ends before its approval, stepped at its deadline", () => {
	it("times out", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2031-07-02T09:00:00Z") });
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
		await createAgent({ name: "deadline-on-the-dot", timeout: "10m", approval_timeout: "1h", tools: [ticketTool] });
		const job = await runToRest("deadline-on-the-dot");
		expect(job.status).toBe("approval_pending");
		vi.setSystemTime(Date.parse(job.started_at!) + 10 * 60_000);
		await settle("deadline-on-the-dot");
		expect(await jobOf("deadline-on-the-dot", job.id)).toMatchObject({ status: "failed", exit_reason: "timeout", pending_approval: null });
	});
});
