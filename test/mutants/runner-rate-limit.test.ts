// A job waiting out a rate limit (durable-objects/agent/runner/model-turn.ts), where a mutation walk found
// the suite blind: the call that hit the limit may have been billed already (a refused answer its
// fallback followed), and those tokens are in the record the job waits with, not lost with the call.
import { describe, expect, it } from "vitest";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, outputOf, trigger } from "../helpers/jobs.ts";

describe("a refused answer whose fallback was rate limited", () => {
	it("is billed in the record of the job that waits out the limit", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ stop_reason: "refusal", text: "I can" }, { error: 429, retry_after: 3600 });
		await createAgent({ name: "refused-then-limited", model: "claude-opus-5-5", fallback_models: ["claude-haiku-5-5"], timeout: "2h" });
		const job = await trigger("refused-then-limited");
		await settle("refused-then-limited");
		const waiting = await jobOf("refused-then-limited", job.id);
		expect(waiting.status).toBe("running");
		const refused = (await outputOf("refused-then-limited", job.id)).find((l) => l.subtype === "retry" && l.model === "claude-opus-5-5");
		expect(refused).toBeDefined();
		const billed = refused!.usage as Record<string, number>;
		expect(waiting.usage.num_turns).toBe(0);
		expect(waiting.usage.per_model["claude-opus-5-5"]).toMatchObject({ input_tokens: billed.input_tokens, output_tokens: billed.output_tokens });
		// Ended here: its wait's alarm would fire in a later test.
		expect((await call(`/v1/jobs/${job.id}/cancel`, { method: "POST", as: "operate" })).status).toBe(200);
		await settle("refused-then-limited");
		expect((await jobOf("refused-then-limited", job.id)).usage.per_model["claude-opus-5-5"]).toMatchObject({ output_tokens: billed.output_tokens });
	});
});
