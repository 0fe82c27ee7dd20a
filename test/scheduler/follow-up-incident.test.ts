import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { shardName } from "../../src/scheduler/shards.ts";
import { createAgent } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { fake } from "../helpers/outbound.ts";
import { tick } from "../helpers/ticks.ts";
import { namesInShard, shardWithVars } from "../helpers/vars.ts";

/** Runs the shard's alarms (its follow-ups) until it sets no more. */
async function followUps(shard: number): Promise<void> {
	while (await runDurableObjectAlarm(env.SCHEDULER_SHARD.getByName(shardName(shard))));
}

const schedulerIncidents = async () => ((await (await call("/v1/incidents?agent=scheduler")).json()) as { incidents: { state: string; error: string; count: number }[] }).incidents;

afterEach(() => {
	vi.useRealTimers();
});

describe("an agent that only follow-ups call, failing at every call", () => {
	it("keeps one scheduler incident open, paged once, through the ticks that reach every agent they call, until it answers again", async () => {
		const alerts: unknown[] = [];
		fake("https://alerts.example.test", async (req) => {
			alerts.push(await req.json());
			return new Response("ok");
		});
		// Between fleet.yaml's slots, far from the real clock: the alarms set here fire only when run here.
		const ten = Date.parse("2031-09-01T10:02:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: ten - 30_000 });
		const shard = 11;
		const names = namesInShard("flip", shard, 12).sort();
		const definition = { prompt: "Do the thing.", schedules: { minutely: { cron: "* * * * *" } } };
		for (const name of names) await createAgent({ name, ...definition });
		// 8 calls an invocation: the agent named last is always left to a follow-up.
		await shardWithVars(shard, { SUBREQUEST_LIMIT: "10" });
		const broken = names.at(-1)!;
		await runInDurableObject(env.AGENT.getByName(broken), (_i: AgentDO, state) => {
			state.storage.sql.exec("UPDATE agent_state SET definition = '{not json'");
		});
		const tickAt = async (m: number) => {
			vi.setSystemTime(ten + m * 60_000 + 5_000);
			await tick(ten + m * 60_000);
		};
		const error = `tick partial: agent ${broken} did not answer the tick`;

		await tickAt(0);
		await followUps(shard);
		expect(await schedulerIncidents()).toMatchObject([{ state: "alerted", error }]);

		// Two more minutes: each tick reaches every agent it calls (the broken one is past them), each
		// follow-up fails it again. One incident, open throughout, paged once.
		for (const m of [1, 2]) {
			await tickAt(m);
			expect(await schedulerIncidents(), `after the tick of minute ${m}`).toMatchObject([{ state: "alerted", error }]);
			await followUps(shard);
		}
		expect(await schedulerIncidents()).toMatchObject([{ state: "alerted", error, count: 3 }]);
		expect(alerts).toHaveLength(1);

		// Repaired: its follow-up reaches it, and the next tick resolves the incident.
		await call(`/v1/agents/${broken}`, { method: "PUT", as: "admin", body: { name: broken, ...definition } });
		await tickAt(3);
		await followUps(shard);
		await tickAt(4);
		expect(await schedulerIncidents()).toMatchObject([{ state: "resolved", error }]);
		await followUps(shard);
		expect(alerts).toHaveLength(1);
	});
});
