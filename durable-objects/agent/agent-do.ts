import { DurableObject } from "cloudflare:workers";
import { definitionRevision } from "../../src/config/fleet.ts";
import { readinessProblems } from "../../src/config/readiness.ts";
import type { AgentDefinition } from "../../src/config/schema.ts";
import type { JobRecord } from "../../src/jobs/model.ts";
import { errorFields, log } from "../../src/log.ts";
import { refuse, type Refusal } from "../../src/shared/refusal.ts";
import { migrate } from "../../src/store/sqlite-migrations.ts";
import { getJob, jobCounts, jobsWithStatus, latestJob, pendingJobs, putJob } from "./jobs.ts";
import { listOccurrences, type Occurrence } from "./ledger.ts";
import { flushOutbox, outboxSize } from "./outbox.ts";
import { AGENT_MIGRATIONS } from "./schema.ts";
import { claimDue, type TickOutcome } from "./scheduling.ts";
import { currentDefinition, ensureState, markDeleted, readState, saveDefinition, setPaused, type AgentSource, type AgentState } from "./state.ts";
import { triggerJob, type TriggerRequest } from "./triggers.ts";

/** How soon the alarm retries an outbox that D1 refused. */
const OUTBOX_RETRY_MS = 10_000;

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
 * One per agent, addressed by the agent's name: the source of truth for that agent's schedule
 * state, occurrence ledger and jobs. Callers use its RPC methods; `fetch` is kept for streams.
 */
export class AgentDO extends DurableObject<Env> {
	readonly schemaVersion: number;
	private readonly sql: SqlStorage;

	constructor(ctx: DurableObjectState, env: Env) {
		super(ctx, env);
		this.sql = ctx.storage.sql;
		// SQLite calls are synchronous, so migrating here finishes before any request or alarm runs.
		this.schemaVersion = migrate(ctx.storage, AGENT_MIGRATIONS);
	}

	async getSchemaVersion(): Promise<number> {
		return this.schemaVersion;
	}

	/** Claims this agent's due occurrences for the tick at `now` (ms). Idempotent per occurrence. */
	async tick(name: string, source: AgentSource, now: number): Promise<TickOutcome & { paused: boolean }> {
		const state = ensureState(this.sql, name, source);
		const agent = currentDefinition(state);
		if (!agent) return { claimed: 0, skipped: 0, nextDue: null, paused: false };
		const revision = await definitionRevision(agent);
		const outcome = this.ctx.storage.transactionSync(() => {
			const current = this.autoPause(agent, readState(this.sql)!, now);
			return { ...claimDue(this.sql, { agent, state: current, definitionRevision: revision, now }), paused: current.pausedAt !== null };
		});
		if (outcome.claimed > 0) log.info("schedule.claimed", { agent: name, claimed: outcome.claimed, skipped: outcome.skipped, tick: new Date(now).toISOString() });
		await this.armAlarm();
		return outcome;
	}

	/** Creates a manual or webhook run. */
	async trigger(name: string, source: AgentSource, request: TriggerRequest): Promise<{ job: JobRecord; created: boolean } | Refusal> {
		const state = ensureState(this.sql, name, source);
		const agent = currentDefinition(state);
		if (!agent) return refuse(404, `no agent named ${name}`);
		const revision = await definitionRevision(agent);
		const now = Date.now();
		const result = this.ctx.storage.transactionSync(() =>
			triggerJob(this.sql, { agent, state: this.autoPause(agent, readState(this.sql)!, now), definitionRevision: revision, now }, request),
		);
		if ("job" in result && result.created) {
			log.info("job.triggered", { agent: name, job_id: result.job.id, trigger_type: result.job.trigger_type });
			await this.armAlarm();
		}
		return result;
	}

	/** Stores an API agent's definition (create or update). */
	async define(name: string, definition: AgentDefinition, revision: string): Promise<void> {
		saveDefinition(this.sql, name, definition, revision);
	}

	/** Deletes an API agent: it stops scheduling, its jobs and ledger stay readable. */
	async remove(now: number): Promise<void> {
		markDeleted(this.sql, now);
	}

	async pause(name: string, source: AgentSource, reason: string | null): Promise<AgentStatus> {
		ensureState(this.sql, name, source);
		setPaused(this.sql, Date.now(), reason, "operator");
		log.info("agent.paused", { agent: name, reason });
		return this.status(name, source);
	}

	async resume(name: string, source: AgentSource): Promise<AgentStatus> {
		ensureState(this.sql, name, source);
		setPaused(this.sql, null, null, null);
		log.info("agent.resumed", { agent: name });
		return this.status(name, source);
	}

	async status(name: string, source: AgentSource): Promise<AgentStatus> {
		const state = ensureState(this.sql, name, source);
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
			index_backlog: outboxSize(this.sql),
		};
	}

	async runs(limit: number, before?: { claimedAt: number; id: string }): Promise<Occurrence[]> {
		return listOccurrences(this.sql, limit, before);
	}

	async getJob(id: string): Promise<JobRecord | null> {
		return getJob(this.sql, id);
	}

	/** Stores a record only if it is newer than what is held: revisions never go backwards. */
	async saveJob(job: JobRecord): Promise<boolean> {
		const written = putJob(this.sql, job, Date.now());
		if (written) await this.armAlarm();
		return written;
	}

	/**
	 * Re-reads everything and acts on what it finds, so a repeated or late alarm is harmless: flush
	 * the D1 outbox, start what may start, and set the next alarm if anything is left to do.
	 */
	override async alarm(): Promise<void> {
		const state = readState(this.sql);
		let retryOutbox = false;
		try {
			await flushOutbox(this.sql, this.env.DB);
		} catch (err) {
			retryOutbox = true;
			log.warn("outbox.flush_failed", { agent: state?.name, backlog: outboxSize(this.sql), ...errorFields(err) });
		}
		const agent = state && currentDefinition(state);
		if (agent && state.pausedAt === null) {
			const { active } = jobCounts(this.sql);
			for (const job of pendingJobs(this.sql, Math.max(agent.max_concurrent - active, 0))) await this.runJob(job);
		}
		if (retryOutbox) await this.ctx.storage.setAlarm(Date.now() + OUTBOX_RETRY_MS);
		else await this.armAlarm();
	}

	/**
	 * The agent loop's entry point: a pending job with a free concurrency slot is handed here by
	 * the alarm.
	 */
	protected async runJob(job: JobRecord): Promise<void> {
		log.info("job.ready", { agent: job.agent, job_id: job.id });
	}

	/** Sets an alarm now if there is work an alarm does (index rows to send); never pushes one back. */
	private async armAlarm(): Promise<void> {
		if (outboxSize(this.sql) === 0) return;
		const current = await this.ctx.storage.getAlarm();
		if (current === null) await this.ctx.storage.setAlarm(Date.now());
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
