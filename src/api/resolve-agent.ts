import { findAgent } from "../config/bundled.ts";
import type { AgentDefinition } from "../config/schema.ts";
import { NotFoundError } from "../errors.ts";
import { getRegisteredAgent } from "../store/agent-registry.ts";

export interface ResolvedAgent {
	name: string;
	source: "file" | "api";
	definition: AgentDefinition;
}

/** Finds an agent among fleet.yaml's and the API's; a deleted API agent is not found. */
export async function findAnyAgent(env: Env, name: string): Promise<ResolvedAgent | null> {
	const file = findAgent(name);
	if (file) return { name, source: "file", definition: file };
	const registered = await getRegisteredAgent(env.DB, name);
	if (!registered || registered.deletedAt !== null) return null;
	return { name, source: "api", definition: registered.definition };
}

export async function requireAgent(env: Env, name: string): Promise<ResolvedAgent> {
	const agent = await findAnyAgent(env, name);
	if (!agent) throw new NotFoundError(`no agent named ${name}`);
	return agent;
}
