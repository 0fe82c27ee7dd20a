// A job's cost as the agent loop prices it (durable-objects/agent/runner/usage.ts), where a mutation walk
// found the suite blind: the priced test stopped at its first turn, which reads nothing from the cache,
// and compared to six decimals loosely. Each token class has its own price, cache reads the cheapest,
// and the cost is kept in the API's six decimals.
import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { runToRest } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";

describe("a multi-turn job on a priced model", () => {
	it("costs each token class at its own price, rounded to six decimals", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", () => new Response("ok ".repeat(2000)));
		for (let i = 0; i < 3; i++) emulator.enqueue({ tool_use: { name: "http_fetch", input: { url: `https://status.example.test/${i}` } }, text: "Checking again." });
		emulator.enqueue({ text: "All checked." });
		await createAgent({ name: "priced-turns", model: "claude-haiku-5-5", tools: [{ type: "http_fetch", allow_hosts: ["status.example.test"] }] });
		const job = await runToRest("priced-turns");
		expect(job).toMatchObject({ status: "completed", usage: { num_turns: 4 } });
		const t = job.usage.per_model["claude-haiku-5-5"]!;
		expect(t.cache_read_input_tokens).toBeGreaterThan(1000);
		expect(t.cache_creation_input_tokens).toBeGreaterThan(0);
		// fleet.yaml: input 0.1, output 0.5, cache write 0.125, cache read 0.01 USD per million tokens.
		const usd = (t.input_tokens * 0.1 + t.output_tokens * 0.5 + t.cache_creation_input_tokens * 0.125 + t.cache_read_input_tokens * 0.01) / 1_000_000;
		expect(job.usage.total_cost_usd).toBe(Math.round(usd * 1e6) / 1e6);
		// This run's tokens cost more than six decimals' worth unrounded, so the check above can tell.
		expect(job.usage.total_cost_usd).not.toBe(usd);
	});
});
