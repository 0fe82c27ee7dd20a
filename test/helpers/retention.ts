import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { shardName } from "../../src/scheduler/shards.ts";
import { createAgent } from "./agents.ts";
import { endedRecord, storeRun } from "./jobs.ts";
import { tick } from "./ticks.ts";
import { agentWithVars, namesInShard, shardWithVars } from "./vars.ts";

const DAY = 86_400_000;
/** The deployment's RETENTION_DAYS before a test lowers it. */
const DEPLOYED_RETENTION_DAYS = 30;

/** Runs scheduler shard `shard`'s alarms (its follow-ups) until it sets no more; how many ran. */
export async function followUps(shard: number): Promise<number> {
	let ran = 0;
	while (await runDurableObjectAlarm(env.SCHEDULER_SHARD.getByName(shardName(shard)))) ran++;
	return ran;
}

export const alarmOf = (name: string) => runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => state.storage.getAlarm());

/**
 * Twelve agents of scheduler shard `shard`, more than one of its invocations may call (SUBREQUEST_LIMIT
 * 10 lets a tick call 8), each ticked once at `at` and then holding a job that ended `daysAgo` days
 * before now, with its alarm at that job's expiry under the deployment's 30 days. The names, and
 * each agent's held job id.
 */
export async function agentsHoldingOldJobs(prefix: string, shard: number, at: number, daysAgo: number): Promise<{ names: string[]; held: Map<string, string> }> {
	const names = namesInShard(prefix, shard, 12);
	for (const name of names) await createAgent({ name });
	await shardWithVars(shard, { SUBREQUEST_LIMIT: "10" });
	await tick(at);
	await followUps(shard);
	const held = new Map<string, string>();
	for (const name of names) {
		await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => {
			const record = endedRecord(name, new Date(Date.now() - daysAgo * DAY));
			storeRun(state.storage.sql, record);
			held.set(name, record.id);
			return state.storage.setAlarm(Date.now() + (DEPLOYED_RETENTION_DAYS - daysAgo) * DAY);
		});
	}
	return { names, held };
}

/**
 * Every agent's alarm is due, and running it prunes the job it held, under the deployment's `vars`.
 * They are given to each agent again before its alarm runs, as a deployment's are to every instance:
 * workerd evicts an object idle for 10 s, and the vars a test gave the instance before go with it (on
 * a loaded machine the last agents waited that long, and pruned under the default 30 days).
 */
export async function expectPrunedNow(names: string[], held: Map<string, string>, vars: Record<string, string>): Promise<void> {
	for (const name of names) {
		expect(await alarmOf(name), name).toBeLessThanOrEqual(Date.now());
		await agentWithVars(name, vars);
		expect(await runDurableObjectAlarm(env.AGENT.getByName(name))).toBe(true);
		expect(await env.AGENT.getByName(name).getJob(held.get(name)!), name).toBeNull();
	}
}
