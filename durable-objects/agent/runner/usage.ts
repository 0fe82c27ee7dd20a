import type Anthropic from "@anthropic-ai/sdk";
import type { ModelPrice } from "../../../src/config/schema.ts";
import type { JobRecord, JobUsage, UsageLimits } from "../../../src/jobs/model.ts";

/** The job's cost from a pricing table, or null when any model it used has no price. */
function costOf(usage: JobUsage, pricing: Readonly<Record<string, ModelPrice>>): number | null {
	let usd = 0;
	for (const [model, t] of Object.entries(usage.per_model)) {
		const p = pricing[model];
		if (!p) return null;
		usd += (t.input_tokens * p.input + t.output_tokens * p.output + t.cache_creation_input_tokens * p.cache_write + t.cache_read_input_tokens * p.cache_read) / 1_000_000;
	}
	return Object.keys(usage.per_model).length === 0 ? null : Math.round(usd * 1e6) / 1e6;
}

/** Adds one response's usage to the job's, per model, in the four token classes, and prices it if it can. */
export function addUsage(usage: JobUsage, model: string, u: Anthropic.Usage, pricing: Readonly<Record<string, ModelPrice>> = {}): JobUsage {
	const next = addTokens(usage, model, u);
	return { ...next, total_cost_usd: costOf(next, pricing) };
}

function addTokens(usage: JobUsage, model: string, u: Anthropic.Usage): JobUsage {
	const prev = usage.per_model[model] ?? { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
	return {
		...usage,
		num_turns: (usage.num_turns ?? 0) + 1,
		per_model: {
			...usage.per_model,
			[model]: {
				input_tokens: prev.input_tokens + (u.input_tokens ?? 0),
				output_tokens: prev.output_tokens + (u.output_tokens ?? 0),
				cache_creation_input_tokens: prev.cache_creation_input_tokens + (u.cache_creation_input_tokens ?? 0),
				cache_read_input_tokens: prev.cache_read_input_tokens + (u.cache_read_input_tokens ?? 0),
			},
		},
	};
}

function totals(usage: JobUsage) {
	let input = 0;
	let output = 0;
	for (const m of Object.values(usage.per_model)) {
		input += m.input_tokens + m.cache_creation_input_tokens + m.cache_read_input_tokens;
		output += m.output_tokens;
	}
	return { input, output };
}

/** A usage limit a job hit: `limit` names it the same way every time (the incident's signature: "max_output_tokens 4000"); `reason` says it was reached and the amount used. */
export interface LimitHit {
	limit: string;
	reason: string;
}

/** What a job has used that its usage record does not count: billed model requests and tool calls made. */
export interface UsedCounts {
	/** Every billed model request: turns, a paused turn's continuations, a fallback's refused answers. */
	requests: number;
	toolCalls: number;
}

/**
 * Which usage limit stops the job, if any. Checked before each call (a limit already reached
 * forbids the next request) and after each response (a limit crossed by it ends the run). `used`
 * is asked only when a count limit is set and checked now: each count is a SQLite read.
 */
export function limitReached(
	job: JobRecord,
	limits: UsageLimits | null,
	used: () => UsedCounts,
	when: "before_call" | "after_response" | "before_tool",
	pricing: Readonly<Record<string, ModelPrice>> = {},
): LimitHit | null {
	if (!limits) return null;
	const { input, output } = totals(job.usage);
	const over = (value: number, cap: number | undefined) => cap !== undefined && (when === "after_response" ? value > cap : value >= cap);
	const hit = (limit: string, used?: number | string): LimitHit => ({ limit, reason: used === undefined ? `${limit} reached` : `${limit} reached (${used} used)` });
	if (when === "before_tool") return limits.max_tool_calls !== undefined && used().toolCalls >= limits.max_tool_calls ? hit(`max_tool_calls ${limits.max_tool_calls}`) : null;
	if (when === "before_call" && limits.max_requests !== undefined && used().requests >= limits.max_requests) return hit(`max_requests ${limits.max_requests}`);
	// Every input token the model read, cached or not (the cap bounds what the job reads; a record's
	// input_tokens is the fresh part alone, herdctl's field): the reason says so.
	if (over(input, limits.max_input_tokens)) {
		const { reason, limit } = hit(`max_input_tokens ${limits.max_input_tokens}`, input);
		return { limit, reason: reason.replace(/ used\)$/, " used, cache reads and writes included)") };
	}
	if (over(output, limits.max_output_tokens)) return hit(`max_output_tokens ${limits.max_output_tokens}`, output);
	if (limits.max_cost_usd !== undefined && job.usage.total_cost_usd !== null && over(job.usage.total_cost_usd, limits.max_cost_usd)) {
		// Said in the API's own six decimals, as the record keeps the cost.
		return hit(`max_cost_usd ${limits.max_cost_usd}`, `$${job.usage.total_cost_usd.toFixed(6)}`);
	}
	// A model used without a price (removed from fleet.yaml's pricing since the agent was defined)
	// has no cost to hold to the limit: the job stops rather than run on unlimited.
	if (limits.max_cost_usd !== undefined && job.usage.total_cost_usd === null && Object.keys(job.usage.per_model).length > 0) {
		// Named by the models without a price only, in order: the same text whichever of the priced
		// ones answered this time (a fallback's refusal among them), so its incident counts.
		const unpriced = Object.keys(job.usage.per_model).filter((m) => pricing[m] === undefined).sort();
		const limit = `max_cost_usd ${limits.max_cost_usd}, which cannot be checked: a model the job used (${unpriced.join(", ")}) has no price in fleet.yaml's pricing`;
		return { limit, reason: limit };
	}
	return null;
}

/**
 * The tool-call limit a turn's calls would pass together, counted with the calls already made: checked
 * before any of them runs, since the model reads a turn's results all at once or not at all (the
 * first calls run, then the limit stops the job, and their results reach no one). `made` is asked
 * only when the limit is set: counting is a statement, on every tool turn of every job otherwise.
 */
export function turnCallsOverLimit(limits: UsageLimits | null, made: () => number, asked: number): LimitHit | null {
	const max = limits?.max_tool_calls;
	if (max == null) return null;
	const before = made();
	if (before + asked <= max) return null;
	const limit = `max_tool_calls ${max}`;
	return { limit, reason: `${limit} reached (${before} made, this turn asks for ${asked} more)` };
}
