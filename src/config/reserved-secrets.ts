/**
 * drover's own credentials and settings. An agent naming one would send it where the agent says
 * (a URL secret is POSTed to, a webhook secret verifies strangers' requests), and a target named
 * ALERT_WEBHOOK_URL would be signed with the alert webhook's key, so that its receiver took a
 * tool's or a delivery's body for a signed alert: refused by name in a definition, and not read for
 * one stored before a release refused it.
 */
const RESERVED_SECRET = /^(API_TOKENS|ANTHROPIC_.*|DROVER_.*|ALERT_WEBHOOK_URL.*|PUBLIC_URL)$/;

export const RESERVED_SECRETS_SAID = "API_TOKENS, ANTHROPIC_*, DROVER_*, ALERT_WEBHOOK_URL*, PUBLIC_URL";

export function isReservedSecret(name: string): boolean {
	return RESERVED_SECRET.test(name);
}
