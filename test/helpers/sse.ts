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
