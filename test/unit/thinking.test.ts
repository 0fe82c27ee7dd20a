import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { storedAnswer } from "../../durable-objects/agent/runner/thinking.ts";
import { messageFromSse } from "../../src/agent/streamed-message.ts";
import { answerStream } from "../helpers/sse.ts";

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
		const message = messageFromSse(
			answerStream([
				{ thinking: "A", signature: "sig-A" },
				{ tool_use: { id: "toolu_1", name: "http_fetch", json: '{"url": "https://example.test/", }' } },
				{ thinking: "B", signature: "sig-B" },
			]),
		);
		expect(types(storedAnswer(message.content as Anthropic.ContentBlockParam[]))).toEqual(["thinking:A", "tool_use"]);
	});
});
