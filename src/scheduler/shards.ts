import { fnv1a32 } from "../shared/hash.ts";

/**
 * Agents are spread over a fixed number of scheduler shards so one cron tick reaches thousands of
 * agents: the Worker makes one call per shard, and each shard calls only its own agents that are
 * due. Changing the count moves agents between shards, so it is a constant, not a setting.
 */
export const SCHEDULER_SHARDS = 16;

/** A stable hash is all a shard key needs: the same agent lands on the same shard in every deploy. */
export function shardOf(agent: string): number {
	return fnv1a32(agent) % SCHEDULER_SHARDS;
}

export const shardName = (index: number) => `shard-${index}`;
