import { signatureHeaders } from "../../src/api/webhook-signature.ts";
import { formatHook, type DeliveryTarget } from "../../src/delivery/format.ts";
import { formatQueued, QUEUED_DELIVERY, queuedDelivery } from "../../src/delivery/queued.ts";
import { postTarget, resolveSecretUrl, scrubSecretUrl, secretNamed } from "../../src/delivery/secret-url.ts";
import type { AgentDefinition } from "../../src/config/schema.ts";
import { publicUrl } from "../../src/config/vars.ts";
import type { DeliveryOutcome, JobRecord } from "../../src/jobs/model.ts";
import { DELIVERY, hookSource, incidentSource, namedHooks, type IncidentSource } from "../../src/incidents/sources.ts";
import { log } from "../../src/log.ts";
import { redact, redactDeep } from "../../src/security/redact.ts";
import { deadline } from "../../src/shared/deadline.ts";
import { retryAfterMs } from "../../src/shared/retry-after.ts";
import { outboundFetch } from "../../src/shared/subrequests.ts";
import { getJob, putJob } from "./jobs.ts";
import { currentDefinition, deletedAgentsJob, readState } from "./state.ts";
import { answerText, lastAssistantMessage } from "./runner/messages.ts";
import { CUT_AT_MAX_TOKENS } from "./runner/step-common.ts";
import { fetchErrorMessage } from "../../src/shared/fetch-error.ts";

/** Attempts per delivery or hook call before it is given up. */
export const MAX_ATTEMPTS = 6;
/** How long a delivery or hook target may take to answer before the attempt counts as failed. */
export const SEND_TIMEOUT_MS = 10_000;
const backoff = (attempt: number) => Math.min(5_000 * 2 ** (attempt - 1), 300_000);
/** The longest wait a target's Retry-After is granted: a longer one would hold the job's outcome for good. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

type FinalEvent = "completed" | "failed" | "cancelled" | "indeterminate";

/** The full text of the job's final answer (the summary is cut short; a delivery is not). */
function finalAnswer(sql: SqlStorage, job: JobRecord): string {
	const last = lastAssistantMessage(sql, job.id);
	if (!last) return job.summary ?? "";
	const { content } = last;
	return typeof content === "string" ? content : answerText(content).trim();
}

/** The job's page in the dashboard (its route: /jobs/:id), when the Worker knows its public origin. */
function dashboardUrl(publicOrigin: string | null, jobId: string): string | null {
	return publicOrigin === null ? null : `${publicOrigin}/jobs/${encodeURIComponent(jobId)}`;
}

/**
 * `held`: a completed job's hook call waits for the job's delivery to have an outcome, so the record
 * it carries says whether the answer got through (it would otherwise always read `delivery: null`).
 */
type QueuedStatus = "pending" | "held";

function queueSend(sql: SqlStorage, row: { id: string; jobId: string; kind: "delivery" | "hook"; target: string; urlSecret: string; body: string; contentType: string }, now: number, status: QueuedStatus = "pending"): void {
	sql.exec(
		`INSERT OR IGNORE INTO deliveries (id, job_id, kind, target, url_secret, body, content_type, attempts, next_at, status)
		 VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
		row.id,
		row.jobId,
		row.kind,
		row.target,
		row.urlSecret,
		row.body,
		row.contentType,
		now,
		status,
	);
}

function incidentEvent(sql: SqlStorage, kind: "failure" | "clean", jobId: string, source: IncidentSource, error: string | null, now: number): void {
	// A deleted agent's (or one dropped from fleet.yaml): its deletion resolved its incidents, and no
	// run of it will come to resolve one opened now. A run still going on its manifest, or a delivery
	// still retried, says its failure on the job and in the ledger.
	const state = kind === "failure" ? readState(sql) : null;
	if (state && currentDefinition(state) === null) {
		log.info("incident.not_filed", { agent: state.name, job_id: jobId, reason: "agent deleted" });
		return;
	}
	// A clean run only resolves incidents: with no failure queued and none flushed since the last
	// resolve (the watch), there is nothing for it to do, and its row would be written for nothing.
	if (kind === "clean" && sql.exec("SELECT 1 FROM incident_watch UNION ALL SELECT 1 FROM incident_events WHERE kind = 'failure' LIMIT 1").toArray().length === 0) return;
	// Incidents are filed by the agent's name: once it is defined again, a deleted agent's run or
	// delivery ending would page the new agent for what it did not do, or resolve what the new agent's
	// own runs failed at.
	if (deletedAgentsJob(sql, jobId)) {
		if (kind === "failure") log.info("incident.not_filed", { agent: state?.name, job_id: jobId, reason: "a deleted agent's job; its name was defined again since" });
		return;
	}
	sql.exec("INSERT INTO incident_events (kind, job_id, error, at, source) VALUES (?, ?, ?, ?, ?)", kind, jobId, error === null ? null : redact(error), now, source);
}

/**
 * Queues what a finished job sets off — its delivery, its hooks, its incident event — in the
 * object's SQLite, so an eviction between finishing and sending loses none of them. Synchronous:
 * the caller runs it in the transaction that consumes the job's `final_effects` row.
 */
export function queueEffects(sql: SqlStorage, job: JobRecord, agent: AgentDefinition | null, now: number): void {
	const event = job.status as FinalEvent;
	let awaitingDelivery = false;
	if (event === "completed" && agent?.delivery) {
		const answer = finalAnswer(sql, job);
		// An empty answer (the model acted through its tools and had nothing to add) has nothing to
		// deliver either: Slack and Discord refuse an empty message.
		if (answer.trim() === "[SILENT]" || answer.trim() === "") {
			setDelivery(sql, job.id, agent.delivery.type, "suppressed", now);
		} else {
			const cutShort = job.transitions.at(-1)?.reason === CUT_AT_MAX_TOKENS;
			// Formatted when sent, not now: see queued.ts.
			const { body, contentType } = queuedDelivery({ agent: job.agent, job, answer: redact(answer), cutShort });
			queueSend(sql, { id: `${job.id}:delivery`, jobId: job.id, kind: "delivery", target: agent.delivery.type, urlSecret: agent.delivery.url_secret, body, contentType }, now);
			awaitingDelivery = true;
		}
	}
	for (const hook of namedHooks(agent)) {
		if (!(hook.events as readonly string[]).includes(event)) continue;
		const { body, contentType } = formatHook(event, redactDeep(getJob(sql, job.id) ?? job));
		queueSend(sql, { id: `${job.id}:${hook.name}`, jobId: job.id, kind: "hook", target: hook.name, urlSecret: hook.url_secret, body, contentType }, now, awaitingDelivery ? "held" : "pending");
	}
	if (event === "failed" || event === "indeterminate") incidentEvent(sql, "failure", job.id, incidentSource(job), job.error?.message ?? job.transitions.at(-1)?.reason ?? event, now);
	// A completed run is a clean run of its own source now, in the order runs end, whatever becomes of
	// its delivery: a delivery that succeeds after a later run of the schedule failed must not speak
	// for the schedule. The target's incident waits for an answer delivered (see sendDue).
	else if (event === "completed") incidentEvent(sql, "clean", job.id, incidentSource(job), null, now);
}

/**
 * Records the delivery's outcome on its job, with why it did not get through (`error`); `pending`
 * only on a job that has none yet or is pending still (never over an outcome). Whether it wrote.
 */
function setDelivery(sql: SqlStorage, jobId: string, target: string, outcome: DeliveryOutcome, now: number, error: string | null = null): boolean {
	const job = getJob(sql, jobId);
	if (!job || (outcome === "pending" && job.delivery !== null && job.delivery.outcome !== "pending")) return false;
	putJob(sql, { ...job, delivery: { target, outcome, ...(error === null ? {} : { error }) }, revision: job.revision + 1 }, now);
	// The write of a final job queues its effects again; they were queued when it ended, and a second
	// pass would file its clean run a second time, after runs that ended since.
	sql.exec("DELETE FROM final_effects WHERE job_id = ?", jobId);
	return true;
}

/** Sends the hook calls held for a job's delivery, each now carrying the record with its outcome. */
function releaseHeldHooks(sql: SqlStorage, jobId: string, now: number): void {
	const job = getJob(sql, jobId);
	if (!job) return;
	const { body } = formatHook(job.status as FinalEvent, redactDeep(job));
	sql.exec("UPDATE deliveries SET status = 'pending', body = ?, next_at = ? WHERE id > ? AND id < ? AND status = 'held'", body, now, `${jobId}:`, `${jobId};`);
}

export function dueSends(sql: SqlStorage, now: number): number {
	return sql.exec<{ n: number }>("SELECT count(*) AS n FROM deliveries WHERE status IN ('pending', 'sending') AND next_at <= ?", now).one().n;
}

export function nextSendAt(sql: SqlStorage): number | null {
	return sql.exec<{ n: number | null }>("SELECT min(next_at) AS n FROM deliveries WHERE status IN ('pending', 'sending')").one().n;
}

export interface SendRow {
	id: string;
	job_id: string;
	kind: "delivery" | "hook";
	target: string;
	url_secret: string;
	body: string;
	content_type: string;
	attempts: number;
	status: string;
	in_doubt: string | null;
	[key: string]: SqlStorageValue;
}

/**
 * Sends what is due. Each attempt is counted before the request leaves, so a send interrupted by an
 * eviction is retried (the receiver dedupes on the Idempotency-Key) and never counted twice.
 * `beforeSending` runs first when anything is due (the pass flushes the job index there).
 */
export async function sendDue(
	sql: SqlStorage,
	env: Env,
	agent: string,
	now: () => number,
	notify: (jobId: string) => void,
	timeoutMs = SEND_TIMEOUT_MS,
	beforeSending: () => Promise<unknown> = async () => {},
): Promise<void> {
	const rows = sql
		.exec<SendRow>("SELECT * FROM deliveries WHERE status IN ('pending', 'sending') AND next_at <= ? ORDER BY next_at LIMIT 10", now())
		.toArray();
	if (rows.length > 0) await beforeSending();
	// Read at each send, not at queueing: a redeploy between two attempts may have moved the dashboard.
	const origin = publicUrl(env);
	for (const row of rows) {
		const target = resolveSecretUrl(secretNamed(env, row.url_secret));
		// With its URL's secret unset, or no http(s) URL, nothing is sent: no attempt is counted, and the
		// call's attempts are those sent before (none for a secret unset from the first).
		const sends = target.kind === "url";
		const attempt = row.attempts + (sends ? 1 : 0);
		// Still `sending`: the attempt before was out when the object died, and may have arrived.
		let inDoubt = row.in_doubt ?? (row.status === "sending" && row.attempts > 0 ? `${row.kind} attempt ${row.attempts} was interrupted` : null);
		if (sends) sql.exec("UPDATE deliveries SET attempts = ?, status = 'sending', next_at = ? WHERE id = ?", attempt, now() + backoff(attempt), row.id);
		let outcome: "delivered" | "retry" | "failed" | "unknown";
		let error: string | null = null;
		// What differs from one attempt to the next (a Retry-After's wait): in the delivery's last_error,
		// the ledger and the logs, kept out of the incident's text, whose signature it would change.
		let detail = "";
		let retryAfter: number | null = null;
		if (target.kind === "missing") {
			outcome = "failed";
			error = `secret ${row.url_secret} is not set`;
		} else if (target.kind === "not-http") {
			// Not fetched: a runtime's "Invalid URL: <value>" would carry the secret's value into the
			// job's delivery error, the incident and the logs.
			outcome = "failed";
			error = `secret ${row.url_secret} does not hold an http(s) URL`;
		} else {
			const { url } = target;
			// Signed only with a key of its own: unlike a webhook tool's, a delivery's signature is not keyed
			// by its URL, which anyone able to POST to the receiver knows. Stamped per attempt.
			const { body, contentType } = row.content_type === QUEUED_DELIVERY ? formatQueued(row.target as DeliveryTarget, row.body, dashboardUrl(origin, row.job_id)) : { body: row.body, contentType: row.content_type };
			const signature = await signatureHeaders(secretNamed(env, `${row.url_secret}_SIGNING_KEY`), body, now());
			const limit = deadline(timeoutMs);
			try {
				// Redirects are not followed: a 301 or 302 turns the POST into a bodiless GET whose 200 would
				// read as delivered, and a 307 would carry the answer wherever it points.
				const to = postTarget(url);
				const res = await outboundFetch(env)(to.url, {
					method: "POST",
					headers: { ...to.headers, "content-type": contentType, "idempotency-key": row.id, "user-agent": "drover", ...signature },
					body,
					redirect: "manual",
					signal: limit.signal,
				});
				await res.body?.cancel();
				if (res.ok) outcome = "delivered";
				else if (res.status >= 300 && res.status < 400) {
					error = `${row.kind} target answered ${res.status}, a redirect, which drover does not follow: set the URL it redirects to`;
					outcome = "failed";
				} else {
					error = `${row.kind} target answered ${res.status}`;
					if (res.status === 429 || res.status === 503) retryAfter = retryAfterMs(res.headers, now());
					if (retryAfter !== null) detail = ` (asked to wait ${Math.ceil(retryAfter / 1000)} s)`;
					// A 4xx other than 408/429 will not get better by retrying.
					const permanent = res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429;
					outcome = permanent ? "failed" : attempt >= MAX_ATTEMPTS ? "failed" : "retry";
				}
			} catch (err) {
				// A network error's message may quote the URL, which can carry a credential (Slack-style paths).
				error = `${row.kind} request failed: ${scrubSecretUrl(fetchErrorMessage(err), url)}`;
				// The target may have received it: after the last try, the outcome is unknown, not failed.
				outcome = attempt >= MAX_ATTEMPTS ? "unknown" : "retry";
				inDoubt ??= error;
			} finally {
				limit.clear();
			}
		}
		if (outcome === "retry") {
			const said = `${error ?? ""}${detail}`;
			// Every failed try is said, an HTTP error's as a network error's: retries run up to an hour apart.
			// The URL's secret by its name (never its value): the one an operator sets or fixes.
			log.warn("delivery.attempt_failed", { agent, job_id: row.job_id, kind: row.kind, target: row.target, url_secret: row.url_secret, attempt, error_message: said });
			// A rate-limited or unavailable target that says when to come back is not called sooner: Slack
			// and Discord ask for longer than the backoff's first steps, which would spend every attempt.
			const asked = retryAfter === null ? null : now() + Math.min(retryAfter, MAX_RETRY_AFTER_MS);
			// The backoff counts from the attempt's end, not its start (the `sending` row's next_at, there
			// for an object that dies mid-send): a target that lets each attempt time out would otherwise
			// be sent the next at once, the 5 s and 10 s waits spent inside the 10 s timeouts.
			const next = Math.max(now() + backoff(attempt), asked ?? 0);
			sql.exec("UPDATE deliveries SET status = 'pending', last_error = ?, in_doubt = ?, next_at = ? WHERE id = ?", said, inDoubt, next, row.id);
			// Said on the job at each retry, with what the last attempt met and when the next goes: a job
			// whose answer is still on its way must not read as one without a target (delivery null), and
			// retries can run an hour apart (a Retry-After), which a bare `pending` left unexplained.
			const retrying = `${said}; attempt ${attempt} of ${MAX_ATTEMPTS}, the next at ${new Date(next).toISOString()}`;
			if (row.kind === "delivery" && setDelivery(sql, row.job_id, row.target, "pending", now(), retrying)) notify(row.job_id);
			continue;
		}
		// Refused after an attempt that may have got through (a 409 for the key it already took): the
		// answer may well be there, so the outcome is unknown, as after a last try that timed out.
		if (outcome === "failed" && inDoubt !== null) {
			outcome = "unknown";
			error = `${error ?? "no answer"}, after an earlier attempt that may have arrived`;
			detail += ` (${inDoubt})`;
		}
		const said = error === null ? null : error + detail;
		// `unknown` kept apart from `failed`: a hook call's row is all its job's record reads (hook-calls.ts).
		sql.exec("UPDATE deliveries SET status = ?, last_error = ? WHERE id = ?", outcome, said, row.id);
		// A hook's call given up after a later call of that hook got through (retries run up to an hour
		// apart under a Retry-After): the hook works, and its incident would stay open until its next call.
		// A hook's target is `<list>:<place>`.
		const event = row.kind === "hook" ? row.target.slice(0, row.target.indexOf(":")) : "";
		const supersededBy = row.kind === "hook" && outcome !== "delivered" ? laterCall(sql, row, event, "delivered") : null;
		// Given up on (failed, or unknown after its last try) is worse than a try to be retried (warn): said
		// at error, unless a later call of its hook got through since.
		(outcome === "delivered" ? log.info : supersededBy === null ? log.error : log.warn)("delivery.done", {
			agent,
			job_id: row.job_id,
			kind: row.kind,
			target: row.target,
			url_secret: row.url_secret,
			outcome,
			attempts: attempt,
			...(said === null ? {} : { error_message: said }),
			...(supersededBy === null ? {} : { superseded_by: supersededBy }),
		});
		if (row.kind === "delivery") {
			setDelivery(sql, row.job_id, row.target, outcome, now(), said === null ? null : `${said}; ${attempt === 0 ? "nothing sent" : `${attempt} attempt${attempt === 1 ? "" : "s"}`}`);
			releaseHeldHooks(sql, row.job_id, now());
			// A delivery speaks for the target only, whichever schedule's answer it carried: its run was
			// counted clean for its schedule when it ended.
			if (outcome === "delivered") incidentEvent(sql, "clean", row.job_id, DELIVERY, null, now());
			else {
				incidentEvent(sql, "failure", row.job_id, DELIVERY, `delivery to ${row.target} ${outcome}: ${error ?? "no answer"}`, now());
				sql.exec("UPDATE occurrences SET error = ? WHERE job_id = ?", `delivery ${outcome}: ${said ?? ""}`, row.job_id);
			}
			notify(row.job_id);
		} else {
			// A hook given up is said as a delivery is, on its own source (see sources.ts): an on_error hook
			// is often the operator's pager, and one dead must not leave failures unnoticed. Its text says
			// "delivered" so that the classifier's keywords make it a delivery (unless its status says first
			// that it is the hook's credentials, its rate limit or a timeout), and no attempt count or
			// Retry-After wait, which would split one hook's failures across incidents. Nor its secret's
			// name, which is the source's: a name holding "AUTH" would make the classifier say `auth`. Kept
			// short: `drover incidents` shows an error's first 80 columns, and the status is at its end.
			const source = hookSource(event, row.url_secret);
			// The same the other way: a call taken late (after its retries) says nothing of the hook once a
			// call queued after it was given up; that one's incident stays open until a later call is taken.
			if (outcome === "delivered") {
				if (laterCall(sql, row, event, "given_up") === null) incidentEvent(sql, "clean", row.job_id, source, null, now());
			}
			else if (supersededBy === null) incidentEvent(sql, "failure", row.job_id, source, `${event} hook not delivered (${outcome}): ${error ?? "no answer"}`, now());
		}
	}
}

/**
 * A call of the same hook (its list and URL secret: its incident source) for a job that ended after
 * this call's job, taken by its target (`delivered`) or given up (`given_up`: failed, or unknown): that job's id, or null.
 * By the jobs' ends, the order their calls were queued in, not by when each got through or gave up:
 * a call retried for an hour says nothing of the hook once a call queued after it has an outcome.
 */
export function laterCall(sql: SqlStorage, row: SendRow, event: string, status: "delivered" | "given_up"): string | null {
	const finished = getJob(sql, row.job_id)?.finished_at ?? null;
	if (finished === null) return null;
	return (
		sql
			.exec<{ job_id: string }>(
				// A call is queued once its job ended, and its next_at only moves on from there: a call of a job
				// that ended after this one's has a next_at past this one's end. Bounded by it on the queue's
				// (status, next_at) index, the look reads the calls queued since, not every call the agent
				// keeps with its jobs (a month of a run a minute: 43,200, each with its job's record).
				`SELECT d.job_id FROM deliveries d JOIN jobs j ON j.id = d.job_id
				 WHERE d.status IN (?, ?) AND d.next_at > ? AND d.kind = 'hook' AND d.url_secret = ? AND d.target > ? AND d.target < ?
				   AND json_extract(j.record, '$.finished_at') > ? LIMIT 1`,
				// Given up: failed, or unknown (its last attempt may have arrived).
				...(status === "delivered" ? ["delivered", "delivered"] : ["failed", "unknown"]),
				Date.parse(finished),
				row.url_secret,
				`${event}:`,
				`${event};`,
				finished,
			)
			.toArray()[0]?.job_id ?? null
	);
}
