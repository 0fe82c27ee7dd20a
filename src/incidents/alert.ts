import { resolveSecretUrl, scrubSecretUrlFields } from "../delivery/secret-url.ts";
import { errorFields, log } from "../log.ts";
import { claimAlert, markAlerted, releaseAlert, type Incident } from "../store/incidents.ts";
import { deadline } from "../shared/deadline.ts";

/** Posts an incident to the operator's alert webhook (ALERT_WEBHOOK_URL), keyed by its opening. */
export async function sendAlert(env: Env, incident: Incident, key: string): Promise<boolean> {
	const target = resolveSecretUrl(env.ALERT_WEBHOOK_URL);
	if (target.kind === "missing") return false;
	if (target.kind === "not-http") {
		// Not fetched: a runtime's "Invalid URL: <value>" would carry the secret into the log line.
		log.warn("incident.alert_not_configured", { agent: incident.agent, incident: incident.id, reason: "ALERT_WEBHOOK_URL does not hold an http(s) URL" });
		return false;
	}
	const { url } = target;
	const limit = deadline(10_000);
	try {
		const res = await fetch(url, {
			method: "POST",
			headers: { "content-type": "application/json", "idempotency-key": key },
			body: JSON.stringify({ type: "drover.incident", incident }),
			// As deliveries: a redirect would turn the POST into a bodiless GET, or carry the incident on.
			redirect: "manual",
			signal: limit.signal,
		});
		await res.body?.cancel();
		if (!res.ok) log.warn("incident.alert_refused", { agent: incident.agent, incident: incident.id, status: res.status });
		return res.ok;
	} catch (err) {
		log.warn("incident.alert_failed", { agent: incident.agent, incident: incident.id, ...scrubSecretUrlFields(errorFields(err), url) });
		return false;
	} finally {
		limit.clear();
	}
}

/** What came of an alert: sent; failed (to be tried again); or not this caller's to send (sent already, or being sent). */
export type AlertOutcome = "sent" | "failed" | "taken";

/**
 * Sends an incident's alert, once per opening: claimed first, so two senders at once (two ticks of
 * one minute, an agent and a tick) page once; marked alerted once the webhook has taken it.
 */
export async function alertIncident(env: Env, incident: Incident, at: number): Promise<AlertOutcome> {
	const opening = await claimAlert(env.DB, incident.id, at);
	if (opening === null) return "taken";
	if (!(await sendAlert(env, incident, `${incident.id}:${opening}`))) {
		await releaseAlert(env.DB, incident.id, at);
		return "failed";
	}
	await markAlerted(env.DB, incident.id, at);
	return "sent";
}
