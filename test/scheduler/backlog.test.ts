import { env, runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { shardName } from "../../src/scheduler/shards.ts";
import { createAgent, runsOf } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { tick } from "../helpers/ticks.ts";
import { namesInShard, shardWithVars } from "../helpers/vars.ts";
import { loggedDuring } from "../helpers/logs.ts";

/** Runs the shard's alarms (its follow-ups) until it sets no more. */
async function followUps(shard: number): Promise<void> {
	while (await runDurableObjectAlarm(env.SCHEDULER_SHARD.getByName(shardName(shard))));
}

interface SchedulerStatus {
	scheduler: { outcome: string; deferred: number | null; oldest_deferred_minute: string | null; shards_behind: number | null };
	warnings: string[];
	warning_kinds: string[];
}

const status = async () => (await (await call("/v1/status")).json()) as SchedulerStatus;

/** The structured log lines of `event` (or of any of `event`) written while `fn` ran. */
const logged = (event: string | string[], fn: () => Promise<unknown>) => loggedDuring(fn, event);

afterEach(() => {
	vi.useRealTimers();
});

// Minutes between fleet.yaml's slots (digests at :00, site-watch every 15 minutes), far from the real
// clock, so the alarms set here fire only when the test runs them.
describe("due agents left to a shard's follow-ups", () => {
	// The heartbeat is one D1 row, shared by the file's tests, and keeps the newest tick it is given:
	// each test starts from a scheduler that never ticked, not from the other's later ticks.
	beforeEach(async () => {
		await env.DB.prepare("DELETE FROM scheduler_heartbeat").run();
	});

	it("are counted in POST /v1/tick's answer and in GET /v1/status, with the minute they are owed", async () => {
		const minute = Date.parse("2031-08-01T10:02:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: minute - 30_000 });
		const shard = 9;
		const names = namesInShard("owed", shard, 12);
		for (const name of names) await createAgent({ name, schedules: { minutely: { cron: "* * * * *" } } });
		// 10 subrequests an invocation: a tick calls at most 8 agents.
		await shardWithVars(shard, { SUBREQUEST_LIMIT: "10" });

		vi.setSystemTime(minute + 5_000);
		let res!: Response;
		const tickLines = await logged(["tick.done", "shard.calls_deferred"], async () => (res = await call("/v1/tick", { method: "POST", as: "admin" })));
		expect(res.status).toBe(200);
		// Each line names the minute it is about, by one name; a tick asked for says who asked, not how
		// late it ran (a cron tick's lateness, which it is not).
		expect(tickLines).toEqual([
			expect.objectContaining({ event: "shard.calls_deferred", shard, minute: "2031-08-01T10:02:00.000Z", minutes: ["2031-08-01T10:02:00.000Z"] }),
			expect.objectContaining({ event: "tick.done", minute: "2031-08-01T10:02:00.000Z", trigger: "api", by: "root" }),
		]);
		expect(tickLines[1]).not.toHaveProperty("late_ms");
		for (const line of tickLines) for (const old of ["tick", "ticks", "scheduled_time"]) expect(line).not.toHaveProperty(old);
		const answer = (await res.json()) as { outcome: string; deferred: number; oldest_deferred_minute: string | null; shards_behind: number };
		expect(answer).toMatchObject({ outcome: "ok", oldest_deferred_minute: "2031-08-01T10:02:00.000Z", shards_behind: 0 });
		const called = (await Promise.all(names.map(runsOf))).filter((runs) => runs.length > 0).length;
		expect(answer.deferred).toBe(names.length - called);
		expect(answer.deferred).toBeGreaterThan(0);

		// The heartbeat keeps what the tick left; one minute's overflow is no warning.
		expect(await status()).toMatchObject({
			scheduler: { outcome: "ok", deferred: answer.deferred, oldest_deferred_minute: "2031-08-01T10:02:00.000Z", shards_behind: 0 },
			warnings: [],
		});

		// The follow-ups call the rest; the next tick finds nothing left over.
		const followed = await logged("shard.follow_up", () => followUps(shard));
		expect(followed[0]).toMatchObject({ shard, minute: "2031-08-01T10:02:00.000Z", minutes: ["2031-08-01T10:02:00.000Z"] });
		expect(followed[0]).not.toHaveProperty("ticks");
		for (const name of names) expect((await runsOf(name)).map((r) => r.scheduled_instant), name).toEqual(["2031-08-01T10:02:00.000Z"]);
		await shardWithVars(shard, { SUBREQUEST_LIMIT: "10000" });
		vi.setSystemTime(minute + 65_000);
		await tick(minute + 60_000);
		expect(await status()).toMatchObject({ scheduler: { deferred: 0, oldest_deferred_minute: null, shards_behind: 0 }, warnings: [] });
		await followUps(shard);
	});

	it("warns, in GET /v1/status and once in the log, while a shard cannot call its minutes through, and drops none", async () => {
		const first = Date.parse("2031-08-02T10:02:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: first - 30_000 });
		const shard = 10;
		// 3 invocations' worth of calls every minute, and only the ticks to make them: 8 calls a minute.
		const names = namesInShard("swamped", shard, 24);
		for (const name of names) await createAgent({ name, schedules: { minutely: { cron: "* * * * *" } } });
		await shardWithVars(shard, { SUBREQUEST_LIMIT: "10" });
		const tickAt = async (m: number) => {
			vi.setSystemTime(first + m * 60_000 + 5_000);
			await tick(first + m * 60_000);
		};

		// Ticks 10:02 to 10:05: 32 calls of the 96 due. The oldest minute pending (10:03) is 2 minutes old.
		const early = await logged("shard.backlog_behind", async () => {
			for (const m of [0, 1, 2, 3]) await tickAt(m);
		});
		expect(early).toEqual([]);
		expect((await status()).warnings).toEqual([]);

		// 10:06: 10:03 is still pending 3 minutes on. Said once, when it happens…
		const behind = await logged("shard.backlog_behind", () => tickAt(4));
		expect(behind).toEqual([expect.objectContaining({ shard, minute: "2031-08-02T10:06:00.000Z", oldest_minute: "2031-08-02T10:03:00.000Z", pending_minutes: 4 })]);
		const s = await status();
		expect(s.scheduler).toMatchObject({ outcome: "ok", oldest_deferred_minute: "2031-08-02T10:03:00.000Z", shards_behind: 1 });
		expect(s.scheduler.deferred).toBeGreaterThan(0);
		expect(s.warnings).toEqual([expect.stringContaining("2031-08-02T10:03:00.000Z")]);
		expect(s.warnings[0]).toMatch(/behind/);
		expect(s.warning_kinds).toEqual(["scheduler_behind"]);
		// …not at every tick after it.
		expect(await logged("shard.backlog_behind", () => tickAt(5))).toEqual([]);
		expect((await status()).warnings).toHaveLength(1);

		// Its follow-ups catch up: said once too, and the next tick's heartbeat warns no more.
		const caughtUp = await logged("shard.backlog_caught_up", () => followUps(shard));
		expect(caughtUp).toEqual([expect.objectContaining({ shard })]);
		await shardWithVars(shard, { SUBREQUEST_LIMIT: "10000" });
		await tickAt(6);
		expect(await status()).toMatchObject({ scheduler: { deferred: 0, shards_behind: 0 }, warnings: [] });

		// Nothing was dropped: every agent claimed (or skipped by its own rules) each of the 7 minutes, in order.
		for (const name of names) {
			const instants = (await runsOf(name)).map((r) => r.scheduled_instant).sort();
			expect(instants, name).toEqual(Array.from({ length: 7 }, (_, m) => new Date(first + m * 60_000).toISOString()));
		}
		// 24 agents made and ticked over seven minutes: 1.3-1.6 s here, so a machine 3-4 times slower reaches vitest's 5 s default.
	}, 30_000);
});
