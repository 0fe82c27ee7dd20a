// What a definition says that it likely does not mean: pure, so that `npm run check` (in Node) says
// it of fleet.yaml as a dry run says it of an API agent.
import { modelIdProblem } from "./models.ts";
import { durationSeconds } from "./duration.ts";
import type { AgentDefinition, DefinitionSummary } from "./schema.ts";

/**
 * What a definition says that it likely does not mean, whatever the Worker's secrets: said by a dry
 * run, by `npm run check` for fleet.yaml, and in an agent's warnings.
 */
export function definitionWarnings(agent: Pick<DefinitionSummary, "tools" | "approval_timeout" | "timeout" | "model" | "fallback_models">): string[] {
	const warnings: string[] = [];
	for (const [role, model] of [["model", agent.model], ...agent.fallback_models.map((m) => ["fallback model", m] as const)] as const) {
		const problem = modelIdProblem(model);
		if (problem) warnings.push(`${role} ${problem}`);
	}
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
		if (!("cron" in schedule)) continue;
		// Of a nickname's zone too: @daily runs at that zone's midnight.
		const etc = /^Etc\/GMT([+-])(\d{1,2})$/.exec(schedule.timezone);
		if (etc && Number(etc[2]) !== 0) {
			const offset = `UTC${etc[1] === "+" ? "−" : "+"}${(etc[2] ?? "").padStart(2, "0")}:00`;
			warnings.push(`schedule ${name}: timezone "${schedule.timezone}" is ${offset} (an Etc/GMT zone's sign is the reverse of its offset's), all year; where a place is meant, its Area/City zone follows its daylight saving`);
		}
		if (schedule.cron.startsWith("@")) continue;
		const [minute, hour, dayOfMonth, month, dayOfWeek] = schedule.cron.trim().split(/\s+/);
		if ((minute === "*" || minute === "?") && hour !== "*" && hour !== "?") {
			const hours = /^\d+$/.test(hour ?? "") ? `hour ${hour}` : `the hours ${hour}`;
			warnings.push(`schedule ${name}: cron "${schedule.cron}" runs every minute of ${hours}, 60 runs an hour; for one run at its start write "0 ${hour} …"`);
		}
		const shortMonths = dayOfWeek === "*" || dayOfWeek === "?" ? monthsWithoutDay(dayOfMonth ?? "", month ?? "") : null;
		if (shortMonths) warnings.push(`schedule ${name}: cron "${schedule.cron}" ${shortMonths}; for the last day of every month write "${minute} ${hour} L ${month} ${dayOfWeek}"`);
		// Cron's day fields are either-or when both are restricted: "0 9 1-7 * 1" is days 1 to 7 and every
		// Monday (croner's "+1" asks for both, the first Monday).
		if (dayOfMonth !== "*" && dayOfWeek !== "*" && dayOfMonth !== "?" && dayOfWeek !== "?" && !dayOfWeek?.startsWith("+")) {
			warnings.push(`schedule ${name}: cron "${schedule.cron}" runs on the days of the month ${dayOfMonth} and also on the weekdays ${dayOfWeek} (either day field matching, not both): to run on one of them only, write * in the other`);
		}
	}
	return warnings;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * For day-of-month values all past the 28th, which of the cron's months never (or only in leap
 * years) have one of them: such a run is skipped there, where "the end of the month" was likely
 * meant. Only plain numbers and lists are read; ranges and steps are taken as meant.
 */
function monthsWithoutDay(dayOfMonth: string, month: string): string | null {
	if (!/^\d+(,\d+)*$/.test(dayOfMonth)) return null;
	const days = dayOfMonth.split(",").map(Number);
	if (Math.min(...days) < 29) return null;
	const months = month === "*" || month === "?" ? MONTHS.map((_, i) => i + 1) : /^\d+(,\d+)*$/.test(month) ? month.split(",").map(Number) : null;
	if (!months) return null;
	const first = Math.min(...days);
	const never = months.filter((m) => DAYS_IN_MONTH[m - 1]! < first);
	const leapOnly = first === 29 && months.includes(2);
	if (never.length > 0) return `never runs in ${never.map((m) => MONTHS[m - 1]).join(", ")} (no day ${first} there)`;
	return leapOnly ? "runs in Feb only in leap years" : null;
}

/** Webhook trigger secrets two agents share: either's caller can start the other's runs. */
export function sharedWebhookSecrets(agents: readonly Pick<AgentDefinition, "name" | "webhook">[]): string[] {
	const by = new Map<string, string[]>();
	for (const agent of agents) if (agent.webhook) by.set(agent.webhook.secret, [...(by.get(agent.webhook.secret) ?? []), agent.name]);
	return [...by].filter(([, names]) => names.length > 1).map(([secret, names]) => `agents ${names.join(", ")} share the webhook secret ${secret}: a caller of either can start the other's runs; give each its own`);
}
