import type { ModelClient } from "../../src/agent/contracts.ts";
import { createModelClient, type ModelClientOptions } from "../../src/agent/model-client.ts";
import type { AgentDefinition } from "../../src/config/schema.ts";
import { numberVar } from "../../src/config/vars.ts";
import { transition } from "../../src/jobs/model.ts";
import { errorFields, log } from "../../src/log.ts";
import { abortable } from "../../src/shared/abortable.ts";
import { deadline } from "../../src/shared/deadline.ts";
import { countedEnv } from "../../src/shared/subrequests.ts";
import { Closing } from "./closing.ts";
import { dueSends, nextSendAt } from "./effects.ts";
import { forgettable, type Forgettable } from "./forget.ts";
import { jobCounts, pendingJobs, putJob } from "./jobs.ts";
import { readNotepad } from "./notepad.ts";
import { outboxSize } from "./outbox.ts";
import { PassBudget } from "./pass-budget.ts";
import { unconsolidated } from "./output-store.ts";
import { deletePrunedOutputs, nextExpiryAt, pruneJobRows, retentionDays } from "./retention.ts";
import { computeRevision, knownRevision } from "./revisions.ts";
import { dueJobIds, getSetup, nextStepTime, waitingJobIds } from "./runner/session.ts";
import { startJob } from "./runner/start.ts";
import { HEARTBEAT_MS, logEndedUnstarted, type InflightTool, type StepDeps } from "./runner/step-common.ts";
import { step } from "./runner/step.ts";
import { currentDefinition, keptDefinition, readState, storedAgentName } from "./state.ts";
import type { RegistrySync } from "./registry-sync.ts";
import type { StreamHub } from "./streams.ts";
import { expireTriggerKeys } from "./triggers.ts";
import { DAY_MS } from "../../src/shared/time.ts";

/** How soon the alarm retries an outbox that D1 refused. */
const OUTBOX_RETRY_MS = 10_000;
/** Between batches of a retention backlog: each is up to 50 jobs' R2 deletes and rows. */
const PRUNE_BACKLOG_MS = 1_000;
/** How often an agent looks for jobs past their retention. */
const PRUNE_EVERY_MS = 3600_000;

/**
 * Resolves after the current event's I/O is issued. Requests leave in the order they are made, and
 * a D1 write made first is served first on a thread it shares with the Worker (locally, all of
 * them): an index write waits a turn so that a job's model call, the longer wait, leaves first.
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/** How a pass sets and clears the timers of waits that come due while it runs (see workAt). */
export interface WakeTimers {
	set(wake: () => void, ms: number): unknown;
	clear(timer: unknown): void;
}

/** The isolate's own timers: what every deployed pass uses. */
const isolateTimers: WakeTimers = {
	set: (wake, ms) => setTimeout(wake, ms),
	clear: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
};

/**
 * An agent's alarm work, in passes: flush the D1 outbox, start what may start, run due jobs turn by
 * turn (a loop per job), close the jobs that ended (closing.ts: effects, outputs, sends), prune past
 * retention, and set the next alarm. One per AgentDO instance; the object's RPC methods and its alarm call in.
 */
export class Passes {
	private readonly ctx: DurableObjectState;
	private readonly sql: SqlStorage;
	private readonly hub: StreamHub;
	private readonly currentEnv: () => Env;
	/** The object's syncs of its shard and the D1 registry: each pass runs one left pending (see registry-sync.ts). */
	private readonly registry: Pick<RegistrySync, "catchUp" | "dueAt"> | null;
	/** In-flight model calls by job, so a cancel reaching this instance aborts them (tool calls are let finish). */
	readonly inflight = new Map<string, AbortController>();
	/** In-flight tool calls by job: only a forced cancel reaching this instance cuts them off. */
	readonly toolCalls = new Map<string, InflightTool>();
	/** The alarm work in progress: alarms never overlap in one instance, even when fired by hand. */
	working: Promise<void> | null = null;
	/** The pass queued behind `working` for calls that came while it ran. */
	private rerun: Promise<void> | null = null;
	/**
	 * Each job being stepped in this instance, by id: a job is never stepped by two loops at once,
	 * and a job that may start need not wait for another's loop to end (see launch).
	 */
	private readonly loops = new Map<string, Promise<void>>();
	/** The running pass's budget (the last pass's between passes): loops it launches share it. */
	private budget = new PassBudget(0, Number.POSITIVE_INFINITY);
	/** The env the pass's outbound calls go through, counted into its budget (see outboundEnv). */
	private counted: { raw: Env; env: Env } | null = null;
	/** Timers for waits that come due while other loops keep the pass running (see wakeAt). */
	private readonly wakeups = new Set<unknown>();
	/** What sets and clears those timers: the isolate's; a test swaps in its own to fire them at a time it chooses. */
	wakeTimers: WakeTimers = isolateTimers;
	/** A loop's step that threw: the pass fails with it once every loop has ended, so the alarm is retried. */
	private loopError: unknown = null;
	/** One client per instance, so its key-rotation cursor carries from turn to turn. */
	private modelClient: ModelClient | null = null;
	/** The options that client is made with (tests shorten its stream idle timeout). */
	private modelOptions: ModelClientOptions = {};
	/** The closing work of the jobs that end: effects, outputs, sends, the D1 outbox. */
	readonly closing: Closing;
	/** When retention was last pruned; a shortened retention resets it so the next pass prunes. */
	lastPrune = 0;
	/** The last prune took a full batch, so more may be past retention: the next pass prunes again. */
	private pruneBacklog = false;
	/**
	 * The last prune left pruned jobs' output in R2 (see deletePrunedOutputs). Kept in memory: a fresh
	 * instance's first pass prunes, which finds them again.
	 */
	private outputsLeft = false;
	constructor(ctx: DurableObjectState, env: () => Env, hub: StreamHub, registry: Pick<RegistrySync, "catchUp" | "dueAt"> | null = null) {
		this.ctx = ctx;
		this.sql = ctx.storage.sql;
		this.currentEnv = env;
		this.hub = hub;
		this.registry = registry;
		this.closing = new Closing(ctx, () => this.outboundEnv, hub, () => this.working !== null);
	}

	/** The object's env as it is now. */
	private get env(): Env {
		return this.currentEnv();
	}

	/**
	 * The object's env with its fetches, R2, D1 and Durable Object calls counted into the running
	 * pass's budget: what jobs, their model client, the closing work and the registry sync send
	 * through (tests swap the object's env, so it is made again when that changes). Between passes
	 * it counts into the last one's, which nothing reads any more.
	 */
	get outboundEnv(): Env {
		const raw = this.currentEnv();
		if (this.counted?.raw !== raw) this.counted = { raw, env: countedEnv(raw, () => this.budget.note()) };
		return this.counted.env;
	}

	/** Runs alarm work until nothing is due now. */
	async settle(): Promise<void> {
		for (let i = 0; i < 1000; i++) {
			await this.work();
			if (!this.hasDueWork()) break;
		}
		// As an alarm does (AgentDO.alarm).
		await this.closing.alertsSent();
	}

	/** Sets the alarm to now unless one is already due sooner. */
	async alarmNow(): Promise<void> {
		await this.alarmAt(Date.now());
	}

	/** The alarm as stored: read before a write that alarmWithWrite goes with. */
	alarm(): Promise<number | null> {
		return this.ctx.storage.getAlarm();
	}

	async alarmAt(at: number): Promise<void> {
		const current = await this.ctx.storage.getAlarm();
		if (current === null || current > at) await this.ctx.storage.setAlarm(at);
	}

	/**
	 * Runs a pass of the alarm's work. A call that comes while a pass is under way gets one more pass
	 * after it (shared by every such call): the running pass may have read its due jobs before the
	 * caller's change (a decision, a new job), and joining it would leave that change to whatever
	 * alarm the pass happens to set last.
	 */
	work(): Promise<void> {
		if (this.working) {
			// What the caller changed (a new job, a decision) starts now, not when every running job's
			// loop has ended: that can be minutes. The pass after still does the rest.
			this.launch();
			// After the running pass however it ends: its failure is its own callers' to see.
			this.rerun ??= this.working
				.catch(() => {})
				.then(() => {
					this.rerun = null;
					return this.work();
				});
			return this.rerun;
		}
		this.working = this.doWork().finally(() => {
			this.working = null;
		});
		return this.working;
	}

	private async doWork(): Promise<void> {
		// Everything the pass sends from here on counts into its budget, its first index flush too.
		this.budget = new PassBudget(Date.now(), numberVar(this.env, "SUBREQUEST_LIMIT"));
		const state = readState(this.sql);
		// Beside the jobs, not before them; it never rejects. Done before the next alarm is set.
		const synced = this.registry?.catchUp();
		// The outbox goes to D1 while the jobs take their first steps, a turn later: a run just
		// triggered sends its model call first, without waiting on the index write of its creation.
		const indexed = nextTurn().then(() => this.closing.flushIndex());
		let retryOutbox: boolean;
		let failed: unknown = null;
		// Noted however the pass ends: a pass that failed after R2 took an output must not leave it to
		// be put again by every retry.
		try {
			const agent = state && currentDefinition(state);
			if (state && !agent) this.cancelOrphans(state.source === "file" ? "agent removed from fleet.yaml" : "agent deleted");
			// Known before any job starts: a job records the definition it runs on.
			if (agent && knownRevision(state, agent) === null) await computeRevision(agent);
			this.launch();
			// Jobs that wait from an earlier pass (a rate limit, an approval's expiry) come due while
			// this one's loops run: their alarm cannot fire before it ends, so a timer takes them up.
			if (this.loops.size > 0) for (const jobId of waitingJobIds(this.sql, Date.now())) this.wakeAt(jobId, this.budget);
			while (this.loops.size > 0) await Promise.allSettled([...this.loops.values()]);
			for (const timer of this.wakeups) this.wakeTimers.clear(timer);
			this.wakeups.clear();
			// A job's failing step fails the pass (so an alarm is retried), but only after the closing
			// work the other jobs need: their effects, outputs and index rows.
			failed = this.loopError;
			this.loopError = null;
			// With the jobs' last writes, before the output's put: nothing is written between R2's answer
			// and the index's final row. After any mid-pass closing work, never beside it: a delivery
			// due is sent once.
			retryOutbox = await this.closing.serially(async () => {
				await this.closing.closeJobs(true, state?.name ?? "");
				const pruning = this.pruneRows(Date.now());
				// Flushed again even when the first flush failed: D1 may be back, and the outbox only
				// grows until a flush succeeds.
				await indexed;
				const flushed = await this.closing.flushIndex();
				// After the index has dropped the pruned jobs: a job listed keeps its output until then.
				if (pruning !== null) await this.deletePrunedOutputs();
				return !flushed;
			});
		} finally {
			this.closing.noteAcknowledged();
			await synced;
		}
		await this.scheduleNext(retryOutbox);
		if (failed !== null) throw failed;
	}

	/**
	 * Starts what may start (pending jobs, up to the agent's capacity) and a loop for each due job
	 * that has none. Synchronous up to the loops' first awaits, so a call during a pass starts its
	 * job at once.
	 */
	private launch(): void {
		this.startPending();
		for (const jobId of dueJobIds(this.sql, Date.now())) this.loop(jobId);
	}

	/** Starts pending jobs up to the agent's capacity, each with a loop of its own. */
	private startPending(): void {
		const state = readState(this.sql);
		const agent = state && currentDefinition(state);
		// A disabled agent, like a paused one, starts nothing: its queued runs wait until it is enabled.
		if (!agent || !agent.enabled || state.pausedAt !== null) return;
		const { active, pending } = jobCounts(this.sql);
		if (pending === 0) return;
		const revision = knownRevision(state, agent);
		let cancelled = 0;
		for (const job of pendingJobs(this.sql, Math.max(agent.max_concurrent - active, 0))) {
			// One transaction: its first message may take several rows (see messages.ts).
			const started = this.ctx.storage.transactionSync(() => startJob(this.sql, job, agent, revision, readNotepad(this.sql), Date.now()));
			this.hub.publish(job.id);
			if (started.status === "running") this.loop(job.id);
			else cancelled++;
		}
		// A follow-up cancelled at its start (its agent changed) took no slot: the next in line may.
		if (cancelled > 0) this.startPending();
	}

	/** Steps a job turn by turn within the pass's budget, unless a loop of this instance already does. */
	private loop(jobId: string): void {
		if (this.loops.has(jobId)) return;
		const budget = this.budget;
		const deps = this.stepDeps(budget);
		let waiting = false;
		const loop = (async () => {
			while (!budget.spent()) {
				const result = await step(deps, jobId);
				waiting = result === "wait";
				if (result !== "continue") break;
			}
		})()
			.catch((err: unknown) => {
				// The first fails the pass; each is logged, or a second job's crash would leave no trace.
				this.loopError ??= err;
				log.error("job.step_failed", { agent: storedAgentName(this.sql), job_id: jobId, ...errorFields(err) });
			})
			.finally(() => {
				this.loops.delete(jobId);
				if (waiting && this.loops.size > 0) this.wakeAt(jobId, budget);
				// Its slot may be free: a queued job starts now, not when the pass ends.
				this.startPending();
				// Its job may be over while others run on: its effects and index row go now, not
				// when the last loop of the pass ends.
				if (this.loops.size > 0) void this.closing.serially(() => this.closing.finishEarly());
			});
		this.loops.set(jobId, loop);
	}

	/**
	 * Resolves when the job's loop in this instance has ended (at once when it has none), or after
	 * `ms` at the latest: a caller may wait for a step under way without waiting on a slow one.
	 */
	async loopEnded(jobId: string, ms: number): Promise<void> {
		const loop = this.loops.get(jobId);
		if (!loop) return;
		const limit = deadline(ms);
		try {
			await abortable(loop, limit.signal).catch(() => {});
		} finally {
			limit.clear();
		}
	}

	/**
	 * A job that waits (a rate limit, an approval's expiry) while other loops keep the pass running:
	 * the alarm for its next step cannot fire until the pass ends (alarms do not overlap), so a timer
	 * in this instance takes it up on time, within the pass's budget. Cleared when the pass ends,
	 * whose alarm then stands in for it.
	 */
	private wakeAt(jobId: string, budget: PassBudget): void {
		const at = getSetup(this.sql, jobId)?.nextStepAt;
		if (at === undefined || !budget.covers(at)) return;
		this.workAt(at);
	}

	/** Runs the work at `at` in this instance: a timer of the running pass, cleared when it ends. */
	private workAt(at: number): void {
		const timer = this.wakeTimers.set(() => {
			this.wakeups.delete(timer);
			this.startNow();
		}, Math.max(0, at - Date.now()));
		this.wakeups.add(timer);
	}

	/**
	 * Prunes a batch of jobs older than the agent's retention, at most hourly per instance while
	 * there is no backlog. A full batch is pruned again at the next pass, which scheduleNext sets
	 * soon: an agent that makes more jobs an hour than a batch (one a minute does) would otherwise
	 * outgrow its retention for good, and a shortened retention would take days to apply. The hourly
	 * pass also deletes expired Idempotency-Keys and webhook signatures, which triggers only ignore.
	 */
	async prune(now: number, force = false): Promise<number> {
		const pruned = this.pruneRows(now, force);
		if (pruned !== null) await this.deletePrunedOutputs();
		return pruned ?? 0;
	}

	/**
	 * The rows of a prune (see pruneJobRows): null when none is due, else how many jobs it pruned.
	 * Their R2 output is deleted by deletePrunedOutputs, which a pass calls once the D1 index has
	 * dropped them.
	 */
	pruneRows(now: number, force = false): number | null {
		const hourly = force || now - this.lastPrune >= PRUNE_EVERY_MS;
		if (!hourly && !this.pruneBacklog) return null;
		this.lastPrune = now;
		this.pruneBacklog = false;
		if (hourly) expireTriggerKeys(this.sql, now);
		const state = readState(this.sql);
		if (!state) return null;
		try {
			const { pruned, full } = pruneJobRows(this.sql, state.name, now - this.retentionMs(keptDefinition(state)), now);
			this.pruneBacklog = full;
			// An output this pass put (R2 down since the job ended, past its retention) is not noted
			// for a job now gone: its row would outlive it, and keep a deleted agent from being forgotten.
			this.closing.dropConsolidated(pruned);
			return pruned.length;
		} catch (err) {
			log.warn("retention.failed", { agent: state.name, ...errorFields(err) });
			return 0;
		}
	}

	/**
	 * Deletes the R2 output of the jobs pruned, as far as the pass's subrequests allow: what is left
	 * makes a backlog, taken up by the next alarm run. An R2 failure leaves it for the next prune.
	 */
	async deletePrunedOutputs(): Promise<void> {
		const state = readState(this.sql);
		if (!state) return;
		const budget = this.budget;
		try {
			const left = await deletePrunedOutputs(this.sql, this.outboundEnv.OUTPUT, state.name, () => budget.spent());
			if (left > 0) this.pruneBacklog = true;
			this.outputsLeft = left > 0;
		} catch (err) {
			// R2 failing: the next prune is the hour's, not a backlog's a second later, which would ask
			// R2 every second while it is down.
			this.pruneBacklog = false;
			this.outputsLeft = true;
			log.warn("retention.failed", { agent: state.name, ...errorFields(err) });
		}
	}

	/** How long jobs and ledger rows are kept under `definition`: its retention_days, else the deployment's. */
	retentionMs(definition: AgentDefinition | null): number {
		return retentionDays(definition, this.env) * DAY_MS;
	}

	/**
	 * Queued runs of an agent that no longer exists (a file agent dropped from fleet.yaml by a deploy,
	 * an API agent deleted) would never start: they end cancelled, saying why, instead of waiting forever.
	 */
	cancelOrphans(reason: string, now = Date.now()): number {
		return this.ctx.storage.transactionSync(() => {
			const jobs = pendingJobs(this.sql, 1000);
			for (const job of jobs) {
				const done = transition(job, "cancelled", { reason, at: new Date(now) });
				putJob(this.sql, done, now);
				logEndedUnstarted(done, reason);
				this.hub.publish(job.id);
			}
			return jobs.length;
		});
	}

	/** Whether a queued run could start now: the agent defined, enabled and not paused, and below its capacity. */
	canStartQueued(): boolean {
		const state = readState(this.sql);
		const agent = state && currentDefinition(state);
		const counts = jobCounts(this.sql);
		return agent !== null && agent.enabled && state?.pausedAt === null && counts.pending > 0 && counts.active < agent.max_concurrent;
	}

	/**
	 * Queued runs (a tick's claims) that may start while a pass works: started at `at` in this
	 * instance, as their alarm could not fire before the pass ends (alarms do not overlap). A timer
	 * of the pass's, cleared when it ends, whose alarm then stands in for it.
	 */
	startDuringPass(at: number): void {
		if (this.working !== null && this.canStartQueued()) this.workAt(at);
	}

	/**
	 * Brings the alarm to `at` for queued runs that could start but wait for nothing to wake the
	 * object: held while the agent could not start them (an automatic pause since lifted, a deploy
	 * that enabled it again), their pass long over and the alarm left at retention's expiry, days
	 * out. An alarm due sooner (a claim's spread start) is left as it is.
	 */
	async startStartable(at: number): Promise<void> {
		if (this.working === null && this.canStartQueued()) await this.alarmAt(at);
	}

	hasDueWork(): boolean {
		const canStart = this.canStartQueued();
		const effects = this.sql.exec<{ n: number }>("SELECT (SELECT count(*) FROM final_effects) + (SELECT count(*) FROM incident_events) AS n").one().n;
		return (!this.closing.indexDown && (outboxSize(this.sql, this.closing.acked) > 0 || effects > 0)) || dueSends(this.sql, Date.now()) > 0 || canStart || dueJobIds(this.sql, Date.now()).length > 0 || (!this.closing.outputDown && unconsolidated(this.sql, 1).length > 0);
	}

	async scheduleNext(retryOutbox: boolean): Promise<void> {
		const candidates: number[] = [];
		const next = nextStepTime(this.sql);
		if (next !== null) candidates.push(next);
		const send = nextSendAt(this.sql);
		if (send !== null) candidates.push(send);
		const retrying = retryOutbox || (this.closing.outputDown && unconsolidated(this.sql, 1).length > 0);
		if (retrying) candidates.push(Date.now() + OUTBOX_RETRY_MS);
		else if (outboxSize(this.sql, this.closing.acked) > 0 || this.hasDueWork()) candidates.push(Date.now());
		// Not while a store is down: the backlog then waits for the retry.
		if (this.pruneBacklog && !retrying) candidates.push(Date.now() + PRUNE_BACKLOG_MS);
		const sync = this.registry?.dueAt() ?? null;
		if (sync !== null) candidates.push(sync);
		// The oldest record's retention runs out even if nothing else ever wakes this object (an
		// agent deleted, or triggered once and never again), so the alarm waits for that too; at
		// most hourly, as prune() runs.
		const expiry = nextExpiryAt(this.sql, () => {
			const state = readState(this.sql);
			return state && this.retentionMs(keptDefinition(state));
		});
		if (expiry !== null) candidates.push(Math.max(expiry, this.lastPrune + PRUNE_EVERY_MS));
		// Output R2 failed to delete is tried again at the next prune, whatever else wakes the object:
		// one that nothing wakes would otherwise keep it in R2 for good.
		if (this.outputsLeft) candidates.push(this.lastPrune + PRUNE_EVERY_MS);
		// A deleted agent of which nothing is left wakes once more, to be forgotten (AgentDO.forgetIfGone).
		// Asked only of an object with nothing else to do: the hot path does not read its state.
		const forget = candidates.length === 0 ? this.forgettable() : null;
		if (forget) candidates.push(forget.at);
		if (candidates.length > 0) await this.ctx.storage.setAlarm(Math.max(Date.now(), Math.min(...candidates)));
		// Nothing left to do: a model call's heartbeat alarm would only wake the object to find that
		// out, and each alarm is a billed request.
		else await this.ctx.storage.deleteAlarm();
	}

	/** This object's deleted agent, when nothing of it is left (see forget.ts). */
	forgettable(): Forgettable | null {
		return forgettable(this.sql, this.closing.acked, (definition) => this.retentionMs(definition));
	}

	/** Makes the model client anew with `options`, from the next call on. */
	setModelOptions(options: ModelClientOptions): void {
		this.modelOptions = options;
		this.modelClient = null;
	}

	stepDeps(budget = this.budget): StepDeps {
		return {
			sql: this.sql,
			transact: (write) => this.ctx.storage.transactionSync(write),
			env: this.outboundEnv,
			model: (this.modelClient ??= createModelClient(this.outboundEnv, this.modelOptions)),
			now: () => Date.now(),
			// An alarm already due by then is heartbeat enough; moving it is a write per model call.
			heartbeat: (at) => this.alarmAt(at),
			inflight: this.inflight,
			toolCalls: this.toolCalls,
			notify: (jobId) => this.hub.publish(jobId),
			handOver: () => budget.spent(),
		};
	}

	/**
	 * Runs the alarm's work in this instance once the caller has its answer, instead of waiting for
	 * the alarm's delivery (milliseconds locally, more in production). The alarm set before stays
	 * as the safety net: if this instance dies, it runs the same idempotent work.
	 */
	startNow(): void {
		this.ctx.waitUntil(
			this.work().catch((err: unknown) => log.warn("agent.work_failed", { agent: storedAgentName(this.sql), ...errorFields(err) })),
		);
	}

	/**
	 * Acts on a change (a decision, a cancel, runs that may start) now, in this instance, with the
	 * safety-net alarm behind it: an alarm set for now would wait for a running pass to end.
	 */
	async workNow(): Promise<void> {
		this.startNow();
		await this.armSafetyNet();
	}

	/** Sets an alarm now if there is work an alarm does; never pushes an earlier one back. */
	async armAlarm(): Promise<void> {
		if (!this.hasDueWork()) return;
		await this.alarmNow();
	}

	/**
	 * The alarm of a write that makes work due (a trigger's, a continue's or a fork's job, a decision,
	 * a resume, a definition's sync), set at `at` in the same synchronous turn as the write, `current`
	 * read before it: storage commits the two as one, so an instance that dies before the work's pass
	 * sets an alarm leaves neither, never work that nothing will wake (an agent without schedules has
	 * no tick to call it again). Not awaited before the turn ends, or it would be a turn of its own.
	 */
	alarmWithWrite(current: number | null, at = Date.now() + HEARTBEAT_MS): Promise<void> | null {
		return current === null || current > at ? this.ctx.storage.setAlarm(at) : null;
	}

	/**
	 * After startNow: the work is under way in this instance, so the alarm is only the safety net
	 * for an instance that dies, and waits a heartbeat. Set at now, it would fire during the work
	 * (a billed request and a second pass); the job's model calls then find it set and leave it.
	 */
	async armSafetyNet(): Promise<void> {
		if (this.working === null && !this.hasDueWork()) return;
		await this.alarmAt(Date.now() + HEARTBEAT_MS);
	}
}
