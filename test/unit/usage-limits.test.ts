// Which tokens each usage limit counts: max_input_tokens holds every input token the model read,
// cache writes and reads included, though a record's input_tokens is the fresh part alone.
import { describe, expect, it } from "vitest";
import { addUsage, limitReached } from "../../durable-objects/agent/runner/usage.ts";
import { createJob } from "../../src/jobs/model.ts";

const noCounts = () => ({ requests: 0, toolCalls: 0 });

function jobAfter(turns: { input: number; cacheWrite: number; cacheRead: number; output: number }[]) {
	const job = createJob({ agent: "capped", trigger_type: "manual", definition_revision: "rev" }, new Date("2026-12-06T00:00:00Z"));
	let usage = job.usage;
	for (const t of turns) {
		usage = addUsage(usage, "claude-sonnet-5-5", {
			input_tokens: t.input,
			cache_creation_input_tokens: t.cacheWrite,
			cache_read_input_tokens: t.cacheRead,
			output_tokens: t.output,
		} as Parameters<typeof addUsage>[2]);
	}
	return { ...job, usage };
}

describe("max_input_tokens", () => {
	// Three turns of a cached conversation: little fresh input, most of it read from the cache.
	const job = jobAfter([
		{ input: 200, cacheWrite: 3_000, cacheRead: 0, output: 50 },
		{ input: 150, cacheWrite: 300, cacheRead: 3_000, output: 50 },
		{ input: 150, cacheWrite: 300, cacheRead: 3_300, output: 50 },
	]);

	it("counts cache writes and reads with the fresh input, and says so in the reason", () => {
		expect(job.usage.per_model["claude-sonnet-5-5"]!.input_tokens).toBe(500);
		expect(limitReached(job, { max_input_tokens: 10_000 }, noCounts, "after_response")).toEqual({
			limit: "max_input_tokens 10000",
			reason: "max_input_tokens 10000 reached (10400 used, cache reads and writes included)",
		});
	});

	it("lets a job on whose input tokens, cached or not, are within the cap", () => {
		expect(limitReached(job, { max_input_tokens: 10_400 }, noCounts, "after_response")).toBeNull();
		// Before the next call, reaching the cap is enough to stop.
		expect(limitReached(job, { max_input_tokens: 10_400 }, noCounts, "before_call")).toMatchObject({ limit: "max_input_tokens 10400" });
	});
});
