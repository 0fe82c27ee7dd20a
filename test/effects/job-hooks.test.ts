import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { MAX_ATTEMPTS } from "../../durable-objects/agent/effects.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { heldModel, useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest, trigger } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";

/** The hook targets, answering by path: each answer in turn (the last one for every call after). */
function hookTargets(answers: Record<string, number[]>): Record<string, number> {
	const calls: Record<string, number> = {};
	fake("https://hooks.example.test", (req) => {
		const path = new URL(req.url).pathname;
		calls[path] = (calls[path] ?? 0) + 1;
		const mine = answers[path] ?? [200];
		return new Response("", { status: mine[Math.min(calls[path] - 1, mine.length - 1)] });
	});
	// A given-up call and a failed job each file an incident, which pages.
	fake("https://alerts.example.test", () => new Response("ok"));
	return calls;
}

async function hooksOf(id: string): Promise<unknown> {
	const res = await call(`/v1/jobs/${id}`);
	expect(res.status).toBe(200);
	return ((await res.json()) as { hooks: unknown }).hooks;
}

/** Makes every queued send due now, as if its backoff had passed. */
async function timePasses(agent: string): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) => {
		state.storage.sql.exec("UPDATE deliveries SET next_at = 0 WHERE status IN ('pending', 'sending')");
	});
	await settle(agent);
}

describe("a job's record shows its hook calls", () => {
	it("each with its outcome, attempts and what its last attempt met, in the hooks' order", async () => {
		hookTargets({ "/after-run": [200], "/on-error": [404] });
		await createAgent({ name: "hooks-shown", hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }], on_error: [{ url_secret: "TEST_ERROR_HOOK_URL" }] } });
		useEmulator().enqueue({ error: 400, message: "bad request from the model" });
		const failed = await runToRest("hooks-shown");
		expect(failed.status).toBe("failed");
		await settle("hooks-shown");
		expect(await hooksOf(failed.id)).toEqual([
			{ hook: "after_run", url_secret: "TEST_HOOK_URL", outcome: "delivered", attempts: 1 },
			{ hook: "on_error", url_secret: "TEST_ERROR_HOOK_URL", outcome: "failed", attempts: 1, error: "hook target answered 404" },
		]);
		// A clean run sets off after_run alone.
		useEmulator().enqueue({ text: "fine" });
		const completed = await runToRest("hooks-shown");
		await settle("hooks-shown");
		expect(await hooksOf(completed.id)).toEqual([{ hook: "after_run", url_secret: "TEST_HOOK_URL", outcome: "delivered", attempts: 1 }]);
	});

	it("in the order its definition lists them past ten hooks of a list, not in the order their ids sort (after_run:10 before after_run:2)", async () => {
		hookTargets({});
		fake("https://tickets.example.test", () => new Response("ok"));
		fake("https://deliver.example.test", () => new Response("ok"));
		// Twelve after_run hooks: the eleventh and twelfth name URLs of their own, so the list tells them apart.
		const after_run = [...Array.from({ length: 10 }, () => ({ url_secret: "TEST_HOOK_URL" })), { url_secret: "TEST_TICKETS_URL" }, { url_secret: "TEST_DELIVERY_URL" }];
		await createAgent({ name: "hooks-many", hooks: { after_run } });
		useEmulator().enqueue({ text: "fine" });
		const job = await runToRest("hooks-many");
		await settle("hooks-many");
		const shown = (await hooksOf(job.id)) as { hook: string; url_secret: string }[];
		expect(shown.map((h) => `${h.hook} ${h.url_secret}`)).toEqual(after_run.map((h) => `after_run ${h.url_secret}`));
	});

	it("a call retried as pending, with its last error and its next attempt's time, then delivered", async () => {
		hookTargets({ "/after-run": [503, 200] });
		await createAgent({ name: "hooks-retried", hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }] } });
		useEmulator().enqueue({ text: "fine" });
		const job = await runToRest("hooks-retried");
		await settle("hooks-retried");
		expect(await hooksOf(job.id)).toEqual([
			{
				hook: "after_run",
				url_secret: "TEST_HOOK_URL",
				outcome: "pending",
				attempts: 1,
				error: expect.stringMatching(/^hook target answered 503/),
				next_attempt_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
			},
		]);
		expect(MAX_ATTEMPTS).toBeGreaterThan(1);
		await timePasses("hooks-retried");
		expect(await hooksOf(job.id)).toEqual([{ hook: "after_run", url_secret: "TEST_HOOK_URL", outcome: "delivered", attempts: 2 }]);
	});

	it("a completed job's call held for its delivery says what it waits for, then is sent once the delivery is taken", async () => {
		const calls = hookTargets({});
		let delivery = 0;
		// The job's delivery: refused once (retried), then taken.
		fake("https://deliver.example.test", () => new Response("", { status: ++delivery === 1 ? 503 : 200 }));
		await createAgent({ name: "hooks-held", delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" }, hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }] } });
		useEmulator().enqueue({ text: "fine" });
		const job = await runToRest("hooks-held");
		await settle("hooks-held");
		expect(delivery).toBe(1);
		// Pending with no attempt and no error said nothing of why it was not sent.
		expect(await hooksOf(job.id)).toEqual([{ hook: "after_run", url_secret: "TEST_HOOK_URL", outcome: "pending", attempts: 0, waiting_for: "delivery" }]);
		expect(calls["/after-run"]).toBeUndefined();
		await timePasses("hooks-held");
		expect(delivery).toBe(2);
		expect(await hooksOf(job.id)).toEqual([{ hook: "after_run", url_secret: "TEST_HOOK_URL", outcome: "delivered", attempts: 1 }]);
	});

	it("a call tried once and then held by the upgrade that holds hooks for their delivery (schema step 11) says what it waits for, not a next attempt", async () => {
		hookTargets({});
		fake("https://deliver.example.test", () => new Response("", { status: 503 }));
		await createAgent({ name: "hooks-held-tried", delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" }, hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }] } });
		useEmulator().enqueue({ text: "fine" });
		const job = await runToRest("hooks-held-tried");
		await settle("hooks-held-tried");
		// As step 11 leaves a call the release before had already tried once beside a delivery still being sent.
		await runInDurableObject(env.AGENT.getByName("hooks-held-tried"), (_i: AgentDO, state) => {
			state.storage.sql.exec("UPDATE deliveries SET attempts = 1, last_error = 'hook target answered 503' WHERE kind = 'hook' AND status = 'held'");
		});
		expect(await hooksOf(job.id)).toEqual([
			{ hook: "after_run", url_secret: "TEST_HOOK_URL", outcome: "pending", attempts: 1, error: "hook target answered 503", waiting_for: "delivery" },
		]);
	});

	it("a call given up after its last attempt failed in transit is unknown, not failed: it may have arrived, as a delivery's would be", async () => {
		fake("https://hooks.example.test", () => {
			throw new TypeError("connection reset by peer");
		});
		fake("https://alerts.example.test", () => new Response("ok"));
		await createAgent({ name: "hooks-unknown", hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }] } });
		useEmulator().enqueue({ text: "fine" });
		const job = await runToRest("hooks-unknown");
		await settle("hooks-unknown");
		for (let attempt = 2; attempt <= MAX_ATTEMPTS; attempt++) await timePasses("hooks-unknown");
		expect(await hooksOf(job.id)).toEqual([
			{ hook: "after_run", url_secret: "TEST_HOOK_URL", outcome: "unknown", attempts: MAX_ATTEMPTS, error: "hook request failed: connection reset by peer" },
		]);
	});

	it("none while the job runs, nor for an agent without hooks", async () => {
		hookTargets({});
		const emulator = useEmulator();
		emulator.enqueue({ text: "slow" });
		const { arrived, release } = heldModel(emulator);
		await createAgent({ name: "hooks-running", hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }] } });
		const job = await trigger("hooks-running");
		const running = settle("hooks-running");
		await arrived;
		expect(await hooksOf(job.id)).toEqual([]);
		release();
		await running;
		await settle("hooks-running");
		expect(await hooksOf(job.id)).toEqual([{ hook: "after_run", url_secret: "TEST_HOOK_URL", outcome: "delivered", attempts: 1 }]);

		await createAgent({ name: "hooks-none" });
		useEmulator().enqueue({ text: "fine" });
		const plain = await runToRest("hooks-none");
		expect(await hooksOf(plain.id)).toEqual([]);
	});
});
