import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SHARD_MIGRATIONS } from "../../durable-objects/shard/schema.ts";
import type { SchedulerShardDO } from "../../durable-objects/shard/shard-do.ts";
import { definitionRevision } from "../../src/config/fleet.ts";
import { AgentSchema } from "../../src/config/schema.ts";
import { shardName, shardOf } from "../../src/scheduler/shards.ts";
import { readHeartbeat } from "../../src/store/heartbeat.ts";
import { migrate } from "../../src/store/sqlite-migrations.ts";
import { createAgent, redefineAgent, type Run, runsOf, settle } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { tick } from "../helpers/ticks.ts";
import { rollBackShardSchema } from "../helpers/sql.ts";

const at = (iso: string) => Date.parse(iso);

// The wall clock is the test's (a fake one), never the real one: definitions are stamped with it, a
// tick reaching an agent is judged by it (see firstSight in durable-objects/agent/scheduling.ts), and
// on the real clock the outcome would depend on the day and minute the suite runs. Its times are far ahead (2037 has 2026's calendar), so an alarm
// an agent sets by it (a claimed run's start) never comes due on its own during the run, whatever day
// that is: what a test reads of its runs is what its ticks and settle() made. Each test sets the time
// it starts at.
const wallClock = (time: string | number) => vi.setSystemTime(typeof time === "string" ? at(time) : time);
beforeEach(async () => {
	vi.useFakeTimers({ toFake: ["Date"], now: at("2037-12-01T00:00:00Z") });
	// A definition is dated by the scheduler's latest tick, the heartbeat, one D1 row the file's tests
	// share: each starts from a scheduler that never ticked, not from another test's later ticks.
	await env.DB.prepare("DELETE FROM scheduler_heartbeat").run();
});
afterEach(() => {
	vi.useRealTimers();
});

const put = (name: string, body: Record<string, unknown>) => redefineAgent(name, { max_concurrent: 5, ...body });

const ledger = async (agent: string) =>
	(await runsOf(agent))
		.map((r: Run) => [r.scheduled_instant, r.dispatch, r.status === "skipped" ? `skipped: ${r.skip_reason}` : "ran"] as const)
		.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));

describe("a schedule that stops and runs again", () => {
	for (const [what, off, on] of [
		["the schedule", { schedules: { q: { interval: "15m", enabled: false } } }, { schedules: { q: { interval: "15m" } } }],
		["its agent", { enabled: false, schedules: { q: { interval: "15m" } } }, { schedules: { q: { interval: "15m" } } }],
		["removed and added back", { schedules: {} }, { schedules: { q: { interval: "15m" } } }],
	] as const) {
		it(`owes nothing for the time it was off (${what}): no catch-up run, no missed slots`, async () => {
			const name = `off-${what.replaceAll(" ", "-")}`;
			// The PUTs are stamped in the ticks' time, as they are deployed: one stamped after a tick's
			// slot would leave that slot a row saying it was not run (see "removed just after its slot").
			wallClock("2037-12-01T10:00:10Z");
			await createAgent({ name, max_concurrent: 5, schedules: { q: { interval: "15m", catch_up: true } } });
			await tick("2037-12-01T10:00:00Z");
			wallClock("2037-12-01T10:05:00Z");
			await put(name, off);
			for (const t of ["10:15", "10:30", "11:00", "11:30"]) await tick(`2037-12-01T${t}:00Z`);
			wallClock("2037-12-01T12:05:00Z");
			await put(name, { ...on, schedules: { q: { interval: "15m", catch_up: true } } });
			await tick("2037-12-01T12:10:00Z");
			await tick("2037-12-01T12:15:00Z");
			expect(await ledger(name)).toEqual([
				// Claimed just before its agent was disabled: held until the agent was enabled again, past
				// its slot's grace window, it runs labelled late (see held-claims.test.ts); on_time if its
				// start came first.
				["2037-12-01T10:00:00.000Z", what === "its agent" ? expect.stringMatching(/^(late|on_time)$/) : "on_time", "ran"],
				["2037-12-01T12:15:00.000Z", "on_time", "ran"],
			]);
		});
	}
});

describe("slots collapsed into a fire that is not run", () => {
	it("say why the fire was not run, not that a run covered them", async () => {
		wallClock("2037-12-01T09:59:30Z");
		await createAgent({ name: "collapsed-paused", max_concurrent: 5, schedules: { m: { interval: "1m" } } });
		await tick("2037-12-01T10:00:00Z");
		wallClock("2037-12-01T10:00:30Z");
		await call("/v1/agents/collapsed-paused/pause", { method: "POST", as: "operate", body: { reason: "maint" } });
		await tick("2037-12-01T10:05:00Z");
		const rows = (await runsOf("collapsed-paused")).filter((r) => r.status === "skipped");
		expect(rows.length).toBeGreaterThanOrEqual(2);
		for (const r of rows) expect(r.skip_reason, r.scheduled_instant!).toBe("paused: maint");
	});
});

describe("a definition change that lands while its shard's tick is calling agents", () => {
	it("stands: the next tick calls the agent on its new schedule, not at the due time read before", async () => {
		const name = "race-a";
		// Another agent of the same shard, due every minute: the change lands while the tick calls it.
		let other = "";
		for (let i = 0; !other; i++) if (shardOf(`race-b${i}`) === shardOf(name)) other = `race-b${i}`;
		wallClock("2037-12-02T09:59:30Z");
		await createAgent({ name, schedules: { daily: { cron: "1 10 * * *" } } });
		await createAgent({ name: other, schedules: { m: { interval: "1m" } } });
		await tick("2037-12-02T10:00:00Z");

		const changed = AgentSchema.parse({ name, prompt: "Do the thing.", schedules: { m: { interval: "1m" } } });
		const revision = await definitionRevision(changed);
		const shard = env.SCHEDULER_SHARD.getByName(shardName(shardOf(name)));
		// The shard's own bindings, put back afterwards. Everything the change does runs in the shard's
		// context (another context's stubs and promises cannot be used there): a PUT's two steps, the
		// agent's definition and the shard's registration, after race-a has answered the tick.
		let own!: Env;
		await runInDurableObject(shard, (instance: SchedulerShardDO) => {
			const self = instance as unknown as { env: Env };
			own = self.env;
			let answered: Promise<unknown> = Promise.resolve();
			const getByName = (n: string) => {
				const stub = own.AGENT.getByName(n);
				if (n === name) return { tick: (...args: Parameters<typeof stub.tick>) => (answered = stub.tick(...args)) };
				if (n !== other) return stub;
				return {
					tick: async (...args: Parameters<typeof stub.tick>) => {
						await answered;
						await own.AGENT.getByName(name).define(name, changed, revision);
						await instance.register(name);
						return stub.tick(...args);
					},
				};
			};
			self.env = { ...own, AGENT: { getByName } as unknown as Env["AGENT"] };
		});
		// At 10:01 the shard asks race-a (daily: next due tomorrow), and the change lands meanwhile.
		wallClock("2037-12-02T10:01:00Z");
		await tick("2037-12-02T10:01:00Z");
		await runInDurableObject(shard, (instance: SchedulerShardDO) => {
			(instance as unknown as { env: Env }).env = own;
		});

		await tick("2037-12-02T10:02:00Z");
		await tick("2037-12-02T10:03:00Z");
		const runs = (await runsOf(name)).filter((r) => r.schedule === "m");
		expect(runs.map((r) => r.scheduled_instant).sort()).toEqual(["2037-12-02T10:02:00.000Z", "2037-12-02T10:03:00.000Z"]);
	});
});

describe("a shard's record of when each agent is next due", () => {
	it("is written by the tick that called the agent, so later ticks skip it until then", async () => {
		wallClock("2037-12-02T09:59:30Z");
		await createAgent({ name: "due-later", schedules: { nightly: { cron: "0 3 * * *" } } });
		const shard = env.SCHEDULER_SHARD.getByName(shardName(shardOf("due-later")));
		const dueAt = () =>
			runInDurableObject(shard, (_i: SchedulerShardDO, state) => state.storage.sql.exec<{ next_due_at: number }>("SELECT next_due_at FROM agents WHERE name = ?", "due-later").one().next_due_at);
		expect(await dueAt()).toBe(0);
		await tick("2037-12-02T10:00:00Z");
		expect(await dueAt()).toBe(Date.parse("2037-12-03T03:00:00Z"));
	});

	it("is repaired by the shard's migration 4: generations past 2^53 reset, file agents' definitions stored again", async () => {
		const shard = env.SCHEDULER_SHARD.getByName("shard-upgrade");
		const version = await runInDurableObject(shard, (_i: SchedulerShardDO, state) => {
			const sql = state.storage.sql;
			// As version 3 left a shard: a generation beyond exact doubles, a synced fleet and no definitions.
			rollBackShardSchema(sql, 4);
			sql.exec("INSERT INTO agents (name, source, next_due_at, generation) VALUES ('new-agent', 'api', 0, 4611686018427387904)");
			sql.exec("INSERT INTO agents (name, source, next_due_at, generation) VALUES ('old-agent', 'api', 5, 3)");
			sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('fleet', 'the synced revision')");
			return migrate(state.storage, SHARD_MIGRATIONS);
		});
		expect(version).toBe(SHARD_MIGRATIONS.at(-1)!.version);
		const after = await runInDurableObject(shard, (_i: SchedulerShardDO, state) => ({
			rows: state.storage.sql.exec<{ name: string; generation: number }>("SELECT name, generation FROM agents ORDER BY name").toArray(),
			fleet: state.storage.sql.exec("SELECT value FROM meta WHERE key = 'fleet'").toArray(),
		}));
		expect(after.rows).toEqual([
			{ name: "new-agent", generation: 0 },
			{ name: "old-agent", generation: 3 },
		]);
		expect(after.fleet).toEqual([]);
	});
});

describe("a schedule's timing changed while ticks were missing", () => {
	// A PUT is stamped with the wall clock as it is made, as in production: during the outage.
	const MINUTE = 60_000;
	const quarter = (t: number) => Math.floor(t / (15 * MINUTE)) * 15 * MINUTE;
	// The last tick before the outage, and a moment three hours into it.
	const lastTick = at("2037-12-03T11:30:00Z");
	const duringOutage = at("2037-12-03T14:37:00Z");

	it("accounts for every slot: the old timing's up to the change skipped with the reason, the new timing's from the change by its own rules", async () => {
		const name = "changed-in-outage";
		wallClock(lastTick - 10_000);
		await createAgent({ name, max_concurrent: 50, schedules: { s: { interval: "15m", catch_up: false } } });
		await tick(lastTick);
		// Ticks stop; during the outage the timing is changed (catch-up turned on).
		const changedAt = duringOutage;
		wallClock(changedAt);
		await put(name, { max_concurrent: 50, schedules: { s: { interval: "15m", catch_up: true } } });
		const resumed = quarter(changedAt) + 15 * MINUTE;
		wallClock(resumed);
		await tick(resumed);
		const rows = await runsOf(name);
		const slots = (from: number, to: number) => Array.from({ length: (to - from) / (15 * MINUTE) }, (_, i) => from + (i + 1) * 15 * MINUTE);
		// Every 15-minute slot from the last tick to the resumed one has a row: none dropped silently.
		const covered = new Set<number>();
		for (const r of rows) {
			const last = Date.parse(r.scheduled_instant!);
			const first = r.skipped_from ? Date.parse(r.skipped_from) : last;
			for (let t = first; t <= last; t += 15 * MINUTE) covered.add(t);
		}
		expect(slots(lastTick, resumed).filter((t) => !covered.has(t))).toEqual([]);
		// The old timing's slots, missed before the change, say why they were not run.
		const old = rows.filter((r) => r.status === "skipped" && Date.parse(r.scheduled_instant!) <= changedAt);
		expect(old.length).toBeGreaterThan(0);
		for (const r of old) expect(r.skip_reason).toBe("not run: schedule s's timing changed before this slot was claimed");
		// The resumed tick's own slot runs under the new timing.
		expect(rows.find((r) => Date.parse(r.scheduled_instant!) === resumed)).toMatchObject({ status: "claimed" });
		await settle(name);
	});

	it("a change of what a schedule runs with, not when (its prompt, session mode, output_to_file), keeps the outage's catch-up run", async () => {
		const change = { prompt: "Another prompt.", session: { mode: "persistent" }, output_to_file: true };
		for (const [field, value] of Object.entries(change)) {
			const name = `runs-with-${field.replace(/_/g, "-")}`;
			wallClock(lastTick - 10_000);
			await createAgent({ name, max_concurrent: 5, schedules: { q: { interval: "15m" } } });
			await tick(lastTick);
			// Ticks stop for 3 hours; meanwhile the operator changes only that field.
			wallClock(duringOutage);
			await put(name, { schedules: { q: { interval: "15m", [field]: value } } });
			// Past the last slot's grace window (7.5 minutes): the missed slots are one catch-up run.
			const resumed = quarter(duringOutage) + 23 * MINUTE;
			wallClock(resumed);
			await tick(resumed);
			const rows = await runsOf(name);
			expect(
				rows.filter((r) => r.dispatch === "catch_up" && r.status === "claimed"),
				`${field}: ${JSON.stringify(rows.map((r) => [r.scheduled_instant, r.dispatch, r.status, r.skip_reason]))}`,
			).toHaveLength(1);
			expect(rows.filter((r) => r.skip_reason?.includes("timing changed")), field).toEqual([]);
			await settle(name);
		}
	});

	it("a renamed schedule keeps its place in time: a tick of the same minute again claims nothing", async () => {
		wallClock("2037-12-01T09:59:30Z");
		await createAgent({ name: "renamed", max_concurrent: 5, schedules: { a: { cron: "0 * * * *" } } });
		await tick("2037-12-01T10:00:00Z");
		wallClock("2037-12-01T10:00:30Z");
		await put("renamed", { schedules: { b: { cron: "0 * * * *" } } });
		await tick("2037-12-01T10:00:00Z");
		await tick("2037-12-01T11:00:00Z");
		expect((await runsOf("renamed")).map((r) => [r.schedule, r.scheduled_instant, r.status])).toEqual(
			expect.arrayContaining([
				// Its run, claimed and not started yet, went with the rename (see held-claims.test.ts).
				["b", "2037-12-01T10:00:00.000Z", "claimed"],
				["b", "2037-12-01T11:00:00.000Z", "claimed"],
			]),
		);
		expect(await runsOf("renamed")).toHaveLength(2);
		await settle("renamed");
	});
});

describe("a schedule removed just after its slot, before that slot's tick reached the agent", () => {
	it("leaves the slot a row saying it was not run, as any slot of a stopped schedule", async () => {
		const name = "removed-in-flight";
		const q15 = 15 * 60_000;
		// Later than the ticks of the outage above, as the wall clock would be.
		const slot = at("2037-12-03T14:30:00Z");
		wallClock(slot - q15 - 10_000);
		await createAgent({ name, max_concurrent: 5, schedules: { q: { interval: "15m" }, other: { cron: "0 0 1 1 *" } } });
		await tick(slot - q15);
		// Removed a few seconds after the slot was due; its tick, a few seconds late, reaches the agent after it.
		wallClock(slot + 5_000);
		await put(name, { schedules: { other: { cron: "0 0 1 1 *" } } });
		await tick(slot);
		expect((await runsOf(name)).map((r) => [r.schedule, r.scheduled_instant, r.status, r.skip_reason])).toEqual([
			["q", new Date(slot - q15).toISOString(), "claimed", null],
			["q", new Date(slot).toISOString(), "skipped", "not run: schedule q was removed before this slot was claimed"],
		]);
		await settle(name);
	});
});

describe("a schedule retimed just after its slot, before that slot's tick reached the agent", () => {
	it("leaves the old timing's slot a row saying why it was not run; a slot both timings have runs", async () => {
		const q15 = 15 * 60_000;
		const slot = at("2037-12-03T14:30:00Z");
		for (const [name, to, expected] of [
			// Hourly at :07 has no slot at the old one's :00 or :30.
			["retimed-in-flight", { cron: "7 * * * *" }, ["skipped", "not run: schedule q's timing changed before this slot was claimed"]],
			// Every 30 minutes has it: the new timing runs it.
			["retimed-in-flight-shared", { interval: "30m" }, ["claimed", null]],
		] as const) {
			wallClock(slot - 2 * q15 + 10_000);
			await createAgent({ name, max_concurrent: 5, schedules: { q: { interval: "15m" } } });
			await tick(slot - 2 * q15);
			await tick(slot - q15);
			// Retimed a few seconds after the slot; the slot's tick reaches the agent after that.
			wallClock(slot + 5_000);
			await put(name, { schedules: { q: to } });
			await tick(slot);
			const rows = (await runsOf(name)).map((r) => [r.scheduled_instant, r.status, r.skip_reason]);
			expect(rows, name).toEqual([
				[new Date(slot - 2 * q15).toISOString(), "claimed", null],
				[new Date(slot - q15).toISOString(), "claimed", null],
				[new Date(slot).toISOString(), ...expected],
			]);
			await settle(name);
		}
	});
});

describe("a timing change undone before any tick saw it", () => {
	it("leaves no mark, so a later change starts from its own moment, not the undone one's", async () => {
		const name = "undone-change";
		wallClock("2037-12-01T05:59:30Z");
		await createAgent({ name, max_concurrent: 5, schedules: { s: { cron: "0 */6 * * *" } } });
		await tick("2037-12-01T06:00:00Z");
		// Disabled and enabled again within the minute: the schedule's timing is what it was.
		wallClock("2037-12-01T06:00:20Z");
		await put(name, { enabled: false, schedules: { s: { cron: "0 */6 * * *" } } });
		wallClock("2037-12-01T06:00:40Z");
		await put(name, { schedules: { s: { cron: "0 */6 * * *" } } });
		const changedAt = await runInDurableObject(env.AGENT.getByName(name), (_i, state) =>
			state.storage.sql.exec<{ changed_at: number | null }>("SELECT changed_at FROM schedule_state WHERE schedule = 's'").one().changed_at,
		);
		// A mark left here would date the next real change back to this moment: slots from before
		// that change would be owed under its timing.
		expect(changedAt).toBeNull();
	});
});

// The definitions are written between the ticks, by the wall clock.

describe("a schedule started between two ticks, whose next tick is missing", () => {
	it("still runs the slot the missing tick left behind, late, while it is in its grace window", async () => {
		await tick("2037-12-04T16:30:00Z");
		wallClock("2037-12-04T16:31:00Z");
		await createAgent({ name: "born-between", max_concurrent: 5, schedules: { half: { cron: "*/30 * * * *" } } });
		// The 17:00 tick never comes (an outage); the next is 17:03, within 17:00's 15-minute grace.
		await tick("2037-12-04T17:03:00Z");
		expect(await ledger("born-between")).toEqual([["2037-12-04T17:00:00.000Z", "late", "ran"]]);
		await settle("born-between");
	});

	it("dates a definition by the scheduler's latest tick, which a retried older tick does not move back", async () => {
		await tick("2037-12-04T17:30:00Z");
		await tick("2037-12-04T17:10:00Z");
		expect((await readHeartbeat(env.DB))?.scheduled_time).toBe("2037-12-04T17:30:00.000Z");
	});

	it("likewise for a schedule a PUT adds to a running agent", async () => {
		wallClock("2037-12-04T17:59:30Z");
		await createAgent({ name: "grown", max_concurrent: 5, schedules: { hourly: { cron: "0 * * * *" } } });
		await tick("2037-12-04T18:00:00Z");
		wallClock("2037-12-04T18:01:00Z");
		await put("grown", { schedules: { hourly: { cron: "0 * * * *" }, half: { cron: "30 * * * *" } } });
		await tick("2037-12-04T18:34:00Z");
		expect(await ledger("grown")).toEqual([
			["2037-12-04T18:00:00.000Z", "on_time", "ran"],
			["2037-12-04T18:30:00.000Z", "late", "ran"],
		]);
		await settle("grown");
	});
});

describe("a schedule renamed and retimed in one PUT", () => {
	const tickOfOwnShard = async (agent: string, at: string) => {
		const i = shardOf(agent);
		await env.SCHEDULER_SHARD.getByName(shardName(i)).tick(i, Date.parse(at));
	};
	const claimedAt = async (agent: string, at: string) => (await runsOf(agent)).filter((r) => r.scheduled_instant === at && r.status === "claimed");

	it("claims no instant its old name took when that minute's tick comes again", async () => {
		wallClock("2037-12-07T08:59:30Z");
		await createAgent({ name: "retimed-rename", max_concurrent: 5, schedules: { daily: { cron: "0 9 * * *" } } });
		await tick("2037-12-07T09:00:00Z"); // a Monday
		wallClock("2037-12-07T09:00:30Z");
		await put("retimed-rename", { schedules: { weekdays: { cron: "0 9 * * 1-5" } } });
		await tick("2037-12-07T09:00:00Z"); // delivered again
		await tick("2037-12-07T09:01:00Z");
		expect(await claimedAt("retimed-rename", "2037-12-07T09:00:00.000Z")).toHaveLength(1);
		await tick("2037-12-08T09:00:00Z");
		expect(await claimedAt("retimed-rename", "2037-12-08T09:00:00.000Z")).toMatchObject([{ schedule: "weekdays" }]);
		await settle("retimed-rename");
	});

	it("nor at the next tick, when the PUT lands while the tick that took it is still calling other shards", async () => {
		wallClock("2037-12-09T08:58:30Z");
		await createAgent({ name: "rename-mid-tick", max_concurrent: 5, schedules: { daily: { cron: "0 9 * * *" } } });
		await tick("2037-12-09T08:59:00Z");
		// The 09:00 tick has reached this agent's shard; the scheduler's heartbeat still says 08:59.
		await tickOfOwnShard("rename-mid-tick", "2037-12-09T09:00:00Z");
		wallClock("2037-12-09T09:00:05Z");
		await put("rename-mid-tick", { schedules: { weekdays: { cron: "0 9 * * 1-5" } } });
		await tick("2037-12-09T09:01:00Z");
		expect(await claimedAt("rename-mid-tick", "2037-12-09T09:00:00.000Z")).toMatchObject([{ schedule: "daily" }]);
		await settle("rename-mid-tick");
	});
});
