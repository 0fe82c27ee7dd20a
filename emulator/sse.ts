// Streaming: an answer as the API's server-sent events, and the faults a test scripts into them.
import type { ResponseMessage } from "./wire.ts";
import { chunks, wait } from "./text.ts";
import { errorBody } from "./errors.ts";

export const encoder = new TextEncoder();

export type SseEvent = { type: string; [key: string]: unknown };
export type StreamFault =
	| null
	| { kind: "drop"; after: number }
	| { kind: "malformed" }
	| { kind: "error"; after: number; body: ReturnType<typeof errorBody> };

/**
 * The event sequence the real API sends for a message. `cutInput`, when given, is the JSON the last
 * block (a tool_use cut at max_tokens) streams instead of its full input.
 */
export function streamEvents(message: ResponseMessage, cutInput?: string): SseEvent[] {
	const events: SseEvent[] = [
		{
			type: "message_start",
			message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...message.usage, output_tokens: 1 } },
		},
		{ type: "ping" },
	];
	message.content.forEach((block, index) => {
		if (block.type === "text") {
			events.push({ type: "content_block_start", index, content_block: { type: "text", text: "", citations: null } });
			for (const text of chunks(block.text, 16)) events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text } });
		} else if (block.type === "thinking") {
			events.push({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } });
			for (const thinking of chunks(block.thinking, 16)) events.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking } });
			events.push({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } });
		} else {
			events.push({ type: "content_block_start", index, content_block: { ...block, input: {} } });
			// The real API opens with an empty piece, then splits the JSON at arbitrary points.
			const json = cutInput !== undefined && index === message.content.length - 1 ? cutInput : JSON.stringify(block.input);
			const pieces = ["", ...chunks(json, Math.max(1, Math.ceil(json.length / 5)))];
			for (const partial_json of pieces) events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } });
		}
		events.push({ type: "content_block_stop", index });
	});
	events.push(
		{ type: "message_delta", delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: message.usage.output_tokens } },
		{ type: "message_stop" },
	);
	return events;
}

export function sseFrame(type: string, data: string): string {
	return `event: ${type}\ndata: ${data}\n\n`;
}

function frame(type: string, data: string): Uint8Array {
	return encoder.encode(sseFrame(type, data));
}

/**
 * One event per pull, so a fault lands after the consumer has read the events before it (erroring a
 * stream discards whatever is still queued in it).
 */
export function sseBody(events: SseEvent[], fault: StreamFault, delayMs: number, requestSignal: AbortSignal): ReadableStream<Uint8Array> {
	const cancelled = new AbortController();
	const signal = AbortSignal.any([requestSignal, cancelled.signal]);
	let sent = 0;
	let done = false;
	return new ReadableStream<Uint8Array>(
		{
			async pull(controller) {
				if (done) return;
				try {
					if (fault?.kind === "drop" && sent >= fault.after) {
						done = true;
						controller.error(new Error("emulated connection drop mid-stream"));
						return;
					}
					if (fault?.kind === "error" && sent >= fault.after) {
						done = true;
						controller.enqueue(frame("error", JSON.stringify(fault.body)));
						controller.close();
						return;
					}
					if (fault?.kind === "malformed" && sent === 2) {
						done = true;
						controller.enqueue(frame("content_block_start", '{"type":"content_block_start","index":0,"content_block":{"type":"text"'));
						controller.close();
						return;
					}
					const event = events[sent];
					if (!event) {
						done = true;
						controller.close();
						return;
					}
					// A slow model: the headers and message_start come, then a pause before the content.
					if (sent === 1 && delayMs > 0) await wait(delayMs, signal);
					controller.enqueue(frame(event.type, JSON.stringify(event)));
					sent++;
				} catch (error) {
					done = true;
					if (!cancelled.signal.aborted) controller.error(error);
				}
			},
			cancel(reason) {
				done = true;
				cancelled.abort(reason);
			},
		},
		{ highWaterMark: 0 },
	);
}

/** A JSON body that breaks halfway, as a connection reset would leave it. */
export function brokenBody(text: string): ReadableStream<Uint8Array> {
	let first = true;
	return new ReadableStream<Uint8Array>(
		{
			pull(controller) {
				if (first) {
					first = false;
					controller.enqueue(encoder.encode(text.slice(0, Math.floor(text.length / 2))));
				} else controller.error(new Error("emulated connection drop mid-body"));
			},
		},
		{ highWaterMark: 0 },
	);
}
