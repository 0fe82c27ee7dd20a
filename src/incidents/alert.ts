import { signatureHeaders } from "../api/webhook-signature.ts";
import { publicUrl } from "../config/vars.ts";
import { postTarget, resolveSecretUrl, scrubSecretUrlFields, secretValue } from "../delivery/secret-url.ts";
import { alertBody, incidentsUrl } from "./alert-body.ts";
import { errorFields, log, logs, type LogFields } from "../log.ts";
import { claimAlert, markAlerted, releaseAlert, type Incident, type Unpaged } from "../store/incidents.ts";
import { deadline } from "../shared/deadline.ts";
import { outboundFetch } from "../shared/subrequests.ts";

/** Where alerts go: ALERT_WEBHOOK_URL's URL, or null (unset, or not a URL, which is logged without its value). */
function alertUrl(env: Env, incident: Incident): string | null {
	const target = resolveSecretUrl(env.ALERT_WEBHOOK_URL);
	if (target.kind === "missing") return null;
	if (target.kind === "not-http") {
		// Not fetched: a runtime's "Invalid URL: <value>" would carry the secret into the log line.
		log.warn("incident.alert_not_configured", { agent: incident.agent, incident: incident.id, error_message: "ALERT_WEBHOOK_URL does not hold an http(s) URL" });
		return null;
	}
	return target.url;
}

/** Posts an incident to the operator's alert webhook (ALERT_WEBHOOK_URL), keyed by its opening. */
export async function sendAlert(env: Env, incident: Incident, key: string): Promise<boolean> {
	const url = alertUrl(env, incident);
	return url !== null && postAlert(env, url, incident, key);
}

/** `context`: fields its failure's line carries besides the incident's (a tick's `minute`). */
async function postAlert(env: Env, url: string, incident: Incident, key: string, context: LogFields = {}): Promise<boolean> {
	const body = alertBody(url, incident, incidentsUrl(publicUrl(env), incident));
	// Signed only with a key of its own (ALERT_WEBHOOK_URL_SIGNING_KEY), never the URL: anyone able to
	// POST to the receiver knows that. Stamped per try, so a resend is not refused as a replay.
	// Read by its own name (secretNamed reads a definition's, and refuses this one).
	const signature = await signatureHeaders(secretValue(env.ALERT_WEBHOOK_URL_SIGNING_KEY), body);
	const limit = deadline(10_000);
	try {
		const to = postTarget(url);
		const res = await outboundFetch(env)(to.url, {
			method: "POST",
			headers: { ...to.headers, "content-type": "application/json", "idempotency-key": key, "user-agent": "drover", ...signature },
			body,
			// As deliveries: a redirect would turn the POST into a bodiless GET, or carry the incident on.
			redirect: "manual",
			signal: limit.signal,
		});
		await res.body?.cancel();
		if (!res.ok) log.warn("incident.alert_refused", { agent: incident.agent, incident: incident.id, ...context, status: res.status });
		return res.ok;
	} catch (err) {
		// The webhook unreachable or slow (a network error, the timeout), which the tick retries every
		// minute while it lasts: its name and message say it, a stack of the fetch's own says nothing
		// more (kept at debug, as an expected request.failed's is).
		const { stack, ...fields } = errorFields(err);
		log.warn("incident.alert_failed", { agent: incident.agent, incident: incident.id, ...context, ...scrubSecretUrlFields({ ...fields, ...(logs("debug") ? { stack } : {}) }, url) });
		return false;
	} finally {
		limit.clear();
	}
}

/** What came of an alert: sent; failed (to be tried again); or not this caller's to send (sent already, or being sent). */
export type AlertOutcome = "sent" | "failed" | "taken";

/**
 * Sends an incident's alert, once per opening: claimed first, so two senders at once (two ticks of
 * one minute, an agent and a tick) page once; marked alerted, at `at`, once the webhook has taken it.
 * The claim is stamped with the clock as it is taken, not `at`: a tick's `at` is its start, which a
 * long fan-out can leave past the claim's minute before it sends, and its claim would be taken over.
 */
export async function alertIncident(env: Env, incident: Incident, at: number, context: LogFields = {}): Promise<AlertOutcome> {
	// Nowhere to send it: no claim (and release), which would be two D1 writes for every failure.
	const url = alertUrl(env, incident);
	if (url === null) return "failed";
	const claimedAt = Date.now();
	const opening = await claimAlert(env.DB, incident.id, claimedAt);
	if (opening === null) return "taken";
	if (!(await postAlert(env, url, incident, `${incident.id}:${opening}`, context))) {
		await releaseAlert(env.DB, incident.id, claimedAt);
		return "failed";
	}
	await markAlerted(env.DB, incident.id, at);
	return "sent";
}

/**
 * How long after its opening an incident may still be unpaged before GET /v1/status warns of it: its
 * alert is sent as it opens, and each tick tries again those seen a minute before it, so by then the
 * alert has been tried at least twice.
 */
export const UNPAGED_AFTER_MS = 180_000;

/**
 * GET /v1/status's warning (shown by `drover status`, `drover doctor` and the dashboard) while open
 * incidents have gone unpaged past UNPAGED_AFTER_MS: an incident reads `detected` then, which says
 * nothing of the alert webhook unset or refusing every alert, and nobody is told of the failures.
 */
export function unpagedWarning(env: Env, unpaged: Unpaged, now: number): string | null {
	if (unpaged.count === 0) return null;
	const lists = "drover incidents --state detected lists them";
	let what: string;
	if (unpaged.more || unpaged.oldest === null) what = `more than ${unpaged.count} open incidents were not paged (${lists})`;
	else {
		const minutes = Math.max(0, Math.floor((now - unpaged.oldest) / 60_000));
		what = `${unpaged.count === 1 ? "1 open incident was" : `${unpaged.count} open incidents were`} not paged (the oldest opened ${new Date(unpaged.oldest).toISOString()}, ${minutes} minute${minutes === 1 ? "" : "s"} ago; ${lists})`;
	}
	const target = resolveSecretUrl(env.ALERT_WEBHOOK_URL);
	const why =
		target.kind === "missing"
			? "ALERT_WEBHOOK_URL is not set, so no alert is sent"
			: target.kind === "not-http"
				? "ALERT_WEBHOOK_URL does not hold an http(s) URL"
				: "the alert webhook has not taken their alerts (the Worker's incident.alert_refused and incident.alert_failed lines say why); each tick tries again";
	return `alerts: ${what}: ${why}`;
}
