import { DurableObject } from "cloudflare:workers";
import { agentRpc } from "../agent/client.ts";
import { retentionDays } from "../agent/retention.ts";
import { loadFleet } from "../../src/config/bundled.ts";
import { numberVar } from "../../src/config/vars.ts";
import { dealtJobId, idDay, SLOT_CAPACITY } from "../../src/jobs/id-blocks.ts";
import type { AgentDefinition } from "../../src/config/schema.ts";
import { errorFields, log } from "../../src/log.ts";
import { shardOf } from "../../src/scheduler/shards.ts";
import { liveRegisteredAmong, markAgentDeleted } from "../../src/store/agent-registry.ts";
import { sha256Hex } from "../../src/shared/hash.ts";
import { migrate } from "../../src/store/sqlite-migrations.ts";
import { SHARD_MIGRATIONS } from "./schema.ts";

/** Agents with no slot ahead (no enabled schedule) are parked here until their definition changes. */
const NEVER = Number.MAX_SAFE_INTEGER;
/** Calls to agents in flight at once: enough to overlap RPC latency, few enough to stay polite. */
const CONCURRENCY = 32;
/**
 * Job ids dealt to each agent a tick calls: one for the claim and one to spare for a manual run, so
 * an agent seldom has to ask for ids of its own (see src/jobs/id-blocks.ts).
 */
const TICK_JOB_IDS = 2;
/** A day's counter is kept this long: a late tick or a slow trigger may still deal ids dated then. */
const ID_COUNTER_DAYS = 3;

export interface ShardTickResult {
	shard: number;
	agents_called: number;
	claimed: number;
	skipped: number;
	/** `error` is public (shown by GET /v1/status and the scheduler incident); the detail is logged. */
	failed: { agent: string; error: string }[];
}

/** What the heartbeat and the scheduler incident say of an agent whose tick call failed. */
export const agentTickFailure = (agent: string) => `agent ${agent} did not answer the tick`;

/**
 * A scheduler shard: knows which of its agents are due when, and on each tick calls only those.
 * An agent that fails to answer keeps its due time, so the next tick calls it again and its own
 * cursor makes up for the missed minute.
 */
export class SchedulerShardDO extends DurableObject<Env> {
	private readonly sql: SqlStorage;

	constructor(ctx: DurableObjectState, env: Env) {
		super(ctx, env);
		this.sql = ctx.storage.sql;
		migrate(ctx.storage, SHARD_MIGRATIONS);
	}

	/**
	 * Adds or refreshes an API agent (created or updated): it is called at the next tick. A new row's
	 * generation is random, so one deleted and added back during a tick is not taken for the old one.
	 */
	async register(name: string): Promise<void> {
		this.sql.exec(
			"INSERT INTO agents (name, source, next_due_at, generation) VALUES (?, 'api', 0, abs(random() % 9007199254740991)) ON CONFLICT (name) DO UPDATE SET source = 'api', next_due_at = 0, generation = generation + 1",
			name,
		);
	}

	async unregister(name: string): Promise<void> {
		this.sql.exec("DELETE FROM agents WHERE name = ? AND source = 'api'", name);
	}

	async tick(shard: number, now: number): Promise<ShardTickResult> {
		await this.syncFileAgents(shard);
		const due = this.sql
			.exec<{ name: string; source: string; generation: number }>("SELECT name, source, generation FROM agents WHERE next_due_at <= ? ORDER BY name", now)
			.toArray();
		const result: ShardTickResult = { shard, agents_called: due.length, claimed: 0, skipped: 0, failed: [] };
		// Dealt before any call leaves: the output gate holds the calls until the counter is on disk,
		// so no id handed out is ever dealt again.
		const ids = due.length === 0 ? [] : this.dealOrNone(shard, due.length * TICK_JOB_IDS, now);
		// Written together once every agent has answered: one write per answer would be one SQLite
		// commit (an fsync) per agent. If the shard dies first, the next tick calls these agents again
		// and each one's own cursor claims nothing twice.
		const nextDue: [string, number, number][] = [];
		let next = 0;
		const worker = async () => {
			for (let i = next++; i < due.length; i = next++) {
				const { name, source, generation } = due[i]!;
				try {
					const dealt = ids.slice(i * TICK_JOB_IDS, (i + 1) * TICK_JOB_IDS);
					const outcome = await agentRpc(this.env, name).tick(name, source as "file" | "api", now, dealt);
					result.claimed += outcome.claimed;
					result.skipped += outcome.skipped;
					nextDue.push([name, outcome.nextDue ?? NEVER, generation]);
				} catch (err) {
					// The heartbeat, GET /v1/status and the scheduler incident show this: a fixed public line.
					// What went wrong inside the agent (a parse error, a storage fault) is for the logs.
					result.failed.push({ agent: name, error: agentTickFailure(name) });
					log.error("shard.agent_tick_failed", { shard, agent: name, ...errorFields(err) });
				}
			}
		};
		await Promise.all(Array.from({ length: Math.min(CONCURRENCY, due.length) }, worker));
		this.ctx.storage.transactionSync(() => {
			// Not over a PUT, DELETE or deploy that landed while the agent was being called: its due time
			// was read from the definition before it.
			for (const [name, at, generation] of nextDue) this.sql.exec("UPDATE agents SET next_due_at = ? WHERE name = ? AND generation = ?", at, name, generation);
		});
		await this.noticeRetentionVar(shard);
		return result;
	}

	/**
	 * A lowered RETENTION_DAYS reaches every agent of this shard: each keeps the alarm it set for its
	 * oldest record's expiry under the old value (weeks away, for an idle or paused agent that nothing
	 * else wakes). After the tick's claims, once per change. Best effort, as a deploy's notice is: an
	 * agent that cannot be told prunes at the expiry it holds, where telling the whole shard again at
	 * every tick would wake every agent each minute for the one that fails.
	 */
	private async noticeRetentionVar(shard: number): Promise<void> {
		const days = String(numberVar(this.env, "RETENTION_DAYS"));
		const seen = this.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'retention_days'").toArray()[0]?.value;
		if (seen === days) return;
		if (seen !== undefined && Number(days) < Number(seen)) {
			const names = this.sql.exec<{ name: string }>("SELECT name FROM agents ORDER BY name").toArray().map((r) => r.name);
			for (const name of [...names, ...(await this.deletedSince(shard, Date.now() - Number(seen) * 86_400_000, names))]) {
				try {
					await agentRpc(this.env, name).retentionShortened();
				} catch (err) {
					log.error("shard.retention_notice_failed", { shard, agent: name, ...errorFields(err) });
				}
			}
			log.info("shard.retention_shortened", { shard, from: Number(seen), to: Number(days) });
		}
		this.sql.exec("INSERT INTO meta (key, value) VALUES ('retention_days', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", days);
	}

	/**
	 * API agents of this shard's names deleted since `since` (their history may still be kept under
	 * the old RETENTION_DAYS): no shard calls them any more, and an alarm set under the old value is
	 * all that would wake them. From the D1 registry, which keeps a deleted agent's row; a read that
	 * fails leaves them to that alarm, as an agent that cannot be told is.
	 */
	private async deletedSince(shard: number, since: number, listed: readonly string[]): Promise<string[]> {
		try {
			const { results } = await this.env.DB.prepare("SELECT name FROM agents WHERE deleted_at >= ? ORDER BY name").bind(since).all<{ name: string }>();
			return results.map((r) => r.name).filter((name) => shardOf(name) === shard && !listed.includes(name));
		} catch (err) {
			log.error("shard.retention_notice_failed", { shard, deleted_agents: true, ...errorFields(err) });
			return [];
		}
	}

	/** Deals `count` job ids of `now`'s day from this shard's slot (an agent's trigger, fork or continue). */
	async dealJobIds(shard: number, count: number, now: number = Date.now()): Promise<string[]> {
		return this.deal(shard, count, now);
	}

	private deal(shard: number, count: number, now: number): string[] {
		const day = idDay(now);
		// Kept by the wall clock, never by the `now` asked for: a counter forgotten while its day can
		// still be asked for would start again at 0 and deal its ids twice. Too old a day is refused.
		const oldest = idDay(Date.now() - ID_COUNTER_DAYS * 86_400_000);
		if (day < oldest) throw new RangeError(`job ids of ${day} are no longer dealt (counters are kept ${ID_COUNTER_DAYS} days)`);
		const next = this.sql
			.exec<{ next: number }>("INSERT INTO job_id_counters (day, next) VALUES (?, ?) ON CONFLICT (day) DO UPDATE SET next = next + excluded.next RETURNING next", day, count)
			.one().next;
		this.sql.exec("DELETE FROM job_id_counters WHERE day < ?", oldest);
		// Beyond ~128 million ids a day from one shard, none are dealt (the agents draw their own).
		if (next > SLOT_CAPACITY) throw new RangeError(`shard ${shard} has dealt all of ${day}'s job ids`);
		return Array.from({ length: count }, (_, i) => dealtJobId(day, shard, next - count + i));
	}

	/** A tick's ids, or none if they cannot be dealt: its agents then draw their own, and still run. */
	private dealOrNone(shard: number, count: number, now: number): string[] {
		try {
			return this.deal(shard, count, now);
		} catch (err) {
			log.error("shard.job_ids_not_dealt", { shard, ...errorFields(err) });
			return [];
		}
	}

	/**
	 * Brings this shard's file agents in line with the bundled fleet.yaml once per deploy: new and
	 * changed agents are called at the next tick (their own state decides what is due), and agents
	 * gone from the file stop being called.
	 */
	private async syncFileAgents(shard: number): Promise<void> {
		const mine = loadFleet().agents.filter((a) => shardOf(a.name) === shard);
		const revision = await sha256Hex(JSON.stringify(mine));
		const stored = this.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'fleet'").toArray()[0]?.value;
		if (stored === revision) return;
		const names = new Set(mine.map((a) => a.name));
		const previous = new Map(
			this.sql
				.exec<{ name: string; definition: string | null }>("SELECT name, definition FROM agents WHERE source = 'file'")
				.toArray()
				.map((r) => [r.name, r.definition === null ? null : (JSON.parse(r.definition) as AgentDefinition)]),
		);
		const gone = [...previous.keys()].filter((name) => !names.has(name));
		// A dropped agent's object hears of it from here, or from nothing: a paused one is never woken
		// again, and its queued runs would wait forever. One that cannot be told stays listed, and the
		// fleet's revision unrecorded, so the next tick tries again.
		const told: string[] = [];
		for (const name of gone) {
			try {
				await agentRpc(this.env, name).dropFromFleet(previous.get(name) ?? null);
				told.push(name);
			} catch (err) {
				log.error("shard.drop_failed", { shard, agent: name, ...errorFields(err) });
			}
		}
		// An API agent whose name fleet.yaml now takes is that file agent from its next call on (see
		// ensureState); its registry row goes, or it would be listed twice, and come back as an API
		// agent without a definition if the file ever dropped it.
		// Asked of the registry, not of this shard's rows: a sync before this rule made such a row a
		// file row already, and left its registry row live.
		// With D1 down the rest of the sync goes on, and the revision stays unrecorded: the next tick
		// tries again.
		let retired = true;
		try {
			for (const { name } of mine.length === 0 ? [] : await liveRegisteredAmong(this.env.DB, [...names])) {
				await markAgentDeleted(this.env.DB, name, Date.now());
				log.warn("shard.api_agent_replaced_by_file", { shard, agent: name });
			}
		} catch (err) {
			retired = false;
			log.error("shard.api_agent_retire_failed", { shard, ...errorFields(err) });
		}
		// Its object would otherwise keep the alarm it set for the old retention's expiry (weeks away,
		// for an agent nothing else wakes). Best effort: the pass after that expiry prunes anyway.
		for (const agent of mine) {
			const before = previous.get(agent.name);
			if (!before || retentionDays(agent, this.env) >= retentionDays(before, this.env)) continue;
			try {
				await agentRpc(this.env, agent.name).retentionShortened();
			} catch (err) {
				log.error("shard.retention_notice_failed", { shard, agent: agent.name, ...errorFields(err) });
			}
		}
		this.ctx.storage.transactionSync(() => {
			for (const name of told) this.sql.exec("DELETE FROM agents WHERE name = ?", name);
			for (const agent of mine) {
				this.sql.exec(
					`INSERT INTO agents (name, source, next_due_at, definition, generation) VALUES (?, 'file', 0, ?, abs(random() % 9007199254740991))
					 ON CONFLICT (name) DO UPDATE SET source = 'file', next_due_at = 0, definition = excluded.definition, generation = generation + 1`,
					agent.name,
					JSON.stringify(agent),
				);
			}
			if (told.length === gone.length && retired) this.sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('fleet', ?)", revision);
		});
	}

}
