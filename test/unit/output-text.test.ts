import { describe, expect, it } from "vitest";
import { outputLogEntry } from "../../src/jobs/output-text.ts";

const at = "2026-12-02T09:00:05.000Z";
const entry = (line: Record<string, unknown>) => outputLogEntry(JSON.stringify({ timestamp: at, ...line }));

describe("outputLogEntry (herdctl's plain-text output.log)", () => {
	it("writes each line type as its time, its type and its text, whole", () => {
		expect(entry({ type: "system", subtype: "init", content: "job started with claude-sonnet-5-5" })).toBe(`${at} system:init job started with claude-sonnet-5-5`);
		expect(entry({ type: "system", subtype: "status", content: "job ended", status: "completed", exit_reason: "success" })).toBe(
			`${at} system:status job ended (completed, success)`,
		);
		expect(entry({ type: "assistant", content: "I'll check the page." })).toBe(`${at} assistant I'll check the page.`);
		const url = `https://status.example.test/${"a".repeat(400)}`;
		expect(entry({ type: "tool_use", tool_name: "http_fetch", tool_use_id: "toolu_01", input: { url } })).toBe(`${at} tool_use http_fetch toolu_01 {"url":"${url}"}`);
		expect(entry({ type: "tool_result", tool_use_id: "toolu_01", success: true, result: "green" })).toBe(`${at} tool_result toolu_01 ok green`);
		expect(entry({ type: "tool_result", tool_use_id: "toolu_01", success: false, error: "HTTP 503" })).toBe(`${at} tool_result toolu_01 error HTTP 503`);
		expect(entry({ type: "error", code: "rate_limit", message: "429 from the API" })).toBe(`${at} error [rate_limit] 429 from the API`);
		expect(entry({ type: "system", subtype: "approval", content: "approved", tool_input: { title: "y" } })).toBe(`${at} system:approval approved input {"title":"y"}`);
	});

	it("leaves out an assistant turn with no text, and indents an entry's further lines so each entry starts with its time", () => {
		expect(entry({ type: "assistant", content: "" })).toBeNull();
		expect(entry({ type: "assistant", content: "Two things:\n- one\n- two" })).toBe(`${at} assistant Two things:\n    - one\n    - two`);
	});

	it("makes the model's and tools' text printable, and says where a line was cut to fit", () => {
		expect(entry({ type: "tool_result", tool_use_id: "t", success: true, result: "\u001b[2Jgone\u202eexe.txt" })).toBe(`${at} tool_result t ok \\x1b[2Jgone\\u202eexe.txt`);
		expect(entry({ type: "tool_result", tool_use_id: "t", success: true, result: "abc", truncated: { field: "result", bytes: 3_000_000 } })).toBe(
			`${at} tool_result t ok abc [cut to fit: the line was 3000000 bytes]`,
		);
		expect(outputLogEntry("not json \u0007")).toBe("not json \\x07");
		expect(outputLogEntry(JSON.stringify({ type: "custom", x: 1 }))).toBe(`- custom {"type":"custom","x":1}`);
	});
});
