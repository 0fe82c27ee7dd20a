import { DurableObject } from "cloudflare:workers";
import { definitionRevision } from "../../src/config/fleet.ts";
import { readinessProblems } from "../../src/config/readiness.ts";
import type { AgentDefinition } from "../../src/config/schema.ts";
import type { JobRecord } from "../../src/jobs/model.ts";
import { errorFields, log } from "../../src/log.ts";
import { isRefusal, refuse, type Refusal } from "../../src/shared/refusal.ts";
import { migrate } from "../../src/store/sqlite-migrations.ts";
import { getJob, jobCounts, jobsWithStatus, latestJob, pendingJobs, putJob } from "./jobs.ts";
import { listOccurrences, type Occurrence } from "./ledger.ts";
import { flushOutbox, outboxSize, settleOutbox, type OutboxAcks } from "./outbox.ts";
import { AGENT_MIGRATIONS } from "./schema.ts";
import { claimDue, forgetSchedules, noteTimingChanges, type TickOutcome } from "./scheduling.ts";
import { currentDefinition, ensureState, forgetDeletedAgent, keepLastDefinition, markDeleted, readState, saveDefinition, setPaused, type AgentSource, type AgentState } from "./state.ts";
import { expireTriggerKeys, triggerJob, type TriggerRequest } from "./triggers.ts";
import type { ModelClient } from "../../src/agent/contracts.ts";
import { createModelClient } from "../../src/agent/model-client.ts";
import { createFollowUp } from "./runner/follow-up.ts";
import { decideToolCall, dueJobIds, getSetup, nextStepTime, requestCancel } from "./runner/session.ts";
import { resumeFromApproval } from "./runner/approval.ts";
import { InvalidToolSchemaError, toolInputProblems } from "../../src/agent/tools/input-check.ts";
import { startJob } from "./runner/start.ts";
import { finish, HEARTBEAT_MS, step, type StepDeps } from "./runner/step.ts";
import { isFinal, transition } from "../../src/jobs/model.ts";
import { serveOutput, serveStream } from "./output-http.ts";
import { consolidateJob, flushChunks, recordConsolidated, unconsolidated, type Consolidated } from "./output-store.ts";
import { StreamHub } from "./streams.ts";
import { oldestRecordAt, PRUNE_BATCH, pruneJobs, retentionDays } from "./retention.ts";
import { deleteNote, readNotepad, setNote, type Notepad } from "./notepad.ts";
import { SEND_TIMEOUT_MS, dueSends, nextSendAt, queueEffects, sendDue } from "./effects.ts";
import { flushIncidentEvents } from "./incidents.ts";

/** How soon the alarm retries an outbox that D1 refused. */
const OUTBOX_RETRY_MS = 10_000;
/** Between batches of a retention backlog: each is up to 50 jobs' R2 deletes and rows. */
const PRUNE_BACKLOG_MS = 1_000;
/** An alarm run hands over to a fresh one after this long, well inside the 15-minute wall-time limit. */
const ALARM_BUDGET_MS = 10 * 60_000;
/** Revisions of the bundled fleet's agent definitions: the objects live as long as the isolate. */
const fileRevisions = new WeakMap<AgentDefinition, string>();
/** Scheduled starts are spread over this window, by a stable hash of the agent's name. */
const START_SPREAD_MS = 5_000;
function startSpreadMs(agent: string): number {
	let h = 0;
	for (let i = 0; i < agent.length; i++) h = (Math.imul(h, 31) + agent.charCodeAt(i)) >>> 0;
	return h % START_SPREAD_MS;
}
/**
 * An API agent's revision, computed when it was defined, or a file agent's, once computed in this
 * isolate; null when it must be computed (digesting is async). With it in hand a claim or trigger
 * runs on the state it has just read without yielding, so nothing can have changed that state and
 * it need not be read again inside the transaction.
 */
function knownRevision(state: AgentState, agent: AgentDefinition): string | null {
	if (state.source === "api" && state.definitionRevision) return state.definitionRevision;
	return fileRevisions.get(agent) ?? null;
}
/** The definition whose retention an agent's history keeps: its current one, or a deleted API agent's or dropped file agent's last. */
function keptDefinition(state: AgentState): AgentDefinition | null {
	return currentDefinition(state) ?? state.definition;
}
/** How often an agent looks for jobs past their retention. */
const PRUNE_EVERY_MS = 3600_000;

export interface AgentStatus {
	name: string;
	source: AgentSource;
	deleted: boolean;
	paused: { at: string; reason: string | null; by: string | null } | null;
	running_jobs: { id: string; status: string; started_at: string | null; schedule: string | null }[];
	queued_jobs: number;
	last_job: { id: string; status: string; exit_reason: string | null; finished_at: string | null } | null;
	index_backlog: number;
}

/**
 * Resolves after the current event's I/O is issued. Requests leave in the order they are made, and
 * a D1 write made first is served first on a thread it shares with the Worker (locally, all of
 * them): an index write waits a turn so that a job's model call, the longer wait, leaves first.
 */
const nextTurn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * One per agent, addressed by the agent's name: the source of truth for that agent's schedule
 * state, occurrence ledger and jobs. Callers use its RPC methods; `fetch` is kept for streams.
 */
export class AgentDO extends DurableObject<Env> {
	readonly schemaVersion: number;
	private readonly sql: SqlStorage;
	/** In-flight model and tool calls by job, so a cancel reaching this instance aborts them. */
	private readonly inflight = new Map<string, AbortController>();
	/** The alarm work in progress: alarms never overlap in one instance, even when fired by hand. */
	private working: Promise<void> | null = null;
	/** The pass queued behind `working` for calls that came while it ran. */
	private rerun: Promise<void> | null = null;
	/**
	 * Each job being stepped in this instance, by id: a job is never stepped by two loops at once,
	 * and a job that may start need not wait for another's loop to end (see launch).
	 */
	private readonly loops = new Map<string, Promise<void>>();
	/** When the running pass began: loops it launches share its time budget. */
	private passBegan = 0;
	/** The latest closing work (a pass's, or a loop's that ended mid-pass); the next starts after it. */
	private finishing: Promise<void> = Promise.resolve();
	/** Timers for waits that come due while other loops keep the pass running (see wakeAt). */
	private readonly wakeups = new Set<ReturnType<typeof setTimeout>>();
	/** A loop's step that threw: the pass fails with it once every loop has ended, so the alarm is retried. */
	private loopError: unknown = null;
	/** One client per instance, so its key-rotation cursor carries from turn to turn. */
	private modelClient: ModelClient | null = null;
	private readonly hub: StreamHub;
	private lastPrune = 0;
	/** The last prune took a full batch, so more may be past retention: the next pass prunes again. */
	private pruneBacklog = false;
	/** D1 refused the last flush: the outbox waits for the retry alarm instead of spinning. */
	private indexDown = false;
	/** The latest index flush; the next one starts after it (see flushIndex). */
	private flushing: Promise<boolean> = Promise.resolve(true);
	/** R2 refused the last write: finished jobs' output waits in SQLite for the retry alarm. */
	private outputDown = false;
	/**
	 * What D1 and R2 have acknowledged during the pass and SQLite has yet to note (outbox rows sent,
	 * outputs consolidated). Noted with the pass's last writes: each write made as an answer
	 * arrives would be a commit of its own, and the object's next request waits for it.
	 */
	private readonly acked: OutboxAcks = new Map();
	private consolidated: Consolidated[] = [];
	/** How long a delivery or hook target may take to answer (tests shorten it to meet a hung target). */
	private sendTimeoutMs = SEND_TIMEOUT_MS;

	constructor(ctx: DurableObjectState, env: Env) {
		super(ctx, env);
		this.sql = ctx.storage.sql;
		// SQLite calls are synchronous, so migrating here finishes before any request or alarm runs.
		this.schemaVersion = migrate(ctx.storage, AGENT_MIGRATIONS);
		this.hub = new StreamHub(this.sql, (jobId) => {
			const job = getJob(this.sql, jobId);
			return job && { status: job.status, revision: job.revision, final: isFinal(job.status) };
		});
	}

	// Test hooks, reached in the object's own isolate (runInDurableObject): static, so never on the
	// RPC surface a stub offers.

	/** Runs alarm work until nothing is due now. */
	static async settle(agent: AgentDO): Promise<void> {
		for (let i = 0; i < 1000; i++) {
			await agent.work();
			if (!agent.hasDueWork()) return;
		}
	}

	/**
	 * Stores a record as it is, without the status rules (a state a crash or an older version may
	 * leave), only if it is newer than what is held: revisions never go backwards.
	 */
	static async saveJob(agent: AgentDO, job: JobRecord): Promise<boolean> {
		const written = putJob(agent.sql, job, Date.now());
		if (written) await agent.armAlarm();
		return written;
	}

	/** Shortens how long a delivery or hook target may take to answer, to meet a hung target. */
	static setSendTimeout(agent: AgentDO, ms: number): void {
		agent.sendTimeoutMs = ms;
	}

	/** Streams only: job output (JSONL) and live job events (SSE). Everything else is RPC. */
	override async fetch(request: Request): Promise<Response> {
		const url = new URL(request.url);
		const m = /^\/jobs\/([^/]+)\/(output|stream)$/.exec(url.pathname);
		if (!m || request.method !== "GET") return Response.json({ error: { code: "not_found", message: "no such route" } }, { status: 404 });
		const [, jobId = "", what] = m;
		return what === "output" ? serveOutput(this.sql, this.env.OUTPUT, jobId, request) : serveStream(this.sql, this.env.OUTPUT, this.hub, jobId, request);
	}

	/** Claims this agent's due occurrences for the tick at `now` (ms). Idempotent per occurrence. */
	async tick(name: string, source: AgentSource, now: number): Promise<TickOutcome & { paused: boolean }> {
		const state = ensureState(this.sql, name, source);
		const agent = currentDefinition(state);
		if (!agent) return { claimed: 0, skipped: 0, nextDue: null, paused: false };
		const known = knownRevision(state, agent);
		const revision = known ?? (await this.computeRevision(agent));
		const outcome = this.ctx.storage.transactionSync(() => {
			const current = this.autoPause(agent, known === null ? readState(this.sql)! : state, now);
			return { ...claimDue(this.sql, { agent, state: current, definitionRevision: revision, now }), paused: current.pausedAt !== null };
		});
		// The hot path of a tick: only a claim needs the alarm (to start its job and index it). Starts
		// are spread over a few seconds by agent, so a fleet due in the same minute does not hit the
		// Messages API (and its rate limits) in one burst.
		if (outcome.claimed > 0) {
			log.info("schedule.claimed", { agent: name, claimed: outcome.claimed, skipped: outcome.skipped, tick: new Date(now).toISOString() });
			await this.alarmAt(Date.now() + startSpreadMs(name));
		} else if (outcome.skipped > 0 && (await this.ctx.storage.getAlarm()) === null) {
			// An agent that only skips (paused before it ever ran) has no job to set its alarm, and
			// only the alarm's pass prunes: its ledger would grow a row a slot for good. Once a pass
			// has run, it leaves the alarm at the oldest record's expiry (scheduleNext). Spread like a
			// claim's start: a paused fleet must not wake all at once.
			await this.ctx.storage.setAlarm(Date.now() + startSpreadMs(name));
		}
		return outcome;
	}

	/** A revision knownRevision lacks (a file agent's first claim or trigger in this isolate), kept for the next. */
	private async computeRevision(agent: AgentDefinition): Promise<string> {
		const revision = await definitionRevision(agent);
		fileRevisions.set(agent, revision);
		return revision;
	}

	/** Sets the alarm to now unless one is already due sooner. */
	private async alarmNow(): Promise<void> {
		await this.alarmAt(Date.now());
	}

	private async alarmAt(at: number): Promise<void> {
		const current = await this.ctx.storage.getAlarm();
		if (current === null || current > at) await this.ctx.storage.setAlarm(at);
	}

	/** Creates a manual or webhook run. */
	async trigger(name: string, source: AgentSource, request: TriggerRequest): Promise<{ job: JobRecord; created: boolean } | Refusal> {
		const state = ensureState(this.sql, name, source);
		const agent = currentDefinition(state);
		if (!agent) return refuse(404, `no agent named ${name}`);
		const known = knownRevision(state, agent);
		const revision = known ?? (await this.computeRevision(agent));
		const now = Date.now();
		const result = this.ctx.storage.transactionSync(() =>
			triggerJob(this.sql, { agent, state: this.autoPause(agent, known === null ? readState(this.sql)! : state, now), definitionRevision: revision, now }, request),
		);
		if ("job" in result && result.created) {
			log.info("job.triggered", { agent: name, job_id: result.job.id, trigger_type: result.job.trigger_type });
			this.startNow();
			await nextTurn();
			await this.indexNow();
			await this.armSafetyNet();
		}
		return result;
	}

	/**
	 * Stores an API agent's definition (create or update). `lastTick`: the scheduler's last tick
	 * before now, from which the schedules it starts may be owed a slot.
	 */
	async define(name: string, definition: AgentDefinition, revision: string, lastTick: number | null = null): Promise<void> {
		let before: AgentState | null = null;
		try {
			before = readState(this.sql);
		} catch {
			// A stored definition that no longer parses: this save is what repairs it.
		}
		if (before?.deletedAt != null) {
			forgetDeletedAgent(this.sql);
			forgetSchedules(this.sql);
		}
		noteTimingChanges(this.sql, definition, Date.now(), lastTick);
		saveDefinition(this.sql, name, definition, revision);
		// Otherwise a PUT leaves queued runs to their own start time, a claim's spread included.
		const previous = before && currentDefinition(before);
		const wasEnabled = previous?.enabled ?? true;
		// Re-enabled, or given room its queued runs were waiting for: they start now, not at the next
		// pass. (A run merely waiting out its start spread keeps waiting.)
		const wasFull = previous != null && jobCounts(this.sql).active >= previous.max_concurrent;
		if (definition.enabled && (!wasEnabled || (wasFull && definition.max_concurrent > previous.max_concurrent))) await this.startQueued();
		if (before && this.retentionMs(definition) < this.retentionMs(keptDefinition(before))) await this.retentionShortened();
	}

	/**
	 * A shortened retention applies at the next pass, not at the expiry the alarm was set for under
	 * the old one (weeks away, for an agent nothing else wakes). Called by a PUT, and by its shard
	 * when a deploy shortens a file agent's.
	 */
	async retentionShortened(): Promise<void> {
		if (oldestRecordAt(this.sql) === null) return;
		this.lastPrune = 0;
		await this.alarmNow();
	}

	/** Deletes an API agent: it stops scheduling, its jobs and ledger stay readable. */
	async remove(now: number): Promise<void> {
		// Queued runs would never start without a definition; running ones finish on their manifest.
		markDeleted(this.sql, now);
		this.cancelOrphans("agent deleted", now);
		await this.alarmNow();
	}

	/**
	 * A deploy dropped this file agent from fleet.yaml (its shard says so once): its queued runs end
	 * now rather than when something next wakes it, which for a paused agent would be never. `last`
	 * is its definition as the previous deploy had it (its shard keeps it; null if that deploy
	 * predates keeping it): its history keeps that retention, not the deployment's default.
	 */
	async dropFromFleet(last: AgentDefinition | null = null): Promise<void> {
		const state = readState(this.sql);
		if (!state || state.source !== "file" || currentDefinition(state)) return;
		this.cancelOrphans("agent removed from fleet.yaml");
		// Its shard stops calling it, so no tick would forget its schedules before a deploy adds it back.
		forgetSchedules(this.sql);
		const before = keptDefinition(state);
		if (last) keepLastDefinition(this.sql, last);
		await this.indexNow();
		if (last && this.retentionMs(last) < this.retentionMs(before)) await this.retentionShortened();
	}

	/** Pauses the agent; `by` is the caller's token name ("auto" is reserved for automatic pauses). */
	async pause(name: string, source: AgentSource, reason: string | null, by: string): Promise<AgentStatus> {
		ensureState(this.sql, name, source);
		setPaused(this.sql, Date.now(), reason, by === "auto" ? "operator" : by);
		log.info("agent.paused", { agent: name, reason, by });
		return this.status(name, source);
	}

	async resume(name: string, source: AgentSource): Promise<AgentStatus | Refusal> {
		const state = ensureState(this.sql, name, source);
		// One that cannot run would only be paused again at once (with its pause's time lost): it is
		// refused, and nothing changes.
		const agent = currentDefinition(state);
		const problems = agent ? readinessProblems(agent, this.env as unknown as Record<string, unknown>, new Date()) : [];
		if (problems.length > 0) {
			const after = state.pausedBy === "auto" || state.pausedAt === null ? "; it resumes by itself once that is fixed" : "";
			return refuse(409, `agent ${name} cannot run: ${problems.join("; ")}${after}`);
		}
		setPaused(this.sql, null, null, null);
		log.info("agent.resumed", { agent: name });
		// status() judges readiness first: an agent that cannot run is paused again, automatically,
		// before any queued run could start and fail.
		const status = await this.status(name, source);
		if (status.paused === null) await this.startQueued();
		return status;
	}

	async status(name: string, source: AgentSource): Promise<AgentStatus> {
		let state = ensureState(this.sql, name, source);
		// Readiness is the Worker's to judge (its secrets, the model's retirement date), so a view
		// shows an agent that cannot run as paused, and one that can again as not, before any trigger
		// or tick finds out: a newly created agent on a retired model, a secret set since.
		const agent = currentDefinition(state);
		if (agent) state = this.autoPause(agent, state, Date.now());
		const last = latestJob(this.sql);
		return {
			name: state.name,
			source: state.source,
			deleted: state.deletedAt !== null,
			paused: state.pausedAt === null ? null : { at: new Date(state.pausedAt).toISOString(), reason: state.pausedReason, by: state.pausedBy },
			running_jobs: jobsWithStatus(this.sql, ["running", "approval_pending"]).map((j) => ({
				id: j.id,
				status: j.status,
				started_at: j.started_at,
				schedule: j.schedule,
			})),
			queued_jobs: jobCounts(this.sql).pending,
			last_job: last && { id: last.id, status: last.status, exit_reason: last.exit_reason, finished_at: last.finished_at },
			index_backlog: outboxSize(this.sql, this.acked),
		};
	}

	async notepad(name: string, source: AgentSource): Promise<Notepad> {
		ensureState(this.sql, name, source);
		return readNotepad(this.sql);
	}

	/** The notepad comes back wrapped: bare, a key named "refused" would pass for a refusal. */
	async setNote(name: string, source: AgentSource, key: string, value: string): Promise<{ notepad: Notepad } | Refusal> {
		ensureState(this.sql, name, source);
		const refused = setNote(this.sql, key, value, Date.now());
		if (refused) return refused;
		log.info("notepad.set", { agent: name, key });
		return { notepad: readNotepad(this.sql) };
	}

	async deleteNote(name: string, source: AgentSource, key: string | null): Promise<{ deleted: number }> {
		ensureState(this.sql, name, source);
		const deleted = deleteNote(this.sql, key);
		log.info("notepad.deleted", { agent: name, key, deleted });
		return { deleted };
	}

	async runs(limit: number, before?: { claimedAt: number; id: string }): Promise<Occurrence[]> {
		return listOccurrences(this.sql, limit, before);
	}

	async getJob(id: string): Promise<JobRecord | null> {
		return getJob(this.sql, id);
	}

	/**
	 * Re-reads everything and acts on what it finds, so a repeated or late alarm is harmless: flush
	 * the D1 outbox, start what may start, run due jobs turn by turn, and set the next alarm.
	 */
	override async alarm(): Promise<void> {
		// A pass already under way in this instance (started by a trigger, a decision or a cancel) has
		// the work in hand and sets the next alarm when it ends: this one only makes sure what is due
		// starts, and returns. Waiting would hold the alarm for that pass and one more after it, past
		// the platform's 15 minutes of wall time for an alarm when passes run long. The next heartbeat
		// is set before it returns: this one was the safety net, and the object may yet die mid-call.
		if (this.working) {
			this.startNow();
			await this.alarmAt(Date.now() + HEARTBEAT_MS);
			return;
		}
		await this.work();
	}

	/**
	 * Runs a pass of the alarm's work. A call that comes while a pass is under way gets one more pass
	 * after it (shared by every such call): the running pass may have read its due jobs before the
	 * caller's change (a decision, a new job), and joining it would leave that change to whatever
	 * alarm the pass happens to set last.
	 */
	private work(): Promise<void> {
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
		const began = Date.now();
		const state = readState(this.sql);
		// The outbox goes to D1 while the jobs take their first steps, a turn later: a run just
		// triggered sends its model call first, without waiting on the index write of its creation.
		const indexed = nextTurn().then(() => this.flushIndex());
		let retryOutbox: boolean;
		let failed: unknown = null;
		// Noted however the pass ends: a pass that failed after R2 took an output must not leave it to
		// be put again by every retry.
		try {
			const agent = state && currentDefinition(state);
			if (state && !agent) this.cancelOrphans(state.source === "file" ? "agent removed from fleet.yaml" : "agent deleted");
			this.passBegan = began;
			// Known before any job starts: a job records the definition it runs on.
			if (agent && knownRevision(state, agent) === null) await this.computeRevision(agent);
			this.launch();
			while (this.loops.size > 0) await Promise.allSettled([...this.loops.values()]);
			for (const timer of this.wakeups) clearTimeout(timer);
			this.wakeups.clear();
			// A job's failing step fails the pass (so an alarm is retried), but only after the closing
			// work the other jobs need: their effects, outputs and index rows.
			failed = this.loopError;
			this.loopError = null;
			// With the jobs' last writes, before the output's put: nothing is written between R2's answer
			// and the index's final row. After any mid-pass closing work, never beside it: a delivery
			// due is sent once.
			retryOutbox = await this.serially(async () => {
				await this.closeJobs(true, state?.name ?? "");
				await this.prune(Date.now());
				return !(await indexed) || !(await this.flushIndex());
			});
		} finally {
			this.noteAcknowledged();
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
			const started = startJob(this.sql, job, agent, revision, readNotepad(this.sql), Date.now());
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
		const deps = this.stepDeps();
		const began = this.passBegan;
		let waiting = false;
		const loop = (async () => {
			while (Date.now() - began < ALARM_BUDGET_MS) {
				const result = await step(deps, jobId);
				waiting = result === "wait";
				if (result !== "continue") break;
			}
		})()
			.catch((err: unknown) => {
				// The first fails the pass; each is logged, or a second job's crash would leave no trace.
				this.loopError ??= err;
				log.error("job.step_failed", { agent: readState(this.sql)?.name, job_id: jobId, ...errorFields(err) });
			})
			.finally(() => {
				this.loops.delete(jobId);
				if (waiting && this.loops.size > 0) this.wakeAt(jobId, began);
				// Its slot may be free: a queued job starts now, not when the pass ends.
				this.startPending();
				// Its job may be over while others run on: its effects and index row go now, not
				// when the last loop of the pass ends.
				if (this.loops.size > 0) void this.serially(() => this.finishEarly());
			});
		this.loops.set(jobId, loop);
	}

	/**
	 * A job that waits (a rate limit, an approval's expiry) while other loops keep the pass running:
	 * the alarm for its next step cannot fire until the pass ends (alarms do not overlap), so a timer
	 * in this instance takes it up on time, within the pass's budget. Cleared when the pass ends,
	 * whose alarm then stands in for it.
	 */
	private wakeAt(jobId: string, began: number): void {
		const at = getSetup(this.sql, jobId)?.nextStepAt;
		if (at === undefined || at >= began + ALARM_BUDGET_MS) return;
		const timer = setTimeout(() => {
			this.wakeups.delete(timer);
			this.startNow();
		}, Math.max(0, at - Date.now()));
		this.wakeups.add(timer);
	}

	/** Runs closing work after the closing work before it: two at once would read the same due sends. */
	private serially<T>(work: () => Promise<T>): Promise<T> {
		const run = this.finishing.then(work);
		this.finishing = run.then(
			() => {},
			() => {},
		);
		return run;
	}

	/**
	 * What ended jobs set off, in order: their effects queued, their outputs put, due sends sent. The
	 * chunks of running jobs too when `running` (not mid-pass, while their loops still write).
	 */
	private async closeJobs(running: boolean, agent: string): Promise<void> {
		this.queueFinalEffects();
		await this.storeOutput(running);
		await sendDue(this.sql, this.env, agent, () => Date.now(), (jobId) => this.hub.publish(jobId), this.sendTimeoutMs);
	}

	/** A mid-pass share of the pass's closing work, for jobs that ended while others still run. */
	private async finishEarly(): Promise<void> {
		try {
			await this.closeJobs(false, readState(this.sql)?.name ?? "");
			await this.flushIndex();
			// Noted now, not with the pass's last writes: the next job to end would put these outputs
			// again, and R2 may refuse a second write of a key within a second.
			this.noteAcknowledged();
		} catch (err) {
			// The pass's own closing work does it all again.
			log.warn("agent.finish_early_failed", { agent: readState(this.sql)?.name, ...errorFields(err) });
		}
	}

	/**
	 * Keeps R2 in step with the jobs' lines: chunks of running jobs as they grow (not mid-pass, while
	 * their loops still write), the final object of finished ones. A failure leaves the lines in
	 * SQLite and is retried on the next alarm.
	 */
	private async storeOutput(running: boolean): Promise<void> {
		try {
			if (running) for (const job of jobsWithStatus(this.sql, ["running", "approval_pending"])) await flushChunks(this.sql, this.env.OUTPUT, job);
			const noted = new Set(this.consolidated.map((c) => c.jobId));
			for (const jobId of unconsolidated(this.sql, 20)) {
				// Put already, its record waiting for the pass's last writes: not again.
				if (noted.has(jobId)) continue;
				const done = await consolidateJob(this.sql, this.env.OUTPUT, jobId);
				if (done) this.consolidated.push(done);
			}
			this.outputDown = false;
		} catch (err) {
			this.outputDown = true;
			log.warn("output.store_failed", { agent: readState(this.sql)?.name, ...errorFields(err) });
		}
	}

	/**
	 * Prunes a batch of jobs older than the agent's retention, at most hourly per instance while
	 * there is no backlog. A full batch is pruned again at the next pass, which scheduleNext sets
	 * soon: an agent that makes more jobs an hour than a batch (one a minute does) would otherwise
	 * outgrow its retention for good, and a shortened retention would take days to apply. The hourly
	 * pass also deletes expired Idempotency-Keys and webhook signatures, which triggers only ignore.
	 */
	async prune(now: number, force = false): Promise<number> {
		const hourly = force || now - this.lastPrune >= PRUNE_EVERY_MS;
		if (!hourly && !this.pruneBacklog) return 0;
		this.lastPrune = now;
		this.pruneBacklog = false;
		if (hourly) expireTriggerKeys(this.sql, now);
		const state = readState(this.sql);
		if (!state) return 0;
		try {
			const pruned = await pruneJobs(this.sql, this.env.OUTPUT, state.name, now - this.retentionMs(keptDefinition(state)), now);
			this.pruneBacklog = pruned === PRUNE_BATCH;
			return pruned;
		} catch (err) {
			log.warn("retention.failed", { agent: state.name, ...errorFields(err) });
			return 0;
		}
	}

	/** How long jobs and ledger rows are kept under `definition`: its retention_days, else the deployment's. */
	private retentionMs(definition: AgentDefinition | null): number {
		return retentionDays(definition, this.env) * 86_400_000;
	}

	/**
	 * Queued runs of an agent that no longer exists (a file agent dropped from fleet.yaml by a deploy,
	 * an API agent deleted) would never start: they end cancelled, saying why, instead of waiting forever.
	 */
	private cancelOrphans(reason: string, now = Date.now()): void {
		this.ctx.storage.transactionSync(() => {
			for (const job of pendingJobs(this.sql, 1000)) {
				putJob(this.sql, transition(job, "cancelled", { reason, at: new Date(now) }), now);
				log.info("job.cancelled", { agent: job.agent, job_id: job.id, reason });
				this.hub.publish(job.id);
			}
		});
	}

	private hasDueWork(): boolean {
		const state = readState(this.sql);
		const agent = state && currentDefinition(state);
		const counts = jobCounts(this.sql);
		const canStart = agent !== null && agent.enabled && state?.pausedAt === null && counts.pending > 0 && counts.active < agent.max_concurrent;
		const effects = this.sql.exec<{ n: number }>("SELECT (SELECT count(*) FROM final_effects) + (SELECT count(*) FROM incident_events) AS n").one().n;
		return (!this.indexDown && (outboxSize(this.sql, this.acked) > 0 || effects > 0)) || dueSends(this.sql, Date.now()) > 0 || canStart || dueJobIds(this.sql, Date.now()).length > 0 || (!this.outputDown && unconsolidated(this.sql, 1).length > 0);
	}

	private async scheduleNext(retryOutbox: boolean): Promise<void> {
		const candidates: number[] = [];
		const next = nextStepTime(this.sql);
		if (next !== null) candidates.push(next);
		const send = nextSendAt(this.sql);
		if (send !== null) candidates.push(send);
		const retrying = retryOutbox || (this.outputDown && unconsolidated(this.sql, 1).length > 0);
		if (retrying) candidates.push(Date.now() + OUTBOX_RETRY_MS);
		else if (outboxSize(this.sql, this.acked) > 0 || this.hasDueWork()) candidates.push(Date.now());
		// Not while a store is down: the backlog then waits for the retry.
		if (this.pruneBacklog && !retrying) candidates.push(Date.now() + PRUNE_BACKLOG_MS);
		// The oldest record's retention runs out even if nothing else ever wakes this object (an
		// agent deleted, or triggered once and never again), so the alarm waits for that too; at
		// most hourly, as prune() runs.
		const oldest = oldestRecordAt(this.sql);
		const state = oldest === null ? null : readState(this.sql);
		if (oldest !== null && state) candidates.push(Math.max(oldest + this.retentionMs(keptDefinition(state)), this.lastPrune + PRUNE_EVERY_MS));
		if (candidates.length > 0) await this.ctx.storage.setAlarm(Math.max(Date.now(), Math.min(...candidates)));
		// Nothing left to do: a model call's heartbeat alarm would only wake the object to find that
		// out, and each alarm is a billed request.
		else await this.ctx.storage.deleteAlarm();
	}

	private stepDeps(): StepDeps {
		return {
			sql: this.sql,
			env: this.env,
			model: (this.modelClient ??= createModelClient(this.env)),
			now: () => Date.now(),
			// An alarm already due by then is heartbeat enough; moving it is a write per model call.
			heartbeat: (at) => this.alarmAt(at),
			inflight: this.inflight,
			notify: (jobId) => this.hub.publish(jobId),
		};
	}

	/**
	 * Cancels a job: a pending or waiting one at once; a running one at its next checkpoint, with
	 * any in-flight model or tool call in this instance aborted now.
	 */
	async cancel(jobId: string, reason: string | null, by: string): Promise<JobRecord | Refusal> {
		const job = getJob(this.sql, jobId);
		if (!job) return refuse(404, `no job ${jobId}`);
		if (isFinal(job.status)) return refuse(409, `job ${jobId} is already ${job.status}`);
		const why = `cancelled by ${by}${reason ? `: ${reason}` : ""}`;
		if (job.status === "pending" || job.status === "approval_pending") {
			const done = job.status === "pending" ? transition(job, "cancelled", { reason: why, at: new Date() }) : finish(this.stepDeps(), job, "cancelled", { reason: why });
			if (job.status === "pending") putJob(this.sql, done, Date.now());
			log.info("job.cancelled", { agent: job.agent, job_id: jobId, by });
			this.hub.publish(jobId);
			await this.scheduleNext(false);
			return done;
		}
		requestCancel(this.sql, jobId, why);
		this.inflight.get(jobId)?.abort(new Error(why));
		log.info("job.cancel_requested", { agent: job.agent, job_id: jobId, by });
		await this.workNow();
		return getJob(this.sql, jobId)!;
	}

	/** Records a human decision on the tool call a job is waiting on, and resumes the job. */
	async decide(jobId: string, decision: "approve" | "deny", toolInput: Record<string, unknown> | undefined, by: string): Promise<JobRecord | Refusal> {
		const job = getJob(this.sql, jobId);
		if (!job) return refuse(404, `no job ${jobId}`);
		if (job.status !== "approval_pending" || !job.pending_approval) return refuse(409, `job ${jobId} is ${job.status}, not waiting for an approval`);
		const pending = job.pending_approval;
		const edited = decision === "approve" ? toolInput : undefined;
		if (edited) {
			// Held to the schema the model was given: the tool's receiver expects that shape either way.
			const definition = getSetup(this.sql, jobId)?.definition;
			let problems: ReturnType<typeof toolInputProblems>;
			try {
				problems = definition ? toolInputProblems(definition, pending.tool_name, edited) : [];
			} catch (err) {
				if (!(err instanceof InvalidToolSchemaError)) throw err;
				return refuse(409, `${err.message}, so edited input cannot be checked against it: approve without tool_input, deny, or fix the agent's definition`);
			}
			if (problems.length > 0) {
				const said = problems.map((p) => `${p.path}: ${p.message}`).join("; ");
				return refuse(400, `tool_input does not match ${pending.tool_name}'s input_schema: ${said}`, problems);
			}
		}
		decideToolCall(this.sql, jobId, pending.tool_use_id, decision, by, edited);
		const verdict = `${pending.tool_name} ${decision === "approve" ? "approved" : "denied"} by ${by}${edited ? " with edited input" : ""}`;
		const resumed = resumeFromApproval(this.sql, job, { toolUseId: pending.tool_use_id, decision, by, verdict, input: edited }, verdict, Date.now());
		log.info("job.approval_decided", { agent: job.agent, job_id: jobId, decision, by });
		this.hub.publish(jobId);
		await this.workNow();
		return resumed;
	}

	/** A new job continuing a finished job's session, or forking a new session from it. */
	async followUp(kind: "continue" | "fork", sourceId: string, opts: { prompt?: string | undefined; owner: string; allowDefinitionChange: boolean }): Promise<JobRecord | Refusal> {
		const state = readState(this.sql);
		const agent = state && currentDefinition(state);
		const revision = agent ? await definitionRevision(agent) : null;
		const result = this.ctx.storage.transactionSync(() => createFollowUp(this.sql, state, agent, revision, { kind, sourceId, ...opts }, Date.now()));
		if (isRefusal(result)) return result;
		log.info(`job.${kind}`, { agent: result.agent, job_id: result.id, from: sourceId });
		this.startNow();
		await nextTurn();
		await this.indexNow();
		await this.armSafetyNet();
		return result;
	}

	/**
	 * Indexes a job the caller is about to be told about, so its id works in the API at once. A D1
	 * failure here is not the caller's problem: the outbox keeps the row and the alarm retries.
	 */
	private async indexNow(): Promise<void> {
		await this.flushIndex();
	}

	/** Queues delivery, hooks and incident events of jobs that reached a final status. */
	private queueFinalEffects(): void {
		const state = readState(this.sql);
		const agent = state && currentDefinition(state);
		for (const { job_id } of this.sql.exec<{ job_id: string }>("SELECT job_id FROM final_effects LIMIT 100").toArray()) {
			this.ctx.storage.transactionSync(() => {
				const job = getJob(this.sql, job_id);
				// A job that ran is delivered and hooked as it ran (its manifest), though its agent was
				// changed or deleted since; one that never started goes by the agent as it is.
				if (job) queueEffects(this.sql, job, getSetup(this.sql, job_id)?.definition ?? agent, Date.now());
				this.sql.exec("DELETE FROM final_effects WHERE job_id = ?", job_id);
			});
		}
	}

	/**
	 * Sends the outbox (job index, then incidents) to D1; false (and the backlog kept) when D1 refuses.
	 * Flushes run one after another: two at once (a trigger indexing its job while the alarm flushes)
	 * would read the same queued rows and file a failure, and alert on it, twice. Each caller still
	 * gets a flush that starts after it queued its rows.
	 */
	private flushIndex(): Promise<boolean> {
		this.flushing = this.flushing.then(() => this.flushIndexNow());
		return this.flushing;
	}

	private async flushIndexNow(): Promise<boolean> {
		try {
			await flushOutbox(this.sql, this.env.DB, this.acked);
			await flushIncidentEvents(this.sql, this.env, readState(this.sql)?.name ?? "");
			this.indexDown = false;
			return true;
		} catch (err) {
			this.indexDown = true;
			log.warn("outbox.flush_failed", { agent: readState(this.sql)?.name, backlog: outboxSize(this.sql, this.acked), ...errorFields(err) });
			return false;
		} finally {
			// No pass under way to note it with its last writes (an agent dropped from fleet.yaml).
			if (this.working === null) this.noteAcknowledged();
		}
	}

	/** Notes in SQLite what D1 and R2 acknowledged during the pass (see `acked`). */
	private noteAcknowledged(): void {
		for (const done of this.consolidated.splice(0)) recordConsolidated(this.sql, done);
		settleOutbox(this.sql, this.acked);
	}

	/**
	 * Runs the alarm's work in this instance once the caller has its answer, instead of waiting for
	 * the alarm's delivery (milliseconds locally, more in production). The alarm set before stays
	 * as the safety net: if this instance dies, it runs the same idempotent work.
	 */
	private startNow(): void {
		this.ctx.waitUntil(
			this.work().catch((err: unknown) => log.warn("agent.work_failed", { agent: readState(this.sql)?.name, ...errorFields(err) })),
		);
	}

	/**
	 * Starts the runs queued while the agent could not start them (paused, disabled), now rather than
	 * at whatever next wakes the object: for an agent with no schedule, nothing would.
	 */
	private async startQueued(): Promise<void> {
		if (jobCounts(this.sql).pending > 0) await this.workNow();
	}

	/**
	 * Acts on a change (a decision, a cancel, runs that may start) now, in this instance, with the
	 * safety-net alarm behind it: an alarm set for now would wait for a running pass to end.
	 */
	private async workNow(): Promise<void> {
		this.startNow();
		await this.armSafetyNet();
	}

	/** Sets an alarm now if there is work an alarm does; never pushes an earlier one back. */
	private async armAlarm(): Promise<void> {
		if (!this.hasDueWork()) return;
		await this.alarmNow();
	}

	/**
	 * After startNow: the work is under way in this instance, so the alarm is only the safety net
	 * for an instance that dies, and waits a heartbeat. Set at now, it would fire during the work
	 * (a billed request and a second pass); the job's model calls then find it set and leave it.
	 */
	private async armSafetyNet(): Promise<void> {
		if (this.working === null && !this.hasDueWork()) return;
		await this.alarmAt(Date.now() + HEARTBEAT_MS);
	}

	/**
	 * Pauses an agent that cannot run (a missing secret, a retired model) instead of failing each
	 * tick, and lifts a pause it made itself once the cause is gone. An operator's pause stays.
	 */
	private autoPause(agent: AgentDefinition, state: AgentState, now: number): AgentState {
		if (state.pausedAt !== null && state.pausedBy !== "auto") return state;
		const problems = readinessProblems(agent, this.env as unknown as Record<string, unknown>, new Date(now));
		if (problems.length === 0) {
			if (state.pausedAt === null) return state;
			setPaused(this.sql, null, null, null);
			log.info("agent.auto_resumed", { agent: agent.name, was: state.pausedReason });
			return { ...state, pausedAt: null, pausedReason: null, pausedBy: null };
		}
		const reason = `auto: ${problems.join("; ")}`;
		if (state.pausedReason === reason) return state;
		setPaused(this.sql, now, reason, "auto");
		log.warn("agent.auto_paused", { agent: agent.name, reason });
		return { ...state, pausedAt: now, pausedReason: reason, pausedBy: "auto" };
	}
}
