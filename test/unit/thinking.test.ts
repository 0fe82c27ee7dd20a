import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { storedAnswer } from "../../durable-objects/agent/runner/thinking.ts";
import { messageFromSse } from "../../src/agent/streamed-message.ts";

const key = `sk-ant-api03-${"a1B2c3D4e5".repeat(9)}AA`;
const thinking = (text: string) => ({ type: "thinking", thinking: text, signature: `sig-${text}` }) as Anthropic.ContentBlockParam;
const text = (t: string) => ({ type: "text", text: t }) as Anthropic.ContentBlockParam;
const call = { type: "tool_use", id: "toolu_1", name: "http_fetch", input: { url: "https://example.test/" } } as Anthropic.ContentBlockParam;
const types = (blocks: Anthropic.ContentBlockParam[]) => blocks.map((b) => (b.type === "thinking" ? `thinking:${b.thinking}` : b.type));

describe("an answer as it is stored and sent back", () => {
	it("keeps thinking that came before whatever redaction changed, and leaves out thinking after it, which was signed over the unredacted text", () => {
		const before = storedAnswer([thinking("A"), text(`the key is ${key}`), call]);
		expect(types(before)).toEqual(["thinking:A", "text", "tool_use"]);
		expect(JSON.stringify(before)).not.toContain(key);
		expect(before[0]).toEqual(thinking("A"));

		const after = storedAnswer([thinking("A"), text(`the key is ${key}`), thinking("B"), call]);
		expect(types(after)).toEqual(["thinking:A", "text", "tool_use"]);
	});

	it("counts a blank text block left out as a change: thinking after it goes, thinking before it stays", () => {
		expect(types(storedAnswer([thinking("A"), text("\n\n"), thinking("B"), call]))).toEqual(["thinking:A", "tool_use"]);
		expect(types(storedAnswer([thinking("A"), text("All fine."), thinking("B"), call]))).toEqual(["thinking:A", "text", "thinking:B", "tool_use"]);
		// Without thinking, only the blank block goes.
		expect(types(storedAnswer([text("\n\n"), call]))).toEqual(["tool_use"]);
	});

	it("counts a tool call whose input was not valid JSON as a change: it is kept with what could be read of it", () => {
		const events = [
			{ type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } },
			{ type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
			{ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "A" } },
			{ type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig-A" } },
			{ type: "content_block_stop", index: 0 },
			{ type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_1", name: "http_fetch", input: {} } },
			{ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"url": "https://example.test/", }' } },
			{ type: "content_block_stop", index: 1 },
			{ type: "content_block_start", index: 2, content_block: { type: "thinking", thinking: "", signature: "" } },
			{ type: "content_block_delta", index: 2, delta: { type: "thinking_delta", thinking: "B" } },
			{ type: "content_block_delta", index: 2, delta: { type: "signature_delta", signature: "sig-B" } },
			{ type: "content_block_stop", index: 2 },
			{ type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 9 } },
			{ type: "message_stop" },
		];
		const message = messageFromSse(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""));
		expect(types(storedAnswer(message.content as Anthropic.ContentBlockParam[]))).toEqual(["thinking:A", "tool_use"]);
	});
});
