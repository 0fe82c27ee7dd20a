import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent, runsOf, settleClaimedRuns } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { fake } from "../helpers/outbound.ts";
import { dayFromToday, tick } from "../helpers/ticks.ts";
import { runTick } from "../../src/scheduler/tick.ts";
import { alertIncident } from "../../src/incidents/alert.ts";
import { getIncident, recordFailure } from "../../src/store/incidents.ts";
import { gate } from "../helpers/emulator.ts";
import { shardName } from "../../src/scheduler/shards.ts";
import { bundleFleetForTest } from "../../src/config/bundled.ts";

/**
 * The ticks' days (YYYY-MM-DD), five to seven days ahead of the real clock's, as the literal
 * 2026-12-05 to 12-07 they stand for were when the file was written: a literal day comes due and
 * passes (then the real minute comes after the file's ticks), and more than three days past its
 * shard no longer deals its job ids.
 */
const DAY = { 5: ahead(5), 6: ahead(6), 7: ahead(7) };
function ahead(days: number): string {
	return new Date(dayFromToday(days)).toISOString().slice(0, 10);
}

/**
 * The heartbeat (one D1 row) keeps the newest tick it was given: a test that reads its own tick's
 * there starts without the file's other tests' ticks, later than its own whichever ran first.
 */
async function noTickYet(): Promise<void> {
	await env.DB.prepare("DELETE FROM scheduler_heartbeat").run();
}

afterEach(async () => {
	vi.restoreAllMocks();
	vi.useRealTimers();
	// The runs this file's ticks claimed (for every agent then due) run in the test that claimed them,
	// on the real clock, not by their start alarms during a later one (see settleClaimedRuns).
	await settleClaimedRuns();
});

describe("a tick that cannot reach an agent", () => {
	it("still claims for every other agent, reports partial, opens a scheduler incident, and catches up later", async () => {
		const alerts: unknown[] = [];
		fake("https://alerts.example.test", async (req) => {
			alerts.push(await req.json());
			return new Response("ok");
		});
		await noTickYet();
		await createAgent({ name: "healthy", max_concurrent: 5, schedules: { q: { interval: "15m" } } });
		await createAgent({ name: "broken", max_concurrent: 5, schedules: { q: { interval: "15m" } } });
		await tick(`${DAY[5]}T10:00:00Z`);
		// The broken agent's object fails every call (its stored state no longer parses). Its tick's
		// SyntaxError is printed as "uncaught exception; source = Uncaught (in promise)" though the shard
		// catches it (shard.agent_tick_failed, below): the vitest plugin's Durable Object wrapper reports
		// every rejecting RPC so (cloudflare/workers-sdk#14736; plain workerd, a Durable Object calling
		// one that throws and catching it, prints nothing), and a run's output cannot filter it.
		await runInDurableObject(env.AGENT.getByName("broken"), (_i: AgentDO, state) => {
			state.storage.sql.exec("UPDATE agent_state SET definition = '{not json'");
		});
		const repair = () => call("/v1/agents/broken", { method: "PUT", as: "admin", body: { name: "broken", prompt: "Do the thing.", max_concurrent: 5, schedules: { q: { interval: "15m" } } } });
		// A check failing while it is broken repairs it too: else the file's afterEach meets the broken
		// object and every later test fails with it, hiding which check failed.
		// The scheduler's incidents of this agent (the file's other tests leave theirs of other failures).
		const ofBroken = <T extends { error: string }>(list: T[]) => list.filter((i) => i.error.includes("agent broken"));
		let incidents: { id: string; state: string; error: string }[];
		try {
			const logged: string[] = [];
			vi.spyOn(console, "error").mockImplementation((line: string) => void logged.push(line));
			const warned: string[] = [];
			vi.spyOn(console, "warn").mockImplementation((line: string) => void warned.push(line));
			await tick(`${DAY[5]}T10:15:00Z`);
			vi.restoreAllMocks();
			// The tick's own line says it was partial, at warn, where a level filter finds it.
			expect(warned.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === "tick.done")).toEqual([expect.objectContaining({ level: "warn", outcome: "partial" })]);
			// What went wrong inside the agent (its definition does not parse) is in the log, with the agent.
			const failure = logged.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.event === "shard.agent_tick_failed");
			expect(failure).toMatchObject({ agent: "broken", minute: `${DAY[5]}T10:15:00.000Z`, error_message: expect.stringMatching(/JSON/) });
			expect(failure).not.toHaveProperty("tick");
			const internal = failure!.error_message as string;

			// Users see which agent, never that internal text.
			const statusText = await (await call("/v1/status")).text();
			const status = JSON.parse(statusText) as { scheduler: { outcome: string; error: string } };
			expect(status.scheduler.outcome).toBe("partial");
			expect(status.scheduler.error).toBe("agent broken did not answer the tick");
			expect(statusText).not.toContain(internal);
			expect(statusText).not.toMatch(/JSON/);
			expect((await runsOf("healthy")).map((r) => r.scheduled_instant)).toEqual([`${DAY[5]}T10:00:00.000Z`, `${DAY[5]}T10:15:00.000Z`]);
			incidents = ofBroken(((await (await call("/v1/incidents?agent=scheduler")).json()) as { incidents: { id: string; state: string; error: string }[] }).incidents);
			expect(incidents).toMatchObject([{ state: "alerted" }]);
			// Opened in the log as an agent's incident is, by its id, with the tick's minute.
			expect(warned.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === "incident.opened")).toEqual([
				expect.objectContaining({ level: "warn", agent: "scheduler", incident: incidents[0]!.id, minute: `${DAY[5]}T10:15:00.000Z` }),
			]);
			expect(incidents[0]!.error).toBe("tick partial: agent broken did not answer the tick");
			// Paged once; an alert the tick sent again for another test's incident aside.
			expect(alerts.filter((a) => (a as { incident: { id: string } }).incident.id === incidents[0]!.id)).toHaveLength(1);
			expect(JSON.stringify(alerts)).not.toContain(internal);
		} catch (err) {
			vi.restoreAllMocks();
			await repair();
			throw err;
		}
		// Repaired, the agent is called again (its due time never advanced) and claims the slot it missed.
		await repair();
		const infos: string[] = [];
		vi.spyOn(console, "log").mockImplementation((line: string) => void infos.push(line));
		await tick(`${DAY[5]}T10:16:00Z`);
		vi.restoreAllMocks();
		expect(infos.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === "incident.resolved")).toEqual([
			expect.objectContaining({ level: "info", agent: "scheduler", incident: incidents[0]!.id, minute: `${DAY[5]}T10:16:00.000Z` }),
		]);
		expect((await runsOf("broken")).map((r) => [r.scheduled_instant, r.dispatch])).toEqual([
			[`${DAY[5]}T10:00:00.000Z`, "on_time"],
			[`${DAY[5]}T10:15:00.000Z`, "late"],
		]);
		const after = (await (await call("/v1/incidents?agent=scheduler")).json()) as { incidents: { state: string; error: string }[] };
		expect(ofBroken(after.incidents)).toMatchObject([{ state: "resolved" }]);
	});
});

describe("a tick that cannot reach a shard", () => {
	it("records which shard in the heartbeat and the incident, and logs the shard's own error", async () => {
		await noTickYet();
		const INTERNAL = "D1_ERROR: internal storage fault at /var/lib/shard-7.sqlite";
		const logged: string[] = [];
		vi.spyOn(console, "error").mockImplementation((line: string) => void logged.push(line));
		const shards = { getByName: () => ({ tick: () => Promise.reject(new Error(INTERNAL)) }) };
		const at = Date.parse(`${DAY[5]}T11:00:00Z`);
		await expect(runTick({ ...env, SCHEDULER_SHARD: shards } as unknown as Env, at, at)).rejects.toThrow(
			// The cron trigger's event shows this message: the first three shards, as the heartbeat names its first five.
			new Error("scheduler tick failed: shard 0 did not answer the tick; shard 1 did not answer the tick; shard 2 did not answer the tick"),
		);
		vi.restoreAllMocks();
		expect(logged.some((l) => l.includes('"tick.shard_failed"') && l.includes(INTERNAL))).toBe(true);
		// No shard answered: the tick failed, said at error.
		expect(logged.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === "tick.done")).toEqual([expect.objectContaining({ level: "error", outcome: "failed" })]);

		const statusText = await (await call("/v1/status")).text();
		expect(JSON.parse(statusText)).toMatchObject({ scheduler: { outcome: "failed", error: expect.stringMatching(/^shard 0 did not answer the tick; shard 1 did not answer the tick/) } });
		const incidentsText = await (await call("/v1/incidents?agent=scheduler")).text();
		expect((JSON.parse(incidentsText) as { incidents: { error: string }[] }).incidents.map((i) => i.error)).toContain("tick failed: shard 0 did not answer the tick");
		for (const text of [statusText, incidentsText]) expect(text).not.toContain("D1_ERROR");
	});
});

describe("a tick under an invalid fleet.yaml (edited while `npm start` runs)", () => {
	afterEach(() => bundleFleetForTest(undefined));

	it("names the file's faults, once, in the heartbeat, the scheduler incident and its alert, as a config incident", async () => {
		await noTickYet();
		const alerts: { incident: { class: string; error: string; first_seen_at: string } }[] = [];
		fake("https://alerts.example.test", async (req) => {
			alerts.push((await req.json()) as (typeof alerts)[number]);
			return new Response("ok");
		});
		bundleFleetForTest(new TextEncoder().encode('version: 1\nagents:\n  - name: nightly\n    prompt: Sum up.\n    schedules:\n      morning: { cron: "0 9 * *" }\n'));
		const lines: Record<string, unknown>[] = [];
		vi.spyOn(console, "error").mockImplementation((line: unknown) => void lines.push(JSON.parse(String(line)) as Record<string, unknown>));
		const at = Date.parse(`${DAY[6]}T09:00:00Z`);
		const minute = new Date(at).toISOString();
		// Every shard would read the file first and fail on it, an uncaught exception in each object
		// (a stack apiece under `npm start`): none is called, and the tick failed.
		let shardCalls = 0;
		const shards = { getByName: (name: string) => (shardCalls++, env.SCHEDULER_SHARD.getByName(name)) } as unknown as Env["SCHEDULER_SHARD"];
		// Nor does the tick throw (workerd printed its stack twice a minute under `npm start`): it failed, said once.
		await expect(runTick({ ...env, SCHEDULER_SHARD: shards }, at, at)).resolves.toMatchObject({ outcome: "failed", shardsFailed: 16, claimed: 0 });
		vi.restoreAllMocks();
		expect(shardCalls).toBe(0);
		// One line says why, where sixteen said a shard did not answer.
		expect(lines.filter((l) => String(l.event).startsWith("tick.")).map((l) => l.event)).toEqual(["tick.fleet_invalid", "tick.done"]);
		expect(lines[0]).toMatchObject({ minute, shards_failed: 16, error_message: expect.stringMatching(/^fleet\.yaml is invalid:\n {2}- agents\[0\]\.schedules\.morning\.cron: invalid cron /) });

		bundleFleetForTest(undefined);
		const { scheduler } = (await (await call("/v1/status")).json()) as { scheduler: { outcome: string; error: string } };
		expect(scheduler.outcome).toBe("failed");
		expect(scheduler.error).toMatch(/^fleet\.yaml is invalid: agents\[0\]\.schedules\.morning\.cron: invalid cron \"0 9 \* \*\": a cron has 5 fields .*; got 4 \(line 6:24, agent nightly\)$/);
		expect(scheduler.error).not.toContain("did not answer");
		const { incidents } = (await (await call("/v1/incidents?agent=scheduler")).json()) as { incidents: { class: string; error: string; first_seen_at: string }[] };
		// (Earlier tests of the file leave the scheduler's incidents of their own minutes.)
		expect(incidents.filter((i) => i.first_seen_at === minute)).toEqual([expect.objectContaining({ class: "config", error: `tick failed: ${scheduler.error}` })]);
		// As for its alert (the tick sends again one an earlier test's incident is owed).
		expect(alerts.filter((a) => a.incident.first_seen_at === minute)).toEqual([expect.objectContaining({ incident: expect.objectContaining({ class: "config", error: `tick failed: ${scheduler.error}` }) })]);

		// An operator's tick now is answered as every route that reads the file is.
		bundleFleetForTest(new TextEncoder().encode('version: 1\nagents:\n  - name: nightly\n    prompt: Sum up.\n    schedules:\n      morning: { cron: "0 9 * *" }\n'));
		vi.spyOn(console, "error").mockImplementation(() => undefined);
		const now = await call("/v1/tick", { method: "POST", as: "admin" });
		vi.restoreAllMocks();
		expect(now.status).toBe(500);
		expect(await now.json()).toMatchObject({
			error: { code: "config_invalid", message: expect.stringMatching(/^fleet\.yaml is invalid:/), details: { issues: [expect.objectContaining({ path: "agents[0].schedules.morning.cron" })] } },
		});
	});
});

describe("a tick's lines, as an operator filters them", () => {
	it("each name the tick's minute, and tick.done how late the tick ran", async () => {
		const lines: Record<string, unknown>[] = [];
		for (const method of ["log", "warn", "error"] as const) {
			vi.spyOn(console, method).mockImplementation((line: unknown) => void lines.push(JSON.parse(String(line)) as Record<string, unknown>));
		}
		const answered = (shard: number) => Promise.resolve({ shard, agents_called: 0, claimed: 0, skipped: 0, failed: [], deferred: 0, oldest_deferred: null });
		const shards = { getByName: (name: string) => ({ tick: (shard: number) => (name === shardName(0) ? Promise.reject(new Error("shard down")) : answered(shard)) }) };
		// D1 down: the heartbeat, the scheduler incident and the alert retries each fail, and say so.
		const DB = new Proxy(
			{},
			{
				get: () => {
					throw new Error("D1 is down");
				},
			},
		);
		const at = Date.parse(`${DAY[6]}T08:30:00Z`);
		await runTick({ ...env, SCHEDULER_SHARD: shards, DB, ALERT_WEBHOOK_URL: "https://alerts.example.test/hook" } as unknown as Env, at, at + 7_000);
		vi.restoreAllMocks();
		const tickLines = lines.filter((l) => String(l.event).startsWith("tick."));
		expect(tickLines.map((l) => l.event).sort()).toEqual(["tick.alert_retry_failed", "tick.done", "tick.heartbeat_failed", "tick.incident_failed", "tick.shard_failed"]);
		for (const line of tickLines) expect(line, String(line.event)).toMatchObject({ minute: `${DAY[6]}T08:30:00.000Z` });
		expect(tickLines.find((l) => l.event === "tick.done")).toMatchObject({ level: "warn", outcome: "partial", late_ms: 7_000 });
		expect(tickLines.find((l) => l.event === "tick.done")).not.toHaveProperty("scheduled_time");
	});
});

describe("a tick whose failures say more than the heartbeat keeps", () => {
	it("keeps a head of them that ends between characters, saying it was cut", async () => {
		await noTickYet();
		fake("https://alerts.example.test", () => new Response("ok"));
		// An agent's failure line 1,000 units long whose last character is an emoji: the cut at 1,000 halves it.
		const failed = [{ agent: "wordy", error: `${"x".repeat(999)}😀 and more` }];
		const shards = { getByName: () => ({ tick: (shard: number) => Promise.resolve({ shard, agents_called: 1, claimed: 0, skipped: 0, failed }) }) };
		const at = Date.parse(`${DAY[7]}T11:00:00Z`);
		await runTick({ ...env, SCHEDULER_SHARD: shards } as unknown as Env, at, at);
		const { scheduler } = (await (await call("/v1/status")).json()) as { scheduler: { outcome: string; error: string } };
		expect(scheduler.outcome).toBe("partial");
		// Shown escaped: a lone surrogate in a failed assertion's message breaks the test runner's channel.
		expect(JSON.stringify(scheduler.error)).toBe(JSON.stringify(`${"x".repeat(999)}…`));
	});
});

/** The alert webhook taking every alert, the first held until `release`; `first` when it is in. */
function heldAlert(): { keys: string[]; first: Promise<void>; release: () => void } {
	const keys: string[] = [];
	const { promise: held, open: release } = gate();
	const { promise: first, open: arrived } = gate();
	fake("https://alerts.example.test", async (req) => {
		keys.push(req.headers.get("idempotency-key") ?? "");
		if (keys.length === 1) {
			arrived();
			await held;
		}
		return new Response("ok");
	});
	return { keys, first, release };
}

describe("two ticks of one minute that fail alike (a duplicate cron delivery, or drover tick beside the cron)", () => {
	const shards = { getByName: () => ({ tick: () => Promise.reject(new Error("down")) }) };
	const broken = { ...env, SCHEDULER_SHARD: shards } as unknown as Env;
	const shardIncident = async () => {
		const { incidents } = (await (await call("/v1/incidents?agent=scheduler")).json()) as { incidents: { id: string; state: string; error: string }[] };
		return incidents.find((i) => i.error.startsWith("tick failed: shard 0"))!;
	};

	it("page once for the incident they open, though the second comes while the first's alert is out", async () => {
		const at = Date.parse(`${DAY[6]}T11:00:00Z`);
		// Any scheduler incident an earlier test left open is resolved: the failures below open one.
		await runTick(env, at - 60_000, at - 60_000);
		const { keys, first, release } = heldAlert();
		vi.spyOn(console, "error").mockImplementation(() => {});
		const one = runTick(broken, at, at).catch(() => {});
		await first;
		// The second tick files the same failure and finds its alert claimed: it sends none.
		await runTick(broken, at, at + 1).catch(() => {});
		release();
		await one;
		vi.restoreAllMocks();
		expect(keys).toHaveLength(1);
		const incident = await shardIncident();
		expect(incident.state).toBe("alerted");
		expect(keys[0]).toBe(`${incident.id}:${at}`);
	});

	it("hold the claim of a tick whose fan-out took over a minute while it sends: an agent's alert meanwhile sends none", async () => {
		// The wall clock is a fake one, before the file's ticks: no agent is due at this tick. When the
		// file's ticks were literal days, from 2026-12-06 on the real minute came after them and claimed
		// catch-up runs for the first test's agents, left to start on their own.
		vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2025-12-06T11:38:20Z") });
		// An agent's incident whose first alert was refused ten minutes ago: the next tick tries it again.
		fake("https://alerts.example.test", () => new Response("down", { status: 503 }));
		vi.spyOn(console, "error").mockImplementation(() => {});
		const { incident } = await recordFailure(env.DB, { agent: "slow-tick", error: "boom", jobId: "job-1", at: Date.now() - 600_000 });
		expect(await alertIncident(env, incident, Date.now() - 600_000)).toBe("failed");
		const { keys, first, release } = heldAlert();
		// A tick whose start (its `now`) is 70 s behind the clock by the time it retries the alert: a
		// fan-out over thousands of agents takes that long.
		const late = runTick(env, Math.floor(Date.now() / 60_000) * 60_000, Date.now() - 70_000).catch(() => {});
		await first;
		// The agent fails again meanwhile, and its flush alerts: the tick's claim holds.
		const again = await recordFailure(env.DB, { agent: "slow-tick", error: "boom", jobId: "job-2", at: Date.now() });
		expect(await alertIncident(env, again.incident, Date.now())).toBe("taken");
		release();
		await late;
		vi.restoreAllMocks();
		expect(keys).toHaveLength(1);
		expect((await getIncident(env.DB, incident.id))!.state).toBe("alerted");
	});

	it("claim nothing when there is no alert webhook: no D1 write beyond the failure's own", async () => {
		const { incident } = await recordFailure(env.DB, { agent: "unwebhooked", error: "boom", jobId: null, at: Date.now() });
		const statements: string[] = [];
		const db = new Proxy(env.DB, {
			get: (target, prop) => (prop === "prepare" ? (sql: string) => (statements.push(sql), target.prepare(sql)) : Reflect.get(target, prop)),
		});
		const unset = { ...env, ALERT_WEBHOOK_URL: undefined, DB: db } as unknown as Env;
		expect(await alertIncident(unset, incident, Date.now())).toBe("failed");
		expect(statements).toEqual([]);
	});

	it("send an alert tried again with the key of its first try, though the count has moved on", async () => {
		const at = Date.parse(`${DAY[6]}T12:00:00Z`);
		await runTick(env, at - 60_000, at - 60_000);
		const tries: { key: string; ok: boolean }[] = [];
		fake("https://alerts.example.test", async (req) => {
			const ok = tries.length > 0;
			tries.push({ key: req.headers.get("idempotency-key") ?? "", ok });
			return ok ? new Response("ok") : new Response("down", { status: 503 });
		});
		vi.spyOn(console, "error").mockImplementation(() => {});
		await runTick(broken, at, at).catch(() => {});
		await runTick(broken, at + 60_000, at + 60_000).catch(() => {});
		vi.restoreAllMocks();
		expect(tries.map((t) => t.ok)).toEqual([false, true]);
		expect(tries[1]!.key).toBe(tries[0]!.key);
		const incident = await shardIncident();
		expect(incident.state).toBe("alerted");
		expect(tries[0]!.key).toBe(`${incident.id}:${at}`);
	});
});

describe("an alert the tick retries while the webhook is down", () => {
	it("says so at warn with the tick's minute and the error's message, without a stack for a network error", async () => {
		const at = Date.parse("2026-12-06T09:41:00Z");
		const { incident } = await recordFailure(env.DB, { agent: "alert-down", error: "boom while the webhook is down", jobId: null, at: at - 120_000 });
		fake("https://alerts.example.test", () => {
			throw new TypeError("Network connection lost");
		});
		const answered = (shard: number) => Promise.resolve({ shard, agents_called: 0, claimed: 0, skipped: 0, failed: [], deferred: 0, oldest_deferred: null });
		const shards = { getByName: () => ({ tick: answered }) };
		const lines: Record<string, unknown>[] = [];
		for (const method of ["log", "warn", "error"] as const) {
			vi.spyOn(console, method).mockImplementation((line: unknown) => void lines.push(JSON.parse(String(line)) as Record<string, unknown>));
		}
		await runTick({ ...env, SCHEDULER_SHARD: shards } as unknown as Env, at, at + 2_000);
		vi.restoreAllMocks();
		const failed = lines.filter((l) => l.event === "incident.alert_failed" && l.incident === incident.id);
		expect(failed).toEqual([expect.objectContaining({ level: "warn", agent: "alert-down", minute: "2026-12-06T09:41:00.000Z", error_message: "Network connection lost" })]);
		expect(failed[0]).not.toHaveProperty("stack");
	});
});
