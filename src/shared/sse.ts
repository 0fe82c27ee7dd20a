/**
 * Server-Sent Events, parsed once for the whole project: the CLI follows a job's stream with it, the
 * Worker folds a streamed Messages API answer with it (src/agent/streamed-message.ts), and the
 * dashboard's script gets this class's own source (src/dashboard/client/index.ts), so it must stay
 * self-contained: no imports, nothing from outside the class.
 */
export interface SseEvent {
	event: string;
	data: string;
	/** The `id:` field of this event, or null when it had none. */
	id: string | null;
}

/**
 * A Server-Sent Events parser (the WHATWG event-stream format): fed text chunks split anywhere,
 * calls `onEvent` once per dispatched event, and `onRetry` with each valid `retry:` (ms). Comments
 * are ignored.
 */
export class SseParser {
	readonly #onEvent: (event: SseEvent) => void;
	readonly #onRetry: ((ms: number) => void) | undefined;
	#buffer = "";
	#event = "";
	#data: string[] = [];
	#id: string | null = null;
	#afterCR = false;

	constructor(onEvent: (event: SseEvent) => void, onRetry?: (ms: number) => void) {
		this.#onEvent = onEvent;
		this.#onRetry = onRetry;
	}

	feed(chunk: string): void {
		if (chunk === "") return;
		// A CR ends a line at once; an LF right after it (even in the next chunk) belongs to it.
		if (this.#afterCR && chunk.startsWith("\n")) chunk = chunk.slice(1);
		this.#afterCR = false;
		this.#buffer += chunk;
		for (;;) {
			const m = /\r\n|\r|\n/.exec(this.#buffer);
			if (!m) return;
			const line = this.#buffer.slice(0, m.index);
			this.#buffer = this.#buffer.slice(m.index + m[0].length);
			if (m[0] === "\r" && this.#buffer === "") this.#afterCR = true;
			this.#line(line);
		}
	}

	#line(line: string): void {
		if (line === "") {
			if (this.#data.length > 0) this.#onEvent({ event: this.#event || "message", data: this.#data.join("\n"), id: this.#id });
			this.#event = "";
			this.#data = [];
			this.#id = null;
			return;
		}
		if (line.startsWith(":")) return;
		const colon = line.indexOf(":");
		const field = colon < 0 ? line : line.slice(0, colon);
		let value = colon < 0 ? "" : line.slice(colon + 1);
		if (value.startsWith(" ")) value = value.slice(1);
		if (field === "event") this.#event = value;
		else if (field === "data") this.#data.push(value);
		else if (field === "id" && !value.includes("\0")) this.#id = value;
		else if (field === "retry" && /^\d+$/.test(value)) this.#onRetry?.(Number(value));
	}
}
