/**
 * What a Durable Object answers instead of throwing when it refuses a request: RPC carries an
 * error's message but not its class or status, so refusals travel as data and the API layer turns
 * them into the matching 4xx.
 */
export interface Refusal {
	refused: { status: 400 | 404 | 409 | 412 | 413 | 429; message: string; issues?: { path: string; message: string }[]; code?: RefusalCode };
}

/** A 409's own code, where a client must tell it from other conflicts (the status's code otherwise). */
export type RefusalCode = "agent_paused" | "agent_disabled";

/** `issues`, for a 400: each field at fault, as the API's `details.issues` name them. */
export function refuse(status: Refusal["refused"]["status"], message: string, issues?: { path: string; message: string }[], code?: RefusalCode): Refusal {
	return { refused: { status, message, ...(issues ? { issues } : {}), ...(code ? { code } : {}) } };
}

export function isRefusal(value: unknown): value is Refusal {
	return typeof value === "object" && value !== null && "refused" in value;
}
