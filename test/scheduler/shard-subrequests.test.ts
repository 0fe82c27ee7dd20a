import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent, runsOf } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { agentsHoldingOldJobs, alarmOf, expectPrunedNow, followUps } from "../helpers/retention.ts";
import { tick } from "../helpers/ticks.ts";
import { agentWithVars, namesInShard, shardWithVars } from "../helpers/vars.ts";

afterEach(() => {
	vi.useRealTimers();
});

describe("a shard with more due agents than one invocation may call (SUBREQUEST_LIMIT)", () => {
	it("calls the rest from a follow-up alarm within the minute: every agent's occurrence is claimed once", async () => {
		// Far from the real clock, so the alarms set here fire only when the test runs them.
		const tenOClock = Date.parse("2031-06-01T10:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: tenOClock - 30_000 });
		const shard = 5;
		const names = namesInShard("crowd", shard, 12);
		for (const name of names) await createAgent({ name, schedules: { minutely: { cron: "* * * * *" } } });
		// 10 subrequests an invocation: a tick calls at most 8 agents.
		await shardWithVars(shard, { SUBREQUEST_LIMIT: "10" });

		for (const [minute, at] of [tenOClock, tenOClock + 60_000].entries()) {
			vi.setSystemTime(at + 5_000);
			await tick(at);
			const claimed = await Promise.all(names.map(async (name) => (await runsOf(name)).length));
			// Not all of them in the tick's own invocation…
			expect(claimed.filter((n) => n === minute + 1).length).toBeLessThan(names.length);
			// …the rest from the alarms it left.
			expect(await followUps(shard)).toBeGreaterThan(0);
		}
		for (const name of names) {
			expect((await runsOf(name)).map((r) => [r.scheduled_instant, r.status]), name).toEqual([
				["2031-06-01T10:00:00.000Z", "claimed"],
				["2031-06-01T10:01:00.000Z", expect.stringMatching(/^(claimed|skipped)$/)],
			]);
		}
	});

	it("tells every agent of a lowered RETENTION_DAYS, over as many invocations as it takes", async () => {
		const start = Date.parse("2031-06-02T10:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: start });
		const shard = 6;
		// Each holds a job ended 10 days ago, and an alarm for its expiry under the deployment's 30 days.
		const { names, held } = await agentsHoldingOldJobs("kept", shard, start, 10);

		// Deployed again with RETENTION_DAYS = "7": the shard and every agent read the new value.
		for (const name of names) await agentWithVars(name, { RETENTION_DAYS: "7" });
		await shardWithVars(shard, { RETENTION_DAYS: "7" });
		vi.setSystemTime(start + 65_000);
		await tick(start + 60_000);
		// Not all of them told in the tick's own invocation…
		const told = await Promise.all(names.map(async (name) => (await alarmOf(name))! <= Date.now()));
		expect(told.filter(Boolean).length).toBeLessThan(names.length);
		// …the rest from the alarms it left.
		expect(await followUps(shard)).toBeGreaterThan(0);

		await expectPrunedNow(names, held, { RETENTION_DAYS: "7" });
	});

	it("starts a notice again from the first agent when RETENTION_DAYS is lowered again before it is done", async () => {
		const start = Date.parse("2031-06-03T10:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: start });
		const shard = 7;
		// Each holds a job ended 5 days ago, and an alarm for its expiry under the deployment's 30 days.
		const { names, held } = await agentsHoldingOldJobs("cut-twice", shard, start, 5);
		const deploy = async (days: string) => {
			for (const name of names) await agentWithVars(name, { RETENTION_DAYS: days });
			await shardWithVars(shard, { RETENTION_DAYS: days });
		};
		// 7 days: the job is kept 2 days more. Only the first agents are told before 3 days is deployed.
		await deploy("7");
		vi.setSystemTime(start + 65_000);
		await tick(start + 60_000);
		// Those told prune nothing under 7 days, and wait for the job's expiry 2 days on.
		for (const name of names) if ((await alarmOf(name))! <= Date.now()) await runDurableObjectAlarm(env.AGENT.getByName(name));
		expect((await Promise.all(names.map(alarmOf))).filter((at) => at! > Date.now() + 86_400_000 && at! < Date.now() + 3 * 86_400_000).length).toBeGreaterThan(0);
		await deploy("3");
		vi.setSystemTime(start + 125_000);
		await tick(start + 120_000);
		await followUps(shard);

		// Every agent heard of 3 days: the job is past it, and each prunes it now.
		await expectPrunedNow(names, held, { RETENTION_DAYS: "3" });
	});

	it("opens the scheduler incident for an agent called by the follow-up alarm that does not answer", async () => {
		const ten = Date.parse("2031-06-04T10:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: ten - 30_000 });
		const shard = 8;
		const names = namesInShard("late-broken", shard, 12).sort();
		for (const name of names) await createAgent({ name, schedules: { minutely: { cron: "* * * * *" } } });
		await shardWithVars(shard, { SUBREQUEST_LIMIT: "10" });
		// The agent named last is past what the tick's own invocation calls; its stored state no longer parses.
		const broken = names.at(-1)!;
		await runInDurableObject(env.AGENT.getByName(broken), (_i: AgentDO, state) => {
			state.storage.sql.exec("UPDATE agent_state SET definition = '{not json'");
		});
		vi.setSystemTime(ten + 5_000);
		await tick(ten);
		expect(await followUps(shard)).toBeGreaterThan(0);

		const { incidents } = (await (await call("/v1/incidents?agent=scheduler")).json()) as { incidents: { state: string; error: string }[] };
		expect(incidents).toMatchObject([{ state: expect.stringMatching(/^(open|alerted)$/), error: `tick partial: agent ${broken} did not answer the tick` }]);
	});
});
