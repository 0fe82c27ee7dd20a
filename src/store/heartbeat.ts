import { isoOrNull } from "../shared/iso-time.ts";

/** The scheduler's liveness, one D1 row rewritten by every tick. */
interface HeartbeatRow {
	tick_at: number;
	scheduled_time: number;
	outcome: string;
	shards_ok: number;
	shards_failed: number;
	agents_called: number;
	claimed: number;
	skipped: number;
	error: string | null;
	last_ok_at: number | null;
	// Absent, not null, from a D1 that 0010 has not reached yet (a Worker deployed before its
	// migrations): the row is read all the same, so /healthz and /v1/status can say what is wrong.
	deferred?: number | null;
	oldest_deferred_at?: number | null;
	shards_behind?: number | null;
}

export interface Heartbeat {
	last_tick_at: string;
	scheduled_time: string;
	outcome: "ok" | "partial" | "failed";
	shards_ok: number;
	shards_failed: number;
	agents_called: number;
	claimed: number;
	skipped: number;
	error: string | null;
	/** The last tick that was not failed (ok or partial): the scheduler ran and called its agents. */
	last_ok_at: string | null;
	/** Null in a heartbeat written before these were, or read from a D1 without them (0010). */
	deferred: number | null;
	oldest_deferred_at: string | null;
	shards_behind: number | null;
}

function toHeartbeat(row: HeartbeatRow): Heartbeat {
	return {
		last_tick_at: new Date(row.tick_at).toISOString(),
		scheduled_time: new Date(row.scheduled_time).toISOString(),
		outcome: row.outcome as Heartbeat["outcome"],
		shards_ok: row.shards_ok,
		shards_failed: row.shards_failed,
		agents_called: row.agents_called,
		claimed: row.claimed,
		skipped: row.skipped,
		error: row.error,
		last_ok_at: isoOrNull(row.last_ok_at),
		deferred: row.deferred ?? null,
		oldest_deferred_at: isoOrNull(row.oldest_deferred_at),
		shards_behind: row.shards_behind ?? null,
	};
}

export interface TickRecord {
	tickAt: number;
	scheduledTime: number;
	outcome: Heartbeat["outcome"];
	shardsOk: number;
	shardsFailed: number;
	agentsCalled: number;
	claimed: number;
	skipped: number;
	error: string | null;
	deferred: number;
	oldestDeferredAt: number | null;
	shardsBehind: number;
}

const TICK_FIGURES = ["outcome", "shards_ok", "shards_failed", "agents_called", "claimed", "skipped", "error", "scheduled_time", "deferred", "oldest_deferred_at", "shards_behind"] as const;
// A duplicate or retried delivery of a minute already recorded claims nothing: it keeps that
// minute's figures. A newer minute, or a retry after a failed try, replaces them.
const NEWER =
	"(excluded.scheduled_time > scheduler_heartbeat.scheduled_time OR (excluded.scheduled_time = scheduler_heartbeat.scheduled_time AND scheduler_heartbeat.outcome != 'ok'))";

export async function recordTick(db: D1Database, t: TickRecord): Promise<void> {
	// A partial tick reached some agents, not all: the scheduler works, and those agents have their
	// incident. Only a failed tick (no shard answered) leaves the scheduler's liveness where it was.
	const good = t.outcome !== "failed";
	await db
		.prepare(
			`INSERT INTO scheduler_heartbeat (id, tick_at, scheduled_time, outcome, shards_ok, shards_failed, agents_called, claimed, skipped, error, last_ok_at, deferred, oldest_deferred_at, shards_behind)
			 VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			 ON CONFLICT (id) DO UPDATE SET tick_at = max(excluded.tick_at, scheduler_heartbeat.tick_at),
			   last_ok_at = CASE WHEN excluded.last_ok_at IS NULL THEN scheduler_heartbeat.last_ok_at
			     ELSE max(excluded.last_ok_at, coalesce(scheduler_heartbeat.last_ok_at, 0)) END,
			   ${TICK_FIGURES.map((c) => `${c} = CASE WHEN ${NEWER} THEN excluded.${c} ELSE scheduler_heartbeat.${c} END`).join(", ")}`,
		)
		.bind(t.tickAt, t.scheduledTime, t.outcome, t.shardsOk, t.shardsFailed, t.agentsCalled, t.claimed, t.skipped, t.error, good ? t.tickAt : null, t.deferred, t.oldestDeferredAt, t.shardsBehind)
		.run();
}

export async function readHeartbeat(db: D1Database): Promise<Heartbeat | null> {
	return (await readHeartbeatAndSize(db)).heartbeat;
}

/**
 * The heartbeat, and D1's size in bytes as the same query's answer reports it (`meta.size_after`,
 * null where the answer has none): no query of its own, for GET /v1/status to watch D1 filling up.
 */
export async function readHeartbeatAndSize(db: D1Database): Promise<{ heartbeat: Heartbeat | null; bytes: number | null }> {
	const { results, meta } = await db.prepare("SELECT * FROM scheduler_heartbeat WHERE id = 1").all<HeartbeatRow>();
	const row = results[0];
	const bytes = (meta as { size_after?: unknown } | undefined)?.size_after;
	return { heartbeat: row ? toHeartbeat(row) : null, bytes: typeof bytes === "number" && bytes > 0 ? bytes : null };
}

/** Age and staleness as /healthz and /v1/status report them. */
export function heartbeatHealth(hb: Heartbeat | null, now: number, staleAfterSeconds: number) {
	if (!hb) return { last_tick_at: null, age_seconds: null, stalled: true, outcome: null, last_ok_at: null };
	const age = Math.max(0, Math.round((now - Date.parse(hb.last_tick_at)) / 1000));
	// Stalled by the last good tick (ok or partial), not the last tick: ticks that run and fail every
	// minute schedule nothing, and a liveness check must see that. A partial tick is good: one agent
	// that cannot be reached is its own incident, not the Worker's health.
	const okAge = hb.last_ok_at === null ? Number.POSITIVE_INFINITY : (now - Date.parse(hb.last_ok_at)) / 1000;
	return { last_tick_at: hb.last_tick_at, age_seconds: age, stalled: okAge > staleAfterSeconds, outcome: hb.outcome, last_ok_at: hb.last_ok_at };
}
