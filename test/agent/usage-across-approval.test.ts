import { describe, expect, it } from "vitest";
import type { MessagesEmulator } from "../../emulator/messages-api.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, runToRest } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { ticketTool } from "../helpers/tools.ts";

// deputy: usage limits carry across an approval pause; completed tool calls never repeat.
const approve = (id: string) => call(`/v1/jobs/${id}/approval`, { method: "POST", as: "operate", body: { decision: "approve" } });

/** A ticket tracker that records what is posted, and a model that asks for two tickets, then answers. */
function twoGatedTickets(): { posted: unknown[]; emulator: MessagesEmulator } {
	const posted: unknown[] = [];
	fake("https://tickets.example.test", async (req) => {
		posted.push(await req.json());
		return Response.json({ id: posted.length });
	});
	const emulator = useEmulator();
	emulator.enqueue(
		{ tool_use: { name: "create_ticket", input: { title: "one" } } },
		{ tool_use: { name: "create_ticket", input: { title: "two" } } },
		{ text: "Never asked for." },
	);
	return { posted, emulator };
}

describe("usage across an approval pause", () => {
	it("max_requests 2 counts the request made before the pause: after two approvals the third request is never sent", async () => {
		const { posted, emulator } = twoGatedTickets();
		await createAgent({ name: "carry-usage-carry", usage_limits: { max_requests: 2 }, tools: [ticketTool] });
		const first = await runToRest("carry-usage-carry");
		expect(first.status).toBe("approval_pending");
		expect((await approve(first.id)).status).toBe(200);
		await settle("carry-usage-carry");
		const second = await jobOf("carry-usage-carry", first.id);
		// The second answer asked for a tool call whose result the model could never read (request 3 is over the limit).
		expect(emulator.requests).toHaveLength(2);
		expect(second).toMatchObject({ status: "failed", exit_reason: "usage_limit" });
		expect(posted).toHaveLength(1);
		expect(second.transitions.at(-1)!.reason).toContain("max_requests 2");
	});

	it("max_tool_calls 1: the approved call counts; a second gated call is not even put up for approval", async () => {
		const { posted, emulator } = twoGatedTickets();
		await createAgent({ name: "carry-tools-carry", usage_limits: { max_tool_calls: 1 }, tools: [ticketTool] });
		const first = await runToRest("carry-tools-carry");
		expect(first.status).toBe("approval_pending");
		expect((await approve(first.id)).status).toBe(200);
		await settle("carry-tools-carry");
		const done = await jobOf("carry-tools-carry", first.id);
		expect(done).toMatchObject({ status: "failed", exit_reason: "usage_limit" });
		expect(done.pending_approval).toBeNull();
		expect(posted).toMatchObject([{ input: { title: "one" } }]);
		// A second decision on the ended job changes nothing and runs nothing.
		expect((await approve(first.id)).status).toBe(409);
		expect(posted).toHaveLength(1);
	});
});
