import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { heldModel, useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, runToRest, trigger } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { alarmOf } from "../helpers/retention.ts";
import { readEvents } from "../helpers/sse.ts";
import { ticketTool } from "../helpers/tools.ts";

const cancel = (id: string, reason: string) => call(`/v1/jobs/${id}/cancel`, { method: "POST", as: "operate", body: { reason } });
const lastReason = (job: unknown) => (job as { transitions: { reason: string }[] }).transitions.at(-1)!.reason;

// cancel.ts: "A blank reason is none", and a reason is kept without the blanks around it.
describe("a cancel's reason", () => {
	it("is none when blank, and kept trimmed otherwise, for a waiting and a queued job alike", async () => {
		// The first run waits for an approval, holding the only slot; the second stays pending.
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
		await createAgent({ name: "cancel-blank", tools: [ticketTool] });
		const waiting = await runToRest("cancel-blank");
		expect(waiting.status).toBe("approval_pending");
		const queued = await trigger("cancel-blank");
		await settle("cancel-blank");
		expect((await jobOf("cancel-blank", queued.id)).status).toBe("pending");

		const second = await cancel(queued.id, "  wrong host \n");
		expect(second.status).toBe(200);
		expect(lastReason(await second.json())).toBe("cancelled by operator: wrong host");
		const first = await cancel(waiting.id, " \t ");
		expect(first.status).toBe(200);
		expect(lastReason(await first.json())).toBe("cancelled by operator");
		expect(lastReason(await jobOf("cancel-blank", waiting.id))).toBe("cancelled by operator");
	});

	it("sets the object's alarm for now when a queued job's cancel answers: its after_run hook goes at once, not a heartbeat later", async () => {
		const name = "cancel-hook-now";
		const hooked: string[] = [];
		fake("https://hooks.example.test", async (req) => {
			hooked.push(((await req.json()) as { job: { id: string } }).job.id);
			return new Response("ok");
		});
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
		await createAgent({ name, tools: [ticketTool], hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }] } });
		expect((await runToRest(name)).status).toBe("approval_pending");
		const queued = await trigger(name);
		await settle(name);
		expect((await cancel(queued.id, "not needed")).status).toBe(200);
		expect(await alarmOf(name)).toBeLessThanOrEqual(Date.now());
		await settle(name);
		expect(hooked).toEqual([queued.id]);
	});

	it("ends a queued job's live stream when it answers: a watcher learns of the cancel", async () => {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
		await createAgent({ name: "cancel-watched", tools: [ticketTool] });
		expect((await runToRest("cancel-watched")).status).toBe("approval_pending");
		const queued = await trigger("cancel-watched");
		await settle("cancel-watched");
		const watched = readEvents(await call(`/v1/jobs/${queued.id}/stream`));
		expect((await cancel(queued.id, "not needed")).status).toBe(200);
		const events = await watched;
		expect(events.at(-1)?.event).toBe("end");
	});

	it("is in the job index when the cancel of a queued job answers, though a pass holds a model call", async () => {
		const name = "cancel-indexed";
		const emulator = useEmulator();
		const { arrived, release } = heldModel(emulator);
		emulator.enqueue({ text: "Done." });
		await createAgent({ name });
		const running = await trigger(name);
		await arrived;
		const queued = await trigger(name);
		expect((await cancel(queued.id, "not needed")).status).toBe(200);
		const indexed = await env.DB.prepare("SELECT status FROM jobs WHERE id = ?").bind(queued.id).first<{ status: string }>();
		expect(indexed?.status).toBe("cancelled");
		release();
		await settle(name);
		expect((await jobOf(name, running.id)).status).toBe("completed");
	});
});


// cancel.ts asShown: a running job's rate limit wait, shown beside its record while it lasts.
describe("a running job's rate limit wait", () => {
	it("is shown until the instant it ends, and not at that instant: the call is due then", async () => {
		const name = "shown-wait-ends";
		const emulator = useEmulator();
		emulator.enqueue({ error: 429, retry_after: 120 });
		await createAgent({ name });
		const job = await trigger(name);
		await settle(name);
		const due = await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) =>
			state.storage.sql.exec<{ next_step_at: number }>("SELECT next_step_at FROM job_setup WHERE job_id = ?", job.id).one().next_step_at,
		);
		const shown = async () => ((await (await call(`/v1/jobs/${job.id}`)).json()) as { status: string; rate_limited_until: string | null });
		vi.useFakeTimers({ toFake: ["Date"], now: due - 1 });
		onTestFinished(() => void vi.useRealTimers());
		expect(await shown()).toMatchObject({ status: "running", rate_limited_until: new Date(due).toISOString() });
		vi.setSystemTime(due);
		expect(await shown()).toMatchObject({ status: "running", rate_limited_until: null });
		vi.useRealTimers();
		// Its call made now, not by its alarm during a later test.
		emulator.enqueue({ text: "Done after the wait." });
		await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => void state.storage.sql.exec("UPDATE job_setup SET next_step_at = 0 WHERE job_id = ?", job.id));
		await settle(name);
		expect((await jobOf(name, job.id)).status).toBe("completed");
	});
});
