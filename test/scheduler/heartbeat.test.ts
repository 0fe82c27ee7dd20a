import { env, listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { app } from "../../src/app.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { jobOf, trigger } from "../helpers/jobs.ts";
import { runTick } from "../../src/scheduler/tick.ts";
import { recordTick } from "../../src/store/heartbeat.ts";
import { call } from "../helpers/http.ts";
import { tick } from "../helpers/ticks.ts";

interface Health {
	status: string;
	fleet: { ok: boolean; agents: number };
	scheduler: { last_tick_at: string | null; age_seconds: number | null; stalled: boolean; outcome: string | null; last_ok_at: string | null };
}

// The wall clock is the test's (a fake one): these ticks reach fleet.yaml's agents too, and on the real
// clock what they claimed depended on the minute the file ran (a stale tick 4 minutes back claimed a
// site-watch run in half of each quarter hour, to start on its own during a later test, into its
// scripted model answers). Two minutes past a quarter hour, on a Sunday: no tick here is due a fleet
// run. Far ahead (2037), so an alarm set by it (a claimed run's start) never comes due on its own.
beforeEach(() => {
	vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2037-12-06T14:02:00Z") });
});
afterEach(() => {
	vi.useRealTimers();
});

describe("the scheduler heartbeat", () => {
	// The heartbeat is one D1 row, shared by the file's tests: each starts from a scheduler that never
	// ticked, whichever test ran before it.
	beforeEach(async () => {
		await env.DB.prepare("DELETE FROM scheduler_heartbeat").run();
	});

	it("reports a scheduler that never ticked as stalled: /healthz answers 503", async () => {
		const res = await call("/healthz", { as: null });
		expect(res.status).toBe(503);
		expect((await res.json()) as Health).toMatchObject({
			status: "degraded",
			fleet: { ok: true, agents: 3 },
			scheduler: { last_tick_at: null, stalled: true },
		});
	});

	it("records each tick: /healthz answers 200 with the heartbeat's age, /v1/status with its counts", async () => {
		// Just deployed: no shard has seen this fleet.yaml yet (an earlier test's tick would have).
		for (const id of await listDurableObjectIds(env.SCHEDULER_SHARD)) {
			await runInDurableObject(env.SCHEDULER_SHARD.get(id), (_i, state) => void state.storage.sql.exec("DELETE FROM meta WHERE key = 'fleet'"));
		}
		const tickedAt = Date.now();
		// A scheduled time between fleet.yaml's slots (5 past a quarter hour), so no job starts here.
		await tick(Math.floor(Date.now() / 900_000) * 900_000 - 600_000);
		// The health check comes 3 s after the tick.
		vi.setSystemTime(tickedAt + 3_000);
		const res = await call("/healthz", { as: null });
		expect(res.status).toBe(200);
		const health = (await res.json()) as Health;
		expect(health.status).toBe("ok");
		expect(health.scheduler.outcome).toBe("ok");
		expect(health.scheduler.age_seconds).toBe(3);
		expect(health.scheduler.last_tick_at).toBe(new Date(tickedAt).toISOString());
		expect(health.scheduler.last_ok_at).toBe(health.scheduler.last_tick_at);

		const status = await call("/v1/status");
		expect(status.status).toBe(200);
		const body = (await status.json()) as { scheduler: { stalled: boolean; agents_called: number }; agents: { file: number; api: number }; jobs: Record<string, number> };
		expect(body.scheduler.stalled).toBe(false);
		// The first tick after a deploy calls every file agent once so each can set its schedule.
		expect(body.scheduler.agents_called).toBe(3);
		// The API agents are the file's other tests' that ran before this one, if any.
		const listed = ((await (await call("/v1/agents?limit=200")).json()) as { agents: { source: string }[] }).agents;
		expect(body.agents).toEqual({ file: 3, api: listed.filter((a) => a.source === "api").length });
	});

	it("flags a heartbeat older than HEARTBEAT_STALE_SECONDS", async () => {
		const stale = Date.now() - (Number(env.HEARTBEAT_STALE_SECONDS) + 60) * 1000;
		await lastTickAt(stale);
		const res = await call("/healthz", { as: null });
		expect(res.status).toBe(503);
		const health = (await res.json()) as Health;
		expect(health.scheduler.stalled).toBe(true);
		expect(health.scheduler.age_seconds).toBeGreaterThan(Number(env.HEARTBEAT_STALE_SECONDS));
	});

	it("is stalled when its ticks keep failing, however fresh the last one: by the last good tick", async () => {
		const stale = Date.now() - (Number(env.HEARTBEAT_STALE_SECONDS) + 60) * 1000;
		await lastTickAt(stale);
		// Every minute since has ticked and failed (no shard answered).
		const now = Date.now();
		await recordTick(env.DB, { tickAt: now, scheduledTime: now, outcome: "failed", shardsOk: 0, shardsFailed: 16, agentsCalled: 0, claimed: 0, skipped: 0, error: "every shard failed", deferred: 0, oldestDeferredAt: null, shardsBehind: 0 });
		// Read 2 s after that failed tick: the heartbeat is fresh, the scheduler stalled all the same.
		vi.setSystemTime(now + 2_000);
		const res = await call("/healthz", { as: null });
		expect(res.status).toBe(503);
		const health = (await res.json()) as Health;
		expect(health.scheduler).toMatchObject({ stalled: true, outcome: "failed", last_tick_at: new Date(now).toISOString(), last_ok_at: new Date(stale).toISOString() });
		expect(health.scheduler.age_seconds).toBe(2);
	});

	it("is not stalled by partial ticks: one agent it cannot reach does not make /healthz 503", async () => {
		const stale = Date.now() - (Number(env.HEARTBEAT_STALE_SECONDS) + 60) * 1000;
		await lastTickAt(stale);
		// Every minute since has ticked, and one agent (of many) could not be reached in each.
		const now = Date.now();
		await recordTick(env.DB, { tickAt: now, scheduledTime: now, outcome: "partial", shardsOk: 16, shardsFailed: 0, agentsCalled: 5, claimed: 4, skipped: 0, error: "broken: unreachable", deferred: 0, oldestDeferredAt: null, shardsBehind: 0 });
		vi.setSystemTime(now + 2_000);
		const res = await call("/healthz", { as: null });
		expect(res.status).toBe(200);
		const health = (await res.json()) as Health;
		// Still said: the last tick was partial.
		expect(health).toMatchObject({ status: "ok", scheduler: { stalled: false, outcome: "partial", last_tick_at: new Date(now).toISOString(), last_ok_at: new Date(now).toISOString() } });
		const status = (await (await call("/v1/status")).json()) as { scheduler: { stalled: boolean; outcome: string; error: string } };
		expect(status.scheduler).toMatchObject({ stalled: false, outcome: "partial", error: "broken: unreachable" });
		// A failed tick after it does not move the last good one.
		vi.setSystemTime(now + 60_000);
		await recordTick(env.DB, { tickAt: now + 60_000, scheduledTime: now + 60_000, outcome: "failed", shardsOk: 0, shardsFailed: 16, agentsCalled: 0, claimed: 0, skipped: 0, error: "every shard failed", deferred: 0, oldestDeferredAt: null, shardsBehind: 0 });
		expect(((await (await call("/healthz", { as: null })).json()) as Health).scheduler).toMatchObject({ stalled: false, outcome: "failed", last_ok_at: new Date(now).toISOString() });
	});

	it("does not go back when a slow tick is recorded after the next minute's", async () => {
		const now = Date.now();
		const beat = (at: number) => ({ tickAt: at, scheduledTime: at, outcome: "ok" as const, shardsOk: 16, shardsFailed: 0, agentsCalled: 0, claimed: 0, skipped: 0, error: null, deferred: 0, oldestDeferredAt: null, shardsBehind: 0 });
		await recordTick(env.DB, beat(now));
		await recordTick(env.DB, beat(now - 60_000));
		const health = (await (await call("/healthz", { as: null })).json()) as Health;
		expect(health.scheduler).toMatchObject({ last_tick_at: new Date(now).toISOString(), last_ok_at: new Date(now).toISOString() });
	});

	it("keeps a minute's figures when the same minute is delivered again", async () => {
		// Eight past a quarter hour: site-watch's slot is past its grace, so only this agent claims.
		const t = Math.floor(Date.now() / 900_000) * 900_000 + 2 * 3600_000 + 480_000;
		await call("/v1/agents", { method: "POST", as: "admin", body: { name: "beat", prompt: "x", schedules: { m: { interval: "1m" } } } });
		await tick(t);
		const first = ((await (await call("/v1/status")).json()) as { scheduler: { claimed: number; agents_called: number } }).scheduler;
		expect(first.claimed).toBeGreaterThanOrEqual(1);
		await tick(t);
		const again = ((await (await call("/v1/status")).json()) as { scheduler: { claimed: number; agents_called: number; last_tick_at: string } }).scheduler;
		expect(again).toMatchObject({ claimed: first.claimed, agents_called: first.agents_called });
	});

	it("needs a token for /v1/status", async () => {
		expect((await call("/v1/status", { as: null })).status).toBe(401);
	});
});

/**
 * The scheduler's only tick so far at `at`, by the tick's own path: a heartbeat does not go back to
 * an older tick recorded after a newer one (an earlier test's), so the row goes first.
 */
async function lastTickAt(at: number): Promise<void> {
	await env.DB.prepare("DELETE FROM scheduler_heartbeat").run();
	await runTick(env, at, at);
}

describe("numeric vars that are not numbers", () => {
	it("fall back to their defaults, listed in /healthz: a stale heartbeat is still stalled under HEARTBEAT_STALE_SECONDS \"3m\"", async () => {
		const stale = Date.now() - (180 + 60) * 1000;
		await lastTickAt(stale);
		const res = await app.request("/healthz", {}, { ...env, HEARTBEAT_STALE_SECONDS: "3m", RETENTION_DAYS: "0" } as Env);
		expect(res.status).toBe(503);
		const health = (await res.json()) as Health & { variables: { ok: boolean; issues: { path: string; message: string }[] } };
		expect(health.scheduler.stalled).toBe(true);
		expect(health.variables).toEqual({
			ok: false,
			issues: [
				{ path: "RETENTION_DAYS", message: "RETENTION_DAYS 0 is outside 1..3650 days; the default 30 is used" },
				{ path: "HEARTBEAT_STALE_SECONDS", message: 'HEARTBEAT_STALE_SECONDS "3m" is not a whole number of seconds (120..604800); the default 180 is used' },
			],
		});
		expect(((await (await call("/healthz", { as: null })).json()) as { variables: unknown }).variables).toEqual({ ok: true });
	});

	it("keep an agent's passes working under RETENTION_DAYS \"30d\": its job runs and its next alarm is set", async () => {
		useEmulator().enqueue({ text: "ok" });
		await createAgent({ name: "retention-typo" });
		const stub = env.AGENT.getByName("retention-typo");
		await runInDurableObject(stub, (instance: AgentDO) => {
			const self = instance as unknown as { env: Env };
			self.env = { ...self.env, RETENTION_DAYS: "30d" } as Env;
		});
		const job = await trigger("retention-typo");
		await settle("retention-typo");
		expect((await jobOf("retention-typo", job.id)).status).toBe("completed");
		// The alarm waits for the job's expiry under the default 30 days.
		const alarm = await runInDurableObject(stub, (_i: AgentDO, state) => state.storage.getAlarm());
		expect(Math.abs(alarm! - (Date.now() + 30 * 86_400_000))).toBeLessThan(60_000);
	});
});
