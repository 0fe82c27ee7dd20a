import { describe, expect, it } from "vitest";
import { withCacheBreakpoint } from "../../durable-objects/agent/runner/context.ts";
import type { MessageParam } from "../../src/agent/contracts.ts";

const mark = { type: "ephemeral" };

describe("withCacheBreakpoint", () => {
	it("marks the last block of the last two user turns, a string prompt made a text block", () => {
		const messages: MessageParam[] = [
			{ role: "user", content: "Check." },
			{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "http_fetch", input: {} }] },
			{ role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] },
			{ role: "assistant", content: [{ type: "tool_use", id: "t2", name: "http_fetch", input: {} }] },
			{ role: "user", content: [{ type: "tool_result", tool_use_id: "t2", content: "ok" }, { type: "text", text: "And?" }] },
		];
		const out = withCacheBreakpoint(messages, true);
		expect(out[0]!.content).toBe("Check.");
		expect(out[2]!.content).toEqual([{ type: "tool_result", tool_use_id: "t1", content: "ok", cache_control: mark }]);
		expect(out[4]!.content).toEqual([{ type: "tool_result", tool_use_id: "t2", content: "ok" }, { type: "text", text: "And?", cache_control: mark }]);
		expect(withCacheBreakpoint([{ role: "user", content: "Only." }], true)).toEqual([{ role: "user", content: [{ type: "text", text: "Only.", cache_control: mark }] }]);
	});

	it("leaves a tool-less agent's request, a paused turn's continuation and an empty text block unmarked", () => {
		expect(withCacheBreakpoint([{ role: "user", content: "Only." }], false)).toEqual([{ role: "user", content: "Only." }]);
		const paused: MessageParam[] = [
			{ role: "user", content: "Search." },
			{ role: "assistant", content: [{ type: "text", text: "Searching…" }] },
		];
		expect(withCacheBreakpoint(structuredClone(paused), true)).toEqual(paused);
		const blank: MessageParam[] = [{ role: "user", content: [{ type: "text", text: " " }] }];
		expect(withCacheBreakpoint(structuredClone(blank), true)).toEqual(blank);
	});
});
