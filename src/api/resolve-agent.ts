import { findAgent } from "../config/bundled.ts";
import { wasDeleted } from "../config/fleet.ts";
import type { AgentDefinition } from "../config/schema.ts";
import { NotFoundError } from "../errors.ts";
import { agentEverExisted, getRegisteredAgent } from "../store/agent-registry.ts";

export interface ResolvedAgent {
	name: string;
	source: "file" | "api";
	definition: AgentDefinition;
}

/** Finds an agent among fleet.yaml's and the API's; a deleted API agent is not found. */
async function findAnyAgent(env: Env, name: string): Promise<ResolvedAgent | null> {
	const file = findAgent(name);
	if (file) return { name, source: "file", definition: file };
	const registered = await getRegisteredAgent(env.DB, name);
	if (!registered?.definition || registered.deletedAt !== null) return null;
	return { name, source: "api", definition: registered.definition };
}

export async function requireAgent(env: Env, name: string): Promise<ResolvedAgent> {
	const agent = await findAnyAgent(env, name);
	if (agent) return agent;
	// An operator asking after an agent someone else deleted is told so, not that it never was (a
	// second registry read, on the 404's path alone).
	const deletedAt = (await getRegisteredAgent(env.DB, name))?.deletedAt;
	throw new NotFoundError(deletedAt == null ? `no agent named ${name}` : wasDeleted(name, deletedAt));
}

/**
 * A 404 unless the name is, or was, an agent: a deleted agent's jobs and ledger stay readable.
 * Told without waking the agent's object, which would create and store one for any name asked about.
 */
export async function requireKnownAgent(env: Env, name: string): Promise<void> {
	if (!(await findAnyAgent(env, name)) && !(await agentEverExisted(env.DB, name))) throw new NotFoundError(`no agent named ${name}`);
}

// API agents the registry has shown live, per isolate, so the trigger path (the API's hottest) skips
// a D1 read for them. Stale is safe here: the agent's own object holds its definition and refuses a
// deleted agent with the same 404. Only live names are kept, so a new agent is found at once.
const LIVE_FOR_MS = 30_000;
const liveApiAgents = new Map<string, number>();

/** The agent's name and source, for calls its own object validates (it holds the definition). */
export async function requireAgentSource(env: Env, name: string, now = Date.now()): Promise<Pick<ResolvedAgent, "name" | "source">> {
	if (findAgent(name)) return { name, source: "file" };
	const seen = liveApiAgents.get(name);
	if (seen !== undefined && now - seen < LIVE_FOR_MS) return { name, source: "api" };
	const agent = await requireAgent(env, name);
	if (agent.source === "api") {
		if (liveApiAgents.size >= 10_000) liveApiAgents.clear();
		liveApiAgents.set(name, now);
	}
	return { name, source: agent.source };
}
