import type { AgentDefinition } from "../config/schema.ts";
import type { JobRecord } from "../jobs/model.ts";

/**
 * What a run's failure or clean end speaks for, in an incident. A schedule or the webhook fires again
 * by itself, so its failure stands until it runs clean; a manual run, a fork or a continue does not
 * recur, so any clean run clears its failure (as Hermes' "a clean run resolves all open ones").
 * A delivery goes to the agent's one target whichever schedule ran, so any answer delivered clears
 * it; a run that sent nothing (`[SILENT]`, an empty answer) says nothing of the target.
 */
export type IncidentSource = `schedule:${string}` | "webhook" | "manual" | "delivery";

const ONE_OFF: IncidentSource = "manual";
export const DELIVERY: IncidentSource = "delivery";

/** Sources any clean run clears: none of them is a schedule's own, nor the delivery target's. */
export const ANY_RUN_CLEARS: readonly IncidentSource[] = [ONE_OFF];

/**
 * Failure classes whose cause is the agent's, not one schedule's (its credentials, its rate limit):
 * any clean run shows it gone, so their incidents resolve at any clean run.
 */
export const AGENT_WIDE_CLASSES = ["auth", "rate_limit"] as const;

export function incidentSource(job: Pick<JobRecord, "trigger_type" | "schedule">): IncidentSource {
	if (job.trigger_type === "schedule" && job.schedule !== null) return `schedule:${job.schedule}`;
	if (job.trigger_type === "webhook") return "webhook";
	return ONE_OFF;
}

/**
 * The recurring sources an agent's definition still runs, and its delivery target while it has one.
 * A failing schedule renamed, dropped or disabled since will never run clean, nor a target removed
 * deliver, so its failure must not hold the incident open for good.
 */
export function liveSources(agent: AgentDefinition | null): IncidentSource[] {
	if (!agent?.enabled) return [];
	const sources: IncidentSource[] = Object.entries(agent.schedules)
		.filter(([, schedule]) => schedule.enabled)
		.map(([name]) => `schedule:${name}` as const);
	if (agent.webhook) sources.push("webhook");
	if (agent.delivery) sources.push(DELIVERY);
	return sources;
}
