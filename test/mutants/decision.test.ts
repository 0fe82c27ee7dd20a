import { describe, expect, it } from "vitest";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, outputOf, runToRest } from "../helpers/jobs.ts";
import { ticketTool } from "../helpers/tools.ts";

// A key pasted into a deny's reason: the API screens the reason but does not redact it, decision.ts does.
const KEY = "sk-ant-api03-Q1w2E3r4T5y6U7i8O9p0AsDfGhJkLzXc";

describe("a deny's reason", () => {
	it("is stored, shown and told the model with a credential in it redacted", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
		await createAgent({ name: "deny-redacted", tools: [ticketTool] });
		const waiting = await runToRest("deny-redacted");
		expect(waiting.status).toBe("approval_pending");
		emulator.enqueue({ text: "Understood." });
		const res = await call(`/v1/jobs/${waiting.id}/approval`, { method: "POST", as: "operate", body: { decision: "deny", reason: `not with the key ${KEY}` } });
		expect(res.status).toBe(200);
		const reasons = (await res.json() as { transitions: { reason: string }[] }).transitions.map((t) => t.reason);
		expect(reasons.at(-1)).toContain("denied by operator: not with the key sk-ant-api03-[REDACTED]");
		await settle("deny-redacted");
		const ended = await jobOf("deny-redacted", waiting.id);
		expect(ended.status).toBe("completed");
		expect(JSON.stringify(ended)).not.toContain(KEY);
		expect(JSON.stringify(await outputOf("deny-redacted", waiting.id))).not.toContain(KEY);
		expect(await (await call(`/v1/jobs/${waiting.id}/tool-calls`)).text()).not.toContain(KEY);
		expect(JSON.stringify(emulator.requests)).not.toContain(KEY);
	});
});
