import type { AgentDefinition } from "../../src/config/schema.ts";
import type { JobRecord } from "../../src/jobs/model.ts";
import { graceWindowMs, humanDuration, periodAt } from "../../src/scheduler/occurrences.ts";
import type { JobCountsAfter } from "./scheduling.ts";

/**
 * A claimed run starts within seconds of its tick (its start spread). One still pending when the
 * next tick has come was held: by a pause, a disabled agent, or capacity (overlap: queue).
 */
const HELD_AFTER_MS = 60_000;

/**
 * Notes the time of a tick this agent was called for against its own clock, so that a held claim's
 * lateness is measured on the scheduler's clock (the ticks'), not on one it was never compared with:
 * see schedulerNow. A tick that claims a run dates that claim: the clock is set to it. One that finds
 * a run held (pending while its agent is paused or disabled, or its places are taken by running
 * jobs) moves the clock on, never back (a retried or reordered tick). A run pending while its agent
 * is free to start it waits only for its start alarm, on the object's clock. An idle agent's tick
 * writes nothing more.
 */
export function noteTick(
	sql: SqlStorage,
	tick: { at: number; wallAt: number; claimed: number; counts: JobCountsAfter; agent: AgentDefinition; paused: boolean },
): void {
	const { active, pending } = tick.counts;
	const held = pending > 0 && (tick.paused || !tick.agent.enabled || active >= tick.agent.max_concurrent);
	if (tick.claimed === 0 && !held) return;
	sql.exec(
		"UPDATE agent_state SET tick_at = ?1, tick_noted_at = ?2 WHERE id = 1 AND (?3 OR tick_at IS NULL OR tick_at < ?1)",
		tick.at,
		tick.wallAt,
		tick.claimed > 0 ? 1 : 0,
	);
}

/**
 * Now on the scheduler's clock: the newest tick this agent was called for, moved on by the time
 * since it came. Deployed, a tick's time is the minute it was due and this is the wall clock; a tick
 * given another time (a test's, a replayed one) dates the claims it makes, and this keeps to it.
 * The wall clock when no tick was noted.
 */
export function schedulerNow(sql: SqlStorage, wallNow: number): number {
	const row = sql.exec<{ tick_at: number | null; tick_noted_at: number | null }>("SELECT tick_at, tick_noted_at FROM agent_state WHERE id = 1").toArray()[0];
	if (row?.tick_at == null || row.tick_noted_at == null) return wallNow;
	return row.tick_at + Math.max(0, wallNow - row.tick_noted_at);
}

export type HeldClaim = { run: true; late: boolean; note: string | null } | { run: false; reason: string };

/**
 * What becomes of a scheduled run about to start at `clock()` (the scheduler's clock): a slot is fired
 * as itself only within its grace window (see planTick), and a claim held past it is judged as a
 * slot missed by that much would be. With its schedule's catch_up on it runs, labelled `late`
 * (a `catch_up` run stays one); with catch_up off, or its schedule disabled or gone, it does not
 * run. A run that starts as claimed, or within the window, is left as it is.
 */
export function heldClaim(job: JobRecord, agent: AgentDefinition, clock: () => number): HeldClaim {
	const ok: HeldClaim = { run: true, late: false, note: null };
	if (job.trigger_type !== "schedule" || job.scheduled_instant === null || job.schedule === null) return ok;
	// Read only for a scheduled run: a manual run's start pays no statement for it.
	const now = clock();
	const slot = Date.parse(job.scheduled_instant);
	const lateness = now - slot;
	if (now - Date.parse(job.created_at) <= HELD_AFTER_MS) return ok;
	const schedule = agent.schedules[job.schedule];
	// A schedule removed since its claim: its period is unknown, so the shortest window applies.
	const grace = graceWindowMs(schedule ? periodAt(schedule, new Date(slot)) : 0);
	if (lateness <= grace) return ok;
	const held = `held until ${humanDuration(lateness)} after its slot ${job.scheduled_instant} (its agent paused, disabled or at capacity), past the slot's grace window of ${humanDuration(grace)}`;
	const why = !schedule
		? `schedule ${job.schedule} no longer exists`
		: !schedule.enabled
			? `schedule ${job.schedule} is disabled`
			: !schedule.catch_up
				? `schedule ${job.schedule} has catch_up: false`
				: null;
	if (why) return { run: false, reason: `not run: ${held}; ${why}` };
	return { run: true, late: job.dispatch !== "catch_up", note: `started late: ${held}; schedule ${job.schedule} has catch_up: true` };
}
