/**
 * Agents are spread over a fixed number of scheduler shards so one cron tick reaches thousands of
 * agents: the Worker makes one call per shard, and each shard calls only its own agents that are
 * due. Changing the count moves agents between shards, so it is a constant, not a setting.
 */
export const SCHEDULER_SHARDS = 16;

/** FNV-1a: stable across runtimes and deploys, which is all a shard key needs. */
export function shardOf(agent: string): number {
	let hash = 0x811c9dc5;
	for (let i = 0; i < agent.length; i++) {
		hash ^= agent.charCodeAt(i);
		hash = Math.imul(hash, 0x01000193);
	}
	return (hash >>> 0) % SCHEDULER_SHARDS;
}

export const shardName = (index: number) => `shard-${index}`;
