import type { ShardTickResult } from "../../durable-objects/shard/shard-do.ts";
import { errorFields, log, minuteField } from "../log.ts";
import { resolveSecretUrl } from "../delivery/secret-url.ts";
import { alertIncident } from "../incidents/alert.ts";
import { D1_MIGRATIONS_FIX, missingD1Migrations } from "../store/d1-schema.ts";
import { recountRegisteredAgents } from "../store/agent-registry.ts";
import { recordTick } from "../store/heartbeat.ts";
import { pruneResolved, recordFailure, resolveOpen, unalerted } from "../store/incidents.ts";
import { numberVar } from "../config/vars.ts";
import { DAY_MS } from "../shared/time.ts";
import { SCHEDULER_SHARDS, shardName } from "./shards.ts";
import { SCHEDULER_AGENT } from "../config/schema.ts";
import { fleetFault } from "../config/bundled.ts";
import { clip } from "../shared/clip.ts";
import { redact } from "../security/redact.ts";
import { isoOrNull } from "../shared/iso-time.ts";

export interface TickSummary {
	scheduledTime: number;
	outcome: "ok" | "partial" | "failed";
	shards: ShardTickResult[];
	shardsFailed: number;
	claimed: number;
	skipped: number;
	agentsCalled: number;
	/** Due agents the shards left to their follow-up alarms (past what one invocation may call). */
	deferred: number;
	/** The oldest minute those are owed, over every shard; null when none is left. */
	oldestDeferred: number | null;
	/** Shards whose queue of pending minutes has fallen behind their ticks (src/scheduler/backlog.ts). */
	shardsBehind: number;
}

/** Who drove a tick: the cron trigger, or an operator's POST /v1/tick (by the token's name). */
export type TickSource = { trigger: "cron" } | { trigger: "api"; by: string };

/**
 * One cron tick: every shard is asked to claim its agents' occurrences due at `scheduledTime`.
 * Shards run in parallel and a failed shard does not stop the others; the heartbeat records how it
 * went. Nothing here needs to be exactly-once: the agents' ledgers make every claim idempotent.
 */
export async function runTick(env: Env, scheduledTime: number, now = Date.now(), source: TickSource = { trigger: "cron" }): Promise<TickSummary> {
	const minute = minuteField(scheduledTime);
	// Every shard reads the bundled fleet.yaml first, so an invalid one (edited under `npm start`: a
	// deploy refuses it) would fail them all: the shards are not called (each failure was an uncaught
	// exception in its object, a stack apiece in the terminal every minute), and the file's faults are
	// the cause named, once, where each shard's fixed line would page an operator with a cause nobody
	// could act on.
	const invalid = fleetFault()?.message ?? null;
	const settled =
		invalid !== null
			? []
			: await Promise.allSettled(Array.from({ length: SCHEDULER_SHARDS }, (_, i) => env.SCHEDULER_SHARD.getByName(shardName(i)).tick(i, scheduledTime)));
	const shards: ShardTickResult[] = [];
	const errors: string[] = [];
	if (invalid !== null) {
		errors.push(invalid.replace(/:\n\s*- /, ": ").replace(/\n\s*- /g, "; "));
		log.error("tick.fleet_invalid", { minute, shards_failed: SCHEDULER_SHARDS, error_message: invalid });
	}
	for (const [i, s] of settled.entries()) {
		if (s.status === "fulfilled") {
			shards.push(s.value);
			// The shard's public line (the agent named, its own error logged there).
			for (const f of s.value.failed) errors.push(f.error);
		} else {
			// The heartbeat (GET /v1/status) and the scheduler incident get a fixed line; the shard's
			// own error (an RPC or storage fault's text) goes to the log only.
			errors.push(`shard ${i} did not answer the tick`);
			log.error("tick.shard_failed", { shard: i, minute, ...errorFields(s.reason) });
		}
	}
	const shardsFailed = SCHEDULER_SHARDS - shards.length;
	const agentFailures = shards.reduce((n, s) => n + s.failed.length, 0);
	const summary: TickSummary = {
		scheduledTime,
		outcome: shardsFailed === SCHEDULER_SHARDS ? "failed" : shardsFailed + agentFailures > 0 ? "partial" : "ok",
		shards,
		shardsFailed,
		claimed: shards.reduce((n, s) => n + s.claimed, 0),
		skipped: shards.reduce((n, s) => n + s.skipped, 0),
		agentsCalled: shards.reduce((n, s) => n + s.agents_called, 0),
		deferred: shards.reduce((n, s) => n + s.deferred, 0),
		// Read as absent when missing: a shard object still on the release before, in a deploy's first
		// moments, answers without them.
		oldestDeferred: shards.reduce<number | null>((oldest, s) => (s.oldest_deferred == null ? oldest : Math.min(oldest ?? s.oldest_deferred, s.oldest_deferred)), null),
		shardsBehind: shards.filter((s) => s.behind === true).length,
	};
	// A tick some shards failed is partial (warn), one all failed is failed (error): a level filter finds both.
	(summary.outcome === "ok" ? log.info : summary.outcome === "partial" ? log.warn : log.error)("tick.done", {
		minute,
		// How long after its minute the tick began: a cron trigger running late shows here first. A tick
		// asked for by hand runs when it is asked, its minute the current one: no lateness of the cron's,
		// and the line says who asked instead.
		...(source.trigger === "cron" ? { late_ms: now - scheduledTime } : { trigger: source.trigger, by: source.by }),
		outcome: summary.outcome,
		agents_called: summary.agentsCalled,
		claimed: summary.claimed,
		skipped: summary.skipped,
		deferred: summary.deferred,
		oldest_deferred_minute: isoOrNull(summary.oldestDeferred),
		shards_behind: summary.shardsBehind,
		shards_failed: shardsFailed,
	});
	try {
		await recordTick(env.DB, {
			tickAt: now,
			scheduledTime,
			outcome: summary.outcome,
			shardsOk: shards.length,
			shardsFailed,
			agentsCalled: summary.agentsCalled,
			claimed: summary.claimed,
			skipped: summary.skipped,
			deferred: summary.deferred,
			oldestDeferredAt: summary.oldestDeferred,
			shardsBehind: summary.shardsBehind,
			// Cut between characters: D1 keeps half an emoji as bytes that read back as U+FFFD×3. Redacted
			// before the cut (fleet.yaml's problems may quote a value), so no credential is cut through.
			error: errors.length ? clip(redact(errors.slice(0, 5).join("; ")), 1000) : null,
		});
	} catch (err) {
		// The claims stand without the heartbeat; /healthz will show it ageing. A Worker deployed ahead
		// of its D1 migrations (a bare wrangler deploy) fails here every minute: the line says which
		// are missing and how to apply them, asked only now that the write failed.
		const missing = (await missingD1Migrations(env.DB).catch(() => null)) ?? [];
		log.error("tick.heartbeat_failed", { minute, ...errorFields(err), ...(missing.length > 0 ? { missing_migrations: missing, fix: D1_MIGRATIONS_FIX } : {}) });
	}
	// An agent a follow-up could not reach, and no call has reached since, still fails though this
	// tick did not call it (it was past what the tick's invocation could): resolving here would have
	// the next failing follow-up open the incident again, and page again, every minute.
	const failing = shards.reduce((n, s) => n + (s.failing ?? 0), 0);
	if (summary.outcome !== "ok" || failing === 0) await fileSchedulerIncident(env, summary.outcome, errors, now, scheduledTime);
	await retryAlerts(env, scheduledTime, now);
	await pruneIncidents(env, scheduledTime, now);
	await recountAgents(env, scheduledTime);
	// A tick no shard answered throws, so the cron trigger's events show it failed. One an invalid
	// fleet.yaml stopped does not: only `npm start` can meet one (a deploy refuses the file), where the
	// throw printed workerd's stack twice a minute beside the tick.fleet_invalid line that names the
	// faults already.
	if (summary.outcome === "failed" && invalid === null) throw new Error(`scheduler tick failed: ${errors.slice(0, 3).join("; ")}`);
	return summary;
}

/**
 * Alerts that did not go out (the alert webhook down or slow) are tried again each tick, so an
 * incident whose failure does not recur still pages once the webhook is back.
 */
async function retryAlerts(env: Env, scheduledTime: number, now: number): Promise<void> {
	// Unset, or not a URL (sendAlert says so as each new incident is filed): nothing to retry.
	if (resolveSecretUrl(env.ALERT_WEBHOOK_URL).kind !== "url") return;
	try {
		// By the tick's own minute, as every due time here is: an incident seen in the minute before it
		// is still with the failure that filed it.
		for (const incident of await unalerted(env.DB, scheduledTime - 60_000, ALERT_RETRIES_PER_TICK)) {
			const outcome = await alertIncident(env, incident, now, { minute: minuteField(scheduledTime) });
			// The webhook is still down: the rest wait for the next tick rather than each wait out its timeout.
			if (outcome === "failed") break;
			if (outcome === "sent") log.info("incident.alert_retried", { agent: incident.agent, incident: incident.id, minute: minuteField(scheduledTime) });
		}
	} catch (err) {
		log.error("tick.alert_retry_failed", { minute: minuteField(scheduledTime), ...errorFields(err) });
	}
}

/** Bounded: each try may wait out the webhook's timeout, and the tick has other work. */
const ALERT_RETRIES_PER_TICK = 5;

const HOUR_MS = 3_600_000;

/**
 * Batches of resolved incidents an hour's tick deletes at most: 5,000 an hour, 120,000 a day. An
 * incident is a distinct error of an agent, and an error whose text varies (an id, a count) is a new
 * one each time, so a fleet of 1,000 agents failing hourly resolves 24,000 a day; one batch an hour
 * (12,000 a day) fell behind it.
 */
const INCIDENT_PRUNE_BATCHES = 10;

/**
 * Resolved incidents past the deployment's RETENTION_DAYS are deleted at the tick of each hour's
 * minute 0, batch after batch while a batch comes back full: nothing else removes them (D1 rows have
 * no expiry), and a query at every minute's tick would ask D1 each minute for what is almost always
 * nothing. By the deployment's retention, not an agent's `retention_days`: a file agent's definition
 * is not in D1, and the scheduler's own incidents are no agent's.
 */
async function pruneIncidents(env: Env, scheduledTime: number, now: number): Promise<void> {
	if (scheduledTime % HOUR_MS !== 0) return;
	const cutoff = now - numberVar(env, "RETENTION_DAYS") * DAY_MS;
	let count = 0;
	let batches = 0;
	try {
		for (let full = true; full && batches < INCIDENT_PRUNE_BATCHES; batches++) {
			const batch = await pruneResolved(env.DB, cutoff);
			count += batch.deleted;
			full = batch.full;
		}
	} catch (err) {
		log.error("tick.incident_prune_failed", { minute: minuteField(scheduledTime), ...(count > 0 ? { count } : {}), ...errorFields(err) });
		return;
	}
	if (count > 0) log.info("incidents.pruned", { minute: minuteField(scheduledTime), count, batches, cutoff: new Date(cutoff).toISOString() });
}

/**
 * The live agents counted again at the tick of each hour's minute 0 (one read of the agents_live
 * index): GET /v1/status reads the count the registry's writes keep, which an agent defined or
 * deleted under a Worker from before D1 0014 did not move.
 */
async function recountAgents(env: Env, scheduledTime: number): Promise<void> {
	if (scheduledTime % HOUR_MS !== 0) return;
	try {
		const corrected = await recountRegisteredAgents(env.DB);
		if (corrected !== null) log.warn("agents.recounted", { minute: minuteField(scheduledTime), live: corrected });
	} catch (err) {
		log.error("tick.agent_recount_failed", { minute: minuteField(scheduledTime), ...errorFields(err) });
	}
}

/**
 * A tick that could not reach every shard or agent is an incident of the pseudo-agent "scheduler";
 * so is a shard's follow-up alarm that could not reach an agent the tick left to it. `minute` is the
 * tick's (a follow-up's oldest), for the log.
 */
export async function fileSchedulerIncident(env: Env, outcome: TickSummary["outcome"], errors: string[], now: number, minute: number): Promise<void> {
	try {
		if (outcome === "ok") {
			const { ids } = await resolveOpen(env.DB, SCHEDULER_AGENT, now);
			for (const id of ids) log.info("incident.resolved", { agent: SCHEDULER_AGENT, incident: id, minute: minuteField(minute) });
			return;
		}
		const { incident, opened, alertDue } = await recordFailure(env.DB, { agent: SCHEDULER_AGENT, error: `tick ${outcome}: ${errors[0] ?? "unknown"}`, jobId: null, at: now });
		// As an agent's: an operator finds the scheduler's incidents by their id too.
		if (opened) log.warn("incident.opened", { agent: SCHEDULER_AGENT, incident: incident.id, class: incident.class, minute: minuteField(minute) });
		if (alertDue) await alertIncident(env, incident, now, { minute: minuteField(minute) });
	} catch (err) {
		log.error("tick.incident_failed", { minute: minuteField(minute), ...errorFields(err) });
	}
}
