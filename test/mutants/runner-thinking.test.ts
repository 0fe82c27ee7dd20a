// An assistant turn with its thinking left out (durable-objects/agent/runner/thinking.ts), where a
// mutation walk found the suite blind: a turn that held nothing but thinking (a final answer with no
// text) must not become an empty turn, which the API refuses in any conversation sent back.
import { describe, expect, it } from "vitest";
import { messagesWithoutThinking, withoutThinking } from "../../durable-objects/agent/runner/thinking.ts";

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
