import { DISCORD_CONTENT_LIMIT, escapeSlack } from "../delivery/format.ts";
import { clip } from "../shared/clip.ts";
import type { Incident } from "../store/incidents.ts";

/** Characters of the error in an alert's one-line text: a page, not the record (the API has it whole). */
const ERROR_CHARS = 500;

/** Discord's webhook hosts: its stable client's and the public test builds' (ptb, canary) take the same body. */
const DISCORD_HOSTS = new Set(["discord.com", "discordapp.com", "ptb.discord.com", "canary.discord.com"]);

/** The alert's one line: what failed, how often, and what is failing with it. */
function alertText(incident: Incident): string {
	const failing = incident.failing && incident.failing.length > 0 ? ` (failing: ${incident.failing.join(", ")})` : "";
	const seen = incident.count === 1 ? "" : ` ×${incident.count}`;
	return `drover incident ${incident.id} on ${incident.agent}, ${incident.class}${seen}${failing}: ${clip(incident.error, ERROR_CHARS)}`;
}

/**
 * Where an alert leads in the dashboard, under the deployment's public origin (PUBLIC_URL): its
 * agent's incidents (the scheduler's own too), where this one is listed with its last job and can be
 * closed or resolved, whatever state it has reached by the time someone looks.
 */
export function incidentsUrl(publicOrigin: string | null, incident: Pick<Incident, "agent">): string | null {
	return publicOrigin === null ? null : `${publicOrigin}/incidents?${new URLSearchParams({ agent: incident.agent })}`;
}

/**
 * The body an alert is posted with, by where it goes: a Slack incoming webhook takes `text` (and
 * refuses a body without it, 400, which left the alert retried at every tick, unsent), a Discord
 * webhook `content`; anything else gets the incident whole, with the same line as `text`. Each
 * carries `link`, the dashboard's page of it (incidentsUrl), when there is one: after the line for
 * Slack and Discord (a page is read there), as `dashboard_url` otherwise (as deliveries' bodies).
 */
export function alertBody(url: string, incident: Incident, link: string | null = null): string {
	const { hostname, pathname } = new URL(url);
	if (hostname === "hooks.slack.com") return JSON.stringify({ text: escapeSlack(alertText(incident)) + (link ? ` · <${escapeSlack(link)}|Open in drover>` : "") });
	if (DISCORD_HOSTS.has(hostname) && pathname.startsWith("/api/webhooks/")) {
		// In angle brackets: a link Discord shows without an embed of the page. Kept whole: the line is cut to make room.
		const after = link ? ` <${link}>` : "";
		// An error quoting "@everyone" must not ping anyone.
		return JSON.stringify({ content: clip(alertText(incident), DISCORD_CONTENT_LIMIT - after.length) + after, allowed_mentions: { parse: [] } });
	}
	return JSON.stringify({ type: "drover.incident", text: alertText(incident), incident, ...(link ? { dashboard_url: link } : {}) });
}
