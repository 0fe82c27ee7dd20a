// max_tool_calls as the agent loop counts a turn's calls (durable-objects/agent/runner/model-turn.ts),
// where a mutation walk found the suite blind: a call whose input was not valid JSON is never made,
// so it does not count against the limit a turn's calls must fit in together.
import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { outputOf, runToRest } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";

describe("a turn of two calls, one with input that is not valid JSON, under max_tool_calls 1", () => {
	it("runs the valid call and refuses the other, instead of failing the job at the limit", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "Done." });
		let fetched = 0;
		fake("https://status.example.test", () => {
			fetched++;
			return new Response("ok");
		});
		const events = [
			{ type: "message_start", message: { id: "msg_two", type: "message", role: "assistant", model: "claude-sonnet-5-5", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 100, output_tokens: 1 } } },
			{ type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_good", name: "http_fetch", input: {} } },
			{ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"url": "https://status.example.test/"}' } },
			{ type: "content_block_stop", index: 0 },
			{ type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_bad", name: "http_fetch", input: {} } },
			{ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"url": "https://status.example.test/", "headers": {"a": "b"' } },
			{ type: "content_block_stop", index: 1 },
			{ type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 40 } },
			{ type: "message_stop" },
		];
		let first = true;
		fake("https://api.anthropic.com", (request) => {
			if (!first) return emulator.handle(request);
			first = false;
			return new Response(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""), { headers: { "content-type": "text/event-stream" } });
		});
		await createAgent({ name: "one-good-call", usage_limits: { max_tool_calls: 1 }, tools: [{ type: "http_fetch", allow_hosts: ["status.example.test"] }] });
		const job = await runToRest("one-good-call");
		expect(job).toMatchObject({ status: "completed", exit_reason: "success", summary: "Done.", tool_calls: { made: 1, failed: 0 } });
		expect(fetched).toBe(1);
		const results = (await outputOf("one-good-call", job.id)).filter((l) => l.type === "tool_result");
		expect(results).toEqual([
			expect.objectContaining({ tool_use_id: "toolu_bad", success: false, error: expect.stringContaining("input was not valid JSON") }),
			expect.objectContaining({ tool_use_id: "toolu_good", success: true }),
		]);
	});
});
