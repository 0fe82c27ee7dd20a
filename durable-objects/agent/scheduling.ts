import type { AgentDefinition, Schedule } from "../../src/config/schema.ts";
import { createJob, newJobId } from "../../src/jobs/model.ts";
import { nextDue, planTick } from "../../src/scheduler/occurrences.ts";
import { jobCounts, putJob } from "./jobs.ts";
import { insertOccurrence } from "./ledger.ts";
import type { AgentState } from "./state.ts";

/** A slot first seen by a tick is fired if it lies within this much before the tick. */
const FIRST_SIGHT_LOOKBACK_MS = 60_000;

export interface TickOutcome {
	claimed: number;
	skipped: number;
	/** The earliest slot still to come across this agent's schedules, or null when none. */
	nextDue: number | null;
}

interface ScheduleStateRow {
	schedule: string;
	spec: string;
	cursor: number;
	[key: string]: SqlStorageValue;
}

// Only what decides the slots: a new prompt must not reset the schedule's place in time.
function specKey(s: Schedule, agentEnabled: boolean): string {
	const { prompt: _prompt, ...timing } = s;
	return JSON.stringify({ ...timing, agentEnabled });
}

export interface TickContext {
	agent: AgentDefinition;
	state: AgentState;
	definitionRevision: string;
	now: number;
}

/**
 * Claims this agent's due occurrences for a tick at `now`. Synchronous on purpose: the caller runs
 * it inside one storage transaction, so the cursor advance (the pre-dispatch advance), the ledger
 * rows and the pending jobs commit together or not at all. A duplicate, retried or concurrent tick
 * finds the cursor already past its slots, and the ledger's unique (schedule, instant) index turns
 * any claim that still races into a no-op.
 */
/**
 * Drops the cursors of every schedule but `running`. A schedule that stopped running (removed, it or
 * its agent disabled, the agent deleted or dropped from fleet.yaml) owes nothing for that time: when
 * it runs again it starts from now, as a new schedule does, instead of catching up the slots it was
 * off for.
 */
export function forgetSchedules(sql: SqlStorage, running: readonly string[] = []): void {
	// One JSON parameter, not one per name: a DO statement takes at most 100 bound parameters.
	sql.exec("DELETE FROM schedule_state WHERE schedule NOT IN (SELECT value FROM json_each(?))", JSON.stringify(running));
}

export function claimDue(sql: SqlStorage, ctx: TickContext): TickOutcome {
	const { agent, state, now } = ctx;
	const counts = jobCounts(sql);
	let claimed = 0;
	let skipped = 0;
	let next: number | null = null;

	// Each definition change brings the agent a tick at once, which forgets what stopped running.
	forgetSchedules(sql, Object.entries(agent.schedules).filter(([, s]) => agent.enabled && s.enabled).map(([name]) => name));

	for (const [name, schedule] of Object.entries(agent.schedules)) {
		if (!agent.enabled || !schedule.enabled) continue;
		const key = specKey(schedule, agent.enabled);
		const row = sql.exec<ScheduleStateRow>("SELECT * FROM schedule_state WHERE schedule = ?", name).toArray()[0];
		// A new or changed schedule starts from now: slots of a spec it never had are not owed.
		const cursor = row && row.spec === key ? row.cursor : Math.max(row?.cursor ?? 0, now - FIRST_SIGHT_LOOKBACK_MS);
		if (now > cursor) {
			const plan = planTick(schedule, new Date(cursor), new Date(now));
			// Why the tick's fire was not run, if it was not: the slots collapsed into it were not run either.
			let refused: string | null = null;
			for (const fire of plan.fires) {
				const instant = fire.instant.getTime();
				const reason = refusal(agent, state, counts);
				refused = reason;
				if (reason) {
					if (insertOccurrence(sql, { schedule: name, source: "cron", scheduledInstant: instant, dispatch: fire.dispatch, claimedAt: now, status: "skipped", skipReason: reason })) skipped++;
					continue;
				}
				const jobId = newJobId(new Date(now));
				const occurrence = insertOccurrence(sql, {
					schedule: name,
					source: "cron",
					scheduledInstant: instant,
					dispatch: fire.dispatch,
					claimedAt: now,
					status: "claimed",
					jobId,
				});
				if (!occurrence) continue;
				const job = createJob(
					{
						id: jobId,
						agent: agent.name,
						trigger_type: "schedule",
						schedule: name,
						prompt: schedule.prompt ?? agent.prompt ?? null,
						scheduled_instant: fire.instant,
						dispatch: fire.dispatch,
						usage_limits: agent.usage_limits ?? null,
						definition_revision: ctx.definitionRevision,
					},
					new Date(now),
				);
				putJob(sql, job, now);
				counts.pending++;
				claimed++;
			}
			for (const range of plan.skipped) {
				const inserted = insertOccurrence(sql, {
					schedule: name,
					source: "cron",
					scheduledInstant: range.last.getTime(),
					dispatch: "late",
					claimedAt: now,
					status: "skipped",
					skipReason: refused ?? range.reason,
					skippedCount: range.count,
					skippedFrom: range.first.getTime(),
				});
				if (inserted) skipped++;
			}
			sql.exec(
				`INSERT INTO schedule_state (schedule, spec, cursor, last_fire_instant, last_fire_at) VALUES (?, ?, ?, ?, ?)
				 ON CONFLICT (schedule) DO UPDATE SET spec = excluded.spec, cursor = max(schedule_state.cursor, excluded.cursor),
				   last_fire_instant = coalesce(excluded.last_fire_instant, schedule_state.last_fire_instant),
				   last_fire_at = coalesce(excluded.last_fire_at, schedule_state.last_fire_at)`,
				name,
				key,
				plan.cursor.getTime(),
				plan.fires.at(-1)?.instant.getTime() ?? null,
				plan.fires.length > 0 ? now : null,
			);
		}
		const due = nextDue(schedule, new Date(Math.max(cursor, now)))?.getTime() ?? null;
		if (due !== null && (next === null || due < next)) next = due;
	}
	return { claimed, skipped, nextDue: next };
}

/** Why a due occurrence cannot become a job now, or null when it can. */
function refusal(agent: AgentDefinition, state: AgentState, counts: { active: number; pending: number }): string | null {
	if (state.pausedAt !== null) return `paused: ${state.pausedReason ?? "no reason given"}`;
	const free = agent.max_concurrent - counts.active;
	if (counts.pending < free) return null;
	// "queue" holds one run beyond capacity; "skip" holds none.
	if (agent.overlap === "queue" && counts.pending === Math.max(free, 0)) return null;
	return agent.overlap === "queue"
		? `already running (max_concurrent ${agent.max_concurrent}) with a run already queued`
		: `already running (max_concurrent ${agent.max_concurrent})`;
}
