// A tool call a person denied, as the agent loop records it (durable-objects/agent/runner/tool-turn.ts),
// where a mutation walk found the suite blind: a denied call was never made, so it is listed as denied
// and not counted among the calls the job made (its tally) or failed.
import { describe, expect, it } from "vitest";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, trigger } from "../helpers/jobs.ts";
import { ticketTool } from "../helpers/tools.ts";

describe("a tool call denied by an operator", () => {
	it("is listed as denied and is not among the calls the job made", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "create_ticket", input: { title: "Disk full" } } }, { text: "Not filed, then." });
		await createAgent({ name: "denied-call", tools: [ticketTool] });
		const job = await trigger("denied-call");
		await settle("denied-call");
		expect((await jobOf("denied-call", job.id)).status).toBe("approval_pending");
		const res = await call(`/v1/jobs/${job.id}/approval`, { method: "POST", as: "operate", body: { decision: "deny" } });
		expect(res.status).toBe(200);
		await settle("denied-call");
		const done = await jobOf("denied-call", job.id);
		expect(done).toMatchObject({ status: "completed", summary: "Not filed, then.", tool_calls: { made: 0, failed: 0 } });
		const page = (await (await call(`/v1/jobs/${job.id}/tool-calls`)).json()) as { tool_calls: { name: string; status: string }[] };
		expect(page.tool_calls.map((t) => [t.name, t.status])).toEqual([["create_ticket", "denied"]]);
	});
});
