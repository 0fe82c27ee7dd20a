import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { claimDue } from "../../durable-objects/agent/scheduling.ts";
import { readState } from "../../durable-objects/agent/state.ts";
import { findAgent, loadFleet } from "../../src/config/bundled.ts";
import { AgentSchema } from "../../src/config/schema.ts";
import { createJob, type JobRecord } from "../../src/jobs/model.ts";
import { shardName, shardOf } from "../../src/scheduler/shards.ts";
import { createAgent, settle, runsOf } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { endedRecord, saveJob, storeRun } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { tick } from "../helpers/ticks.ts";

// The wall clock is the test's (a fake one), set by each test at its first tick: an agent prunes its
// ledger and jobs by it, a shard deals job ids by it, and a tick reaching an agent is judged by it.
// On the real clock the first test's 2026-12-04 ledger rows were pruned (30 days' retention) from
// 2027-01-03 on. Far in the future (a year with 2026's calendar, for the weekday crons): an alarm an
// agent sets by it, as the retention tests set one weeks ahead, never comes due on its own during a
// run; they run it.
const wallClock = (iso: string) => vi.setSystemTime(Date.parse(iso));
beforeEach(() => {
	vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2037-12-04T07:58:30Z") });
});
afterEach(() => {
	vi.useRealTimers();
});

/**
 * fleet.yaml's agents as a first deploy meets them: their objects wiped as a forgotten agent's is
 * (storage and alarm deleted, the next call meeting a fresh object), and their shards' record of the
 * file unlike it, so the next tick syncs it as a deploy's would, making each agent due at once.
 * Every tick of the file's other tests calls them too, and in a shuffled order some run first: an
 * agent whose schedules were ticked on a later day claims none of an earlier day's slots, and one
 * ticked on an earlier day owes its missed slots (catch_up).
 */
async function freshFleetAgents(): Promise<void> {
	const names = loadFleet().agents.map((a) => a.name);
	for (const name of names) {
		await runInDurableObject(env.AGENT.getByName(name), (instance: AgentDO) => (instance as unknown as { wipe(): Promise<void> }).wipe());
	}
	for (const shard of new Set(names.map(shardOf))) {
		await runInDurableObject(env.SCHEDULER_SHARD.getByName(shardName(shard)), (_instance, state) => {
			state.storage.sql.exec("UPDATE meta SET value = 'the previous deploy' WHERE key = 'fleet'");
		});
	}
}

// fleet.yaml's example agents, ticked as deployed crons would tick them.
describe("fleet.yaml agents", () => {
	it("are scheduled from the bundled file: intervals, timezone crons, and manual-only agents", async () => {
		await freshFleetAgents();
		// Friday 2037-12-04: 09:00 Berlin (08:00Z) is weekday-morning, 16:00 Berlin (15:00Z) weekly-recap.
		// site-watch's demo run fetches its allowlisted page.
		fake("https://example.com", () => new Response("<html>Example Domain</html>", { headers: { "content-type": "text/html" } }));
		// The wall clock stays at the first tick: the later ticks are the test's, which leave site-watch's
		// first run unstarted (deployed, its alarm starts it within seconds) and its claim not held.
		wallClock("2037-12-04T07:59:00Z");
		for (const t of ["07:59", "08:00", "08:15", "08:30"]) await tick(`2037-12-04T${t}:00Z`);
		await settle("daily-digest");
		await settle("site-watch");

		expect((await runsOf("daily-digest")).map((r) => [r.schedule, r.scheduled_instant, r.dispatch, r.status])).toEqual([
			["weekday-morning", "2037-12-04T08:00:00.000Z", "on_time", "completed"],
		]);
		// site-watch runs every 15 minutes, one at a time (overlap: skip): its first job had not run yet.
		expect((await runsOf("site-watch")).map((r) => [r.scheduled_instant, r.status, r.skip_reason])).toEqual([
			["2037-12-04T08:00:00.000Z", "completed", null],
			["2037-12-04T08:15:00.000Z", "skipped", "at capacity (max_concurrent 1): 1 run claimed and not started yet"],
			["2037-12-04T08:30:00.000Z", "skipped", "at capacity (max_concurrent 1): 1 run claimed and not started yet"],
		]);
		expect(await runsOf("triage")).toEqual([]);

		// That morning's: the index keeps the scheduled jobs the file's other ticks made, on other days.
		const jobs = (await (await call("/v1/jobs?trigger_type=schedule&since=2037-12-04T00:00:00Z&until=2037-12-05T00:00:00Z")).json()) as { jobs: { agent: string; schedule: string }[] };
		expect(jobs.jobs.map((j) => `${j.agent}/${j.schedule}`).sort()).toEqual(["daily-digest/weekday-morning", "site-watch/every-15m"]);
	});

	it("report each schedule's next run and the agent's state", async () => {
		// Friday 2037-12-04 after the morning's run: weekday-morning's next is Monday's 09:00 Berlin
		// (08:00Z, the weekend skipped), weekly-recap's is today's 16:00 Berlin (15:00Z).
		wallClock("2037-12-04T08:30:00Z");
		// The morning's run, as the test before leaves it: this test sets it up itself, not relying on that one.
		expect(await saveJob("daily-digest", endedRecord("daily-digest", new Date("2037-12-04T08:00:00Z")))).toBe(true);
		const digest = (await (await call("/v1/agents/daily-digest")).json()) as {
			schedules: { name: string; next_run: string }[];
			paused: unknown;
			running_jobs: unknown[];
			queued_jobs: number;
			last_job: { status: string };
		};
		expect(digest.paused).toBeNull();
		expect(digest.queued_jobs).toBe(0);
		expect(digest.last_job.status).toBe("completed");
		expect(digest.schedules.map((s) => [s.name, s.next_run])).toEqual([
			["weekday-morning", "2037-12-07T08:00:00.000Z"],
			["weekly-recap", "2037-12-04T15:00:00.000Z"],
		]);
	});
});

describe("a file agent a deploy drops from fleet.yaml", () => {
	it("ends its queued runs at the next tick, even while paused, and is no longer called", async () => {
		// An agent the previous deploy's fleet.yaml had: its shard lists it, its object holds a queued run.
		const name = "retired-agent";
		const agent = env.AGENT.getByName(name);
		wallClock("2037-12-05T09:00:00Z");
		await agent.tick(name, "file", Date.parse("2037-12-05T09:00:00Z"));
		await agent.pause(name, "file", "holiday", "operator");
		const queued = createJob({ agent: name, trigger_type: "manual", definition_revision: "r" }, new Date("2037-12-05T09:00:00Z"));
		expect(await saveJob(name, queued)).toBe(true);
		// A schedule's cursor from when it ran: were the agent added back, it would owe the slots between.
		await runInDurableObject(agent, (_i, state) => {
			state.storage.sql.exec("INSERT INTO schedule_state (schedule, spec, cursor) VALUES ('daily', 'spec', ?)", Date.parse("2037-12-05T09:00:00Z"));
		});
		const shard = env.SCHEDULER_SHARD.getByName(shardName(shardOf(name)));
		await tick("2037-12-05T09:00:00Z");
		await runInDurableObject(shard, (_i, state) => {
			state.storage.sql.exec("INSERT INTO agents (name, source, next_due_at) VALUES (?, 'file', 0)", name);
			state.storage.sql.exec("UPDATE meta SET value = 'the previous deploy' WHERE key = 'fleet'");
		});

		await tick("2037-12-05T09:01:00Z");
		const job = (await agent.getJob(queued.id)) as JobRecord | null;
		expect(job).toMatchObject({ status: "cancelled" });
		expect(job!.transitions.at(-1)).toMatchObject({ to: "cancelled", reason: "agent removed from fleet.yaml" });
		const indexed = await env.DB.prepare("SELECT status FROM jobs WHERE id = ?").bind(queued.id).first<{ status: string }>();
		expect(indexed?.status).toBe("cancelled");
		const listed = await runInDurableObject(shard, (_i, state) => state.storage.sql.exec("SELECT name FROM agents WHERE name = ?", name).toArray());
		expect(listed).toEqual([]);
		// Added back by a later deploy, its schedules start from then.
		expect(await runInDurableObject(agent, (_i, state) => state.storage.sql.exec("SELECT schedule FROM schedule_state").toArray())).toEqual([]);
	});

	it("ends its queued runs when an API agent takes its name over before that tick, as the tick would have", async () => {
		const name = "moved-to-api";
		const agent = env.AGENT.getByName(name);
		wallClock("2037-12-05T09:00:00Z");
		await agent.tick(name, "file", Date.parse("2037-12-05T09:00:00Z"));
		const queued = createJob({ agent: name, trigger_type: "manual", definition_revision: "r", prompt: "The file agent's queued prompt." }, new Date("2037-12-05T09:00:00Z"));
		expect(await saveJob(name, queued)).toBe(true);
		await tick("2037-12-05T09:00:00Z");
		await previousDeploy(name, { name, prompt: "x" });

		// `drover apply` right after the deploy, before any tick has seen the agent dropped.
		const created = await call("/v1/agents", { method: "POST", as: "admin", body: { name, prompt: "The API agent's prompt.", system_prompt: "API system prompt." } });
		expect(created.status, await created.clone().text()).toBe(201);
		wallClock("2037-12-05T09:01:00Z");
		await tick("2037-12-05T09:01:00Z");
		await settle(name);

		// Not run on the API agent's definition with the dropped agent's prompt.
		const job = (await agent.getJob(queued.id)) as JobRecord | null;
		expect(job).toMatchObject({ status: "cancelled" });
		expect(job!.transitions.at(-1)).toMatchObject({ to: "cancelled", reason: "agent removed from fleet.yaml" });
		expect((await env.DB.prepare("SELECT status FROM jobs WHERE id = ?").bind(queued.id).first<{ status: string }>())?.status).toBe("cancelled");
	});
});

/** Stands in for the previous deploy: its shard listed `name` as a file agent with `definition`. */
async function previousDeploy(name: string, definition: Record<string, unknown>): Promise<void> {
	const shard = env.SCHEDULER_SHARD.getByName(shardName(shardOf(name)));
	await runInDurableObject(shard, (_i, state) => {
		state.storage.sql.exec(
			"INSERT INTO agents (name, source, next_due_at, definition) VALUES (?, 'file', 0, ?) ON CONFLICT (name) DO UPDATE SET definition = excluded.definition",
			name,
			JSON.stringify(definition),
		);
		state.storage.sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('fleet', 'the previous deploy')");
	});
}

/** A finished job of `name`'s, ended `days` ago, and whether the agent still holds it. */
async function endedJob(name: string, days: number): Promise<() => Promise<boolean>> {
	const stub = env.AGENT.getByName(name);
	const job = await runInDurableObject(stub, (_i: AgentDO, state) => {
		const record = endedRecord(name, new Date(Date.now() - days * 86_400_000));
		storeRun(state.storage.sql, record);
		return record;
	});
	return async () => (await stub.getJob(job.id)) !== null;
}

describe("a file agent's retention across deploys", () => {
	it("is its own retention_days after a deploy drops it, not the deployment's default", async () => {
		const name = "short-lived";
		const agent = env.AGENT.getByName(name);
		wallClock("2037-12-06T03:00:00Z");
		await agent.tick(name, "file", Date.parse("2037-12-06T03:00:00Z"));
		const held = await endedJob(name, 5);
		await previousDeploy(name, { ...findAgent("daily-digest")!, name, retention_days: 3 });

		await tick("2037-12-06T03:00:00Z");
		// Five days ended against its 3: gone at the pass the drop asked for, where the deployment's
		// 30 days would have kept it for weeks.
		expect(await runDurableObjectAlarm(agent)).toBe(true);
		expect(await held()).toBe(false);
	});

	it("applies at once when a deploy shortens it, on an agent nothing else wakes", async () => {
		const name = "daily-digest";
		wallClock("2037-12-06T03:01:00Z");
		await tick("2037-12-06T03:01:00Z");
		const agent = env.AGENT.getByName(name);
		const held = await endedJob(name, 40);
		// Its alarm waits for that job's expiry under the previous deploy's 90 days.
		await runInDurableObject(agent, (_i: AgentDO, state) => state.storage.setAlarm(Date.now() + 50 * 86_400_000));
		await previousDeploy(name, { ...findAgent(name)!, retention_days: 90 });

		await tick("2037-12-06T03:02:00Z");
		expect(await runInDurableObject(agent, (_i: AgentDO, state) => state.storage.getAlarm())).toBeLessThanOrEqual(Date.now());
		expect(await runDurableObjectAlarm(agent)).toBe(true);
		expect(await held()).toBe(false);
	});
});

describe("a lowered RETENTION_DAYS", () => {
	it("reaches an agent nothing else wakes, at the shard's next tick, where it kept the old value's alarm", async () => {
		const name = "daily-digest";
		const shard = env.SCHEDULER_SHARD.getByName(shardName(shardOf(name)));
		const agent = env.AGENT.getByName(name);
		wallClock("2037-12-06T04:00:00Z");
		await tick("2037-12-06T04:00:00Z");
		const held = await endedJob(name, 10);
		// Its alarm waits for that job's expiry under the deployment's 30 days.
		await runInDurableObject(agent, (_i: AgentDO, state) => state.storage.setAlarm(Date.now() + 20 * 86_400_000));

		// Deployed again with RETENTION_DAYS = "7": the shard and the agent read the new value.
		const lowered = (instance: unknown) => {
			const self = instance as { env: Env };
			self.env = { ...self.env, RETENTION_DAYS: "7" } as Env;
		};
		await runInDurableObject(agent, lowered);
		await runInDurableObject(shard, async (instance: unknown) => {
			lowered(instance);
			await (instance as { tick(shard: number, now: number): Promise<unknown> }).tick(shardOf(name), Date.parse("2037-12-06T04:01:00Z"));
		});
		expect(await runInDurableObject(agent, (_i: AgentDO, state) => state.storage.getAlarm())).toBeLessThanOrEqual(Date.now());
		expect(await runDurableObjectAlarm(agent)).toBe(true);
		expect(await held()).toBe(false);
	});
});

describe("a lowered RETENTION_DAYS, for a deleted API agent", () => {
	it("reaches it through the shard its name belongs to, though the agent is in no shard any more", async () => {
		const name = "deleted-long-ago";
		wallClock("2037-12-06T05:00:00Z");
		useEmulator();
		await createAgent({ name });
		const held = await endedJob(name, 10);
		expect((await call(`/v1/agents/${name}`, { method: "DELETE", as: "admin" })).status).toBe(200);
		await settle(name);
		const agent = env.AGENT.getByName(name);
		// Its alarm waits for that job's expiry under the deployment's 30 days.
		expect(await runInDurableObject(agent, (_i: AgentDO, state) => state.storage.getAlarm())).toBeGreaterThan(Date.now() + 19 * 86_400_000);

		// Deployed again with RETENTION_DAYS = "7": the shard, which last saw 30, and the agent read the new value.
		const lowered = (instance: unknown) => {
			const self = instance as { env: Env };
			self.env = { ...self.env, RETENTION_DAYS: "7" } as Env;
		};
		await runInDurableObject(agent, lowered);
		await runInDurableObject(env.SCHEDULER_SHARD.getByName(shardName(shardOf(name))), async (instance: unknown, state) => {
			state.storage.sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('retention_days', '30')");
			lowered(instance);
			await (instance as { tick(shard: number, now: number): Promise<unknown> }).tick(shardOf(name), Date.parse("2037-12-06T05:01:00Z"));
		});
		expect(await runInDurableObject(agent, (_i: AgentDO, state) => state.storage.getAlarm())).toBeLessThanOrEqual(Date.now());
		expect(await runDurableObjectAlarm(agent)).toBe(true);
		expect(await held()).toBe(false);
	});
});

describe("a file agent's schedule a deploy renames and retimes", () => {
	it("claims no instant its old name took when that minute's tick comes again after the deploy", async () => {
		// Monday 2037-12-07. The previous deploy's fleet.yaml had `morning: 0 9 * * *` (Berlin), which its
		// 09:00 Berlin (08:00Z) tick claimed; this deploy's is `weekday-morning: 0 9 * * 1-5`.
		const name = "daily-digest";
		const slot = Date.parse("2037-12-07T08:00:00Z");
		await freshFleetAgents();
		wallClock("2037-12-07T07:59:00Z");
		await tick("2037-12-07T07:59:00Z");
		const current = findAgent(name)!;
		const previous = AgentSchema.parse({ ...current, schedules: { morning: { cron: "0 9 * * *", timezone: "Europe/Berlin" }, "weekly-recap": current.schedules["weekly-recap"] } });
		await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => {
			const sql = state.storage.sql;
			state.storage.transactionSync(() =>
				claimDue(sql, { agent: previous, state: readState(sql)!, definitionRevision: "the previous deploy", now: slot, wallAt: Date.now(), drawJobId: () => "job-2037-12-07-prev00" }),
			);
		});
		await settle(name);

		// That minute's tick delivered again (or `drover tick` run just after the deploy), twice at once:
		// the second delivery's shard read the agent's due time before the first moved it.
		await tick("2037-12-07T08:00:00Z");
		await env.AGENT.getByName(name).tick(name, "file", slot);
		await tick("2037-12-07T08:01:00Z");
		const claimed = (await runsOf(name)).filter((r) => r.scheduled_instant === "2037-12-07T08:00:00.000Z" && r.status !== "skipped");
		expect(claimed.map((r) => [r.schedule, r.status])).toEqual([["morning", "completed"]]);
		// The next morning is the new name's.
		wallClock("2037-12-08T08:00:00Z");
		await tick("2037-12-08T08:00:00Z");
		expect((await runsOf(name)).filter((r) => r.scheduled_instant === "2037-12-08T08:00:00.000Z").map((r) => [r.schedule, r.status])).toEqual([["weekday-morning", "claimed"]]);
		await settle(name);
	});
});
