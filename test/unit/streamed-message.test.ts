import { APIError } from "@anthropic-ai/sdk/core/error";
import { MessageStream } from "@anthropic-ai/sdk/lib/MessageStream";
import { describe, expect, it } from "vitest";
import { hasInvalidInput, messageFromSse, parseSse, usageFromSse } from "../../src/agent/streamed-message.ts";

// A streamed answer with every kind of block and delta the fold handles: thinking with its
// signature, text with a citation, a client tool and a server tool whose inputs arrive in pieces,
// a server tool's result (whole in its start event), and usage totals sent at the end.
const EVENTS: Record<string, unknown>[] = [
	{
		type: "message_start",
		message: {
			id: "msg_01",
			type: "message",
			role: "assistant",
			model: "claude-sonnet-5-5",
			content: [],
			stop_reason: null,
			stop_sequence: null,
			usage: { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
		},
	},
	{ type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
	{ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Let me " } },
	{ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "look." } },
	{ type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig-abc" } },
	{ type: "content_block_stop", index: 0 },
	{ type: "content_block_start", index: 1, content_block: { type: "text", text: "", citations: null } },
	{ type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "The answer " } },
	{ type: "content_block_delta", index: 1, delta: { type: "citations_delta", citation: { type: "char_location", cited_text: "x", document_index: 0, document_title: null, start_char_index: 0, end_char_index: 1 } } },
	{ type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "is 42." } },
	{ type: "content_block_stop", index: 1 },
	{ type: "content_block_start", index: 2, content_block: { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} } },
	{ type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '{"query": "ans' } },
	{ type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: 'wer"}' } },
	{ type: "content_block_stop", index: 2 },
	{ type: "content_block_start", index: 3, content_block: { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] } },
	{ type: "content_block_stop", index: 3 },
	{ type: "content_block_start", index: 4, content_block: { type: "tool_use", id: "toolu_1", name: "http_fetch", input: {} } },
	{ type: "content_block_delta", index: 4, delta: { type: "input_json_delta", partial_json: '{"url": "https://ex' } },
	{ type: "content_block_delta", index: 4, delta: { type: "input_json_delta", partial_json: 'ample.com", "n": [1, 2]}' } },
	{ type: "content_block_stop", index: 4 },
	{ type: "content_block_start", index: 5, content_block: { type: "tool_use", id: "toolu_2", name: "noop", input: {} } },
	{ type: "content_block_delta", index: 5, delta: { type: "input_json_delta", partial_json: "" } },
	{ type: "content_block_stop", index: 5 },
	{
		type: "message_delta",
		delta: { stop_reason: "tool_use", stop_sequence: null },
		usage: { output_tokens: 99, input_tokens: 12, cache_creation_input_tokens: null, cache_read_input_tokens: 7, server_tool_use: { web_search_requests: 1 } },
	},
	{ type: "message_stop" },
];

const sse = (events: Record<string, unknown>[], eol = "\n") =>
	events.map((e) => `event: ${String(e.type)}${eol}data: ${JSON.stringify(e)}${eol}${eol}`).join(`event: ping${eol}data: {"type": "ping"}${eol}${eol}`);

/** The SDK's own fold of the same events: MessageStream reading them as newline-delimited JSON. */
async function sdkFold(events: Record<string, unknown>[]) {
	const body = new TextEncoder().encode(events.map((e) => JSON.stringify(e)).join("\n") + "\n");
	const stream = MessageStream.fromReadableStream(new ReadableStream({ start: (c) => (c.enqueue(body), c.close()) }));
	// parsed_output belongs to structured outputs, which drover does not request.
	const { parsed_output, ...message } = JSON.parse(JSON.stringify(await stream.finalMessage())) as { parsed_output?: unknown };
	expect(parsed_output).toBeNull();
	return message;
}

describe("a streamed answer folded into its message", () => {
	it("is the message the SDK's MessageStream assembles from the same events", async () => {
		const ours = messageFromSse(sse(EVENTS));
		expect(JSON.parse(JSON.stringify(ours))).toEqual(await sdkFold(EVENTS));
		expect(ours.content.map((b) => b.type)).toEqual(["thinking", "text", "server_tool_use", "web_search_tool_result", "tool_use", "tool_use"]);
		expect(ours.content[4]).toMatchObject({ input: { url: "https://example.com", n: [1, 2] } });
		expect(ours.content[5]).toMatchObject({ input: {} });
		expect(ours.usage).toMatchObject({ output_tokens: 99, input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 7 });
		expect(ours.stop_reason).toBe("tool_use");
	});

	it("reads CRLF and CR line ends, comments and data split over lines", () => {
		expect(messageFromSse(sse(EVENTS, "\r\n"))).toEqual(messageFromSse(sse(EVENTS)));
		expect(messageFromSse(sse(EVENTS, "\r"))).toEqual(messageFromSse(sse(EVENTS)));
		expect(parseSse(": keep-alive\nevent: x\ndata: a\ndata:b\n\ndata: c\n\nevent: cut\ndata: never dispatched")).toEqual([
			{ event: "x", data: "a\nb", id: null },
			{ event: "message", data: "c", id: null },
		]);
	});

	it("throws the SDK's APIError for an error event, with its type and no status", () => {
		const body = sse(EVENTS.slice(0, 3)) + 'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n';
		const thrown = (() => {
			try {
				messageFromSse(body, new Headers({ "request-id": "req_1" }));
			} catch (error) {
				return error;
			}
		})();
		expect(thrown).toBeInstanceOf(APIError);
		expect(thrown).toMatchObject({ status: undefined, type: "overloaded_error", apiMessage: "Overloaded", requestID: "req_1" });
	});

	it("keeps a whole answer whose tool input is not valid JSON, its input read as far as it goes and marked", () => {
		const broken = EVENTS.map((e) =>
			e.type === "content_block_delta" && e.index === 4 && (e.delta as { partial_json: string }).partial_json.startsWith("ample")
				? { ...e, delta: { type: "input_json_delta", partial_json: 'ample.com", "n": [1, 2]' } }
				: e,
		);
		const message = messageFromSse(sse(broken));
		expect(message.stop_reason).toBe("tool_use");
		expect(message.content[4]).toMatchObject({ type: "tool_use", input: { url: "https://example.com", n: [1, 2] } });
		expect(hasInvalidInput(message.content[4]!)).toBe(true);
		expect(message.content.filter(hasInvalidInput)).toHaveLength(1);
		// The mark never reaches what is stored or sent.
		expect(JSON.stringify(message.content[4])).not.toContain("invalid");
	});

	it("marks tool input that is valid JSON but no object as malformed, sending an empty object in its place", () => {
		for (const json of ["[1, 2]", "null", '"x"', "42"]) {
			const events = EVENTS.map((e) =>
				e.type === "content_block_delta" && e.index === 4 ? { ...e, delta: { type: "input_json_delta", partial_json: (e.delta as { partial_json: string }).partial_json.startsWith("{") ? json : "" } } : e,
			);
			const message = messageFromSse(sse(events));
			expect(message.content[4], json).toMatchObject({ type: "tool_use", input: {} });
			expect(hasInvalidInput(message.content[4]!), json).toBe(true);
		}
	});

	it("refuses a stream that ends before message_stop, or without a stop reason, or that carries no message", () => {
		expect(() => messageFromSse(sse(EVENTS.slice(0, -1)))).toThrow("the stream ended before message_stop");
		expect(() => messageFromSse(sse(EVENTS.filter((e) => e.type !== "message_delta")))).toThrow("the stream ended without a stop reason");
		expect(() => messageFromSse("")).toThrow("the stream ended without a message");
		expect(() => messageFromSse('event: message_start\ndata: {"type": "message_start", "mess\n\n')).toThrow(SyntaxError);
	});

	it("counts a cut stream's tokens as reported so far: a count sent as null at the end does not wipe the start's", () => {
		// Cut after message_delta (an aborted call's body): no message_stop.
		const cut = [
			{ type: "message_start", message: { id: "msg_02", type: "message", role: "assistant", model: "claude-sonnet-5-5", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1, cache_creation_input_tokens: 3, cache_read_input_tokens: 7 } } },
			{ type: "message_delta", delta: { stop_reason: null, stop_sequence: null }, usage: { output_tokens: 40, cache_creation_input_tokens: null, cache_read_input_tokens: null } },
		];
		expect(usageFromSse(sse(cut))).toEqual({ input_tokens: 12, output_tokens: 40, cache_creation_input_tokens: 3, cache_read_input_tokens: 7 });
	});

	it("takes a whole message sent as JSON under a +json type (a gateway that ignores stream: true) as the answer", () => {
		const whole = { id: "msg_03", type: "message", role: "assistant", model: "claude-sonnet-5-5", content: [{ type: "text", text: "hi" }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 5, output_tokens: 2 } };
		for (const type of ["application/json", "application/vnd.gateway+json; charset=utf-8"]) {
			expect(messageFromSse(JSON.stringify(whole), new Headers({ "content-type": type })), type).toMatchObject({ content: [{ type: "text", text: "hi" }], stop_reason: "end_turn", usage: { input_tokens: 5, output_tokens: 2 } });
		}
	});

	it("takes no JSON body without a stop reason as a whole message, and refuses a stream that starts a second message", () => {
		const unfinished = { id: "msg_04", type: "message", role: "assistant", model: "claude-sonnet-5-5", content: [{ type: "text", text: "half" }], stop_reason: null, stop_sequence: null, usage: {} };
		expect(() => messageFromSse(JSON.stringify(unfinished), new Headers({ "content-type": "application/json" }))).toThrow("the answer was not an event stream but application/json, with no message in it");
		const twice = [EVENTS[0]!, ...EVENTS];
		expect(() => messageFromSse(sse(twice))).toThrow("unexpected event order: message_start before message_stop");
	});

	it("passes over an unnamed event (a proxy's keep-alive) and says a long content type cut to 64 characters", () => {
		const withKeepAlive = sse(EVENTS).replace("\n\n", "\n\ndata: keep-alive\n\n");
		expect(withKeepAlive).toContain("data: keep-alive");
		expect(messageFromSse(withKeepAlive).stop_reason).toBe(messageFromSse(sse(EVENTS)).stop_reason);
		const type = `text/${"x".repeat(100)}`;
		expect(() => messageFromSse("<html></html>", new Headers({ "content-type": type }))).toThrow(`the answer was not an event stream but ${type.slice(0, 64)}…, with no message in it`);
	});
});
