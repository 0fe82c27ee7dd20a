import type { AgentDO } from "./agent-do.ts";

/**
 * An agent's Durable Object, typed by its own methods. Workers' generated RPC types drop any value
 * containing `unknown` (a job record's free-form tool input), which would type a job as `never`;
 * RPC returns exactly what these methods return, structured-cloned, so their signatures are the
 * true ones.
 */
export type AgentRpc = Pick<
	AgentDO,
	| "tick"
	| "trigger"
	| "define"
	| "remove"
	| "dropFromFleet"
	| "retentionShortened"
	| "pause"
	| "resume"
	| "status"
	| "runs"
	| "sessions"
	| "session"
	| "persistentSession"
	| "resetPersistentSession"
	| "getJob"
	| "jobView"
	| "manifest"
	| "toolCalls"
	| "cancel"
	| "decide"
	| "denyWithReason"
	| "followUp"
	| "followUpOnce"
	| "notepad"
	| "setNote"
	| "setNoteIf"
	| "deleteNote"
	| "deleteNoteIf"
>;

export function agentRpc(env: Env, name: string): AgentRpc {
	return env.AGENT.getByName(name) as unknown as AgentRpc;
}
