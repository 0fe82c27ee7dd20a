import { providerConfig } from "../agent/credentials.ts";
import { resolveSecretUrl, secretNamed } from "../delivery/secret-url.ts";
import { DEPRECATED_MODELS } from "./models.ts";
import { isReservedSecret, RESERVED_SECRETS_SAID } from "./reserved-secrets.ts";
import { fleetFault, loadFleet } from "./bundled.ts";
import { type AgentDefinition, type DefinitionSummary, unpricedCostLimit } from "./schema.ts";
import { definitionWarnings } from "./warnings.ts";

/**
 * Why an agent cannot run with the Worker's current secrets and today's models, or [] when it can.
 * An agent with problems is paused automatically (with the reason) instead of failing every tick.
 */
export function readinessProblems(agent: AgentDefinition, env: object, today: Date): string[] {
	const problems: string[] = [];
	try {
		providerConfig(env as Parameters<typeof providerConfig>[0]);
	} catch (err) {
		// A missing key, or a base URL the key must not be sent to (the exfiltration guard).
		problems.push(err instanceof Error ? err.message : String(err));
	}
	for (const tool of agent.tools) {
		if (tool.type === "webhook") problems.push(...urlProblem(env, tool.url_secret, `tool ${tool.name}`));
	}
	// The answer is what a run is for: without its target every run would pay for the model and then
	// fail to deliver. (A hook's missing secret fails only that hook: hooks are the operator's extras.)
	if (agent.delivery) problems.push(...urlProblem(env, agent.delivery.url_secret, "delivery"));
	// A cost limit on a model fleet.yaml prices no more (a deploy dropped its line since the agent was
	// defined) cannot be held: each run would pay for an answer and then fail. (A file agent so is
	// refused with the file; an invalid file stops every run on its own.)
	const unpriced = fleetFault() === null ? unpricedCostLimit(agent, loadFleet().pricing) : null;
	if (unpriced !== null) problems.push(unpriced);
	const usable = [agent.model, ...agent.fallback_models].filter((m) => !isRetired(m, today));
	if (usable.length === 0) {
		problems.push(`model ${agent.model} is retired (end of life ${DEPRECATED_MODELS[agent.model]}) and no fallback model is current`);
	}
	return problems;
}

/** A URL secret every call to would fail: unset, or set to what is no http(s) URL (never said: its value is a secret). A hook's only warns. */
function urlProblem(env: object, name: string, what: string): string[] {
	if (unset(env, name)) return [`secret ${name} (${what}) ${unsetWhy(name)}`];
	return resolveSecretUrl(secretNamed(env, name)).kind === "not-http" ? [`secret ${name} (${what}) does not hold an http(s) URL`] : [];
}

function isRetired(model: string, today: Date): boolean {
	const eol = DEPRECATED_MODELS[model];
	return eol !== undefined && Date.parse(eol) <= today.getTime();
}

/**
 * A secret the Worker does not have, or has empty, or one of drover's own that a definition stored
 * before a release reserved it still names: not read for it (secretNamed).
 */
function unset(env: object, name: string): boolean {
	return secretNamed(env, name) === undefined;
}

const unsetWhy = (name: string) =>
	isReservedSecret(name) ? `is one of drover's own (${RESERVED_SECRETS_SAID}), not read for a definition: give it a secret of its own` : "is not set";

/**
 * What an agent that can run will fail at with the Worker's current secrets: the webhook trigger
 * (every signed call a 503), hook calls (each given up) and webhook tools signed with their URL for
 * want of a key (a signature that authenticates nothing). Not a pause: its schedules and manual
 * runs are fine, and the failure would otherwise show only in a log line.
 */
export function readinessWarnings(agent: DefinitionSummary, env: object): string[] {
	const warnings: string[] = [];
	if (agent.webhook) {
		const { secret } = agent.webhook;
		const problem = webhookSecretProblem(env, secret);
		if (problem) warnings.push(`secret ${secret} (webhook trigger) ${problem}: POST /v1/hooks/${agent.name} answers 503`);
	}
	for (const [kind, hooks] of Object.entries(agent.hooks ?? {})) {
		for (const hook of hooks ?? []) {
			for (const problem of urlProblem(env, hook.url_secret, `${kind} hook`)) warnings.push(`${problem}: its calls are given up`);
		}
	}
	for (const tool of agent.tools) {
		// Still signed with the URL (receivers set up that way keep verifying), but that proves nothing.
		if (tool.type === "webhook" && !isReservedSecret(tool.url_secret) && unset(env, `${tool.url_secret}_SIGNING_KEY`)) {
			warnings.push(
				`secret ${tool.url_secret}_SIGNING_KEY (tool ${tool.name}) is not set: its calls are signed with their URL as the key, which anyone able to POST to the receiver knows; set it for a signature the receiver can trust (and give the receiver the key at the same time: it replaces the URL as the key)`,
			);
		}
	}
	// A signing key a receiver checks is worth no more than its length: as short as an inbound
	// webhook secret is refused for, a signature could be forged.
	const targets = [agent.delivery?.url_secret, ...Object.values(agent.hooks ?? {}).flatMap((hooks) => (hooks ?? []).map((h) => h.url_secret)), ...agent.tools.flatMap((t) => (t.type === "webhook" ? [t.url_secret] : []))];
	for (const name of new Set(targets.filter((s): s is string => s !== undefined).map((s) => `${s}_SIGNING_KEY`))) {
		if ((secretNamed(env, name)?.length ?? MIN_WEBHOOK_SECRET_CHARS) < MIN_WEBHOOK_SECRET_CHARS) {
			warnings.push(`secret ${name} is shorter than ${MIN_WEBHOOK_SECRET_CHARS} characters: a signature made with it could be forged`);
		}
	}
	warnings.push(...definitionWarnings(agent));
	return warnings;
}

/** A webhook trigger's secret shorter than this could be guessed, and every signature forged: refused (503). */
export const MIN_WEBHOOK_SECRET_CHARS = 16;

/**
 * Why a webhook trigger's secret cannot verify its callers, or null. drover signs what it sends
 * (deliveries, hooks, webhook tools) in the form POST /v1/hooks checks: a trigger keyed as one of
 * those is signed would let their receivers start the agent's runs with a request drover sent them.
 */
export function webhookSecretProblem(env: object, name: string): string | null {
	const value = secretNamed(env, name);
	if (value === undefined) return unsetWhy(name);
	if (value.length < MIN_WEBHOOK_SECRET_CHARS) return `is too short to sign with (at least ${MIN_WEBHOOK_SECRET_CHARS} characters)`;
	const signsOut = "drover signs what it sends with it, so whoever receives that could sign this agent's triggers: give the trigger a secret of its own";
	// A webhook tool without a signing key of its own is signed with its URL.
	if (resolveSecretUrl(value).kind === "url") return `holds a URL, as a URL secret does: ${signsOut}`;
	if (signingKeyOfUrl(env, name)) return `is a signing key: ${signsOut}`;
	const same = Object.entries(env).find(([other, v]) => other !== name && v === value && signingKeyOfUrl(env, other))?.[0];
	return same ? `has the value of ${same}: ${signsOut}` : null;
}

/** Whether `name` is the signing key of a URL secret (`<url_secret>_SIGNING_KEY`, the URL set), which drover signs what it posts there with. */
function signingKeyOfUrl(env: object, name: string): boolean {
	const base = /^(.+)_SIGNING_KEY$/.exec(name)?.[1];
	return base !== undefined && resolveSecretUrl(Reflect.get(env, base)).kind === "url";
}
