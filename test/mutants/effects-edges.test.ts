import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, onTestFinished, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { breakD1, createAgent, queueForAlarm, restoreEnv, settle } from "../helpers/agents.ts";
import { gate, useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { endedRecord, jobOf, runToRest, saveJob, trigger } from "../helpers/jobs.ts";
import { killSwitch, recover } from "../helpers/kill.ts";
import { loggedDuring } from "../helpers/logs.ts";
import { fake } from "../helpers/outbound.ts";
import { alarmOf } from "../helpers/retention.ts";

afterEach(() => void vi.restoreAllMocks());

/** The webhook delivery target: the bodies it was posted, in order. */
function deliveries(): Record<string, unknown>[] {
	const seen: Record<string, unknown>[] = [];
	fake("https://deliver.example.test", async (req) => {
		seen.push((await req.json()) as Record<string, unknown>);
		return new Response("ok");
	});
	return seen;
}

async function incidentsOf(agent: string): Promise<{ state: string; count: number; error: string }[]> {
	const res = await call(`/v1/incidents?agent=${agent}`);
	expect(res.status).toBe(200);
	return ((await res.json()) as { incidents: { state: string; count: number; error: string }[] }).incidents;
}

// effects.ts: what a job's end sets off (queueEffects, incidentEvent), at the edges the suite left.
describe("a finished job's effects", () => {
	it("deliver a completed job's summary when its conversation holds no answer (a record as a crash or an older release left it)", async () => {
		const seen = deliveries();
		await createAgent({ name: "fx-summary-only", delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		const job = { ...endedRecord("fx-summary-only", new Date()), summary: "Three deploys, no incidents." };
		expect(await saveJob("fx-summary-only", job)).toBe(true);
		await settle("fx-summary-only");
		expect(seen).toHaveLength(1);
		expect(seen[0]).toMatchObject({ type: "drover.delivery", job_id: job.id, answer: "Three deploys, no incidents." });
		expect((await jobOf("fx-summary-only", job.id)).delivery).toEqual({ target: "webhook", outcome: "delivered" });
	});

	it("deliver the answer without the blank lines a model's text starts with after a tool call (as the job's summary reads)", async () => {
		const seen = deliveries();
		useEmulator().enqueue({ text: "\n\nThree deploys, no incidents.\n" });
		await createAgent({ name: "fx-answer-blanks", delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		const job = await runToRest("fx-answer-blanks");
		await settle("fx-answer-blanks");
		expect(seen).toHaveLength(1);
		expect(seen[0]).toMatchObject({ type: "drover.delivery", job_id: job.id, answer: "Three deploys, no incidents." });
		expect((await jobOf("fx-answer-blanks", job.id)).delivery).toEqual({ target: "webhook", outcome: "delivered" });
	});

	it("go out in the alarm that finds them due: a job's two hooks both in one, not one an alarm", async () => {
		const name = "fx-one-alarm";
		const paths: string[] = [];
		fake("https://hooks.example.test", (req) => {
			paths.push(new URL(req.url).pathname);
			return new Response("ok");
		});
		await createAgent({ name, hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }, { url_secret: "TEST_ERROR_HOOK_URL" }] } });
		const job = endedRecord(name, new Date());
		expect(await saveJob(name, job)).toBe(true);
		expect(await runDurableObjectAlarm(env.AGENT.getByName(name))).toBe(true);
		expect(paths.sort()).toEqual(["/after-run", "/on-error"]);
		const shown = (await (await call(`/v1/jobs/${job.id}`)).json()) as { hooks: unknown };
		expect(shown.hooks).toMatchObject([{ outcome: "delivered", attempts: 1 }, { outcome: "delivered", attempts: 1 }]);
	});

	it("take a 300 (Multiple Choices) as the redirect it is, failed and said so, and a 400 as the refusal it is, not a redirect", async () => {
		let status = 300;
		fake("https://alerts.example.test", () => new Response("ok"));
		fake("https://deliver.example.test", () => new Response(null, { status }));
		const emulator = useEmulator();
		emulator.enqueue({ text: "Choices." }, { text: "Refused." });
		await createAgent({ name: "fx-3xx-4xx", delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		const choices = await runToRest("fx-3xx-4xx");
		expect((await jobOf("fx-3xx-4xx", choices.id)).delivery).toEqual({ target: "webhook", outcome: "failed", error: "delivery target answered 300, a redirect, which drover does not follow: set the URL it redirects to; 1 attempt" });
		status = 400;
		const refused = await runToRest("fx-3xx-4xx");
		expect((await jobOf("fx-3xx-4xx", refused.id)).delivery).toEqual({ target: "webhook", outcome: "failed", error: "delivery target answered 400; 1 attempt" });
	});

	it("say incident.not_filed of a deleted agent's run that failed, never of one that completed: there was no failure to file (README's log table)", async () => {
		const name = "fx-deleted-clean";
		await createAgent({ name });
		expect((await call(`/v1/agents/${name}`, { method: "DELETE", as: "admin" })).status).toBe(200);
		await settle(name);
		// Its runs as they end after the delete (on their manifests): one completed, one failed.
		const at = Date.now() - 60_000;
		const completed = endedRecord(name, new Date(at));
		const failed = endedRecord(name, new Date(at + 1_000), "failed");
		const lines = await loggedDuring(async () => {
			expect(await saveJob(name, completed)).toBe(true);
			expect(await saveJob(name, failed)).toBe(true);
			await settle(name);
		}, "incident.not_filed");
		expect(lines).toMatchObject([{ agent: name, job_id: failed.id, reason: "agent deleted" }]);
	});

	it("send a suppressed answer's hooks the record that says so: delivery suppressed, not null", async () => {
		const seen = deliveries();
		const hooked: { job: { id: string; delivery: unknown } }[] = [];
		fake("https://hooks.example.test", async (req) => {
			hooked.push((await req.json()) as { job: { id: string; delivery: unknown } });
			return new Response("ok");
		});
		useEmulator().enqueue({ text: "[SILENT]" });
		await createAgent({ name: "fx-silent-hook", delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" }, hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }] } });
		const job = await runToRest("fx-silent-hook");
		await settle("fx-silent-hook");
		expect(seen).toEqual([]);
		expect(hooked).toHaveLength(1);
		expect(hooked[0]!.job).toMatchObject({ id: job.id, delivery: { target: "webhook", outcome: "suppressed" } });
	});

	it("resolve a failure's incident at the clean run that followed it while D1 was down: the two land in the order the runs ended", async () => {
		fake("https://alerts.example.test", () => new Response("ok"));
		vi.spyOn(console, "warn").mockImplementation(() => {});
		await createAgent({ name: "fx-clean-queued" });
		await breakD1("fx-clean-queued");
		useEmulator().enqueue({ error: 400, message: "bad request from the model" });
		expect((await runToRest("fx-clean-queued")).status).toBe("failed");
		useEmulator().enqueue({ text: "Fine again." });
		expect((await runToRest("fx-clean-queued")).status).toBe("completed");
		// D1 is back: the queued failure opens the incident, and the clean run after it resolves it.
		await restoreEnv("fx-clean-queued");
		await settle("fx-clean-queued");
		expect(await incidentsOf("fx-clean-queued")).toMatchObject([{ state: "resolved", count: 1 }]);
	});

	it("file an incident for an indeterminate job, as for a failed one (README: every failed or indeterminate job)", async () => {
		fake("https://alerts.example.test", () => new Response("ok"));
		await createAgent({ name: "fx-indeterminate" });
		const job = { ...endedRecord("fx-indeterminate", new Date(), "indeterminate"), error: { type: "indeterminate", message: "the run stopped while tool create_ticket was executing; its effect is unknown" } };
		expect(await saveJob("fx-indeterminate", job)).toBe(true);
		await settle("fx-indeterminate");
		expect(await incidentsOf("fx-indeterminate")).toMatchObject([{ count: 1, error: job.error.message }]);
	});

	it("file a failed job recorded without an error (as an older release left one) under its last transition's reason, not the bare status", async () => {
		fake("https://alerts.example.test", () => new Response("ok"));
		await createAgent({ name: "fx-no-error" });
		const ended = endedRecord("fx-no-error", new Date(), "failed");
		const job = { ...ended, error: null, transitions: [...ended.transitions.slice(0, -1), { ...ended.transitions.at(-1)!, reason: "the run passed its 1h timeout" }] };
		expect(await saveJob("fx-no-error", job)).toBe(true);
		await settle("fx-no-error");
		expect(await incidentsOf("fx-no-error")).toMatchObject([{ count: 1, error: "the run passed its 1h timeout" }]);
	});

	it("send a delivery cut off by its object's death again after its backoff, at the alarm the fresh instance sets for it", async () => {
		const name = "fx-killed-send";
		useEmulator().enqueue({ text: "Deliver me." });
		await createAgent({ name, delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		const killed = await killSwitch(name);
		const keys: string[] = [];
		let sentAt = 0;
		fake("https://deliver.example.test", (req) => {
			keys.push(req.headers.get("idempotency-key")!);
			if (keys.length > 1) return new Response("ok");
			sentAt = Date.now();
			return killed.kill();
		});
		// Queued for the alarm's pass (a trigger's request would run it, and die with it).
		await queueForAlarm(name, "Go.");
		const job = await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => state.storage.sql.exec<{ id: string }>("SELECT id FROM jobs").one());
		await settle(name).catch((err: unknown) => expect(String(err)).toMatch(/killed by the test/));
		expect(killed.fired).toBe(1);
		// The fresh instance's work: the attempt was counted before it left, and may have arrived; the
		// next waits for the backoff (5 s), not sent at once, and the object's alarm is set for it.
		await recover(name);
		expect(keys).toHaveLength(1);
		const row = await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) =>
			state.storage.sql.exec<{ status: string; attempts: number; next_at: number }>("SELECT status, attempts, next_at FROM deliveries").one(),
		);
		expect(row).toMatchObject({ status: "sending", attempts: 1 });
		expect(row.next_at - sentAt).toBeGreaterThanOrEqual(4_900);
		expect(await alarmOf(name)).toBe(row.next_at);
		vi.useFakeTimers({ toFake: ["Date"], now: row.next_at });
		onTestFinished(() => void vi.useRealTimers());
		expect(await runDurableObjectAlarm(env.AGENT.getByName(name))).toBe(true);
		expect(keys).toEqual([`${job.id}:delivery`, `${job.id}:delivery`]);
		expect((await jobOf(name, job.id)).delivery).toEqual({ target: "webhook", outcome: "delivered" });
	});

	it("count any 2xx as taken: a Discord webhook's 204 No Content delivers, a hook's 202 Accepted too", async () => {
		fake("https://discord.example.test", () => new Response(null, { status: 204 }));
		fake("https://hooks.example.test", () => new Response("queued", { status: 202 }));
		useEmulator().enqueue({ text: "Three deploys." });
		await createAgent({ name: "fx-2xx", delivery: { type: "discord", url_secret: "TEST_DISCORD_URL" }, hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }] } });
		const job = await runToRest("fx-2xx");
		await settle("fx-2xx");
		expect((await jobOf("fx-2xx", job.id)).delivery).toEqual({ target: "discord", outcome: "delivered" });
		const shown = (await (await call(`/v1/jobs/${job.id}`)).json()) as { hooks: unknown };
		expect(shown.hooks).toEqual([{ hook: "after_run", url_secret: "TEST_HOOK_URL", outcome: "delivered", attempts: 1 }]);
	});

	it("retry a target whose Retry-After asks for less than the backoff no sooner than the backoff (5 s after the first attempt)", async () => {
		const name = "fx-short-retry-after";
		let tries = 0;
		fake("https://deliver.example.test", () => (++tries === 1 ? new Response("busy", { status: 503, headers: { "retry-after": "1" } }) : new Response("ok")));
		useEmulator().enqueue({ text: "Soon." });
		await createAgent({ name, delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		const before = Date.now();
		const job = await runToRest(name);
		const after = Date.now();
		const delivery = (await jobOf(name, job.id)).delivery!;
		const next = Date.parse(/the next at (\S+)$/.exec(delivery.error ?? "")![1]!);
		expect(delivery).toMatchObject({ target: "webhook", outcome: "pending", error: `delivery target answered 503 (asked to wait 1 s); attempt 1 of 6, the next at ${new Date(next).toISOString()}` });
		expect(next - before).toBeGreaterThanOrEqual(5_000);
		expect(next - after).toBeLessThanOrEqual(5_000);
		expect(await alarmOf(name)).toBe(next);
		vi.useFakeTimers({ toFake: ["Date"], now: next });
		onTestFinished(() => void vi.useRealTimers());
		expect(await runDurableObjectAlarm(env.AGENT.getByName(name))).toBe(true);
		expect(tries).toBe(2);
		expect((await jobOf(name, job.id)).delivery).toEqual({ target: "webhook", outcome: "delivered" });
	});

	it("say a Retry-After wait of a fraction of a second rounded up, never as less than asked (1.5 s: asked to wait 2 s)", async () => {
		const name = "fx-wait-rounded";
		let tries = 0;
		fake("https://deliver.example.test", () => (++tries === 1 ? new Response("slow down", { status: 429, headers: { "retry-after-ms": "1500" } }) : new Response("ok")));
		useEmulator().enqueue({ text: "Patience." });
		await createAgent({ name, delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		const job = await runToRest(name);
		expect(tries).toBe(1);
		expect((await jobOf(name, job.id)).delivery!.error).toMatch(/^delivery target answered 429 \(asked to wait 2 s\); attempt 1 of 6, the next at /);
		// Its retry sent now: by its own alarm 5 s on, it would post during a later test.
		await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => void state.storage.sql.exec("UPDATE deliveries SET next_at = 0"));
		await settle(name);
		expect((await jobOf(name, job.id)).delivery).toEqual({ target: "webhook", outcome: "delivered" });
	});

	it("leave a job without a delivery target at delivery null while its hook's call is retried (null: nothing to deliver)", async () => {
		let tries = 0;
		fake("https://hooks.example.test", () => new Response("", { status: ++tries === 1 ? 503 : 200 }));
		useEmulator().enqueue({ text: "No one to tell." });
		await createAgent({ name: "fx-hook-retry", hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }] } });
		const job = await runToRest("fx-hook-retry");
		expect(tries).toBe(1);
		const shown = (await (await call(`/v1/jobs/${job.id}`)).json()) as { delivery: unknown; hooks: { outcome: string }[] };
		expect(shown.hooks).toMatchObject([{ hook: "after_run", outcome: "pending", attempts: 1, error: "hook target answered 503" }]);
		expect(shown.delivery).toBeNull();
		expect((await jobOf("fx-hook-retry", job.id)).delivery).toBeNull();
		// Its retry sent now: by its own alarm 5 s on, it would post during a later test.
		await runInDurableObject(env.AGENT.getByName("fx-hook-retry"), (_i: AgentDO, state) => void state.storage.sql.exec("UPDATE deliveries SET next_at = 0"));
		await settle("fx-hook-retry");
		expect(tries).toBe(2);
	});
});

/**
 * The hooks' fake, scripted by job: the `n`th job whose call reaches a path gets `scripts[path][n]`'s
 * answers in turn (its last one for every call after); an answer of "network" fails in transit.
 */
function scriptedHooks(scripts: Record<string, (number | "network")[][]>): string[] {
	const jobs: Record<string, string[]> = {};
	const calls = new Map<string, number>();
	const keys: string[] = [];
	fake("https://hooks.example.test", (req) => {
		const path = new URL(req.url).pathname;
		const key = req.headers.get("idempotency-key")!;
		keys.push(key);
		const seen = (jobs[path] ??= []);
		if (!seen.includes(key)) seen.push(key);
		const answers = scripts[path]![seen.indexOf(key)]!;
		const n = (calls.get(key) ?? 0) + 1;
		calls.set(key, n);
		const answer = answers[Math.min(n - 1, answers.length - 1)]!;
		if (answer === "network") throw new TypeError("Network connection lost.");
		return new Response("hook", { status: answer });
	});
	fake("https://alerts.example.test", () => new Response("ok"));
	return keys;
}

/** Makes the agent's queued sends of `jobId` due now, and runs the agent's alarm work. */
async function dueNow(agent: string, jobId: string): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) => {
		state.storage.sql.exec("UPDATE deliveries SET next_at = 0 WHERE id > ? AND id < ? AND status IN ('pending', 'sending')", `${jobId}:`, `${jobId};`);
	});
	await settle(agent);
}

// effects.ts laterCall: "a call of the same hook (its list and URL secret: its incident source)".
describe("a hook's call given up", () => {
	it("files its incident though another hook of its list got through for a later job: only a later call of that hook shows it works", async () => {
		const name = "fx-other-hook";
		// Two after_run hooks on their own URLs: the first fails for the first job (503, then 404) and
		// is retried for the second; the second always takes its calls.
		scriptedHooks({ "/after-run": [[503, 404], [503, 200]], "/on-error": [[200], [200]] });
		await createAgent({ name, hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }, { url_secret: "TEST_ERROR_HOOK_URL" }] } });
		useEmulator().enqueue({ text: "first" }, { text: "second" });
		const first = await runToRest(name);
		const second = await runToRest(name);
		await dueNow(name, first.id);
		expect(await incidentsOf(name)).toMatchObject([{ count: 1, error: "after_run hook not delivered (failed): hook target answered 404" }]);
		// The second job's call of it gets through: that resolves it.
		await dueNow(name, second.id);
		expect(await incidentsOf(name)).toMatchObject([{ state: "resolved" }]);
	});

	it("as unknown (refused after an attempt that may have arrived) is not resolved by an earlier job's call of that hook taken late", async () => {
		const name = "fx-late-after-unknown";
		// The first job's call is retried (503) and taken late; the second job's fails in transit, then
		// is refused (404): given up as unknown, after the first job's call was queued.
		scriptedHooks({ "/after-run": [[503, 200], ["network", 404]] });
		await createAgent({ name, hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }] } });
		useEmulator().enqueue({ text: "first" }, { text: "second" });
		const first = await runToRest(name);
		const second = await runToRest(name);
		await dueNow(name, second.id);
		const filed = await incidentsOf(name);
		expect(filed).toMatchObject([{ count: 1 }]);
		expect(filed[0]!.error).toMatch(/^after_run hook not delivered \(unknown\): hook target answered 404/);
		await dueNow(name, first.id);
		expect((await incidentsOf(name))[0]!.state).not.toBe("resolved");
		const shown = (await (await call(`/v1/jobs/${first.id}`)).json()) as { hooks: unknown };
		expect(shown.hooks).toMatchObject([{ outcome: "delivered", attempts: 2 }]);
	});
});

// hook-calls.ts: a job's hook calls as GET /v1/jobs/:id shows them.
describe("a job's hook calls", () => {
	it("show a call not yet sent (the one before it still out) as pending with no next attempt: it has never been tried", async () => {
		const name = "fx-hook-unsent";
		const hold = gate();
		const arrived = gate();
		fake("https://hooks.example.test", async (req) => {
			if (new URL(req.url).pathname === "/after-run") {
				arrived.open();
				await hold.promise;
			}
			return new Response("ok");
		});
		await createAgent({ name, hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }, { url_secret: "TEST_ERROR_HOOK_URL" }] } });
		useEmulator().enqueue({ text: "Done." });
		const job = await trigger(name);
		const settled = settle(name);
		await arrived.promise;
		const shown = (await (await call(`/v1/jobs/${job.id}`)).json()) as { hooks: unknown[] };
		hold.open();
		await settled;
		expect(shown.hooks[1]).toEqual({ hook: "after_run", url_secret: "TEST_ERROR_HOOK_URL", outcome: "pending", attempts: 0 });
		const after = (await (await call(`/v1/jobs/${job.id}`)).json()) as { hooks: unknown[] };
		expect(after.hooks).toMatchObject([{ outcome: "delivered", attempts: 1 }, { outcome: "delivered", attempts: 1 }]);
	});
});

