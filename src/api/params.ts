import { z } from "@hono/zod-openapi";
import { AGENT_NAME_PATTERN, AGENT_NAME_RULE, agentNameProblem } from "../config/agent-name.ts";

export const AgentNameParam = z
	.string()
	.regex(AGENT_NAME_PATTERN, {
		error: (iss) => `must be an agent name, ${AGENT_NAME_RULE}; it ${agentNameProblem(String(iss.input))}`,
	})
	.openapi({ description: "An agent's name", example: "daily-digest" });

/**
 * A whole number in a query string, in plain digits: z.coerce.number() would also take `1e2`,
 * `0x10` or ` 5 `, spellings no client means and the OpenAPI document does not promise.
 */
function digits(min: number, max: number) {
	return z
		.string()
		.regex(/^\d{1,15}$/, `must be a whole number from ${min} to ${max}, in digits`)
		.transform(Number)
		.pipe(z.number().int().min(min).max(max));
}

/** An optional whole-number query parameter. */
export function queryInt(min: number, max: number) {
	return digits(min, max).optional().openapi({ type: "integer", minimum: min, maximum: max });
}

/** A page's `limit`: 1 to `max`, `fallback` when not given. */
export function pageLimit(max: number, fallback: number) {
	return digits(1, max).default(fallback).openapi({ type: "integer", minimum: 1, maximum: max, default: fallback, description: `At most this many on a page (1 to ${max})` });
}

/** A list's `cursor`: the next_cursor of the page before, unchanged. */
export const CursorParam = z
	.string()
	.min(1)
	.max(200)
	.optional()
	.openapi({ description: "next_cursor of the previous page, unchanged, with the same filters: a cursor is bound to its list and filters, and one from another list or with other filters is a 400" });

/** `Idempotency-Key`: the manual trigger's and the webhook trigger's, checked and remembered alike. */
export const IdempotencyKeyHeader = z
	.string()
	.regex(/^[\x21-\x7e]{1,255}$/, "must be 1-255 visible ASCII characters (! to ~, no space)")
	.optional()
	.openapi({ description: "The same key within 24 h returns the same job instead of creating another; with a different request it is a 409" });

/** The request headers of a route that takes an Idempotency-Key (run now, continue, fork). */
export const IdempotencyHeader = z.object({ "idempotency-key": IdempotencyKeyHeader });
