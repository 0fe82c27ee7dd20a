// An answer's text as the agent loop writes it (durable-objects/agent/runner/messages.ts answerText),
// where a mutation walk found the suite blind: the JSONL's assistant line begins with the answer's
// text, not with a break for the thinking block before it (the summary, trimmed, never showed it).
import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { outputOf, runToRest } from "../helpers/jobs.ts";

describe("an answer that thinks before its text", () => {
	it("is written to the JSONL as its text alone, without a leading break", async () => {
		useEmulator().enqueue({ thinking: "Let me think.", text: "Decided." });
		await createAgent({ name: "thinks-first" });
		const job = await runToRest("thinks-first");
		expect(job).toMatchObject({ status: "completed", summary: "Decided." });
		const answers = (await outputOf("thinks-first", job.id)).filter((l) => l.type === "assistant");
		expect(answers.map((l) => l.content)).toEqual(["Decided."]);
	});
});
