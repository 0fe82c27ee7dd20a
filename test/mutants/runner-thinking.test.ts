// An assistant turn with its thinking left out (durable-objects/agent/runner/thinking.ts), where a
// mutation walk found the suite blind: a turn that held nothing but thinking (a final answer with no
// text) must not become an empty turn, which the API refuses in any conversation sent back. A
// redacted_thinking block is thinking too, signed like any: left out with it, and after a change.
import { describe, expect, it } from "vitest";
import { messagesWithoutThinking, storedAnswer, withoutThinking } from "../../durable-objects/agent/runner/thinking.ts";

describe("a turn of thinking alone, its thinking left out", () => {
	it("keeps a placeholder text block, never an empty turn", () => {
		const turn = [{ type: "thinking" as const, thinking: "Nothing to add.", signature: "sig" }];
		const kept = withoutThinking(turn);
		expect(kept).toEqual([{ type: "text", text: expect.stringMatching(/\S/) }]);
		const [, assistant] = messagesWithoutThinking([
			{ role: "user", content: "Go." },
			{ role: "assistant", content: turn },
		]);
		expect(assistant!.content).toHaveLength(1);
	});
});

describe("a redacted_thinking block", () => {
	it("is left out with the rest of a turn's thinking, and after a change in the answer", () => {
		const redacted = { type: "redacted_thinking" as const, data: "EmwKAhgBEgy3va3pzix/LafPsn4a" };
		expect(withoutThinking([redacted, { type: "text" as const, text: "Done." }])).toEqual([{ type: "text", text: "Done." }]);
		// A blank text block left out is a change: the thinking after it goes.
		expect(storedAnswer([{ type: "text", text: "  " }, redacted, { type: "text", text: "Done." }])).toEqual([{ type: "text", text: "Done." }]);
	});
});
