import { drawnJobId, idDay } from "../../src/jobs/id-blocks.ts";
import { errorFields, log } from "../../src/log.ts";
import { shardName, shardOf } from "../../src/scheduler/shards.ts";

/** Ids asked of the shard at once when a trigger, fork or continue finds none to spare. */
const DEAL_SIZE = 32;
/** Ids kept to spare; a tick brings a couple each time, which would otherwise pile up. */
const MAX_SPARE = 64;

/**
 * Job ids dealt by this agent's scheduler shard (see src/jobs/id-blocks.ts), held in memory: each is
 * dealt once, and this instance is the object's only one, so an id is used at most once. Ids held
 * when the object is evicted are lost, which costs nothing: a shard has ~128 million a day.
 */
export class JobIdPool {
	private ids: string[] = [];

	/** Keeps dealt ids of `now`'s day (a tick's), up to `cap` held. */
	add(ids: readonly string[], now: number, cap = MAX_SPARE): void {
		this.dropStale(now);
		const prefix = `job-${idDay(now)}-`;
		for (const id of ids) if (id.startsWith(prefix) && this.ids.length < cap) this.ids.push(id);
	}

	/** A dealt id of `now`'s day, or a drawn one (from the slot no shard deals) when none is held. */
	take(now: number, agent: string): string {
		this.dropStale(now);
		const dealt = this.ids.shift();
		if (dealt !== undefined) return dealt;
		log.warn("agent.job_id_drawn", { agent, reason: "no dealt job id held" });
		return drawnJobId(now);
	}

	/**
	 * Asks the shard for ids unless `want` of `now`'s day are held; whether it had to (and so
	 * yielded). Never fails: take() draws an id instead.
	 */
	async ensure(env: Env, agent: string, now: number, want = 1): Promise<boolean> {
		if (this.holds(now, want)) return false;
		const shard = shardOf(agent);
		const count = Math.max(DEAL_SIZE, want);
		try {
			this.add(await env.SCHEDULER_SHARD.getByName(shardName(shard)).dealJobIds(shard, count, now), now, this.ids.length + count);
		} catch (err) {
			log.warn("agent.job_ids_not_dealt", { agent, shard, ...errorFields(err) });
		}
		return true;
	}

	/** Whether `want` ids of `now`'s day are held. */
	holds(now: number, want: number): boolean {
		this.dropStale(now);
		return this.ids.length >= want;
	}

	private dropStale(now: number): void {
		const prefix = `job-${idDay(now)}-`;
		if (this.ids.length > 0 && !this.ids[0]!.startsWith(prefix)) this.ids = this.ids.filter((id) => id.startsWith(prefix));
	}
}
