import { DurableObject } from "cloudflare:workers";
import { alreadyDefined, definitionRevision, deletedSince, deletedUnchanged, notDefined, revisionChanged } from "../../src/config/fleet.ts";
import { readinessProblems } from "../../src/config/readiness.ts";
import type { AgentDefinition } from "../../src/config/schema.ts";
import type { DeliveryOutcome, JobRecord, JobView, ToolCallTally } from "../../src/jobs/model.ts";
import { hookCalls } from "./hook-calls.ts";
import { NotFoundError } from "../../src/errors.ts";
import { configureLogLevel, errorFields, log, minuteField } from "../../src/log.ts";
import { isRefusal, refuse, type Refusal } from "../../src/shared/refusal.ts";
import { forgetRegisteredAgent } from "../../src/store/agent-registry.ts";
import { migrate } from "../../src/store/sqlite-migrations.ts";
import { noteTick } from "./held-claims.ts";
import { getJob, jobCounts, jobsWithStatus, lastFinishedJob, putJob } from "./jobs.ts";
import { lastRuns, listOccurrences, type Occurrence } from "./ledger.ts";
import { outboxSize } from "./outbox.ts";
import { queueRetireIncidents } from "./incidents.ts";
import { nextExpiryAt, stampDeletedHistory } from "./retention.ts";
import { isBlank, type Forgettable } from "./forget.ts";
import { findSession, listSessions, type SessionLookup, type SessionSummary } from "./sessions.ts";
import { clearPersistentSession, persistentSessionView, type PersistentSession, type SessionView } from "./runner/persistent.ts";
import type { CursorKey } from "../../src/shared/cursor.ts";
import { nextTurn, Passes } from "./pass.ts";
import { definedAgent, queueSync, RegistrySync, SYNC_GRACE_MS } from "./registry-sync.ts";
import { computeRevision, knownRevision } from "./revisions.ts";
import { AGENT_MIGRATIONS } from "./schema.ts";
import { claimDue, forgetSchedules, noteTimingChanges, type TickOutcome } from "./scheduling.ts";
import { currentDefinition, ensureState, forgetDeletedAgent, keepLastDefinition, keptDefinition, markDeleted, readState, saveDefinition, setPaused, storedAgentName, type AgentSource, type AgentState } from "./state.ts";
import { triggerJob, type Idempotency, type TriggerRequest } from "./triggers.ts";
import { createFollowUp } from "./runner/follow-up.ts";
import { getSetup, toolCallPage, type JobSetup, type ToolCall } from "./runner/session.ts";
import { HEARTBEAT_MS } from "./runner/step-common.ts";
import { isFinal } from "../../src/jobs/model.ts";
import { redact } from "../../src/security/redact.ts";
import { archivedLines, errorResponse, serveOutput, serveStream } from "./output-http.ts";
import { StreamHub } from "./streams.ts";
import { appendLines, type OutputLine } from "./runner/output.ts";
import { JobIdPool } from "./job-ids.ts";
import { asShown, cancelJob, type JobControl } from "./cancel.ts";
import { decideApproval } from "./decision.ts";
import { deleteNote, readNotepad, setNote, type NoteCondition, type Notepad } from "./notepad.ts";

/** How soon the alarm tries again to forget a deleted agent after D1 refused to delete its row. */
const FORGET_RETRY_MS = 3600_000;

/** What a continue or a fork is asked with, besides its source job. */
interface FollowUpOptions {
	prompt?: string | undefined;
	owner: string;
	allowDefinitionChange: boolean;
}

/** Scheduled starts are spread over this window, by a stable hash of the agent's name. */
const START_SPREAD_MS = 5_000;

export function startSpreadMs(agent: string): number {
	let h = 0;
	for (let i = 0; i < agent.length; i++) h = (Math.imul(h, 31) + agent.charCodeAt(i)) >>> 0;
	return h % START_SPREAD_MS;
}

export interface AgentStatus {
	name: string;
	source: AgentSource;
	deleted: boolean;
	paused: { at: string; reason: string | null; by: string | null } | null;
	running_jobs: { id: string; status: string; started_at: string | null; schedule: string | null }[];
	queued_jobs: number;
	last_job: { id: string; status: string; exit_reason: string | null; finished_at: string | null; delivery: DeliveryOutcome | null; tool_calls: ToolCallTally | null } | null;
	/** Each schedule's newest slot's ledger row, by schedule name (see lastRuns). */
	last_runs: Record<string, Occurrence>;
	index_backlog: number;
	/** The object's SQLite database, in bytes (Cloudflare allows 10 GB an object). */
	storage_bytes: number;
}

/**
 * One per agent, addressed by the agent's name: the source of truth for that agent's schedule
 * state, occurrence ledger and jobs. Callers use its RPC methods; `fetch` is kept for streams.
 */
export class AgentDO extends DurableObject<Env> {
	// Made by boot(), at construction and again for the first call after a forget (see revive).
	schemaVersion!: number;
	private readonly sql: SqlStorage;
	private hub!: StreamHub;
	/** The alarm's passes: running jobs' steps, closing ended jobs, the index, retention, the next alarm. */
	private passes!: Passes;
	/** Keeps its shard and the D1 registry in line with its definition (see registry-sync.ts). */
	private registry!: RegistrySync;
	/** Job ids its shard dealt it, unique across the fleet (see job-ids.ts). */
	private readonly jobIds = new JobIdPool();
	/** What a cancel or an approval decision acts through (see cancel.ts, decision.ts). */
	private control!: JobControl;
	/**
	 * Its storage deleted (see forgetIfGone): no tables until the next call, which makes them afresh.
	 * Made again at once, an empty schema would keep 230 KB stored for a name nobody may ask about.
	 */
	private forgotten = false;

	constructor(ctx: DurableObjectState, env: Env) {
		super(ctx, env);
		configureLogLevel(env);
		this.sql = ctx.storage.sql;
		this.boot();
	}

	private boot(): void {
		// SQLite calls are synchronous, so migrating here finishes before any request or alarm runs.
		this.schemaVersion = migrate(this.ctx.storage, AGENT_MIGRATIONS);
		this.hub = new StreamHub(
			this.sql,
			(jobId) => {
				const job = getJob(this.sql, jobId);
				return job && { status: job.status, revision: job.revision, final: isFinal(job.status) };
			},
			(jobId, afterLine) => archivedLines(this.sql, this.env.OUTPUT, jobId, afterLine),
		);
		// Through the object's env, read when used: tests swap its bindings for failing ones. Counted:
		// a pass runs a sync (a shard call and D1 writes) beside its jobs, within its subrequests.
		this.registry = new RegistrySync(this.sql, () => this.passes.outboundEnv);
		this.passes = new Passes(this.ctx, () => this.env, this.hub, this.registry);
		this.control = { sql: this.sql, passes: this.passes, hub: this.hub };
	}

	/**
	 * First in every call: an object that forgot its agent meets the call as a fresh one would, its
	 * schema made and nothing of the old agent in memory either (its passes, streams, acknowledgements).
	 */
	private revive(): void {
		if (!this.forgotten) return;
		this.forgotten = false;
		this.boot();
	}

	/**
	 * A deleted agent of which nothing is left, once its retention has passed since the delete (see
	 * forget.ts): its registry row goes, then every row and the alarm its object holds, so neither
	 * stays stored (and billed) for good, nor its definition (up to 256 KiB) in either. The row first:
	 * with the storage gone first and the row kept by a D1 failure, a read of the name would wake
	 * the object and make its schema again. Run at the end of an alarm, nothing after it in the call.
	 */
	private async forgetIfGone(): Promise<void> {
		const gone = this.forgettableNow();
		if (!gone) return;
		// A stream still open on it (its jobs are gone: one about to end) is let end first. Not at once
		// again: the pass's alarm is set for now.
		if (this.hub.size > 0) {
			await this.ctx.storage.setAlarm(Date.now() + HEARTBEAT_MS);
			return;
		}
		try {
			await forgetRegisteredAgent(this.passes.outboundEnv.DB, gone.name, gone.deletedAt);
		} catch (err) {
			log.warn("agent.forget_failed", { agent: gone.name, ...errorFields(err) });
			// Not at once again (the pass's alarm is set for now): D1 may be down a while.
			if (this.forgettableNow()?.deletedAt === gone.deletedAt) await this.ctx.storage.setAlarm(Date.now() + FORGET_RETRY_MS);
			return;
		}
		// D1's answer let other calls in: a define of the name, or a run of it, and the registry sync
		// or the history that came with it, keep the agent. Checked in the synchronous turn that
		// deletes: no call comes between (nor during the deletes: storage closes the input gate).
		if (this.forgettableNow()?.deletedAt !== gone.deletedAt || this.hub.size > 0) return;
		await this.wipe();
		log.info("agent.forgotten", { agent: gone.name, deleted_at: new Date(gone.deletedAt).toISOString() });
	}

	/**
	 * A call that found no agent here leaves nothing stored: the schema made to answer it (at
	 * construction, or by revive) is deleted again. Else a call to a forgotten agent's object (the
	 * shard's retention notice, or a read that passed the registry just before its row went, or an
	 * alarm delivered again to a new instance) would keep an empty schema stored for good, with no
	 * alarm to find it. Last in the call: what it answers was read before.
	 */
	private async dropIfBlank(): Promise<void> {
		if (this.forgotten || this.passes.working || this.hub.size > 0 || !isBlank(this.sql)) return;
		await this.wipe();
	}

	/** Deletes the object's storage and alarm; the next call meets a fresh object (revive). */
	private async wipe(): Promise<void> {
		this.forgotten = true;
		// The alarm first: deleted after deleteAll, it would leave storage its metadata table.
		await Promise.all([this.ctx.storage.deleteAlarm(), this.ctx.storage.deleteAll()]);
	}

	/** forgettable (see forget.ts), if it may be forgotten now: its time come, and no pass under way. */
	private forgettableNow(): Forgettable | null {
		if (this.forgotten || this.passes.working) return null;
		const gone = this.passes.forgettable();
		return gone && gone.at <= Date.now() ? gone : null;
	}

	// Test hooks, reached in the object's own isolate (runInDurableObject): static, so never on the
	// RPC surface a stub offers.

	/** Settles once the alerts the object's flushes queued are sent. */
	static alertsSent(agent: AgentDO): Promise<void> {
		return agent.passes.closing.alertsSent();
	}

	/** Runs alarm work until nothing is due now. */
	static async settle(agent: AgentDO): Promise<void> {
		agent.revive();
		await agent.passes.settle();
		// As an alarm does.
		await agent.forgetIfGone();
	}

	/**
	 * Stores a record as it is, without the status rules (a state a crash or an older version may
	 * leave), only if it is newer than what is held: revisions never go backwards.
	 */
	static async saveJob(agent: AgentDO, job: JobRecord): Promise<boolean> {
		agent.revive();
		const written = putJob(agent.sql, job, Date.now());
		if (written) await agent.passes.armAlarm();
		return written;
	}

	/** Appends lines to a job's output and tells its live streams, as a turn of the job does. */
	static appendOutput(agent: AgentDO, jobId: string, lines: OutputLine[]): void {
		agent.revive();
		appendLines(agent.sql, jobId, lines, Date.now());
		agent.hub.publish(jobId);
	}

	/** Bytes the object's streams hold for their clients, not yet taken (see StreamHub.heldBytes). */
	static streamBytesHeld(agent: AgentDO): number {
		return agent.hub.heldBytes();
	}

	/** Live streams the object holds (every job's). */
	static liveStreams(agent: AgentDO): number {
		return agent.hub.size;
	}

	/** Prunes a batch of jobs past their retention now (see Passes.prune); how many. */
	static prune(agent: AgentDO, now: number, force = false): Promise<number> {
		agent.revive();
		return agent.passes.prune(now, force);
	}

	/** Shortens how long a delivery or hook target may take to answer, to meet a hung target. */
	static setSendTimeout(agent: AgentDO, ms: number): void {
		agent.passes.closing.sendTimeoutMs = ms;
	}

	/** Shortens how long a model's stream may send nothing before the try is given up (60 s in production). */
	static setModelIdleTimeout(agent: AgentDO, ms: number): void {
		agent.passes.setModelOptions({ idleTimeoutMs: ms });
	}

	/** Streams only: job output (JSONL) and live job events (SSE). Everything else is RPC. */
	override async fetch(request: Request): Promise<Response> {
		this.revive();
		const url = new URL(request.url);
		const m = /^\/jobs\/([^/]+)\/(output|stream)$/.exec(url.pathname);
		if (!m || request.method !== "GET") return errorResponse(new NotFoundError("no such route"));
		const [, jobId = "", what] = m;
		return what === "output" ? serveOutput(this.sql, this.env.OUTPUT, jobId, request) : serveStream(this.sql, this.hub, jobId, request);
	}

	/** Claims this agent's due occurrences for the tick at `now` (ms). Idempotent per occurrence. */
	async tick(name: string, source: AgentSource, now: number, jobIds: readonly string[] = []): Promise<TickOutcome & { paused: boolean }> {
		this.revive();
		this.jobIds.add(jobIds, now);
		// A schedule fires at most once a tick: one id each. The tick brought 2, enough but for an
		// agent with more schedules due at once, which asks its shard first: before the definition is
		// read, so a change that lands during the wait is the one claimed on.
		let state = this.ensureState(name, source);
		const schedules = Object.values(currentDefinition(state)?.schedules ?? {}).filter((s) => s.enabled).length;
		if (!this.jobIds.holds(now, schedules)) {
			await this.jobIds.ensure(this.env, name, now, schedules);
			// The wait let other calls in, one that forgot this object among them: met as a fresh one.
			this.revive();
			state = this.ensureState(name, source);
		}
		const agent = currentDefinition(state);
		if (!agent) return { claimed: 0, skipped: 0, nextDue: null, paused: false };
		const known = knownRevision(state, agent);
		const revision = known ?? (await computeRevision(agent));
		// Read before the claim, so its start alarm can be set in the same synchronous turn as the claim
		// is written: storage commits the two as one (alarms follow the storage write rules), and an
		// object that dies in between leaves neither, never a claimed run with nothing set to start it.
		const alarm = await this.ctx.storage.getAlarm();
		const { outcome, claims } = this.ctx.storage.transactionSync(() => {
			const current = this.autoPause(agent, known === null ? readState(this.sql)! : state, now);
			const drawJobId = (at: number) => this.jobIds.take(at, name);
			const wallAt = Date.now();
			const { counts, claims, ...claimed } = claimDue(this.sql, { agent, state: current, definitionRevision: revision, now, wallAt, drawJobId });
			// The scheduler's clock, for a claim held until after its slot's grace window (see held-claims.ts).
			noteTick(this.sql, { at: now, wallAt, claimed: claimed.claimed, counts, agent, paused: current.pausedAt !== null });
			return { outcome: { ...claimed, paused: current.pausedAt !== null }, claims };
		});
		// The hot path of a tick: only a claim needs the alarm (to start its job and index it). Starts
		// are spread over a few seconds by agent, so a fleet due in the same minute does not hit the
		// Messages API (and its rate limits) in one burst.
		const startAt = Date.now() + startSpreadMs(name);
		const armed = outcome.claimed > 0 && (alarm === null || alarm > startAt) ? this.ctx.storage.setAlarm(startAt) : null;
		// A line a job, with its id: an operator follows a scheduled run from its claim. Skips are not
		// logged: the ledger lists them, and a paused fleet would log one an agent a tick.
		for (const c of claims) {
			log.info("job.claimed", { agent: name, job_id: c.jobId, schedule: c.schedule, scheduled_instant: new Date(c.instant).toISOString(), dispatch: c.dispatch, minute: minuteField(now) });
		}
		// A pass under way (a job's model call, which can take minutes) indexes nothing until its turn
		// ends, and the start alarm waits for it: the claimed runs are indexed now, so their ids answer
		// (to look at, to cancel) while they queue. Otherwise the start's pass indexes them, a D1 write
		// the tick does not wait on.
		const indexing = outcome.claimed > 0 && this.passes.working !== null ? this.indexNow() : null;
		// And started within that pass at its spread start, capacity allowing: the start alarm cannot
		// fire before a pass an alarm began has ended (alarms do not overlap), which can be minutes,
		// and the run would then be judged held past its slot.
		if (outcome.claimed > 0) this.passes.startDuringPass(startAt);
		if (armed) {
			await armed;
		} else if (outcome.claimed === 0) {
			// A queued run that nothing woke to start is started now, not at whatever next wakes the
			// object: one a slot was skipped "at capacity" behind (its agent paused automatically, or
			// disabled, when it was queued), where every later slot would be skipped behind it; or one
			// whose claim's call failed before its start alarm was set (storage refused it), which the
			// shard's repeated call claims nothing for.
			if (!outcome.paused) await this.passes.startStartable(startAt);
			// An agent that only skips (paused before it ever ran) has no job to set its alarm, and
			// only the alarm's pass prunes: its ledger would grow a row a slot for good. Once a pass
			// has run, it leaves the alarm at the oldest record's expiry (scheduleNext). Spread like a
			// claim's start: a paused fleet must not wake all at once.
			if (outcome.skipped > 0 && (await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(startAt);
		}
		await indexing;
		return outcome;
	}

	/** Creates a manual or webhook run. */
	async trigger(name: string, source: AgentSource, request: TriggerRequest): Promise<{ job: JobRecord; created: boolean } | Refusal> {
		this.revive();
		// Before the definition is read: a change (a disable, a delete) landing while the shard is
		// asked for ids must be the one the run is admitted on.
		await this.jobIds.ensure(this.env, name, Date.now());
		// The wait let other calls in, one that forgot this object among them: met as a fresh one.
		this.revive();
		const state = this.stateOf(name, source);
		const agent = state && currentDefinition(state);
		if (!state || !agent) {
			await this.dropIfBlank();
			return refuse(404, state?.deletedAt != null ? deletedUnchanged(name, state.deletedAt) : `no agent named ${name}`);
		}
		const known = knownRevision(state, agent);
		const revision = known ?? (await computeRevision(agent));
		const now = Date.now();
		const drawJobId = (at: number) => this.jobIds.take(at, name);
		// Read before the job is written, for its alarm to be set in the same turn (alarmWithWrite).
		const alarm = await this.ctx.storage.getAlarm();
		const result = this.ctx.storage.transactionSync(() =>
			triggerJob(this.sql, { agent, state: this.autoPause(agent, known === null ? readState(this.sql)! : state, now), definitionRevision: revision, now, drawJobId }, request),
		);
		if ("job" in result && result.created) {
			const armed = this.passes.alarmWithWrite(alarm);
			log.info("job.triggered", { agent: name, job_id: result.job.id, trigger_type: result.job.trigger_type, by: request.owner });
			await Promise.all([armed, this.startCreated()]);
		}
		return result;
	}

	/**
	 * Stores an API agent's definition: `expect` "create" (refused while the agent has a live
	 * definition) or "replace" (refused while it has none); without it, either. Decided in the
	 * synchronous turn that saves it (after the alarm's read, which lets no other call in), so of
	 * concurrent callers exactly one creates it. `lastTick`: the scheduler's last tick
	 * before now, from which the schedules it starts may be owed a slot. Then its shard and the D1
	 * registry are told (see registry-sync.ts): if that fails the definition stays stored, the call
	 * rejects, and the alarm tells them.
	 */
	async define(
		name: string,
		definition: AgentDefinition,
		revision: string,
		lastTick: number | null = null,
		expect?: "create" | "replace",
		by = "api",
		ifRevision?: string,
	): Promise<{ revision: string } | Refusal> {
		// Read before the save, for its sync's backstop alarm to be set in the same turn (alarmWithWrite).
		const alarm = await this.ctx.storage.getAlarm();
		this.revive();
		const defined = definedAgent(this.sql);
		const live = defined?.live ?? false;
		if (expect === "create" && live) return this.refuseWrite(409, alreadyDefined(name));
		// An edit crossing a delete (made on the definition read before it) is told of the delete.
		if (expect === "replace" && !live) {
			return this.refuseWrite(404, defined?.deletedAt != null ? deletedSince(name, defined.deletedAt) : notDefined(name));
		}
		let before: AgentState | null = null;
		try {
			before = readState(this.sql);
		} catch {
			// A stored definition that no longer parses: this save is what repairs it.
		}
		// Checked against the revision stored with the definition (the one its jobs record and GET
		// answers), read in the same synchronous turn as the save below: no other write comes between.
		const current = before?.definitionRevision ?? null;
		if (ifRevision !== undefined && ifRevision !== current) {
			return refuse(412, revisionChanged(name, ifRevision, current));
		}
		const now = Date.now();
		// A file agent a deploy dropped, taken over before the tick that would have retired it (an
		// `apply` right after the deploy): retired now as that tick does (dropFromFleet), or its queued
		// runs would start on this definition with the dropped agent's prompts, and its incidents wait
		// for runs that never come. Once this definition is saved, its shard no longer sees a dropped agent.
		const dropped = before !== null && before.source === "file" && before.deletedAt === null && currentDefinition(before) === null;
		if (dropped) {
			this.passes.cancelOrphans("agent removed from fleet.yaml", now);
			queueRetireIncidents(this.sql, now);
		}
		// Runs that ended under the definition being replaced fire its hooks, not the new one's: above
		// all a deleted agent's queue, cancelled for it, when the name is defined again while a pass
		// (whose closing work would queue them) goes on. Queued now, before the definition changes (none
		// when the stored one no longer parses: there are no hooks to read).
		if (before) this.passes.closing.queueFinalEffects();
		this.ctx.storage.transactionSync(() => {
			if (before?.deletedAt != null) {
				stampDeletedHistory(this.sql, this.passes.retentionMs(keptDefinition(before)));
				forgetDeletedAgent(this.sql);
			}
			// Its shard stopped calling it: cursors of a deploy ago are not this agent's schedules' own.
			if (before?.deletedAt != null || dropped) forgetSchedules(this.sql);
			noteTimingChanges(this.sql, definition, now, lastTick);
			saveDefinition(this.sql, name, definition, revision);
			queueSync(this.sql, by, now);
		});
		// The backstop, should this call be cut off before its sync is done (the alarm's pass then
		// also starts the queued runs a re-enable lets start).
		await this.passes.alarmWithWrite(alarm, now + SYNC_GRACE_MS);
		// Otherwise a PUT leaves queued runs to their own start time, a claim's spread included.
		const previous = before && currentDefinition(before);
		const wasEnabled = previous?.enabled ?? true;
		// Re-enabled, or given room its queued runs were waiting for: they start now, not at the next
		// pass. (A run merely waiting out its start spread keeps waiting.)
		const wasFull = previous != null && jobCounts(this.sql).active >= previous.max_concurrent;
		if (definition.enabled && (!wasEnabled || (wasFull && definition.max_concurrent > previous.max_concurrent))) await this.startQueued();
		if (before && this.passes.retentionMs(definition) < this.passes.retentionMs(keptDefinition(before))) await this.retentionShortened();
		await this.registry.sync();
		await this.afterSync();
		return { revision };
	}

	/**
	 * A write refused on what this object holds. Its shard and D1 may show another state, left by a
	 * release before this one, whose three writes could stop half-way (a delete that never reached
	 * D1 left the agent listed, and refused from then on): they are told what the object holds, so
	 * the caller's next look agrees with the refusal. A failure there leaves it to the alarm.
	 */
	private async refuseWrite(status: 404 | 409, message: string): Promise<Refusal> {
		if (definedAgent(this.sql)?.source === "api") {
			queueSync(this.sql, "repair", Date.now());
			await this.registry.sync().catch(() => this.passes.alarmAt(Date.now() + SYNC_GRACE_MS));
			await this.afterSync();
		}
		return refuse(status, message);
	}

	/**
	 * The write's backstop alarm is not needed once its sync is done: the alarm goes back to what the
	 * object's work asks for (a pass under way sets it as it ends), so a heartbeat is not cut short.
	 */
	private async afterSync(): Promise<void> {
		if (!this.passes.working && this.registry.dueAt() === null) await this.passes.scheduleNext(false);
	}

	/**
	 * A shortened retention applies at the next pass, not at the expiry the alarm was set for under
	 * the old one (weeks away, for an agent nothing else wakes). Called by a PUT, and by its shard
	 * when a deploy shortens a file agent's.
	 */
	async retentionShortened(): Promise<void> {
		this.revive();
		if (nextExpiryAt(this.sql, () => 0) === null) return this.dropIfBlank();
		this.passes.lastPrune = 0;
		await this.passes.alarmNow();
	}

	/**
	 * ensureState, for a call that may find no agent here: an API agent's object without its state is
	 * none (its define writes the state), and a bare row made for it would keep the object stored for
	 * good (see isBlank). A file agent's object is made by its first call.
	 */
	private stateOf(name: string, source: AgentSource): AgentState | null {
		return source === "api" ? readState(this.sql) : this.ensureState(name, source);
	}

	/** ensureState with this deployment's retention, for a deleted agent's history a file agent takes over. */
	private ensureState(name: string, source: AgentSource): AgentState {
		return ensureState(this.sql, name, source, (definition) => this.passes.retentionMs(definition));
	}

	/**
	 * Deletes an API agent: it stops scheduling, its jobs and ledger stay readable. Refused (404)
	 * unless it has a live definition, so of concurrent callers exactly one deletes it. Then its shard
	 * and the D1 registry are told, as after define.
	 */
	async remove(now: number, by = "api"): Promise<{ deleted: string; cancelled: number } | Refusal> {
		// Read before the delete is written, for its alarm to be set in the same turn (alarmWithWrite).
		const alarm = await this.ctx.storage.getAlarm();
		this.revive();
		const agent = definedAgent(this.sql);
		// A second delete (two operators deleting at once, or a retry) is told of the first, as an edit is.
		if (agent?.source === "api" && agent.deletedAt !== null) return this.refuseWrite(404, deletedUnchanged(agent.name, agent.deletedAt));
		if (!agent?.live || agent.source !== "api") return this.refuseWrite(404, `no agent named ${agent?.name ?? this.ctx.id.name ?? "by this name"}`);
		this.ctx.storage.transactionSync(() => {
			markDeleted(this.sql, now);
			queueSync(this.sql, by, Date.now());
			queueRetireIncidents(this.sql, Date.now());
			// An agent defined again under this name starts its own conversation; the old session's jobs
			// stay readable, and can still be continued by hand.
			clearPersistentSession(this.sql);
		});
		// Queued runs would never start without a definition; running ones finish on their manifest.
		const cancelled = this.passes.cancelOrphans("agent deleted", now);
		// Set with the delete: an object reset before D1 is answered still has the alarm, whose pass
		// sends what the delete left (the sync, the cancelled runs' index rows and hooks). Also the
		// backstop for the sync: the pass leaves the alarm at the sync's due time.
		await this.passes.alarmWithWrite(alarm, Date.now());
		await this.indexNow();
		await this.registry.sync();
		await this.afterSync();
		return { deleted: agent.name, cancelled };
	}

	/**
	 * A deploy dropped this file agent from fleet.yaml (its shard says so once): its queued runs end
	 * now rather than when something next wakes it, which for a paused agent would be never. `last`
	 * is its definition as the previous deploy had it (its shard keeps it; null if that deploy
	 * predates keeping it): its history keeps that retention, not the deployment's default.
	 */
	async dropFromFleet(last: AgentDefinition | null = null): Promise<void> {
		// Read before the runs are cancelled, for their alarm to be set in the same turn.
		const alarm = await this.ctx.storage.getAlarm();
		this.revive();
		const state = readState(this.sql);
		if (!state || state.source !== "file" || currentDefinition(state)) return;
		this.passes.cancelOrphans("agent removed from fleet.yaml");
		// Its shard stops calling it, so no tick would forget its schedules before a deploy adds it back.
		forgetSchedules(this.sql);
		queueRetireIncidents(this.sql, Date.now());
		const before = keptDefinition(state);
		if (last) keepLastDefinition(this.sql, last);
		// The cancelled runs' hooks (and any index row D1 refuses) are the alarm's pass's to send: a
		// dropped agent is ticked no more, so nothing else would wake it for them.
		await this.passes.alarmWithWrite(alarm, Date.now());
		await this.indexNow();
		if (last && this.passes.retentionMs(last) < this.passes.retentionMs(before)) await this.retentionShortened();
	}

	/**
	 * An operator's write (a pause, a resume, a notepad write) to an agent deleted here: refused as
	 * its absence is, changing nothing. The API finds the agent in D1, which a delete tells last, so a
	 * write crossing a delete passes that lookup and arrives after it; answered 200, it was a success
	 * for an agent that is gone (its notepad forgotten when the name is defined again).
	 */
	private deletedHere(state: AgentState, name: string): Refusal | null {
		return state.deletedAt === null ? null : refuse(404, deletedUnchanged(name, state.deletedAt));
	}

	/** Pauses the agent; `by` is the caller's token name ("auto" is reserved for automatic pauses). */
	async pause(name: string, source: AgentSource, reason: string | null, by: string): Promise<AgentStatus | Refusal> {
		this.revive();
		const state = this.ensureState(name, source);
		const gone = this.deletedHere(state, name);
		if (gone) return gone;
		// Paused already: it has been paused since the first pause (what the dashboard's "paused 3 days"
		// and an operator's judgement go by). A new reason replaces the old, none keeps it, and the
		// caller takes the pause over, so an operator's pause over an automatic one stays until resume.
		const at = state.pausedAt ?? Date.now();
		// Shown to every read token and in the ledger's skipped rows: stored redacted, as every record is.
		const said = reason === null ? null : redact(reason);
		setPaused(this.sql, at, said ?? (state.pausedAt === null ? null : state.pausedReason), by === "auto" ? "operator" : by);
		log.info("agent.paused", { agent: name, reason: said, by });
		return this.status(name, source);
	}

	/** Resumes the agent; `by` is the caller's token name (absent from a Worker on the release before). */
	async resume(name: string, source: AgentSource, by?: string): Promise<AgentStatus | Refusal> {
		// Read before the pause is lifted, for the queued runs' alarm to be set in the same turn.
		const alarm = await this.ctx.storage.getAlarm();
		this.revive();
		const state = this.ensureState(name, source);
		const gone = this.deletedHere(state, name);
		if (gone) return gone;
		// One that cannot run would only be paused again at once (with its pause's time lost): it is
		// refused, and nothing changes.
		const agent = currentDefinition(state);
		const problems = agent ? readinessProblems(agent, this.env, new Date()) : [];
		if (problems.length > 0) {
			const after = state.pausedBy === "auto" || state.pausedAt === null ? "; it resumes by itself once that is fixed" : "";
			return refuse(409, `agent ${name} cannot run: ${problems.join("; ")}${after}`);
		}
		setPaused(this.sql, null, null, null);
		// Queued runs the pause held are due from this write on: their alarm is set with it.
		const armed = jobCounts(this.sql).pending > 0 ? this.passes.alarmWithWrite(alarm) : null;
		log.info("agent.resumed", { agent: name, by });
		// status() judges readiness first: an agent that cannot run is paused again, automatically,
		// before any queued run could start and fail.
		const status = await this.status(name, source);
		if (status.paused === null) await this.startQueued();
		await armed;
		return status;
	}

	async status(name: string, source: AgentSource): Promise<AgentStatus> {
		this.revive();
		let state = this.ensureState(name, source);
		// Readiness is the Worker's to judge (its secrets, the model's retirement date), so a view
		// shows an agent that cannot run as paused, and one that can again as not, before any trigger
		// or tick finds out: a newly created agent on a retired model, a secret set since.
		const agent = currentDefinition(state);
		if (agent) state = this.autoPause(agent, state, Date.now());
		// An automatic pause lifted here (a secret set since), or a deploy that enabled the agent
		// again: its queued runs start now, even an agent without schedules, which no tick wakes.
		if (agent && state.pausedAt === null) await this.passes.startStartable(Date.now() + startSpreadMs(name));
		const last = lastFinishedJob(this.sql);
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
			last_job: last && { id: last.id, status: last.status, exit_reason: last.exit_reason, finished_at: last.finished_at, delivery: last.delivery?.outcome ?? null, tool_calls: last.tool_calls },
			last_runs: lastRuns(this.sql, Object.keys(agent?.schedules ?? {})),
			index_backlog: outboxSize(this.sql, this.passes.closing.acked),
			storage_bytes: this.sql.databaseSize,
		};
	}

	async notepad(name: string, source: AgentSource): Promise<Notepad> {
		this.revive();
		this.ensureState(name, source);
		return readNotepad(this.sql);
	}

	/** The notepad comes back wrapped: bare, a key named "refused" would pass for a refusal. */
	async setNote(name: string, source: AgentSource, key: string, value: string, condition?: NoteCondition, by?: string): Promise<{ notepad: Notepad } | Refusal> {
		this.revive();
		const gone = this.deletedHere(this.ensureState(name, source), name);
		if (gone) return gone;
		const refused = setNote(this.sql, key, value, Date.now(), condition);
		if (refused) return refused;
		log.info("notepad.set", { agent: name, key, by });
		return { notepad: readNotepad(this.sql) };
	}

	async deleteNote(name: string, source: AgentSource, key: string | null, condition?: NoteCondition, by?: string): Promise<{ deleted: number } | Refusal> {
		this.revive();
		const gone = this.deletedHere(this.ensureState(name, source), name);
		if (gone) return gone;
		const deleted = deleteNote(this.sql, key, condition);
		if (typeof deleted !== "number") return deleted;
		log.info("notepad.deleted", { agent: name, key, deleted, by });
		return { deleted };
	}

	// A condition comes by methods of its own, not as an argument: an object still on a release
	// before conditions (a deploy leaves a busy one on its old code for minutes) would ignore the
	// argument and write unchecked, where a method it lacks refuses the call and writes nothing.
	async setNoteIf(name: string, source: AgentSource, key: string, value: string, condition: NoteCondition, by?: string): Promise<{ notepad: Notepad } | Refusal> {
		return this.setNote(name, source, key, value, condition, by);
	}

	async deleteNoteIf(name: string, source: AgentSource, key: string, condition: NoteCondition, by?: string): Promise<{ deleted: number } | Refusal> {
		return this.deleteNote(name, source, key, condition, by);
	}

	async runs(limit: number, before?: { claimedAt: number; id: string }): Promise<Occurrence[]> {
		this.revive();
		const runs = listOccurrences(this.sql, limit, before);
		// Only an empty answer can come of a blank object: an agent's reads ask nothing more.
		if (runs.length === 0) await this.dropIfBlank();
		return runs;
	}

	/** A page of this agent's sessions, newest first (see sessions.ts). */
	async sessions(limit: number, before?: CursorKey): Promise<{ sessions: SessionSummary[]; next: CursorKey | null }> {
		this.revive();
		const page = listSessions(this.sql, storedAgentName(this.sql) ?? "", limit, before);
		if (page.sessions.length === 0) await this.dropIfBlank();
		return page;
	}

	/** A session of this agent by id or prefix, or the ids a prefix could mean (up to `limit`). */
	async session(idOrPrefix: string, limit: number): Promise<SessionLookup> {
		this.revive();
		const found = findSession(this.sql, storedAgentName(this.sql) ?? "", idOrPrefix, limit);
		await this.dropIfBlank();
		return found;
	}

	/**
	 * The agent's persistent session, if it has one, and whether its next persistent run continues it
	 * (see runner/persistent.ts); null for an agent not defined now.
	 */
	async persistentSession(): Promise<SessionView | null> {
		this.revive();
		const state = readState(this.sql);
		const agent = state ? currentDefinition(state) : null;
		if (!agent) await this.dropIfBlank();
		return agent ? persistentSessionView(this.sql, agent, Date.now()) : null;
	}

	/** Forgets the persistent session, so the agent's next run starts a fresh one; what it forgot. */
	async resetPersistentSession(by: string): Promise<PersistentSession | null | Refusal> {
		this.revive();
		// A reset crossing the delete (which forgot the session itself) is told of it, as a pause is.
		const defined = definedAgent(this.sql);
		if (defined?.deletedAt != null) return refuse(404, deletedUnchanged(defined.name, defined.deletedAt));
		const forgotten = clearPersistentSession(this.sql);
		log.info("session.reset", { agent: storedAgentName(this.sql) ?? null, by, session_id: forgotten?.sessionId ?? null });
		return forgotten;
	}

	/**
	 * What a job runs with (deputy's manifest): saved as it starts, reused by every turn whatever is
	 * deployed meanwhile. Null for a job this object does not hold; its setup null for one that has
	 * not started (or never did).
	 */
	async manifest(id: string): Promise<{ job: JobRecord; setup: JobSetup | null } | null> {
		this.revive();
		const job = getJob(this.sql, id);
		if (!job) await this.dropIfBlank();
		return job ? { job, setup: getSetup(this.sql, id) } : null;
	}

	/**
	 * A page of a job's tool calls in the order made (deputy's runtime), after the call at `after`.
	 * Null for a job this object does not hold.
	 */
	async toolCalls(id: string, limit: number, after: number, resultChars: number): Promise<{ job: JobRecord; calls: ToolCall[]; next: number | null } | null> {
		this.revive();
		const job = asShown(this.sql, getJob(this.sql, id));
		if (!job) await this.dropIfBlank();
		return job ? { job, ...toolCallPage(this.sql, id, limit, after, resultChars) } : null;
	}

	async getJob(id: string): Promise<JobRecord | null> {
		this.revive();
		const job = asShown(this.sql, getJob(this.sql, id));
		if (!job) await this.dropIfBlank();
		return job;
	}

	/** GET /v1/jobs/:id's view: the record with its hook calls. */
	async jobView(id: string): Promise<JobView | null> {
		const job = await this.getJob(id);
		return job && { ...job, hooks: hookCalls(this.sql, id) };
	}

	/**
	 * Re-reads everything and acts on what it finds, so a repeated or late alarm is harmless: flush
	 * the D1 outbox, start what may start, run due jobs turn by turn, and set the next alarm.
	 */
	override async alarm(): Promise<void> {
		// One delivered after its object forgot its agent (at least once, alarms are) has nothing to do:
		// making the schema again to find that out would store it again.
		if (this.forgotten) return;
		try {
			await this.runAlarm();
		} catch (err) {
			// The platform's own exception log has the stack but not the agent; it retries the alarm.
			log.error("agent.alarm_failed", { agent: this.agentName(), ...errorFields(err) });
			throw err;
		}
	}

	/** This object's agent, for a line: by the name it was addressed by, else by its stored state (either may be missing). */
	private agentName(): string | null {
		if (this.ctx.id.name) return this.ctx.id.name;
		try {
			return storedAgentName(this.sql) ?? null;
		} catch {
			return null;
		}
	}

	private async runAlarm(): Promise<void> {
		// A pass already under way in this instance (started by a trigger, a decision or a cancel) has
		// the work in hand and sets the next alarm when it ends: this one only makes sure what is due
		// starts, and returns. Waiting would hold the alarm for that pass and one more after it, past
		// the platform's 15 minutes of wall time for an alarm when passes run long. The next heartbeat
		// is set before it returns: this one was the safety net, and the object may yet die mid-call.
		if (this.passes.working) {
			this.passes.startNow();
			// Not left to the pass's end, which may be minutes away: they never reject. An index row
			// D1 refused earlier in the pass would otherwise keep a running job out of GET and cancel.
			await this.registry.catchUp();
			if (outboxSize(this.sql, this.passes.closing.acked) > 0) await this.passes.closing.flushIndex();
			await this.passes.alarmAt(Date.now() + HEARTBEAT_MS);
			return;
		}
		await this.passes.work();
		// The alarm holds the object until its pass's alerts are out; API calls that flush do not wait.
		await this.passes.closing.alertsSent();
		await this.forgetIfGone();
		await this.dropIfBlank();
	}

	/** Cancels a job (see cancelJob: `force` cuts off a tool call in flight in this instance). */
	async cancel(jobId: string, reason: string | null, by: string, force = false): Promise<JobRecord | Refusal> {
		this.revive();
		return cancelJob(this.control, jobId, reason, by, force);
	}

	/** Records a human decision on the tool call a job is waiting on, and resumes the job (see decideApproval). */
	async decide(
		jobId: string,
		decision: "approve" | "deny",
		toolInput: Record<string, unknown> | undefined,
		by: string,
		allowDefinitionChange = false,
		toolUseId?: string,
	): Promise<JobRecord | Refusal> {
		this.revive();
		return decideApproval(this.control, jobId, { decision, toolInput, by, allowDefinitionChange, toolUseId });
	}

	/** A deny with its reason, told the model: a method of its own, which an object of the release before lacks. */
	async denyWithReason(jobId: string, reason: string, by: string, toolUseId?: string): Promise<JobRecord | Refusal> {
		this.revive();
		return decideApproval(this.control, jobId, { decision: "deny", toolInput: undefined, by, allowDefinitionChange: false, toolUseId, reason });
	}

	/** A new job continuing a finished job's session, or forking a new session from it. */
	async followUp(kind: "continue" | "fork", sourceId: string, opts: FollowUpOptions): Promise<JobRecord | Refusal> {
		const result = await this.followUpOnce(kind, sourceId, opts);
		return isRefusal(result) ? result : result.job;
	}

	/**
	 * As followUp, under an Idempotency-Key: a retry gets the job the key made (`created` false). A
	 * method of its own, as followUp's answer is read by a Worker of the release before while a
	 * deploy rolls out; a Worker calls it only with a key.
	 */
	async followUpOnce(kind: "continue" | "fork", sourceId: string, opts: FollowUpOptions & { idempotency?: Idempotency | undefined }): Promise<{ job: JobRecord; created: boolean } | Refusal> {
		this.revive();
		// Asked first, as a trigger does: a wait for ids must not fall between reading the definition
		// and acting on it.
		const named = storedAgentName(this.sql);
		if (named) await this.jobIds.ensure(this.env, named, Date.now());
		// The wait let other calls in, one that forgot this object among them: met as a fresh one.
		this.revive();
		const state = readState(this.sql);
		const agent = state && currentDefinition(state);
		const revision = agent ? await definitionRevision(agent) : null;
		const drawJobId = (at: number) => this.jobIds.take(at, agent?.name ?? "");
		// As a trigger's: the job and its safety-net alarm are written in one turn.
		const alarm = await this.ctx.storage.getAlarm();
		const result = this.ctx.storage.transactionSync(() => createFollowUp(this.sql, state, agent, revision, { kind, sourceId, ...opts }, Date.now(), drawJobId));
		if (isRefusal(result)) {
			// No agent here (forgotten, during the wait or before the call): nothing made to answer is kept.
			if (!state) await this.dropIfBlank();
			return result;
		}
		if (!result.created) return result;
		const { job } = result;
		const armed = this.passes.alarmWithWrite(alarm);
		log.info(`job.${kind}`, { agent: job.agent, job_id: job.id, from: sourceId, by: opts.owner });
		await Promise.all([armed, this.startCreated()]);
		return result;
	}

	/**
	 * Starts a job just created (a trigger's, a continue's or a fork's) in this instance, indexes it
	 * and arms the safety-net alarm. The index write waits a turn so the job's model call leaves first (see nextTurn).
	 */
	private async startCreated(): Promise<void> {
		this.passes.startNow();
		await nextTurn();
		await this.indexNow();
		await this.passes.armSafetyNet();
	}

	/**
	 * Indexes a job the caller is about to be told about, so its id works in the API at once. A D1
	 * failure here is not the caller's problem: the outbox keeps the row and the alarm retries.
	 */
	private async indexNow(): Promise<void> {
		await this.passes.closing.flushIndex();
	}

	/**
	 * Starts the runs queued while the agent could not start them (paused, disabled), now rather than
	 * at whatever next wakes the object: for an agent with no schedule, nothing would.
	 */
	private async startQueued(): Promise<void> {
		if (jobCounts(this.sql).pending > 0) await this.passes.workNow();
	}

	/**
	 * Pauses an agent that cannot run (a missing secret, a retired model) instead of failing each
	 * tick, and lifts a pause it made itself once the cause is gone. An operator's pause stays.
	 */
	private autoPause(agent: AgentDefinition, state: AgentState, now: number): AgentState {
		if (state.pausedAt !== null && state.pausedBy !== "auto") return state;
		const problems = readinessProblems(agent, this.env, new Date(now));
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
