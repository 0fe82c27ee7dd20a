import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { shardName } from "../../src/scheduler/shards.ts";
import { createAgent, runsOf } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { namesInShard, shardWithVars } from "../helpers/vars.ts";

afterEach(() => {
	vi.useRealTimers();
});

// Its own file: the heartbeat row is shared by the tests of a file. Minutes between fleet.yaml's
// slots, far from the real clock.
describe("a shard an hour behind its ticks", () => {
	it("keeps calling and drains its 60 pending minutes, dropping none", async () => {
		const first = Date.parse("2031-09-01T10:02:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: first - 30_000 });
		const shard = 11;
		const names = namesInShard("hour-behind", shard, 2);
		for (const name of names) await createAgent({ name, schedules: { minutely: { cron: "* * * * *" } } });
		await shardWithVars(shard, { SUBREQUEST_LIMIT: "10" });
		const stub = env.SCHEDULER_SHARD.getByName(shardName(shard));
		// What an hour of ticks leaves a shard that could call little of them (an outage of the agents'
		// objects, a SUBREQUEST_LIMIT set too low): every minute owed whole. Each binding of the count of
		// owed agents took 2 parameters a minute, past SQLite's 100 from the 51st.
		await runInDurableObject(stub, (_instance, state) => {
			const owed = Array.from({ length: 60 }, (_, m) => ({ shard, now: first + m * 60_000, after: "" }));
			state.storage.sql.exec("INSERT INTO meta (key, value) VALUES ('follow_ups', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", JSON.stringify(owed));
		});

		vi.setSystemTime(first + 60 * 60_000 + 5_000);
		const res = await call("/v1/tick", { method: "POST", as: "admin" });
		expect(res.status).toBe(200);
		const answer = (await res.json()) as { outcome: string; deferred: number; oldest_deferred_minute: string | null; shards_behind: number };
		// 8 calls of the 122 owed (61 minutes of 2 agents), the 10:02 to 10:05 ones: both agents are
		// still owed calls, left to the follow-ups.
		expect(answer).toMatchObject({ outcome: "ok", deferred: 2, oldest_deferred_minute: "2031-09-01T10:06:00.000Z", shards_behind: 1 });

		for (let i = 0; await runDurableObjectAlarm(stub); i++) expect(i).toBeLessThan(20);
		const instants = Array.from({ length: 61 }, (_, m) => new Date(first + m * 60_000).toISOString());
		for (const name of names) expect((await runsOf(name)).map((r) => r.scheduled_instant).sort(), name).toEqual(instants);
	});
});
