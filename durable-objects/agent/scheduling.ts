import type { AgentDefinition, Schedule } from "../../src/config/schema.ts";
import { createJob } from "../../src/jobs/model.ts";
import { nextDue, planTick, type SkippedRange, type TickPlan } from "../../src/scheduler/occurrences.ts";
import { freshJobId, jobCounts, pendingJobsOf, putJob } from "./jobs.ts";
import { insertOccurrence, renameOccurrence } from "./ledger.ts";
import type { AgentState } from "./state.ts";

/** A slot first seen by a tick is fired if it lies within this much before the tick. */
const FIRST_SIGHT_LOOKBACK_MS = 60_000;
/**
 * A tick that reaches an agent at most this long after its own time keeps the wall clock's time, as
 * deployed ticks (and `drover tick`'s) do: a definition's time, the wall clock's, can be set against
 * it. Generous: a cron trigger arrives within seconds, and a local tick of thousands of agents
 * reaches the last ones within a minute or so.
 */
const TICK_ON_WALL_CLOCK_MS = 5 * 60_000;
/**
 * The spec of a schedule a PUT or POST started that no tick has seen yet: its row keeps, as
 * changed_at, the latest tick before it (see noteTimingChanges), and as defined_at the clock's time
 * of the definition, so that a slot a missing tick left behind is not lost, and one a tick already
 * took for this agent is not taken again (see firstSight).
 */
const NOT_YET_TICKED = "";

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
	changed_at: number | null;
	defined_at: number | null;
	[key: string]: SqlStorageValue;
}

// Only what decides the slots (cron or interval, timezone, catch_up, enabled): a new prompt, session
// mode or output_to_file must not reset the schedule's place in time, which would record the slots
// an outage missed as skipped instead of catching them up. The fields left keep their order, so the
// key of a schedule without those settings is the one stored before.
function specKey(s: Schedule, agentEnabled: boolean): string {
	const { prompt: _prompt, session: _session, output_to_file: _outputToFile, ...timing } = s;
	return JSON.stringify({ ...timing, agentEnabled });
}

export interface TickContext {
	agent: AgentDefinition;
	state: AgentState;
	definitionRevision: string;
	now: number;
	/** The wall clock as the tick reached the agent. */
	wallAt: number;
	/** A new job's id (see JobIdPool). */
	drawJobId: (now: number) => string;
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

/** A job a tick claimed, for its log line. */
export interface Claim {
	jobId: string;
	schedule: string;
	instant: number;
	dispatch: string;
}

/** The agent's jobs once the tick's claims are made, as claimDue counted them. */
export interface JobCountsAfter {
	active: number;
	pending: number;
}

export function claimDue(sql: SqlStorage, ctx: TickContext): TickOutcome & { counts: JobCountsAfter; claims: Claim[] } {
	const { agent, state, now } = ctx;
	const counts = jobCounts(sql);
	const claims: Claim[] = [];
	let claimed = 0;
	let skipped = 0;
	let next: number | null = null;

	const running = Object.entries(agent.schedules).filter(([, s]) => agent.enabled && s.enabled);
	// One read of every schedule's place in time, not one per schedule: this runs on every claim.
	const rows = new Map(sql.exec<ScheduleStateRow>("SELECT * FROM schedule_state").toArray().map((r) => [r.schedule, r]));
	const adopted = adoptRenamed(sql, rows, running.map(([name, s]) => [name, specKey(s, agent.enabled)]), now);
	// What stopped running (removed, disabled, its agent disabled) owes nothing from then on, but the
	// slots it missed before (ticks were missing) are accounted for, as a retimed schedule's are.
	const runningNames = new Set(running.map(([name]) => name));
	// The latest instant a tick took for the schedules forgotten here: one new to the agent (a deploy's
	// rename and retime) must not take it again, as a schedule a PUT starts does not (see firstSight).
	let taken = 0;
	for (const row of rows.values()) {
		if (runningNames.has(row.schedule) || adopted.has(row.schedule)) continue;
		taken = Math.max(taken, row.cursor);
		// A PUT dates the stop (a deploy is first seen now). One dated after this tick's own time came
		// while the tick was on its way (a cron trigger a few seconds late, or a shard minutes behind):
		// every slot up to the stop was due before it, and is accounted for as stopped (not run), those
		// after this tick's minute too. The later minutes' ticks find the schedule gone, so they would
		// be left without a row.
		const stopped = row.changed_at === null ? now - FIRST_SIGHT_LOOKBACK_MS : row.changed_at;
		skipped += settleOldTiming(sql, row.schedule, row, stopped, now, `not run: ${whyStopped(agent, row.schedule)} before this slot was claimed`);
	}
	// Each definition change brings the agent a tick at once, which forgets what stopped running.
	forgetSchedules(sql, [...runningNames]);

	for (const [name, schedule] of running) {
		const key = specKey(schedule, agent.enabled);
		const row = rows.get(name);
		// A new schedule starts from now, or from its definition if a tick went missing since (see
		// firstSight): slots of a spec it never had are not owed. A changed one starts when it changed
		// (a PUT says when; a deploy is first seen now), and its old timing's slots up to then are
		// accounted for, not dropped.
		let cursor: number;
		// A retime dated after this tick's own time (it came while the tick was on its way: a cron
		// trigger a few seconds late, or a shard minutes behind): the old timing's slots up to the
		// change were due before it, settled once the new timing's are claimed (this tick's minute is
		// the new timing's). The later minutes' ticks then start after the change, as a removal's find
		// the schedule gone, so they neither leave the old slots without a row nor run the new
		// timing's from before it.
		let settleLate: ScheduleStateRow | null = null;
		if (row && row.spec === key) {
			cursor = row.cursor;
			// A change undone before any tick saw it (disabled and enabled again within the minute).
			if (row.changed_at !== null) sql.exec("UPDATE schedule_state SET changed_at = NULL WHERE schedule = ?", name);
		}
		else if (row?.spec === NOT_YET_TICKED) {
			// Its cursor: the last tick this agent took before the definition; no slot up to it is owed.
			cursor = Math.max(row.cursor, firstSight(schedule, ctx, row.changed_at, row.defined_at));
			sql.exec("UPDATE schedule_state SET spec = ?, cursor = ?, changed_at = NULL, defined_at = NULL WHERE schedule = ?", key, cursor, name);
		} else if (row) {
			// Never later than a first sight would start it: the slot of this very tick is the new timing's.
			const changed = Math.min(row.changed_at ?? Number.POSITIVE_INFINITY, now - FIRST_SIGHT_LOOKBACK_MS);
			cursor = Math.max(row.cursor, changed);
			skipped += settleOldTiming(sql, name, row, cursor, now, retimed(name));
			if (row.changed_at !== null && row.changed_at > now) settleLate = { ...row, cursor: Math.max(row.cursor, cursor) };
			sql.exec("UPDATE schedule_state SET spec = ?, cursor = ?, changed_at = NULL WHERE schedule = ?", key, cursor, name);
		} else {
			cursor = Math.max(firstSight(schedule, ctx, null, null), taken);
			// Written now, as the rows it was taken from are gone: with nothing to plan, the claims below
			// write no place in time, and a repeat of this tick would start it a minute back again.
			if (cursor >= now) sql.exec("INSERT INTO schedule_state (schedule, spec, cursor) VALUES (?, ?, ?)", name, key, cursor);
		}
		if (now > cursor) {
			const plan = planTick(schedule, new Date(cursor), new Date(now));
			// Why the tick's fire was not run, if it was not: the slots collapsed into it were not run either.
			let refused: string | null = null;
			for (const fire of plan.fires) {
				const instant = fire.instant.getTime();
				const reason = refusal(agent, state, counts);
				refused = reason;
				if (reason) {
					if (skipFire(sql, name, fire, reason, now)) skipped++;
					continue;
				}
				const jobId = freshJobId(sql, now, ctx.drawJobId);
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
				claims.push({ jobId, schedule: name, instant, dispatch: fire.dispatch });
			}
			for (const range of plan.skipped) if (skipRange(sql, name, range, refused ?? range.reason, now)) skipped++;
			// A schedule's last run is its ledger's newest row (see lastRuns): schedule_state's
			// last_fire_instant and last_fire_at are no longer written, and kept for a rollback to a
			// release that writes them (dropping a column is a table rewrite in every agent's object).
			sql.exec(
				`INSERT INTO schedule_state (schedule, spec, cursor) VALUES (?, ?, ?)
				 ON CONFLICT (schedule) DO UPDATE SET spec = excluded.spec, cursor = max(schedule_state.cursor, excluded.cursor)`,
				name,
				key,
				plan.cursor.getTime(),
			);
		}
		// After the claims: a slot both timings have is the new timing's to run (its row is there).
		if (settleLate) {
			const changedAt = settleLate.changed_at!;
			skipped += settleOldTiming(sql, name, settleLate, changedAt, now, retimed(name));
			sql.exec("UPDATE schedule_state SET cursor = max(cursor, ?) WHERE schedule = ?", changedAt, name);
			cursor = Math.max(cursor, changedAt);
		}
		const due = nextDue(schedule, new Date(Math.max(cursor, now)))?.getTime() ?? null;
		if (due !== null && (next === null || due < next)) next = due;
	}
	return { claimed, skipped, nextDue: next, counts, claims };
}

const retimed = (name: string) => `not run: schedule ${name}'s timing changed before this slot was claimed`;

/**
 * Where a schedule no tick has seen starts (the caller also keeps it past the last tick this agent
 * took before the definition, so no instant a tick took for it is taken again under a new name).
 * Without a PUT or POST that dated it (a deploy's, or one before any tick), with the slot of this
 * very tick. A definition made in ticks' own time (`definedAt`, the clock's, after `since`, the
 * latest tick before it, and not after this tick) starts there: a slot after it that missing ticks
 * left behind is owed as any schedule's is (run late, caught up, or skipped saying so), none before
 * it. One made after this tick's time, by a tick on the wall clock's time (it came late: ticks back
 * after an outage, a tick run by hand), starts there too: no slot up to this tick is owed. Otherwise
 * (ticks given other times: a test's, a replayed one) only a slot after `since` still in its grace
 * window is owed: it may predate the definition.
 */
function firstSight(schedule: Schedule, tick: Pick<TickContext, "now" | "wallAt">, since: number | null, definedAt: number | null): number {
	const { now } = tick;
	const base = Math.max(0, now - FIRST_SIGHT_LOOKBACK_MS);
	if (since === null) return base;
	if (definedAt !== null && definedAt > since && (definedAt <= now || tick.wallAt - now <= TICK_ON_WALL_CLOCK_MS)) return definedAt;
	if (since >= base) return base;
	const [fire] = planTick(schedule, new Date(since), new Date(now)).fires;
	if (!fire || fire.dispatch === "catch_up") return base;
	return Math.min(base, fire.instant.getTime() - 1);
}

/**
 * A schedule renamed (its old name gone, a new name with the very same timing) keeps its place in
 * time: as a new schedule, it would fire again an instant its old name already claimed when a tick
 * of that minute came again. Its runs claimed and not started yet go with it (see carryRename).
 */
function adoptRenamed(sql: SqlStorage, rows: Map<string, ScheduleStateRow>, running: [string, string][], now: number): Set<string> {
	const adopted = new Set<string>();
	const names = new Set(running.map(([name]) => name));
	const orphans = [...rows.values()].filter((r) => !names.has(r.schedule));
	for (const [name, key] of running) {
		// The PUT that renamed it noted the new name as a schedule it started.
		if (rows.has(name) && rows.get(name)!.spec !== NOT_YET_TICKED) continue;
		const i = orphans.findIndex((r) => r.spec === key);
		if (i === -1) continue;
		const [old] = orphans.splice(i, 1);
		sql.exec(
			"INSERT INTO schedule_state (schedule, spec, cursor, changed_at) VALUES (?, ?, ?, NULL) ON CONFLICT (schedule) DO UPDATE SET spec = excluded.spec, cursor = excluded.cursor, changed_at = NULL, defined_at = NULL",
			name,
			key,
			old!.cursor,
		);
		rows.set(name, { schedule: name, spec: key, cursor: old!.cursor, changed_at: null, defined_at: null });
		adopted.add(old!.schedule);
		carryRename(sql, old!.schedule, name, now);
	}
	return adopted;
}

/**
 * A renamed schedule's runs claimed and not started yet (held by a pause or capacity) are the new
 * name's, as its place in time is: judged at their start by its grace window and catch_up (see
 * heldClaim), not as a removed schedule's, and shown under it in the job, the ledger and the index.
 * One whose instant the new name already has a ledger row for stays the old name's, job and row alike.
 */
function carryRename(sql: SqlStorage, from: string, to: string, now: number): void {
	for (const job of pendingJobsOf(sql, from)) {
		if (renameOccurrence(sql, job.id, to)) putJob(sql, { ...job, schedule: to, revision: job.revision + 1 }, now);
	}
}

/** What stopped a schedule that no longer runs, for its skipped slots' reason. */
function whyStopped(agent: AgentDefinition, name: string): string {
	if (!agent.enabled) return `agent ${agent.name} was disabled`;
	return agent.schedules[name] ? `schedule ${name} was disabled` : `schedule ${name} was removed`;
}

/**
 * The slots a schedule's old timing had between its cursor and the change, none of them claimed
 * (ticks were missing): each gets a skipped row saying so (`reason`), as the ledger never drops a
 * slot silently. They are not run: the schedule no longer has that timing, or no longer runs.
 */
function settleOldTiming(sql: SqlStorage, name: string, row: ScheduleStateRow, until: number, now: number, reason: string): number {
	if (until <= row.cursor || row.spec === NOT_YET_TICKED) return 0;
	let plan: ReturnType<typeof planTick>;
	try {
		const { agentEnabled: _enabled, ...timing } = JSON.parse(row.spec) as Schedule & { agentEnabled?: boolean };
		plan = planTick(timing as Schedule, new Date(row.cursor), new Date(until));
	} catch {
		// An old timing that no longer plans (a cron or timezone a newer library refuses) must not stop
		// the schedule's ticks for good: its slots go unaccounted, the new timing runs.
		return 0;
	}
	let skipped = 0;
	for (const fire of plan.fires) if (skipFire(sql, name, fire, reason, now)) skipped++;
	for (const range of plan.skipped) if (skipRange(sql, name, range, reason, now)) skipped++;
	return skipped;
}

/** The ledger row of a due slot not run, with why; false if the row was there already. */
function skipFire(sql: SqlStorage, schedule: string, fire: TickPlan["fires"][number], reason: string, now: number): boolean {
	return insertOccurrence(sql, { schedule, source: "cron", scheduledInstant: fire.instant.getTime(), dispatch: fire.dispatch, claimedAt: now, status: "skipped", skipReason: reason }) !== null;
}

/** One ledger row for a range of slots not run, with why; false if the row was there already. */
function skipRange(sql: SqlStorage, schedule: string, range: SkippedRange, reason: string, now: number): boolean {
	const inserted = insertOccurrence(sql, {
		schedule,
		source: "cron",
		scheduledInstant: range.last.getTime(),
		dispatch: "late",
		claimedAt: now,
		status: "skipped",
		skipReason: reason,
		skippedCount: range.count,
		skippedFrom: range.first.getTime(),
	});
	return inserted !== null;
}

/**
 * Notes when a PUT or POST (at `at`) changed the timing of schedules that have a place in time, or
 * removed them, for the next tick; and for those it started, when (see firstSight): the clock's time,
 * and the latest tick before it, the scheduler's (`lastTick`, in the ticks' own time) or the last one
 * this agent took, which may be newer (the heartbeat is written once every shard has answered): a
 * schedule renamed and retimed must not take again an instant its old name took.
 */
export function noteTimingChanges(sql: SqlStorage, agent: AgentDefinition, at: number, lastTick: number | null = null): void {
	sql.exec(
		"UPDATE schedule_state SET changed_at = coalesce(changed_at, ?) WHERE spec != ? AND schedule NOT IN (SELECT value FROM json_each(?))",
		at,
		NOT_YET_TICKED,
		JSON.stringify(Object.keys(agent.schedules)),
	);
	const taken = sql.exec<{ at: number | null }>("SELECT max(cursor) AS at FROM schedule_state WHERE spec != ?", NOT_YET_TICKED).one().at;
	const since = lastTick === null && taken === null ? null : Math.max(lastTick ?? 0, taken ?? 0);
	for (const [name, schedule] of Object.entries(agent.schedules)) {
		// Changed back to the timing the schedule still has: nothing changed after all.
		sql.exec(
			"UPDATE schedule_state SET changed_at = CASE WHEN spec = ?1 THEN NULL ELSE coalesce(changed_at, ?2) END WHERE schedule = ?3",
			specKey(schedule, agent.enabled),
			at,
			name,
		);
		if (since !== null && agent.enabled && schedule.enabled) {
			sql.exec(
				"INSERT INTO schedule_state (schedule, spec, cursor, changed_at, defined_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (schedule) DO NOTHING",
				name,
				NOT_YET_TICKED,
				taken ?? 0,
				since,
				at,
			);
		}
	}
}

/** Why a due occurrence cannot become a job now, or null when it can. */
function refusal(agent: AgentDefinition, state: AgentState, counts: { active: number; pending: number }): string | null {
	if (state.pausedAt !== null) return `paused: ${state.pausedReason ?? "no reason given"}`;
	const free = agent.max_concurrent - counts.active;
	if (counts.pending < free) return null;
	// "queue" holds one run beyond capacity; "skip" holds none.
	if (agent.overlap === "queue" && counts.pending === Math.max(free, 0)) return null;
	// Say what holds the capacity: a run claimed moments ago (another schedule due in the same tick,
	// say) has not started, and "already running" would send the operator looking for a run.
	const running = counts.active >= agent.max_concurrent;
	const held = `${running ? "already running" : "at capacity"} (max_concurrent ${agent.max_concurrent})`;
	if (agent.overlap === "queue") return `${held} with a run already queued`;
	return running ? held : `${held}: ${counts.pending} run${counts.pending === 1 ? "" : "s"} claimed and not started yet`;
}
