import { log } from "../../src/log.ts";
import { ANY_RUN_CLEARS, isSendSource, liveSources, type IncidentSource } from "../../src/incidents/sources.ts";
import { recordFailure, resolveOpen, retireIncidents, type Incident } from "../../src/store/incidents.ts";
import { currentDefinition, readState } from "./state.ts";

/** Why a retired agent's incidents resolved, on their incident.resolved lines. */
const RETIRED = "agent deleted or removed from fleet.yaml";

/**
 * Moves queued failure and clean-run events into the D1 incident table, in order: a failure files
 * or re-opens its incident (and hands it to `alert` on opening, to be sent beside the flush rather
 * than in it), a clean run clears its source from the agent's open ones and resolves those it
 * leaves with none. D1 is asked only while a failure of this agent may have left one open (the
 * watch), and then only by a clean run that can resolve one. An event leaves the queue only once
 * D1 has taken it.
 */
export async function flushIncidentEvents(sql: SqlStorage, env: Env, agent: string, alert: (incident: Incident) => void): Promise<void> {
	for (;;) {
		const rows = sql
			.exec<{ seq: number; kind: string; job_id: string | null; error: string | null; at: number; source: IncidentSource | null }>(
				"SELECT * FROM incident_events ORDER BY seq LIMIT 20",
			)
			.toArray();
		if (rows.length === 0) return;
		for (const r of rows) {
			if (r.kind === "retired") {
				// One line an incident, as a clean run's: its id is what an operator looks it up by (a
				// single line with a count named none of them, and its event was no incident.* one).
				for (const id of await retireIncidents(env.DB, agent, r.at)) log.info("incident.resolved", { agent, incident: id, reason: RETIRED });
				sql.exec("DELETE FROM incident_watch");
			} else if (r.kind === "failure") {
				// Before D1 hears of it: a crash after D1 took the failure must still leave the watch set.
				sql.exec("INSERT INTO incident_watch (id, generation) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET generation = generation + 1, waiting = NULL");
				const { incident, opened, alertDue } = await recordFailure(env.DB, { agent, error: r.error ?? "unknown error", jobId: r.job_id, at: r.at, source: r.source ?? undefined });
				if (opened) log.warn("incident.opened", { agent, incident: incident.id, class: incident.class, job_id: r.job_id });
				if (alertDue) alert(incident);
			} else {
				const watch = sql.exec<{ generation: number; waiting: string | null }>("SELECT generation, waiting FROM incident_watch").toArray()[0];
				const state = watch && readState(sql);
				const clean = !watch || r.source === null ? undefined : { source: r.source, live: liveSources(state ? currentDefinition(state) : null) };
				if (watch && mayResolve(watch.waiting, clean)) {
					const { ids, waiting } = await resolveOpen(env.DB, agent, r.at, clean);
					// One line an incident: each is found by its id, as incident.opened's is.
					for (const id of ids) log.info("incident.resolved", { agent, incident: id, job_id: r.job_id });
					// Still open, waiting on another schedule to run clean: kept, so that only its clean run asks D1.
					// Not after a send: what it left open may be an auth or rate_limit incident that any run's
					// clean end resolves, which its sources alone do not say (a run's own resolveOpen took those).
					if (waiting.length === 0) sql.exec("DELETE FROM incident_watch WHERE generation = ?", watch.generation);
					else sql.exec("UPDATE incident_watch SET waiting = ? WHERE generation = ?", r.source !== null && isSendSource(r.source) ? null : JSON.stringify(waiting), watch.generation);
				}
			}
			sql.exec("DELETE FROM incident_events WHERE seq = ?", r.seq);
		}
	}
}

/**
 * Whether a clean run (or a send that got through) can resolve anything, by the sources the open
 * incidents wait on as D1 last said: its own, one any run clears (a send clears none), or one the
 * agent no longer runs. Unknown (a failure since), or a run without a source (queued by an earlier
 * release): D1 is asked.
 */
function mayResolve(waiting: string | null, clean: { source: IncidentSource; live: readonly IncidentSource[] } | undefined): boolean {
	if (waiting === null || !clean) return true;
	const sources = JSON.parse(waiting) as IncidentSource[];
	// A send clears no one-off run's failure, though no definition lists it live (see resolveOpen).
	const send = isSendSource(clean.source);
	return sources.some((s) => s === clean.source || (ANY_RUN_CLEARS.includes(s) ? !send : !clean.live.includes(s)));
}

/**
 * Queues the retirement of the agent's incidents, deleted or dropped from fleet.yaml: no clean run
 * will come to resolve its open ones, and an agent defined again under its name starts afresh, paged
 * for its own failures, where a closed incident of the old one would have taken them unsaid.
 */
export function queueRetireIncidents(sql: SqlStorage, now: number): void {
	sql.exec("INSERT INTO incident_events (kind, job_id, error, at) VALUES ('retired', NULL, NULL, ?)", now);
}
