// The agent loop's turn counting (durable-objects/agent/runner/model-turn.ts), where a mutation walk
// found the suite blind: a paused turn's continuation is the same turn, so a turn paused on the last
// turn max_turns allows is continued to its answer, not failed at max_turns; and a paused answer is
// not a final one, so a limit it crossed leaves the job without a summary.
import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { outputOf, runToRest } from "../helpers/jobs.ts";

describe("a turn paused on the last turn max_turns allows", () => {
	it("is continued to its final answer, one turn in all", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ stop_reason: "pause_turn", text: "Searching the web." }, { text: "Found it." });
		await createAgent({ name: "paused-last-turn", max_turns: 1 });
		const job = await runToRest("paused-last-turn");
		expect(job).toMatchObject({ status: "completed", exit_reason: "success", summary: "Searching the web.Found it." });
		expect(job.usage.num_turns).toBe(1);
		expect(emulator.requests).toHaveLength(2);
		expect((await outputOf("paused-last-turn", job.id)).at(-1)).toMatchObject({ type: "system", subtype: "result", status: "completed" });
	});
});

describe("a paused answer that crossed a usage limit", () => {
	it("fails the job at the limit with no summary: the paused text is not a final answer", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ stop_reason: "pause_turn", text: "Searching the web for every status page there is." }, { text: "never asked" });
		await createAgent({ name: "paused-over-limit", usage_limits: { max_output_tokens: 5 } });
		const job = await runToRest("paused-over-limit");
		expect(job).toMatchObject({ status: "failed", exit_reason: "usage_limit", error: { type: "usage_limit", message: "usage limit reached: max_output_tokens 5" } });
		expect(job.summary).toBeNull();
		expect(emulator.requests).toHaveLength(1);
	});
});
