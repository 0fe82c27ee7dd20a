import { env, runInDurableObject } from "cloudflare:test";
import { shardName, shardOf } from "../../src/scheduler/shards.ts";

/** Gives a running object these vars, as wrangler.toml's [vars] would: its env is read when used. */
function varsSetter(vars: Record<string, string>) {
	return (instance: unknown) => {
		const self = instance as { env: Env };
		self.env = { ...self.env, ...vars } as Env;
	};
}

/** The agent's Durable Object runs with these vars. */
export async function agentWithVars(agent: string, vars: Record<string, string>): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(agent), varsSetter(vars));
}

/** Scheduler shard `shard` runs with these vars. */
export async function shardWithVars(shard: number, vars: Record<string, string>): Promise<void> {
	await runInDurableObject(env.SCHEDULER_SHARD.getByName(shardName(shard)), varsSetter(vars));
}

/** `count` agent names, prefixed `prefix`, that all hash to scheduler shard `shard`. */
export function namesInShard(prefix: string, shard: number, count: number): string[] {
	const names: string[] = [];
	for (let i = 0; names.length < count; i++) if (shardOf(`${prefix}-${i}`) === shard) names.push(`${prefix}-${i}`);
	return names;
}
