import { DurableObject } from "cloudflare:workers";
import { agentRpc } from "../agent/client.ts";
import { retentionDays } from "../agent/retention.ts";
import { loadFleet } from "../../src/config/bundled.ts";
import { numberVar } from "../../src/config/vars.ts";
import { dealtJobId, idDay, SLOT_CAPACITY } from "../../src/jobs/id-blocks.ts";
import type { AgentDefinition } from "../../src/config/schema.ts";
import { configureLogLevel, errorFields, log, minuteField } from "../../src/log.ts";
import { isBehind } from "../../src/scheduler/backlog.ts";
import { shardOf } from "../../src/scheduler/shards.ts";
import { fileSchedulerIncident } from "../../src/scheduler/tick.ts";
import { liveRegisteredAmong, markAgentDeleted } from "../../src/store/agent-registry.ts";
import { sha256Hex } from "../../src/shared/hash.ts";
import { SubrequestBudget } from "../../src/shared/subrequests.ts";
import { migrate } from "../../src/store/sqlite-migrations.ts";
import { SHARD_MIGRATIONS } from "./schema.ts";
import { DAY_MS } from "../../src/shared/time.ts";

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
/**
 * Once calls leave, the shard's alarm fires within this (as an agent's does during a model call):
 * if the instance dies before they are answered, the alarm finds them and makes them again, within
 * the shortest grace window (2 minutes) of the minute they were for, though no tick comes.
 */
const HEARTBEAT_MS = 30_000;

export interface ShardTickResult {
	shard: number;
	agents_called: number;
	claimed: number;
	skipped: number;
	/** `error` is public (shown by GET /v1/status and the scheduler incident); the detail is logged. */
	failed: { agent: string; error: string }[];
	/** Due agents past what one invocation may call, left to the shard's follow-up alarm within seconds. */
	deferred: number;
	/** The oldest minute (ms) those agents are owed, null when none is left. */
	oldest_deferred: number | null;
	/** Its queue of pending minutes has fallen behind its ticks (see src/scheduler/backlog.ts). */
	behind: boolean;
	/**
	 * Agents of this shard whose latest call failed, here or in a follow-up no tick hears of, and that
	 * no call has reached since: the scheduler incident stays open while any is left.
	 */
	failing: number;
}

/** A minute not yet called through: its agents due at `now` named after `after` are still to be called. */
interface FollowUp {
	shard: number;
	now: number;
	after: string;
}

/**
 * Agents one batch took for minute `now` (those named after `after` and due by then), stored with
 * the queue as it moves past them and removed with their outcomes: one left behind is a batch whose
 * instance died (or threw) before its agents answered, and goes back in the queue at its minute.
 */
interface CallsOut {
	batch: string;
	shard: number;
	now: number;
	after: string;
}

/** Where a lowered RETENTION_DAYS's notice stopped: the agents named after `after` are still to be told. */
interface NoticeLeft {
	shard: number;
	after: string;
	/** The value being told: a notice left for another (lowered again since) starts over. */
	days?: string;
}

/**
 * The minutes of a queue whose owed agents no other minute's include: a minute owes every agent an
 * earlier one owes if it is called from a name no later. Only a queue's head is ever part called
 * (but for calls a dead instance left, put back at their minute: see recover), so this is one
 * minute, the newest, however long the queue: the count of owed agents reads the shard's agents
 * once, not once a minute.
 */
function widestOwed(queue: readonly FollowUp[]): { now: number; after: string }[] {
	const kept: { now: number; after: string }[] = [];
	for (const f of [...queue].sort((a, b) => b.now - a.now)) {
		const lowest = kept.at(-1)?.after;
		if (lowest === undefined || f.after < lowest) kept.push({ now: f.now, after: f.after });
	}
	return kept;
}

/** What the heartbeat and the scheduler incident say of an agent whose tick call failed. */
const agentTickFailure = (agent: string) => `agent ${agent} did not answer the tick`;

/**
 * A scheduler shard: knows which of its agents are due when, and on each tick calls only those.
 * An agent that fails to answer keeps its due time, so the next tick calls it again and its own
 * cursor makes up for the missed minute.
 */
export class SchedulerShardDO extends DurableObject<Env> {
	private readonly sql: SqlStorage;
	/** Each agent's call on its way from this instance, the latest first in line: a later minute's waits for it. */
	private readonly calling = new Map<string, Promise<void>>();
	/**
	 * Whether each agent's latest call, in this instance, answered. Calls to one agent run in turn, so
	 * this is the newest outcome; the batches they were in may end in another order (a follow-up held
	 * by a slow agent ends after the next tick's batch), and a batch marks by this, never by its own.
	 */
	private readonly latestCall = new Map<string, boolean>();
	/** The batches under way in this instance: their stored calls out are not left behind. */
	private readonly batches = new Set<string>();

	constructor(ctx: DurableObjectState, env: Env) {
		super(ctx, env);
		configureLogLevel(env);
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

	/**
	 * Calls this shard's due agents. One invocation may make SUBREQUEST_LIMIT subrequests (each agent
	 * called is one, as is each D1 query), past which every call throws: the agents named last would
	 * fail at every tick. A tick calls what fits in 80 % of it and leaves the rest to a follow-up
	 * alarm, a fresh invocation, which calls them for the same minute within seconds (and sets
	 * another if they do not fit either). An earlier minute still pending goes first, with its own
	 * time: an agent called for this minute before that one would skip that one's slot as
	 * superseded (an agent's tick fires at most one slot).
	 */
	async tick(shard: number, now: number): Promise<ShardTickResult> {
		const calls = this.subrequests();
		await this.syncFileAgents(shard, calls, now);
		const result = await this.callPending(shard, calls, { shard, now, after: "" });
		await this.noticeRetentionVar(shard, calls, now);
		return result;
	}

	/** What ticks left: the rest of their due agents, oldest minute first, then the rest of a retention notice. */
	override async alarm(): Promise<void> {
		const calls = this.subrequests();
		const pending = this.recover();
		// A follow-up's lines name the oldest minute it calls for (`minute`), and all of them (`minutes`).
		const oldest = pending[0]?.now ?? null;
		if (pending.length > 0) {
			const shard = pending[0]!.shard;
			const result = await this.callPending(shard, calls);
			log.info("shard.follow_up", { shard, minute: minuteField(oldest!), minutes: pending.map((p) => minuteField(p.now)), agents_called: result.agents_called, claimed: result.claimed, failed: result.failed.length, deferred: result.deferred });
			// No tick reports what its follow-up finds: an agent that never answers must still open the
			// scheduler incident, as it would were it called by the tick. (A later tick leaves it open
			// while the agent is marked failing: see ShardTickResult.failing.)
			if (result.failed.length > 0) {
				calls.note(2);
				await fileSchedulerIncident(this.env, "partial", result.failed.map((f) => f.error), Date.now(), oldest!);
			}
		}
		const notice = this.meta<NoticeLeft>("retention_notice");
		if (notice) await this.noticeRetentionVar(notice.shard, calls, oldest);
		// Fired while calls are still on their way in this instance (slow agents): those are theirs to
		// answer, and the heartbeat stays set for them in case this instance dies yet.
		if (this.callsOut().length > 0) await this.heartbeat();
	}

	private subrequests(): SubrequestBudget {
		return new SubrequestBudget(numberVar(this.env, "SUBREQUEST_LIMIT"));
	}

	private meta<T>(key: string): T | null {
		const value = this.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", key).toArray()[0]?.value;
		return value === undefined ? null : (JSON.parse(value) as T);
	}

	private setMeta(key: string, value: unknown): void {
		if (value === null) this.sql.exec("DELETE FROM meta WHERE key = ?", key);
		else this.sql.exec("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", key, JSON.stringify(value));
	}

	/**
	 * The minutes whose due agents are not all called yet, oldest first, each with the last agent
	 * called for it. Read and written only in synchronous sections (no await between), so a tick and
	 * the follow-up alarm running at once never write over each other's place.
	 */
	private pending(): FollowUp[] {
		const queue = this.meta<FollowUp[]>("follow_ups") ?? [];
		// Left by a shard before the queue: its one cursor.
		const single = this.meta<FollowUp>("follow_up");
		return single ? [single, ...queue.filter((f) => f.now !== single.now)].sort((a, b) => a.now - b.now) : queue;
	}

	private setPending(queue: FollowUp[]): void {
		this.setMeta("follow_up", null);
		this.setMeta("follow_ups", queue.length > 0 ? queue : null);
	}

	private callsOut(): CallsOut[] {
		return this.meta<CallsOut[]>("calls_out") ?? [];
	}

	/**
	 * The queue, with the calls a batch took and never saw answered put back at their minute: its
	 * instance died (evicted, redeployed) or it threw before writing their outcomes. Their agents'
	 * due times were not moved, so those still due at that minute are called for it again, before
	 * any later one (called for a later minute first, an agent would skip that slot as superseded);
	 * one that had claimed it claims nothing twice (its own cursor). Synchronous, as take() is.
	 */
	private recover(): FollowUp[] {
		const out = this.callsOut();
		const queue = this.pending();
		const left = out.filter((c) => !this.batches.has(c.batch));
		if (left.length === 0) return queue;
		for (const c of left) {
			const same = queue.find((f) => f.now === c.now);
			if (!same) queue.push({ shard: c.shard, now: c.now, after: c.after });
			else if (c.after < same.after) same.after = c.after;
		}
		queue.sort((a, b) => a.now - b.now);
		this.setPending(queue);
		this.setMeta("calls_out", out.length > left.length ? out.filter((c) => this.batches.has(c.batch)) : null);
		log.warn("shard.calls_recovered", { shard: left[0]!.shard, minute: minuteField(left[0]!.now), minutes: [...new Set(left.map((c) => c.now))].sort((a, b) => a - b).map(minuteField) });
		return queue;
	}

	/** Sets the shard's alarm a heartbeat ahead; never pushes an earlier one (a follow-up's) back. */
	private async heartbeat(): Promise<void> {
		const at = Date.now() + HEARTBEAT_MS;
		const current = await this.ctx.storage.getAlarm();
		if (current === null || current > at) await this.ctx.storage.setAlarm(at);
	}

	/**
	 * Takes the next agents to call from the queue, oldest minute first, as many as `calls` has left,
	 * and moves the queue past them, all without an await: another invocation taking agents at the
	 * same time takes the ones after these. What `batch` took is stored as its calls out in the same
	 * write, so an instance that dies before they are answered leaves them to be called again.
	 */
	private take(calls: SubrequestBudget, batch: string, minute?: FollowUp): { name: string; source: string; generation: number; now: number }[] {
		const stored = this.recover();
		// A tick's own minute joins the queue after any earlier one (a repeated tick's minute only once).
		// It is stored only if some of it is left: a tick that calls all it has writes nothing here.
		const queue = [...stored, ...(minute && !stored.some((f) => f.now === minute.now) ? [minute] : [])].sort((a, b) => a.now - b.now);
		const taken: { name: string; source: string; generation: number; now: number }[] = [];
		const out: CallsOut[] = [];
		while (queue.length > 0 && calls.left > 0) {
			const head = queue[0]!;
			const due = this.sql
				.exec<{ name: string; source: string; generation: number }>("SELECT name, source, generation FROM agents WHERE next_due_at <= ? AND name > ? ORDER BY name LIMIT ?", head.now, head.after, calls.left + 1)
				.toArray();
			const some = due.slice(0, calls.left);
			calls.note(some.length);
			for (const row of some) taken.push({ ...row, now: head.now });
			if (some.length > 0) out.push({ batch, shard: head.shard, now: head.now, after: head.after });
			if (due.length > some.length) head.after = some.at(-1)!.name;
			else queue.shift();
		}
		if (stored.length > 0 || queue.length > 0) this.setPending(queue);
		if (out.length > 0) this.setMeta("calls_out", [...this.callsOut(), ...out]);
		return taken;
	}

	/**
	 * Calls the agents the queue holds, as many as `calls` has left, and leaves the rest to the
	 * follow-up alarm. An agent taken for a later minute while its call for an earlier one is still
	 * on its way (by another invocation) waits for that call: it must reach the agent first.
	 */
	private async callPending(shard: number, calls: SubrequestBudget, minute?: FollowUp): Promise<ShardTickResult> {
		const batch = crypto.randomUUID();
		this.batches.add(batch);
		try {
			return await this.callBatch(shard, calls, batch, minute);
		} finally {
			// Its calls out are gone with its outcomes; any still stored (it threw first) are left behind.
			this.batches.delete(batch);
		}
	}

	private async callBatch(shard: number, calls: SubrequestBudget, batch: string, minute?: FollowUp): Promise<ShardTickResult> {
		const due = this.take(calls, batch, minute);
		const result: ShardTickResult = { shard, agents_called: due.length, claimed: 0, skipped: 0, failed: [], deferred: 0, oldest_deferred: null, behind: false, failing: 0 };
		// Dealt before any call leaves: the output gate holds the calls until the counter is on disk,
		// so no id handed out is ever dealt again. Dated by the newest minute called.
		const ids = due.length === 0 ? [] : this.dealOrNone(shard, due.length * TICK_JOB_IDS, Math.max(...due.map((d) => d.now)));
		const turns = due.map(({ name }) => {
			const before = this.calling.get(name);
			let done!: () => void;
			const mine = new Promise<void>((resolve) => (done = resolve));
			this.calling.set(name, mine);
			return { before, done, mine };
		});
		if (due.length > 0) {
			try {
				await this.heartbeat();
			} catch (err) {
				// The calls still go: the next tick finds them if this instance dies before they answer.
				// The minutes of the calls out, as every scheduler line names them: the oldest, and all.
				const minutes = [...new Set(due.map((d) => d.now))].sort((a, b) => a - b).map(minuteField);
				log.error("shard.heartbeat_not_set", { shard, minute: minutes[0], minutes, ...errorFields(err) });
			}
		}
		// Written together once every agent has answered: one write per answer would be one SQLite
		// commit (an fsync) per agent. If the shard dies first, its calls out are made again for their
		// minute (see recover) and each agent's own cursor claims nothing twice.
		const nextDue: [string, number, number][] = [];
		let next = 0;
		const worker = async () => {
			for (let i = next++; i < due.length; i = next++) {
				const { name, source, generation, now } = due[i]!;
				const turn = turns[i]!;
				try {
					await turn.before;
					const dealt = ids.slice(i * TICK_JOB_IDS, (i + 1) * TICK_JOB_IDS);
					const outcome = await agentRpc(this.env, name).tick(name, source as "file" | "api", now, dealt);
					result.claimed += outcome.claimed;
					result.skipped += outcome.skipped;
					nextDue.push([name, outcome.nextDue ?? NEVER, generation]);
					this.latestCall.set(name, true);
				} catch (err) {
					this.latestCall.set(name, false);
					// The heartbeat, GET /v1/status and the scheduler incident show this: a fixed public line.
					// What went wrong inside the agent (a parse error, a storage fault) is for the logs.
					result.failed.push({ agent: name, error: agentTickFailure(name) });
					log.error("shard.agent_tick_failed", { shard, agent: name, minute: minuteField(now), ...errorFields(err) });
				} finally {
					turn.done();
					if (this.calling.get(name) === turn.mine) this.calling.delete(name);
				}
			}
		};
		await Promise.all(Array.from({ length: Math.min(CONCURRENCY, due.length) }, worker));
		// Not over a PUT, DELETE or deploy that landed while the agent was being called: its due time
		// was read from the definition before it.
		// Whatever the generation: an agent whose latest call answered is reached, one whose latest call
		// failed is failing (by its latest call, not this batch's: see latestCall).
		const failedAt = Date.now();
		// Marks are rare: the marked names are read from their partial index, so a tick of thousands
		// of agents runs a statement to clear a mark only for an agent that carries one.
		const marked = new Set(this.sql.exec<{ name: string }>("SELECT name FROM agents WHERE failing_since IS NOT NULL").toArray().map((r) => r.name));
		this.ctx.storage.transactionSync(() => {
			const out = this.callsOut();
			if (out.some((c) => c.batch === batch)) {
				const others = out.filter((c) => c.batch !== batch);
				this.setMeta("calls_out", others.length > 0 ? others : null);
			}
			for (const [name, at, generation] of nextDue) this.sql.exec("UPDATE agents SET next_due_at = ? WHERE name = ? AND generation = ?", at, name, generation);
			for (const { name } of due) {
				const answered = this.latestCall.get(name);
				if (answered === false) this.sql.exec("UPDATE agents SET failing_since = coalesce(failing_since, ?) WHERE name = ?", failedAt, name);
				else if (answered === true && marked.has(name)) this.sql.exec("UPDATE agents SET failing_since = NULL WHERE name = ?", name);
				// A later call still on its way writes its own outcome when its batch ends.
				if (!this.calling.has(name)) this.latestCall.delete(name);
			}
		});
		result.failing = marked.size > 0 || result.failed.length > 0 ? this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM agents WHERE failing_since IS NOT NULL").one().n : 0;
		const left = this.pending();
		if (left.length > 0) {
			// Bound as one JSON parameter: two a minute passed SQLite's 100 from the 51st minute
			// pending, and the shard, its count throwing, never called through its queue again.
			result.deferred = this.sql
				.exec<{ n: number }>(
					`SELECT count(*) AS n FROM agents a WHERE EXISTS (
					   SELECT 1 FROM json_each(?) f WHERE a.next_due_at <= json_extract(f.value, '$.now') AND a.name > json_extract(f.value, '$.after'))`,
					JSON.stringify(widestOwed(left)),
				)
				.one().n;
		}
		result.oldest_deferred = left[0]?.now ?? null;
		// The minute this invocation is for: a tick's own, or the oldest a follow-up called for.
		const served = minute?.now ?? due[0]?.now ?? left[0]?.now;
		result.behind = this.noteBacklog(shard, left, result.deferred, served);
		if (left.length > 0) {
			log.warn("shard.calls_deferred", { shard, minute: minuteField(served!), minutes: left.map((f) => minuteField(f.now)), agents_called: due.length, deferred: result.deferred });
			await this.ctx.storage.setAlarm(Date.now());
		} else if (due.length > 0 && this.callsOut().length === 0 && !this.meta<NoticeLeft>("retention_notice")) {
			// Nothing left for an alarm to do: the heartbeat would only wake the shard (a billed request) to find that out.
			await this.ctx.storage.deleteAlarm();
		}
		return result;
	}

	/**
	 * Whether this shard's queue is behind its ticks, logged once as it falls behind and once as it
	 * catches up: a shard that never catches up would otherwise warn at every tick and follow-up, or
	 * grow its queue unsaid. Synchronous, as the queue's readers are.
	 */
	private noteBacklog(shard: number, left: readonly FollowUp[], deferred: number, minute: number | undefined): boolean {
		const was = this.meta<boolean>("behind") ?? false;
		const behind = isBehind(left.map((f) => f.now), was);
		if (behind === was) return behind;
		this.setMeta("behind", behind ? true : null);
		const minutes = { pending_minutes: left.length, oldest_minute: left[0] ? new Date(left[0].now).toISOString() : null, newest_minute: left.at(-1) ? new Date(left.at(-1)!.now).toISOString() : null, deferred };
		const at = minute === undefined ? null : minuteField(minute);
		if (behind) log.warn("shard.backlog_behind", { shard, minute: at, ...minutes });
		else log.info("shard.backlog_caught_up", { shard, minute: at, ...minutes });
		return behind;
	}

	/**
	 * A lowered RETENTION_DAYS reaches every agent of this shard: each keeps the alarm it set for its
	 * oldest record's expiry under the old value (weeks away, for an idle or paused agent that nothing
	 * else wakes). After the tick's claims, once per change. Best effort, as a deploy's notice is: an
	 * agent that cannot be told prunes at the expiry it holds, where telling the whole shard again at
	 * every tick would wake every agent each minute for the one that fails.
	 */
	private async noticeRetentionVar(shard: number, calls: SubrequestBudget, minute: number | null): Promise<void> {
		const at = minute === null ? null : minuteField(minute);
		const days = String(numberVar(this.env, "RETENTION_DAYS"));
		const seen = this.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'retention_days'").toArray()[0]?.value;
		const left = this.meta<NoticeLeft>("retention_notice");
		if (seen === days) {
			// Set back to the value last recorded before a notice was done: that notice is moot, and a
			// later one starts from the first agent.
			if (left) this.setMeta("retention_notice", null);
			return;
		}
		if (seen !== undefined && Number(days) < Number(seen)) {
			// Told in name order, as many an invocation as its subrequests allow; the follow-up alarm
			// tells the rest, and the new value is recorded once every agent has been told.
			// Lowered again during a notice: the agents already told heard only the earlier value.
			const after = left && left.days === days ? left.after : "";
			if (calls.left === 0) return this.noticeLater(shard, after, days);
			const names = this.sql.exec<{ name: string }>("SELECT name FROM agents ORDER BY name").toArray().map((r) => r.name);
			calls.note();
			const deleted = await this.deletedSince(shard, Date.now() - Number(seen) * DAY_MS, names, at);
			const all = [...names, ...deleted].sort().filter((name) => name > after);
			const told = all.slice(0, calls.left);
			calls.note(told.length);
			for (const name of told) {
				try {
					await agentRpc(this.env, name).retentionShortened();
				} catch (err) {
					log.error("shard.retention_notice_failed", { shard, minute: at, agent: name, ...errorFields(err) });
				}
			}
			if (told.length < all.length) return this.noticeLater(shard, told.at(-1) ?? after, days);
			log.info("shard.retention_shortened", { shard, minute: at, from: Number(seen), to: Number(days) });
		}
		this.ctx.storage.transactionSync(() => {
			this.setMeta("retention_notice", null);
			this.sql.exec("INSERT INTO meta (key, value) VALUES ('retention_days', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", days);
		});
	}

	/** Leaves the rest of a retention notice, the agents named after `after`, to the follow-up alarm. */
	private async noticeLater(shard: number, after: string, days: string): Promise<void> {
		this.setMeta("retention_notice", { shard, after, days } satisfies NoticeLeft);
		await this.ctx.storage.setAlarm(Date.now());
	}

	/**
	 * API agents of this shard's names deleted since `since` (their history may still be kept under
	 * the old RETENTION_DAYS): no shard calls them any more, and an alarm set under the old value is
	 * all that would wake them. From the D1 registry, which keeps a deleted agent's row; a read that
	 * fails leaves them to that alarm, as an agent that cannot be told is.
	 */
	private async deletedSince(shard: number, since: number, listed: readonly string[], minute: string | null): Promise<string[]> {
		try {
			const { results } = await this.env.DB.prepare("SELECT name FROM agents WHERE deleted_at >= ? ORDER BY name").bind(since).all<{ name: string }>();
			return results.map((r) => r.name).filter((name) => shardOf(name) === shard && !listed.includes(name));
		} catch (err) {
			log.error("shard.retention_notice_failed", { shard, minute, deleted_agents: true, ...errorFields(err) });
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
		const oldest = idDay(Date.now() - ID_COUNTER_DAYS * DAY_MS);
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
			log.error("shard.job_ids_not_dealt", { shard, minute: minuteField(now), ...errorFields(err) });
			return [];
		}
	}

	/**
	 * Brings this shard's file agents in line with the bundled fleet.yaml once per deploy: new and
	 * changed agents are called at the next tick (their own state decides what is due), and agents
	 * gone from the file stop being called.
	 */
	private async syncFileAgents(shard: number, calls: SubrequestBudget, now: number): Promise<void> {
		const minute = minuteField(now);
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
		// Counted, not capped: these are agents of the bundled fleet.yaml, a few per shard, where the
		// due agents and a retention notice grow with the API agents.
		for (const name of gone) {
			try {
				calls.note();
				await agentRpc(this.env, name).dropFromFleet(previous.get(name) ?? null);
				told.push(name);
			} catch (err) {
				log.error("shard.drop_failed", { shard, minute, agent: name, ...errorFields(err) });
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
			if (mine.length > 0) calls.note();
			for (const { name } of mine.length === 0 ? [] : await liveRegisteredAmong(this.env.DB, [...names])) {
				calls.note();
				await markAgentDeleted(this.env.DB, name, Date.now());
				log.warn("shard.api_agent_replaced_by_file", { shard, minute, agent: name });
			}
		} catch (err) {
			retired = false;
			log.error("shard.api_agent_retire_failed", { shard, minute, ...errorFields(err) });
		}
		// Its object would otherwise keep the alarm it set for the old retention's expiry (weeks away,
		// for an agent nothing else wakes). Best effort: the pass after that expiry prunes anyway.
		for (const agent of mine) {
			const before = previous.get(agent.name);
			if (!before || retentionDays(agent, this.env) >= retentionDays(before, this.env)) continue;
			try {
				calls.note();
				await agentRpc(this.env, agent.name).retentionShortened();
			} catch (err) {
				log.error("shard.retention_notice_failed", { shard, minute, agent: agent.name, ...errorFields(err) });
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
