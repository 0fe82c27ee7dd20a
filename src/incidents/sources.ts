import type { AgentDefinition } from "../config/schema.ts";
import type { JobRecord } from "../jobs/model.ts";

/**
 * What a run's failure or clean end speaks for, in an incident. A schedule or the webhook fires again
 * by itself, so its failure stands until it runs clean; a manual run, a fork or a continue does not
 * recur, so any clean run clears its failure (as Hermes' "a clean run resolves all open ones").
 * A delivery goes to the agent's one target whichever schedule ran, so any answer delivered clears
 * it; a run that sent nothing (`[SILENT]`, an empty answer) says nothing of the target.
 * A hook is one source of its own, `hook:<list>:<url_secret>` (`hook:on_error:PAGER_URL`), not one
 * for all the agent's hooks: each posts to its own URL, and an `after_run` hook getting through at
 * every run says nothing of a broken `on_error` one (often the pager's path), which one `hook` source
 * would resolve at the next clean run. Named by its URL's secret, not its place in its list (as its
 * Idempotency-Key is): a hook added before it would take its place, and a call of that one getting
 * through would clear the failure of another URL.
 */
export type IncidentSource = `schedule:${string}` | "webhook" | "manual" | "delivery" | `hook:${string}`;

const ONE_OFF: IncidentSource = "manual";
export const DELIVERY: IncidentSource = "delivery";
const HOOK_PREFIX = "hook:";
/** A pattern of SQL LIKE for every hook's source. */
export const HOOK_SOURCES_LIKE = `${HOOK_PREFIX}%`;

type Hook = NonNullable<NonNullable<AgentDefinition["hooks"]>["after_run" | "on_error"]>[number];

/** The agent's hooks in the order they are called, each with its name, `<event>:<place in its list>`. */
export function namedHooks(agent: AgentDefinition | null): (Hook & { event: "after_run" | "on_error"; name: string })[] {
	return (["after_run", "on_error"] as const).flatMap((event) => (agent?.hooks?.[event] ?? []).map((hook, i) => ({ ...hook, event, name: `${event}:${i}` })));
}

export function hookSource(event: string, urlSecret: string): IncidentSource {
	return `${HOOK_PREFIX}${event}:${urlSecret}`;
}

/**
 * Sources a send clears (an answer delivered, a hook's call taken), not a run: a send is no run, so it
 * clears no one-off run's failure, nor says anything of the model's credentials or rate limit.
 */
export function isSendSource(source: IncidentSource): boolean {
	return source === DELIVERY || source.startsWith(HOOK_PREFIX);
}

/** Sources any clean run clears (and no send): none of them is a schedule's own, nor the delivery target's or a hook's. */
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
 * The recurring sources an agent's definition still runs, and its delivery target and hooks while it
 * has them. A failing schedule renamed, dropped or disabled since will never run clean, nor a target
 * or hook removed be called, so its failure must not hold the incident open for good.
 */
export function liveSources(agent: AgentDefinition | null): IncidentSource[] {
	if (!agent?.enabled) return [];
	const sources: IncidentSource[] = Object.entries(agent.schedules)
		.filter(([, schedule]) => schedule.enabled)
		.map(([name]) => `schedule:${name}` as const);
	if (agent.webhook) sources.push("webhook");
	if (agent.delivery) sources.push(DELIVERY);
	for (const hook of namedHooks(agent)) sources.push(hookSource(hook.event, hook.url_secret));
	return sources;
}
