import { definitionRevision } from "../../src/config/fleet.ts";
import type { AgentDefinition } from "../../src/config/schema.ts";
import type { AgentState } from "./state.ts";

/** Revisions of the bundled fleet's agent definitions: the objects live as long as the isolate. */
const fileRevisions = new WeakMap<AgentDefinition, string>();

/**
 * An API agent's revision, computed when it was defined, or a file agent's, once computed in this
 * isolate; null when it must be computed (digesting is async). With it in hand a claim or trigger
 * runs on the state it has just read without yielding, so nothing can have changed that state and
 * it need not be read again inside the transaction.
 */
export function knownRevision(state: AgentState, agent: AgentDefinition): string | null {
	if (state.source === "api" && state.definitionRevision) return state.definitionRevision;
	return fileRevisions.get(agent) ?? null;
}

/** A revision knownRevision lacks (a file agent's first claim or trigger in this isolate), kept for the next. */
export async function computeRevision(agent: AgentDefinition): Promise<string> {
	const revision = await definitionRevision(agent);
	fileRevisions.set(agent, revision);
	return revision;
}
