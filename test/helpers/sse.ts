import { SseParser, type SseEvent } from "../../src/shared/sse.ts";

export type { SseEvent };

/** Reads Server-Sent Events from a response until `stop` says so or the stream ends. */
export async function readEvents(res: Response, stop: (e: SseEvent, all: SseEvent[]) => boolean = (e) => e.event === "end"): Promise<SseEvent[]> {
	const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
	const events: SseEvent[] = [];
	let stopped = false;
	const parser = new SseParser((e) => {
		if (stopped) return;
		events.push(e);
		stopped = stop(e, events);
	});
	while (!stopped) {
		const { value, done } = await reader.read();
		if (done) return events;
		parser.feed(value);
	}
	await reader.cancel();
	return events;
}

/** A stream read as its events come, so a test can wait for one and read on later. */
export function followEvents(res: Response) {
	const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
	const events: SseEvent[] = [];
	const parser = new SseParser((e) => events.push(e));
	return {
		events,
		/** Reads until `seen` holds (or the stream ends); whether it does. */
		async until(seen: (events: SseEvent[]) => boolean): Promise<boolean> {
			while (!seen(events)) {
				const { done, value } = await reader.read();
				if (done) return false;
				parser.feed(value);
			}
			return true;
		},
		/** Reads to the stream's end. */
		async rest(): Promise<void> {
			for (;;) {
				const { done, value } = await reader.read();
				if (done) return;
				parser.feed(value);
			}
		},
		cancel: () => reader.cancel(),
	};
}

/** A block of a streamed model answer, as `answerStream` writes it: each streamed in one delta. */
export type AnswerBlock = { thinking: string; signature: string } | { text: string } | { tool_use: { id: string; name: string; json: string } };

/**
 * A Messages API answer as the SSE text the API streams, for a model answer a test writes by hand
 * (a signature the emulator did not make, a blank text block, input that is not valid JSON).
 */
export function answerStream(blocks: readonly AnswerBlock[], stopReason = "tool_use", model = "claude-sonnet-5-5"): string {
	const events: { type: string; [key: string]: unknown }[] = [
		{ type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } },
	];
	blocks.forEach((block, index) => {
		if ("thinking" in block) {
			events.push({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } });
			events.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: block.thinking } });
			events.push({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } });
		} else if ("text" in block) {
			events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
			events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } });
		} else {
			events.push({ type: "content_block_start", index, content_block: { type: "tool_use", id: block.tool_use.id, name: block.tool_use.name, input: {} } });
			events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: block.tool_use.json } });
		}
		events.push({ type: "content_block_stop", index });
	});
	events.push({ type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 30 } }, { type: "message_stop" });
	return events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
}
