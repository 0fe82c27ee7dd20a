// What a definition says that it likely does not mean: pure, so that `npm run check` (in Node) says
// it of fleet.yaml as a dry run says it of an API agent.
import { type AgentDefinition, type DefinitionSummary, durationSeconds } from "./schema.ts";

/**
 * What a definition says that it likely does not mean, whatever the Worker's secrets: said by a dry
 * run, by `npm run check` for fleet.yaml, and in an agent's warnings.
 */
export function definitionWarnings(agent: Pick<DefinitionSummary, "tools" | "approval_timeout" | "timeout">): string[] {
	const warnings: string[] = [];
	// Not a secret, but as sure to fail: the wait ends at the job's own deadline first.
	const gated = agent.tools.flatMap((t) => (t.type !== "server" && t.requires_approval ? [t.type === "webhook" ? t.name : t.type] : []));
	if (gated.length > 0 && durationSeconds(agent.approval_timeout) >= durationSeconds(agent.timeout)) {
		warnings.push(
			`approval_timeout ${agent.approval_timeout} is not shorter than timeout ${agent.timeout} (tool ${gated.join(", ")} needs approval): a call left waiting ends the job failed at its timeout, never denied; set timeout longer than the wait you allow (up to 24h), or approval_timeout shorter`,
		);
	}
	return warnings;
}

/** A cron's timing that is valid but rarely what its writer meant. */
export function scheduleWarnings(agent: Pick<AgentDefinition, "schedules">): string[] {
	const warnings: string[] = [];
	for (const [name, schedule] of Object.entries(agent.schedules)) {
		if (!("cron" in schedule) || schedule.cron.startsWith("@")) continue;
		const [minute, hour, dayOfMonth, , dayOfWeek] = schedule.cron.trim().split(/\s+/);
		if ((minute === "*" || minute === "?") && hour !== "*" && hour !== "?") {
			const hours = /^\d+$/.test(hour ?? "") ? `hour ${hour}` : `the hours ${hour}`;
			warnings.push(`schedule ${name}: cron "${schedule.cron}" runs every minute of ${hours}, 60 runs an hour; for one run at its start write "0 ${hour} …"`);
		}
		// Cron's day fields are either-or when both are restricted: "0 9 1-7 * 1" is days 1 to 7 and every
		// Monday (croner's "+1" asks for both, the first Monday).
		if (dayOfMonth !== "*" && dayOfWeek !== "*" && dayOfMonth !== "?" && dayOfWeek !== "?" && !dayOfWeek?.startsWith("+")) {
			warnings.push(`schedule ${name}: cron "${schedule.cron}" runs on the days of the month ${dayOfMonth} and also on the weekdays ${dayOfWeek} (either day field matching, not both): to run on one of them only, write * in the other`);
		}
	}
	return warnings;
}

/** Webhook trigger secrets two agents share: either's caller can start the other's runs. */
export function sharedWebhookSecrets(agents: readonly Pick<AgentDefinition, "name" | "webhook">[]): string[] {
	const by = new Map<string, string[]>();
	for (const agent of agents) if (agent.webhook) by.set(agent.webhook.secret, [...(by.get(agent.webhook.secret) ?? []), agent.name]);
	return [...by].filter(([, names]) => names.length > 1).map(([secret, names]) => `agents ${names.join(", ")} share the webhook secret ${secret}: a caller of either can start the other's runs; give each its own`);
}
