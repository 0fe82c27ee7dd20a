import { describe, expect, it } from "vitest";
import { CONTRACT } from "../../src/agent/prompt.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { runToRest, trigger } from "../helpers/jobs.ts";

interface Manifest {
	job_id: string;
	agent: string;
	status: string;
	session_id: string;
	definition_revision: string;
	definition: { name: string; system_prompt?: string; timeout: string; max_turns: number };
	models: string[];
	max_tokens: number;
	system: { type: string; text: string }[];
	tools: { name: string }[];
	deadline: string;
	persistent_from: string | null;
}

async function manifestOf(id: string): Promise<Manifest> {
	const res = await call(`/v1/jobs/${id}/manifest`, { as: "read" });
	expect(res.status, await res.clone().text()).toBe(200);
	return res.json();
}

const fetchTool = { type: "http_fetch", allow_hosts: ["status.example.test"] };

describe("GET /v1/jobs/:id/manifest", () => {
	it("gives what the job started with, unchanged by a later change of the agent", async () => {
		useEmulator().enqueue({ text: "Done." }, { text: "Done again." });
		await createAgent({ name: "manifested", system_prompt: "You check status pages.", model: "claude-sonnet-5-5", fallback_models: ["claude-haiku-5-5"], timeout: "5m", tools: [fetchTool] });
		const job = await runToRest("manifested", "Check.");
		const m = await manifestOf(job.id);
		expect(m).toMatchObject({
			job_id: job.id,
			agent: "manifested",
			status: "completed",
			session_id: job.session_id,
			definition_revision: job.definition_revision,
			definition: { name: "manifested", system_prompt: "You check status pages.", timeout: "5m" },
			models: ["claude-sonnet-5-5", "claude-haiku-5-5"],
			persistent_from: null,
		});
		expect(m.system.map((b) => b.text)).toEqual(["You check status pages.", CONTRACT]);
		expect(m.tools.map((t) => t.name)).toEqual(["http_fetch"]);
		expect(Date.parse(m.deadline) - Date.parse(job.started_at!)).toBe(5 * 60_000);

		const put = await call("/v1/agents/manifested", { method: "PUT", as: "admin", body: { name: "manifested", prompt: "Do the thing.", system_prompt: "You audit.", max_turns: 3 } });
		expect(put.status).toBe(200);
		const later = await runToRest("manifested", "Again.");
		expect((await manifestOf(later.id)).system.map((b) => b.text)).toEqual(["You audit.", CONTRACT]);
		expect((await manifestOf(later.id)).tools).toEqual([]);
		// The first job's manifest is still the definition it ran on.
		const again = await manifestOf(job.id);
		expect(again.definition).toMatchObject({ system_prompt: "You check status pages.", max_turns: 20 });
		expect(again.definition_revision).not.toBe((await manifestOf(later.id)).definition_revision);
	});

	it("a run queued across a change runs on the new definition's limits, as its manifest says", async () => {
		const long = `Second run's answer: ${"all components operational. ".repeat(40)}`;
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } }, { text: "Denied, fine." }, { text: long });
		const ticket = { type: "webhook", name: "create_ticket", description: "Create.", url_secret: "TEST_TICKETS_URL", requires_approval: true };
		// Room for the first run's short turns, not for the second's long answer.
		await createAgent({ name: "relimited", tools: [ticket], usage_limits: { max_output_tokens: 40 } });
		// The first run waits for an approval, holding the agent's one slot: the second stays queued.
		const first = await runToRest("relimited");
		expect(first.status).toBe("approval_pending");
		const queued = await trigger("relimited");
		await settle("relimited");
		expect(queued.usage_limits).toEqual({ max_output_tokens: 40 });
		const put = await call("/v1/agents/relimited", { method: "PUT", as: "admin", body: { name: "relimited", prompt: "Do the thing.", tools: [ticket], usage_limits: { max_output_tokens: 5000 } } });
		expect(put.status).toBe(200);
		expect((await call(`/v1/jobs/${first.id}/approval`, { method: "POST", as: "operate", body: { decision: "deny", allow_definition_change: true } })).status).toBe(200);
		await settle("relimited");
		const second = (await call(`/v1/jobs/${queued.id}`)).json() as Promise<{ status: string; usage_limits: unknown; summary: string }>;
		expect(await second).toMatchObject({ status: "completed", usage_limits: { max_output_tokens: 5000 } });
		expect((await manifestOf(queued.id)).definition).toMatchObject({ usage_limits: { max_output_tokens: 5000 } });
	});

	it("is a 409 for a job not started yet, a 404 for one cancelled before it started or unknown, a 400 for a bad id", async () => {
		// The first run waits for an approval, holding the agent's one slot: the second stays queued.
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
		await createAgent({
			name: "unmanifested",
			tools: [{ type: "webhook", name: "create_ticket", description: "Create.", url_secret: "TEST_TICKETS_URL", requires_approval: true }],
		});
		expect((await runToRest("unmanifested")).status).toBe("approval_pending");
		const pending = await trigger("unmanifested");
		await settle("unmanifested");
		const early = await call(`/v1/jobs/${pending.id}/manifest`);
		expect(early.status).toBe(409);
		expect((await errorOf(early)).message).toBe(`job ${pending.id} is pending: its manifest is saved when it starts`);
		expect((await call(`/v1/jobs/${pending.id}/cancel`, { method: "POST", as: "operate", body: {} })).status).toBe(200);
		await settle("unmanifested");
		const never = await call(`/v1/jobs/${pending.id}/manifest`);
		expect(never.status).toBe(404);
		expect((await errorOf(never)).message).toBe(`job ${pending.id} never started (it ended cancelled), so it has no manifest`);

		const unknown = await call("/v1/jobs/job-2020-01-01-zzzzzz/manifest");
		expect(unknown.status).toBe(404);
		expect((await errorOf(unknown)).message).toBe("no job job-2020-01-01-zzzzzz: its id is from 2020-01-01, and a job is kept 30 days after it ends (RETENTION_DAYS; less where its agent sets retention_days), so retention may have removed it");
		expect((await call("/v1/jobs/not-a-job/manifest")).status).toBe(400);
	});
});
