import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JobRecord } from "../../src/jobs/model.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { gate, useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, runToRest, trigger } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";

// The D1 index is what the job list, the fleet's counts and the dashboard read. Each case reads it
// at the moment a user would: right after the API answered, or while a job's closing work runs.

const post = (path: string, body?: unknown) => call(path, { method: "POST", as: "operate", body });
const indexed = (id: string) => env.DB.prepare("SELECT status, exit_reason FROM jobs WHERE id = ?").bind(id).first<{ status: string; exit_reason: string | null }>();

/** A target that answers only when released; `reached` once a request arrives. */
function slowTarget(origin: string): { reached: Promise<void>; release: () => void } {
	const reached = gate();
	const release = gate();
	fake(origin, async () => {
		reached.open();
		await release.promise;
		return new Response("ok");
	});
	return { reached: reached.promise, release: release.open };
}

describe("the job index", () => {
	it("says completed while the job's delivery target is still answering", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "Deliver me." });
		// The model answers after the trigger has (a real model call takes seconds).
		const answer = gate();
		fake("https://api.anthropic.com", async (req) => {
			await answer.promise;
			return emulator.handle(req);
		});
		const target = slowTarget("https://deliver.example.test");
		await createAgent({ name: "index-slow-delivery", delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		const job = await trigger("index-slow-delivery");
		answer.open();
		await target.reached;
		expect((await jobOf("index-slow-delivery", job.id)).status).toBe("completed");
		const listed = (await (await call("/v1/jobs?agent=index-slow-delivery")).json()) as { jobs: { id: string; status: string }[] };
		const seen = listed.jobs.find((j) => j.id === job.id)?.status;
		target.release();
		await settle("index-slow-delivery");
		expect(seen).toBe("completed");
	});

	it("says cancelled once a cancel of a running job answers, and while its after_run hook is still answering", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ hang: true });
		const arrived = gate();
		fake("https://api.anthropic.com", (req) => {
			arrived.open();
			return emulator.handle(req);
		});
		const hook = slowTarget("https://hooks.example.test");
		await createAgent({ name: "index-cancelled", hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }] } });
		const job = await trigger("index-cancelled");
		await arrived.promise;
		const res = await post(`/v1/jobs/${job.id}/cancel`, { reason: "stop" });
		expect(await res.json()).toMatchObject({ status: "cancelled" });
		const atAnswer = await indexed(job.id);
		await hook.reached;
		const duringHook = await indexed(job.id);
		hook.release();
		await settle("index-cancelled");
		expect(atAnswer).toEqual({ status: "cancelled", exit_reason: "cancelled" });
		expect(duringHook).toEqual({ status: "cancelled", exit_reason: "cancelled" });
	});

	it("says running once an approval answers", async () => {
		const emulator = useEmulator();
		const tool = { type: "webhook", name: "create_ticket", description: "Create a ticket.", url_secret: "TEST_TICKETS_URL", requires_approval: true };
		emulator.enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } }, { hang: true });
		fake("https://tickets.example.test", () => Response.json({ id: 1 }));
		await createAgent({ name: "index-approved", tools: [tool] });
		const job = await runToRest("index-approved");
		expect(await indexed(job.id)).toMatchObject({ status: "approval_pending" });
		const res = await post(`/v1/jobs/${job.id}/approval`, { decision: "approve" });
		expect(((await res.json()) as JobRecord).status).toBe("running");
		const atAnswer = await indexed(job.id);
		await post(`/v1/jobs/${job.id}/cancel`, {});
		await settle("index-approved");
		expect(atAnswer).toMatchObject({ status: "running" });
	});
});
