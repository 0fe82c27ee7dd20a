// An answer's text as the agent loop writes it (durable-objects/agent/runner/messages.ts answerText),
// where a mutation walk found the suite blind: the JSONL's assistant line begins with the answer's
// text, not with a break for the thinking block before it (the summary, trimmed, never showed it); and
// text on either side of another block is two runs, on two lines: a paused turn whose rest began with
// thinking has a summary of both parts, a line apart, not run together.
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

describe("a paused turn whose rest begins with thinking", () => {
	it("is summarised as both parts' text, on two lines", async () => {
		useEmulator().enqueue({ stop_reason: "pause_turn", text: "Three deploys went out overnight." }, { thinking: "Any incidents?", text: "None caused an incident." });
		await createAgent({ name: "paused-then-thinks" });
		const job = await runToRest("paused-then-thinks");
		expect(job).toMatchObject({ status: "completed", summary: "Three deploys went out overnight.\nNone caused an incident.", usage: { num_turns: 1 } });
	});
});
