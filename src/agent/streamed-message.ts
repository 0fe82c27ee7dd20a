/**
 * A streamed Messages API answer, read whole and folded into the final Message.
 *
 * The request streams, so a long generation keeps its connection busy and the SDK's limits on
 * non-streamed requests do not apply; but the agent loop only ever uses the final message. Reading
 * the body into one string (the model client reads it chunk by chunk only to notice a stall) and
 * folding its events here spares the SDK's MessageStream a JS turn per
 * network chunk and per event (its emitter, promises and a copied block per delta): about 0.6 ms
 * of CPU a call in the overhead bench, and less garbage. The fold follows MessageStream's.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { APIError } from "@anthropic-ai/sdk/core/error";
import { partialParse } from "@anthropic-ai/sdk/_vendor/partial-json-parser/parser";
import { SseParser, type SseEvent } from "../shared/sse.ts";

type Message = Anthropic.Message;
type StreamEvent = Anthropic.RawMessageStreamEvent;
type Block = Message["content"][number];

/** The events of a whole SSE body; a stream cut mid-event leaves that event undispatched. */
export function parseSse(body: string): SseEvent[] {
	const events: SseEvent[] = [];
	new SseParser((event) => events.push(event)).feed(body);
	return events;
}

const hasToolInput = (block: Block): block is Anthropic.ToolUseBlock | Anthropic.ServerToolUseBlock =>
	block.type === "tool_use" || block.type === "server_tool_use";

/**
 * Marks a tool call block whose input was not valid JSON though the answer came whole: what could be
 * read of it stands in as its input, and the loop tells the model the call was not run instead of
 * running it. A symbol, so it never reaches JSON: not the stored conversation, not the API.
 */
const INVALID_INPUT: unique symbol = Symbol("drover.invalid_tool_input");

/** Whether a tool call's input was not valid JSON (see INVALID_INPUT). */
export function hasInvalidInput(block: object): boolean {
	return (block as { [INVALID_INPUT]?: boolean })[INVALID_INPUT] === true;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A tool call's input, read as far as it goes, as the SDK's own stream does, when it is not valid
 * JSON: an answer stopped at max_tokens can end inside it, and a whole answer can carry input the
 * model got wrong. Either is an answer, not a broken stream (it is paid for, and asking again gets
 * the same): the loop refuses to run the cut call, and gives the malformed one an error result.
 */
function toolInputOf(json: string): { input: unknown; valid: boolean } {
	if (json === "") return { input: {}, valid: true };
	try {
		const whole: unknown = JSON.parse(json);
		// Valid JSON yet no object ([1,2], "x", null): as malformed, since the API takes only an object.
		return isObject(whole) ? { input: whole, valid: true } : { input: {}, valid: false };
	} catch {
		try {
			const partial: unknown = partialParse(json);
			// The API takes a tool call's input as an object only, and it is sent back.
			return { input: isObject(partial) ? partial : {}, valid: false };
		} catch {
			return { input: {}, valid: false };
		}
	}
}

/**
 * The final Message of a streamed answer. An `error` event throws the SDK's APIError (as its own
 * stream reader does: no status, the error's type); a stream that ends before `message_stop` or
 * without a stop reason, or carries what is not JSON, throws a plain Error (the answer never arrived
 * whole). A JSON body that is the whole message (a gateway that does not stream) is that message.
 */
export function messageFromSse(body: string, headers?: Headers): Message {
	let message: Message | null = null;
	const toolInput = new Map<number, string>();
	for (const sse of parseSse(body)) {
		// `message` is the name of an event that gave none: not one of the API's.
		if (sse.event === "ping" || sse.event === "message") continue;
		if (sse.event === "error") {
			let error: unknown = sse.data;
			try {
				error = JSON.parse(sse.data);
			} catch {}
			const type = (error as { error?: { type?: unknown } } | null)?.error?.type;
			throw new APIError(undefined, error as object, undefined, headers ?? new Headers(), typeof type === "string" ? (type as ConstructorParameters<typeof APIError>[4]) : undefined);
		}
		if (!sse.data) continue;
		const event = JSON.parse(sse.data) as StreamEvent;
		if (event.type === "message_start") {
			if (message) throw new Error(`unexpected event order: ${event.type} before message_stop`);
			// A gateway's stream may carry no usage (or report it only at the end): nothing reported is
			// nothing counted, not an answer thrown away and paid for again.
			message = { ...event.message, usage: { ...event.message.usage }, content: [...event.message.content] };
			continue;
		}
		if (!message) continue;
		switch (event.type) {
			case "message_stop": {
				// The stop reason comes in message_delta: without one, nothing says the answer is whole (a
				// proxy may have dropped events), so it is a broken stream, tried again, not a final answer.
				if (message.stop_reason === null) throw new Error("the stream ended without a stop reason (no message_delta before message_stop)");
				for (const [index, json] of toolInput) {
					const block = message.content[index];
					if (!block || !hasToolInput(block)) continue;
					const { input, valid } = toolInputOf(json);
					block.input = input;
					if (!valid) (block as { [INVALID_INPUT]?: boolean })[INVALID_INPUT] = true;
				}
				return message;
			}
			case "message_delta": {
				message.stop_reason = event.delta.stop_reason;
				message.stop_sequence = event.delta.stop_sequence;
				const delta = event.delta as { stop_details?: unknown; container?: unknown };
				if ("stop_details" in delta) (message as { stop_details?: unknown }).stop_details = delta.stop_details;
				if (delta.container != null) (message as { container?: unknown }).container = delta.container;
				// Every count but output_tokens is a whole-message total sent only when it applies.
				const usage = message.usage as unknown as Record<string, unknown>;
				for (const [key, value] of Object.entries(event.usage ?? {})) {
					if (key === "output_tokens" || value != null) usage[key] = value;
				}
				continue;
			}
			case "content_block_start":
				message.content[event.index] = { ...event.content_block } as Block;
				continue;
			case "content_block_delta": {
				const block = message.content[event.index];
				if (!block) continue;
				const delta = event.delta;
				if (delta.type === "text_delta" && block.type === "text") block.text += delta.text;
				else if (delta.type === "citations_delta" && block.type === "text") block.citations = [...(block.citations ?? []), delta.citation];
				else if (delta.type === "input_json_delta" && hasToolInput(block)) toolInput.set(event.index, (toolInput.get(event.index) ?? "") + delta.partial_json);
				else if (delta.type === "thinking_delta" && block.type === "thinking") block.thinking += delta.thinking;
				else if (delta.type === "signature_delta" && block.type === "thinking") block.signature = delta.signature;
				continue;
			}
			default:
				continue;
		}
	}
	if (message) throw new Error("the stream ended before message_stop");
	// A 200 that is no event stream at all (a proxy's HTML page, a JSON body): said as what it was.
	const type = headers?.get("content-type")?.split(";")[0]?.trim().toLowerCase();
	// But a gateway that ignores stream: true answers with the whole message as JSON: it is the answer,
	// billed once; thrown away, it would be asked for (and billed) again, never counted.
	const whole = type === "application/json" || type?.endsWith("+json") ? wholeMessage(body) : null;
	if (whole) return whole;
	if (type && type !== "text/event-stream") throw new Error(`the answer was not an event stream but ${clipType(type)}, with no message in it`);
	throw new Error("the stream ended without a message");
}

/** A JSON body that is a whole Messages API answer (its content and its stop reason), else null. */
function wholeMessage(body: string): Message | null {
	let parsed: unknown;
	try {
		parsed = JSON.parse(body);
	} catch {
		return null;
	}
	const m = parsed as Partial<Message> | null;
	if (m === null || typeof m !== "object" || m.type !== "message" || m.role !== "assistant" || !Array.isArray(m.content) || typeof m.stop_reason !== "string") return null;
	// As a stream without usage: nothing reported is nothing counted.
	return { ...m, usage: { ...(typeof m.usage === "object" && m.usage !== null ? m.usage : {}) } } as Message;
}

/** A content type as said in an error: a header's value is the sender's, so only so much of it. */
const clipType = (type: string): string => (type.length > 64 ? `${type.slice(0, 64)}…` : type);

/**
 * The usage a stream had reported when it ended, whole or cut: message_start's counts with each
 * message_delta's over them, as the SDK's own stream holds them at that point. Null before
 * message_start (nothing said what was billed). Output tokens the model wrote after the last
 * report are not in it: the API reports them only in message_delta, at the end.
 */
export function usageFromSse(body: string): Anthropic.Usage | null {
	let usage: Record<string, unknown> | null = null;
	for (const sse of parseSse(body)) {
		if ((sse.event !== "message_start" && sse.event !== "message_delta") || !sse.data) continue;
		let event: StreamEvent;
		try {
			event = JSON.parse(sse.data) as StreamEvent;
		} catch {
			continue;
		}
		if (event.type === "message_start") usage = { ...event.message.usage };
		else if (event.type === "message_delta" && usage) {
			for (const [key, value] of Object.entries(event.usage ?? {})) if (key === "output_tokens" || value != null) usage[key] = value;
		}
	}
	return usage as Anthropic.Usage | null;
}
