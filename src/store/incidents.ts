import { classifyFailure, incidentId, incidentSignature, legacySignatures } from "../incidents/signature.ts";
import { redact } from "../security/redact.ts";
import { clip } from "../shared/clip.ts";
import { cursorScope, decodeCursor, encodeCursor } from "../shared/cursor.ts";
import { isoOrNull } from "../shared/iso-time.ts";
import type { Incident, IncidentState, IncidentStateFilter } from "../incidents/schema.ts";
import { AGENT_WIDE_CLASSES, ANY_RUN_CLEARS, DELIVERY, HOOK_SOURCES_LIKE, isSendSource, type IncidentSource } from "../incidents/sources.ts";

export type { Incident };

interface IncidentRow {
	id: string;
	agent: string;
	signature: string;
	class: string;
	state: string;
	error: string;
	count: number;
	first_seen_at: number;
	last_seen_at: number;
	last_job_id: string | null;
	alerted_at: number | null;
	resolved_at: number | null;
	closed_at: number | null;
	closed_by: string | null;
	alert_claimed_at: number | null;
	opened_at: number | null;
	failing: string | null;
}

function toIncident(r: IncidentRow): Incident {
	return {
		id: r.id,
		agent: r.agent,
		signature: r.signature,
		class: r.class,
		state: r.state as IncidentState,
		error: r.error,
		count: r.count,
		first_seen_at: new Date(r.first_seen_at).toISOString(),
		last_seen_at: new Date(r.last_seen_at).toISOString(),
		last_job_id: r.last_job_id,
		alerted_at: isoOrNull(r.alerted_at),
		resolved_at: isoOrNull(r.resolved_at),
		closed_at: isoOrNull(r.closed_at),
		closed_by: r.closed_by,
		failing: r.failing === null ? null : (JSON.parse(r.failing) as string[]),
	};
}

export async function getIncident(db: D1Database, id: string): Promise<Incident | null> {
	const row = await db.prepare("SELECT * FROM incidents WHERE id = ?").bind(id).first<IncidentRow>();
	return row ? toIncident(row) : null;
}

/**
 * Files a failure: a new signature opens an incident (detected); the same error again counts on the
 * open one, re-opens a resolved one, and leaves a closed one closed (closing is terminal for that
 * signature). Returns the incident, whether this failure opened it, and whether its alert is due:
 * on opening, and on every failure after one whose alert did not go out. `source` (see
 * incidents/sources.ts) joins the ones the open incident waits on to run clean; without one (the
 * scheduler's own failures) any clean run resolves it.
 */
export async function recordFailure(
	db: D1Database,
	f: { agent: string; error: string; jobId: string | null; at: number; source?: IncidentSource },
): Promise<{ incident: Incident; opened: boolean; alertDue: boolean }> {
	const error = clip(redact(f.error), 2000);
	let signature = await incidentSignature(f.agent, error);
	let id = incidentId(f.agent, signature);
	// An incident an earlier release opened under the signature it gave this error is this error's.
	// Read only for a signature with no incident of its own, and only where an earlier one differs.
	if ((await getIncident(db, id)) === null) {
		for (const legacy of await legacySignatures(f.agent, error)) {
			const earlier = await getIncident(db, incidentId(f.agent, legacy));
			if (earlier === null) continue;
			// Not one whose last error hashes to it now: that incident is another error's under Hermes'
			// normalization (a plain body's, where this one quotes it after a byte order mark), opened or
			// counted by this release, and this error is not it.
			if ((await incidentSignature(f.agent, earlier.error)) === earlier.signature) continue;
			signature = legacy;
			id = earlier.id;
			break;
		}
	}
	// Whether this failure opened the incident is read in the upsert's own transaction, not from the
	// read above: an operator's resolve, or another failure, landing between the two would otherwise
	// make an opening log no incident.opened, or two.
	const [before, upserted] = await db.batch<{ state?: string } & Partial<IncidentRow>>([
		db.prepare("SELECT state FROM incidents WHERE id = ?").bind(id),
		db
			.prepare(
				`INSERT INTO incidents (id, agent, signature, class, state, error, count, first_seen_at, last_seen_at, last_job_id, opened_at, failing)
				 VALUES (?1, ?2, ?3, ?4, 'detected', ?5, 1, ?6, ?6, ?7, ?6, CASE WHEN ?8 IS NULL THEN NULL ELSE json_array(?8) END)
				 ON CONFLICT (id) DO UPDATE SET
				   count = incidents.count + 1, last_seen_at = ?6, last_job_id = ?7, error = ?5,
				   -- Re-opened: this failure's source alone. Open: its source joins the others, unless the
				   -- incident's sources are unknown (opened before 0009, or by a failure without one).
				   -- Closed: none is waited on.
				   failing = CASE
				     WHEN incidents.state = 'closed' THEN NULL
				     WHEN ?8 IS NULL THEN CASE incidents.state WHEN 'resolved' THEN NULL ELSE incidents.failing END
				     WHEN incidents.state = 'resolved' THEN json_array(?8)
				     WHEN incidents.failing IS NULL OR EXISTS (SELECT 1 FROM json_each(incidents.failing) WHERE value = ?8) THEN incidents.failing
				     ELSE json_insert(incidents.failing, '$[#]', ?8) END,
				   state = CASE incidents.state WHEN 'resolved' THEN 'detected' ELSE incidents.state END,
				   resolved_at = CASE incidents.state WHEN 'resolved' THEN NULL ELSE incidents.resolved_at END,
				   alerted_at = CASE incidents.state WHEN 'resolved' THEN NULL ELSE incidents.alerted_at END,
				   alert_claimed_at = CASE incidents.state WHEN 'resolved' THEN NULL ELSE incidents.alert_claimed_at END,
				   opened_at = CASE incidents.state WHEN 'resolved' THEN ?6 ELSE incidents.opened_at END,
				   -- A closing that a retirement resolved was of the agent deleted; this opening is the new one's.
				   closed_at = CASE incidents.state WHEN 'resolved' THEN NULL ELSE incidents.closed_at END,
				   closed_by = CASE incidents.state WHEN 'resolved' THEN NULL ELSE incidents.closed_by END
				 -- A failure is its job and instant: the same one sent again after a lost answer counts once.
				 WHERE NOT (incidents.last_job_id IS ?7 AND incidents.last_seen_at = ?6)
				 RETURNING *`,
			)
			.bind(id, f.agent, signature, classifyFailure(error), error, f.at, f.jobId, f.source ?? null),
	]);
	const row = (upserted?.results[0] as IncidentRow | undefined) ?? null;
	if (row === null) {
		// No row back: the same failure sent again (D1 took it, and its answer was lost), already
		// counted. Whether it opened the incident is on the row: its opening is this failure's. The
		// first send's caller never heard so, and logged no opening: this answer is the one it gets.
		const kept = (await db.prepare("SELECT * FROM incidents WHERE id = ?").bind(id).first<IncidentRow>())!;
		const incident = toIncident(kept);
		return { incident, opened: kept.opened_at === f.at && kept.last_job_id === f.jobId, alertDue: incident.state === "detected" };
	}
	const prior = before?.results[0]?.state;
	const opened = prior === undefined || prior === "resolved";
	const incident = toIncident(row);
	// Still `detected`: this opening's alert has not gone out (no attempt yet, or the last one failed).
	return { incident, opened, alertDue: incident.state === "detected" };
}

/** Open incidents whose alert has not gone out, last seen by `before`: for the tick to try again. */
export async function unalerted(db: D1Database, before: number, limit: number): Promise<Incident[]> {
	const { results } = await db
		.prepare("SELECT * FROM incidents WHERE state = 'detected' AND last_seen_at <= ? ORDER BY last_seen_at DESC, id DESC LIMIT ?")
		.bind(before, limit)
		.all<IncidentRow>();
	return results.map(toIncident);
}

/** How many unpaged incidents GET /v1/status counts at most; past it, it says "more than". */
export const UNPAGED_COUNTED = 20;

export interface Unpaged {
	count: number;
	/** More than `count` (UNPAGED_COUNTED) of them: `oldest` is then not looked for. */
	more: boolean;
	oldest: number | null;
}

/**
 * Open incidents whose alert has not gone out, opened by `before`: how many (up to UNPAGED_COUNTED),
 * and the oldest opening (ms). Read by incidents_by_state's `detected` range, and bounded: with the
 * alert webhook unset every open incident stays `detected`, and the dashboard asks every 15 s.
 */
export async function unpagedIncidents(db: D1Database, before: number): Promise<Unpaged> {
	const { results } = await db
		.prepare("SELECT COALESCE(opened_at, first_seen_at) AS opened FROM incidents WHERE state = 'detected' AND COALESCE(opened_at, first_seen_at) <= ? LIMIT ?")
		.bind(before, UNPAGED_COUNTED + 1)
		.all<{ opened: number }>();
	const more = results.length > UNPAGED_COUNTED;
	return { count: Math.min(results.length, UNPAGED_COUNTED), more, oldest: more || results.length === 0 ? null : Math.min(...results.map((r) => r.opened)) };
}

/** How many open incidents GET /v1/status counts at most; past it, it says "more than". */
export const OPEN_COUNTED = 20;

/**
 * Open incidents (detected or alerted): how many, up to OPEN_COUNTED, and whether there are more.
 * Bounded as the unpaged count is, for the same reader: a fleet with its alert webhook refusing
 * can hold thousands open, and the dashboard's pill asks every 15 s.
 */
export async function openIncidents(db: D1Database): Promise<{ open: number; more: boolean }> {
	const { results } = await db
		.prepare("SELECT 1 FROM incidents WHERE state IN ('detected', 'alerted') LIMIT ?")
		.bind(OPEN_COUNTED + 1)
		.all();
	return { open: Math.min(results.length, OPEN_COUNTED), more: results.length > OPEN_COUNTED };
}

/** How long a sender holds an alert's claim: past its send's timeout, so only a sender that died loses it. */
const ALERT_CLAIM_MS = 60_000;

/**
 * Claims the alert of an incident still `detected` for one sender. The opening it is for (the
 * alert's key), or null when the alert went out, or another sender holds it.
 */
export async function claimAlert(db: D1Database, id: string, at: number): Promise<number | null> {
	const row = await db
		.prepare(
			`UPDATE incidents SET alert_claimed_at = ?1
			 WHERE id = ?2 AND state = 'detected' AND (alert_claimed_at IS NULL OR alert_claimed_at <= ?1 - ?3)
			 -- Opened before migration 0008: its first sight stands for its opening.
			 RETURNING COALESCE(opened_at, first_seen_at) AS opening`,
		)
		.bind(at, id, ALERT_CLAIM_MS)
		.first<{ opening: number }>();
	return row?.opening ?? null;
}

/** Gives up a claim whose send failed, so the next failure or tick tries again at once. */
export async function releaseAlert(db: D1Database, id: string, at: number): Promise<void> {
	await db.prepare("UPDATE incidents SET alert_claimed_at = NULL WHERE id = ? AND alert_claimed_at = ?").bind(id, at).run();
}

/**
 * Records that the incident's alert went out. One resolved while it was being sent (its failure and a
 * clean run filed together) keeps its state, and records the page all the same.
 */
export async function markAlerted(db: D1Database, id: string, at: number): Promise<void> {
	await db
		.prepare("UPDATE incidents SET state = CASE state WHEN 'detected' THEN 'alerted' ELSE state END, alerted_at = ? WHERE id = ? AND state IN ('detected', 'resolved')")
		.bind(at, id)
		.run();
}

/**
 * A clean run of an agent clears its own source (and every one-off run's failure) from the agent's
 * open incidents, and the sources its definition no longer runs; an answer delivered clears
 * `delivery`, a hook's call taken that hook's source, and only that. An incident with none left
 * resolves, as does one whose cause is agent-wide (auth, rate_limit) at a run's clean end, unless it
 * still waits on the delivery target or a hook: a target's 429 is not the model's, and only a send
 * that gets through shows it gone. Without a source (the scheduler's own ticks) every open
 * incident resolves. Returns how many resolved and their ids, and the sources the ones still open
 * wait on to run clean ([] when none is open).
 */
export async function resolveOpen(
	db: D1Database,
	agent: string,
	at: number,
	clean?: { source: IncidentSource; live: readonly IncidentSource[] },
): Promise<{ resolved: number; ids: string[]; waiting: IncidentSource[] }> {
	if (!clean) {
		const r = await db.prepare("UPDATE incidents SET state = 'resolved', resolved_at = ? WHERE agent = ? AND state IN ('detected', 'alerted') RETURNING id").bind(at, agent).all<{ id: string }>();
		const ids = r.results.map((row) => row.id);
		return { resolved: ids.length, ids, waiting: [] };
	}
	// An answer delivered (or a hook's call taken) is no new run: it says nothing of a one-off run's
	// failure (which no definition lists among its live sources: kept here as live), nor of the model's
	// credentials or rate limit, which a run after it may have found broken.
	const send = isSendSource(clean.source);
	const cleared = JSON.stringify(send ? [clean.source] : [clean.source, ...ANY_RUN_CLEARS]);
	const live = JSON.stringify(send ? [...clean.live, ...ANY_RUN_CLEARS] : clean.live);
	const agentWide = JSON.stringify(send ? [] : AGENT_WIDE_CLASSES);
	const [, resolved, open] = await db.batch<{ source?: IncidentSource; id?: string }>([
		db
			.prepare(
				`UPDATE incidents SET failing = (
				   SELECT json_group_array(value) FROM json_each(incidents.failing)
				   WHERE value NOT IN (SELECT value FROM json_each(?1)) AND value IN (SELECT value FROM json_each(?2)))
				 WHERE agent = ?3 AND state IN ('detected', 'alerted') AND failing IS NOT NULL
				   AND EXISTS (SELECT 1 FROM json_each(incidents.failing) WHERE value IN (SELECT value FROM json_each(?1)) OR value NOT IN (SELECT value FROM json_each(?2)))`,
			)
			.bind(cleared, live, agent),
		db
			.prepare(
				`UPDATE incidents SET state = 'resolved', resolved_at = ?1, failing = NULL
				 WHERE agent = ?2 AND state IN ('detected', 'alerted')
				   AND (failing IS NULL OR json_array_length(failing) = 0
				     OR (class IN (SELECT value FROM json_each(?3)) AND NOT EXISTS (SELECT 1 FROM json_each(failing) WHERE value = ?4 OR value LIKE ?5)))
				 RETURNING id`,
			)
			.bind(at, agent, agentWide, DELIVERY, HOOK_SOURCES_LIKE),
		// Every open one left has sources: the rest resolved above.
		db
			.prepare(
				`SELECT DISTINCT s.value AS source FROM incidents, json_each(incidents.failing) AS s
				 WHERE incidents.agent = ? AND incidents.state IN ('detected', 'alerted')`,
			)
			.bind(agent),
	]);
	// By id, for the log: an operator looks an incident up by the id its alert and the API gave.
	const ids = (resolved?.results ?? []).map((r) => r.id!);
	return { resolved: ids.length, ids, waiting: (open?.results ?? []).map((r) => r.source!) };
}

/**
 * A deleted agent's incidents, open or closed, resolve: none of its runs will come to resolve them,
 * and a closed one would keep an agent defined again under the name from being paged for the same
 * error (its closing was of the old agent's). Returns their ids.
 */
export async function retireIncidents(db: D1Database, agent: string, at: number): Promise<string[]> {
	const r = await db
		.prepare("UPDATE incidents SET state = 'resolved', resolved_at = ?, failing = NULL WHERE agent = ? AND state != 'resolved' RETURNING id")
		.bind(at, agent)
		.all<{ id: string }>();
	return r.results.map((row) => row.id);
}

/** Resolved incidents deleted a call: a call that deletes this many may have left more behind. */
const INCIDENT_PRUNE_BATCH = 500;

/**
 * Deletes up to one batch of resolved incidents neither seen failing nor resolved since `cutoff`
 * (the deployment's retention back), those unseen longest first. Resolved at a deletion, a retired
 * agent's incidents are kept for the retention after it, as its history is. Open ones stay: they
 * are still failing, or still to resolve. Closed ones stay too: a closing is terminal for its
 * signature, so the same error, however long it was quiet, is counted, not paged again; they are
 * as many as an operator closed, where resolved ones come of every distinct error. Returns how many,
 * and whether the batch was full (more may be left).
 */
export async function pruneResolved(db: D1Database, cutoff: number): Promise<{ deleted: number; full: boolean }> {
	// Read by incidents_by_state (state, last_seen_at): the range of resolved ones unseen since the
	// cutoff, not the table; the few resolved since (retired lately) are passed over in it.
	const r = await db
		.prepare(
			`DELETE FROM incidents WHERE id IN (
			   SELECT id FROM incidents WHERE state = 'resolved' AND last_seen_at < ?1 AND coalesce(resolved_at, 0) < ?1
			   ORDER BY last_seen_at LIMIT ?2)`,
		)
		.bind(cutoff, INCIDENT_PRUNE_BATCH)
		.run();
	const deleted = r.meta.changes ?? 0;
	return { deleted, full: deleted === INCIDENT_PRUNE_BATCH };
}

/**
 * Resolves an open incident by an operator's word, as a clean run would: the same error again
 * re-opens it and pages. For what no clean run will show soon (an `on_error` hook is called only at
 * the next failure), where closing would quiet the error for good. The word is the operator's at
 * `at`, the request's arrival: an incident seen failing after it (a failure D1 took between the
 * request and this write) is not resolved, as it would be by a clean run that ended before that
 * failure; resolved over, that failure's opening would never be paged. A failure from before `at`
 * that reached D1 late (its agent's write retried) passes that guard, so a client that read the
 * incident names the `count` it saw: one counted more since is a failure the operator did not see,
 * and is not resolved over either. `resolved` says whether this call resolved it: one resolved
 * before, or seen failing since, is left as it stands, and a closed one stays closed.
 */
export async function resolveIncident(db: D1Database, id: string, at: number, seenCount?: number): Promise<{ incident: Incident; resolved: boolean } | null> {
	// The row as this write left it: a failure re-opening it just after must not be answered as resolved.
	const row = await db
		.prepare(
			`UPDATE incidents SET state = 'resolved', resolved_at = ?1, failing = NULL
			 WHERE id = ?2 AND state IN ('detected', 'alerted') AND last_seen_at <= ?1 AND (?3 IS NULL OR count = ?3) RETURNING *`,
		)
		.bind(at, id, seenCount ?? null)
		.first<IncidentRow>();
	if (row !== null) return { incident: toIncident(row), resolved: true };
	const incident = await getIncident(db, id);
	return incident === null ? null : { incident, resolved: false };
}

/**
 * Closes an incident. `closed` says whether this call closed it: one closed already keeps its closing
 * (who and when), and the caller must not log a second closing by someone who changed nothing.
 */
export async function closeIncident(db: D1Database, id: string, by: string, at: number): Promise<{ incident: Incident; closed: boolean } | null> {
	const r = await db.prepare("UPDATE incidents SET state = 'closed', closed_at = ?, closed_by = ?, failing = NULL WHERE id = ? AND state != 'closed'").bind(at, by, id).run();
	const incident = await getIncident(db, id);
	return incident === null ? null : { incident, closed: (r.meta.changes ?? 0) > 0 };
}

export async function listIncidents(
	db: D1Database,
	filters: { state?: IncidentStateFilter | undefined; agent?: string | undefined },
	limit: number,
	cursor?: string,
): Promise<{ incidents: Incident[]; next_cursor: string | null }> {
	const where: string[] = [];
	const params: (string | number)[] = [];
	if (filters.agent !== undefined) {
		where.push("agent = ?");
		params.push(filters.agent);
	}
	const scope = cursorScope("incidents", filters);
	if (cursor !== undefined) {
		const after = decodeCursor(cursor, scope);
		where.push("(last_seen_at, id) < (?, ?)");
		params.push(after.at, after.id);
	}
	const page = (state: IncidentState | undefined) => {
		const all = state === undefined ? where : ["state = ?", ...where];
		return { sql: `SELECT * FROM incidents${all.length ? ` WHERE ${all.join(" AND ")}` : ""} ORDER BY last_seen_at DESC, id DESC LIMIT ?`, params: [...(state === undefined ? [] : [state]), ...params, limit + 1] };
	};
	// Open is two states: each read as its own range of the index, newest first, and the two pages
	// merged, so a page reads at most twice its rows, not every open incident to sort them.
	const parts = filters.state === "open" ? [page("detected"), page("alerted")] : [page(filters.state)];
	const read = await Promise.all(parts.map((p) => db.prepare(p.sql).bind(...p.params).all<IncidentRow>()));
	const results = read
		.flatMap((r) => r.results)
		.sort((a, b) => b.last_seen_at - a.last_seen_at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
		.slice(0, limit + 1);
	const shown = results.slice(0, limit);
	const last = shown.at(-1);
	return { incidents: shown.map(toIncident), next_cursor: results.length > limit && last ? encodeCursor({ at: last.last_seen_at, id: last.id }, scope) : null };
}
