// A job's tool calls as GET /v1/jobs/:id/tool-calls lists them (durable-objects/agent/runner/session.ts),
// where a mutation walk found the suite blind: a call that has not run has no result, so no error either;
// its is_error is false, not read as true from the row's empty column.
import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";
import { ticketTool } from "../helpers/tools.ts";

describe("a gated call waiting for its approval", () => {
	it("is listed pending, with no result and is_error false", async () => {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "Disk full" } } });
		await createAgent({ name: "listed-pending", tools: [ticketTool] });
		const job = await runToRest("listed-pending");
		expect(job.status).toBe("approval_pending");
		const res = await call(`/v1/jobs/${job.id}/tool-calls`, { as: "read" });
		expect(res.status).toBe(200);
		const page = (await res.json()) as { tool_calls: Record<string, unknown>[] };
		expect(page.tool_calls).toEqual([expect.objectContaining({ name: "create_ticket", status: "pending", result: null, is_error: false })]);
	});
});
