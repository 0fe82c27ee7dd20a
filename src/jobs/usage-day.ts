import { z } from "@hono/zod-openapi";

/**
 * One day of one agent's usage, as the API answers it and the store rolls it up: one schema for
 * both (and the CLI's type), so the route's documented shape and what it returns cannot drift apart.
 */
export const UsageDaySchema = z
	.object({
		day: z.string().openapi({ format: "date", example: "2026-11-30" }),
		agent: z.string(),
		jobs: z.number().int().openapi({ description: "Jobs created that day that have ended" }),
		input_tokens: z.number().int(),
		output_tokens: z.number().int(),
		cache_creation_input_tokens: z.number().int(),
		cache_read_input_tokens: z.number().int(),
		cost_usd: z.number().nullable().openapi({ description: "Cost of the priced jobs among them; null when none that used tokens was priced (a job that never called a model is priced, at $0, but alone makes no cost)" }),
		priced_jobs: z.number().int().openapi({ description: "Jobs among them whose cost is known: on a model with a price, or that never called a model ($0)" }),
	})
	.openapi("UsageDay");

export type UsageDay = z.infer<typeof UsageDaySchema>;

/** One UTC day of the whole fleet's usage (GET /v1/usage?group=day): its agents' days summed. */
export const UsageDayTotalSchema = UsageDaySchema.omit({ agent: true })
	.extend({
		agents: z.number().int().openapi({ description: "Agents with ended jobs that day: the rows of that day in the list by agent" }),
		cost_usd: z.number().nullable().openapi({ description: "Cost of the day's priced jobs; null when none that used tokens was priced, as for an agent's day: null exactly when every agent's cost that day is" }),
	})
	.openapi("UsageDayTotal");

export type UsageDayTotal = z.infer<typeof UsageDayTotalSchema>;

/** One agent's usage over the days asked (GET /v1/usage?group=agent): its days summed. */
export const UsageAgentTotalSchema = UsageDaySchema.omit({ day: true })
	.extend({
		days: z.number().int().openapi({ description: "Days with ended jobs of the agent: its rows in the list by agent" }),
		cost_usd: z.number().nullable().openapi({ description: "Cost of the agent's priced jobs; null when none that used tokens was priced: null exactly when every day's cost is" }),
	})
	.openapi("UsageAgentTotal");

export type UsageAgentTotal = z.infer<typeof UsageAgentTotalSchema>;
