import { describe, expect, it } from "vitest";
import { SseParser, type SseEvent } from "../../src/shared/sse.ts";

// The one SSE parser: the CLI follows a job's stream with it, the Worker folds a Messages API
// answer with it, and the tests read drover's streams with it.
describe("SseParser", () => {
	it("yields the same events however the text is split, with LF, CRLF or CR line ends", () => {
		const text =
			": comment\nretry: 10\n\nid: 1\nevent: line\ndata: {\"a\":1}\n\n" +
			"id: 2\r\nevent: line\r\ndata: first\r\ndata: second\r\n\r\n" +
			"event: end\rdata:{\"status\":\"completed\"}\r\r";
		const expected: SseEvent[] = [
			{ id: "1", event: "line", data: '{"a":1}' },
			{ id: "2", event: "line", data: "first\nsecond" },
			{ id: null, event: "end", data: '{"status":"completed"}' },
		];
		for (let cut = 0; cut <= text.length; cut++) {
			for (const step of [1, 2, 7]) {
				const got: SseEvent[] = [];
				const parser = new SseParser((e) => got.push(e));
				parser.feed(text.slice(0, cut));
				for (let i = cut; i < text.length; i += step) parser.feed(text.slice(i, i + step));
				expect(got, `cut at ${cut}, step ${step}`).toEqual(expected);
			}
		}
	});

	it("hands each valid retry: to onRetry, and ignores one that is not all digits", () => {
		const retries: number[] = [];
		const parser = new SseParser(() => {}, (ms) => retries.push(ms));
		parser.feed("retry: 3000\n\nretry: soon\n\nretry: 2.5\n\nretry:500\n\n");
		expect(retries).toEqual([3000, 500]);
	});

	it("reads the stream's fields as the event-stream format says: a bare field name, an unnamed event, an id with NUL, an empty retry", () => {
		const got: SseEvent[] = [];
		const retries: number[] = [];
		const parser = new SseParser((e) => got.push(e), (ms) => retries.push(ms));
		// A field name alone is that field with an empty value; an event without `event:` is a "message".
		parser.feed("data\ndata: after\n\n");
		// An id holding NUL is ignored (the event has none); `retry:` with no digits is no retry.
		parser.feed("id: a\0b\ndata: x\nretry:\n\n");
		expect(got).toEqual([
			{ event: "message", data: "\nafter", id: null },
			{ event: "message", data: "x", id: null },
		]);
		expect(retries).toEqual([]);
	});

	it("gives each event its own name: one without `event:` is a message, whatever the event before it was called", () => {
		const got: SseEvent[] = [];
		const parser = new SseParser((e) => got.push(e));
		parser.feed("event: line\ndata: 1\n\ndata: 2\n\n");
		expect(got.map((e) => e.event)).toEqual(["line", "message"]);
	});

	it("takes an LF after a chunk's closing CR as that line's end, whatever empty chunks come between", () => {
		const got: SseEvent[] = [];
		const parser = new SseParser((e) => got.push(e));
		parser.feed("data: one\r");
		parser.feed("");
		parser.feed("\ndata: two\r\n\r\n");
		expect(got).toEqual([{ event: "message", data: "one\ntwo", id: null }]);
		// A CR inside a chunk leaves the next chunk's LF its own line: here the blank line that dispatches.
		parser.feed("data: a\rdata: b\r\n");
		parser.feed("\n");
		expect(got.at(-1)).toEqual({ event: "message", data: "a\nb", id: null });
	});
});
