/**
 * A local stand-in for the Anthropic Messages API that speaks its wire format, so the real SDK runs
 * unmodified against it. It serves the tests (inside workerd, behind the outbound guard), the
 * benchmarks and `npm start` without an API key. It is a test and demo peer: nothing in the Worker's
 * real code path imports it.
 *
 * Only web-standard APIs (Request, Response, ReadableStream, TextEncoder, AbortSignal, timers), so
 * the same class runs in workerd and in Node 22 (emulator/server.ts).
 *
 * The prefix check of the models with preserved thinking is made too: a thinking block sent back is
 * refused (400, the API's words) unless everything before it (system, tools, the messages and blocks
 * before it, cache_control aside) is as it was when the emulator signed it, itself included.
 *
 * What answers a request, first match wins (after the checks the real API makes: the key, the body,
 * and the model, a 404 for an id without "claude" in it):
 *   1. `modelErrors[model]`: a standing step for that model (not consumed), e.g. 529 on the primary
 *      so the fallback answers. Checked before the queue, so queued steps go to the model that answers.
 *   2. the queue of scripted steps (`enqueue`), one per request.
 *   3. the demo behaviour: call the first tool while the conversation has no tool_result yet, else a
 *      short final text quoting the last input. Deterministic except for ids.
 */

// ── Wire shapes (kept here rather than taken from the SDK: the emulator checks the SDK, not itself) ──

export interface WireCacheControl {
	type: "ephemeral";
	ttl?: "5m" | "1h";
}

export interface WireTextBlock {
	type: "text";
	text: string;
	cache_control?: WireCacheControl | null;
}

/** A request content block; only the types the emulator reads are spelled out. */
export type WireContentBlock =
	| WireTextBlock
	| { type: "tool_use"; id: string; name: string; input: unknown }
	| { type: "tool_result"; tool_use_id: string; content?: string | WireContentBlock[]; is_error?: boolean }
	| { type: string; [key: string]: unknown };

export interface WireMessage {
	role: "user" | "assistant" | "system";
	content: string | WireContentBlock[];
}

export interface WireTool {
	name: string;
	type?: string;
	description?: string;
	input_schema?: JsonSchema;
	cache_control?: WireCacheControl | null;
}

export interface JsonSchema {
	type?: string | string[];
	properties?: Record<string, JsonSchema>;
	required?: string[];
	enum?: unknown[];
	minimum?: number;
	items?: JsonSchema;
	format?: string;
	default?: unknown;
}

/** A response content block, as the API returns it. */
export type ResponseBlock =
	| { type: "thinking"; thinking: string; signature: string }
	| { type: "text"; text: string; citations: null }
	| { type: "tool_use"; id: string; name: string; input: unknown; caller: { type: "direct" } };

export type StopReason = "end_turn" | "tool_use" | "max_tokens" | ScriptedStopReason;

/** The stop reasons a `{ stop_reason }` step scripts; the others come from text, tool_use and max_tokens_stop steps. */
export type ScriptedStopReason = "refusal" | "model_context_window_exceeded" | "pause_turn";

const SCRIPTED_STOP_REASONS: readonly ScriptedStopReason[] = ["refusal", "model_context_window_exceeded", "pause_turn"];

export interface ResponseUsage {
	input_tokens: number;
	output_tokens: number;
	cache_creation_input_tokens: number;
	cache_read_input_tokens: number;
	cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
	service_tier: "standard";
}

export interface ResponseMessage {
	id: string;
	type: "message";
	role: "assistant";
	model: string;
	content: ResponseBlock[];
	stop_reason: StopReason;
	stop_sequence: null;
	usage: ResponseUsage;
}

export type ApiErrorType =
	| "invalid_request_error"
	| "authentication_error"
	| "permission_error"
	| "not_found_error"
	| "rate_limit_error"
	| "api_error"
	| "overloaded_error";

// ── Scripted steps ─────────────────────────────────────────────────────────────────────────────

export type EmulatorErrorStatus = 400 | 401 | 404 | 429 | 500 | 529;

/**
 * One scripted answer. Distinguished by which key is present (checked in this order): `max_tokens_stop`,
 * `tool_use`, `stop_reason`, `text`, `error`, `delay_ms`, `drop_after_events`, `malformed`, `hang`.
 * Like the real API, no answer carries an empty text block: an empty `text` means no text block.
 */
export type EmulatorStep =
	/**
	 * A final text answer (stop_reason end_turn, or max_tokens if it exceeds the request's max_tokens).
	 * `{ text: "" }` answers `content: []` with end_turn, as the real model sometimes does.
	 * `thinking` (here, on tool_use and on stop_reason steps) opens the answer with a thinking block
	 * signed over the request, as the models with preserved thinking sign theirs: see the prefix check.
	 */
	| { text: string; thinking?: string }
	/**
	 * A tool call, or several in one turn as the real model makes them (an array, in order), optionally
	 * preceded by a text block; stop_reason tool_use.
	 */
	| { tool_use: { name: string; input: unknown; id?: string } | { name: string; input: unknown; id?: string }[]; text?: string; thinking?: string }
	/**
	 * An API error with the real body and headers. 429 carries `retry-after` (default 1 second);
	 * `retry_after: null` sends none (a gateway's 429, or the spend cap's below). `error_code` puts
	 * `details: { error_code }` in the body's `error`, as the API names a cause beside the type:
	 * `{ error: 429, error_code: "enforced_spend_limit_reached" }` is the 429 an organisation gets once
	 * it reaches its tier's monthly spend cap, `rate_limit_error` with no `retry-after` (unless
	 * `retry_after` is given) and the API's message, saying access returns at 00:00 UTC on the 1st of
	 * next month (unless `message` is given). With `after_events` on a streaming request the HTTP
	 * answer is 200 and the error arrives as an SSE `error` event after that many events, as the real
	 * API reports overload mid-stream.
	 */
	| { error: EmulatorErrorStatus; retry_after?: number | null; message?: string; error_code?: string; after_events?: number }
	/** Waits before answering with `then` (default: the demo behaviour); a stream also waits after message_start. */
	| { delay_ms: number; then?: EmulatorStep }
	/** Streaming: sends this many events, then the connection breaks. Non-streaming: the body breaks halfway. */
	| { drop_after_events: number }
	/** Streaming: after message_start, an event whose data is not valid JSON. Non-streaming: a 200 with a broken JSON body. */
	| { malformed: true }
	/** Never answers; settles only when the request's signal aborts (or `reset()` releases it). */
	| { hang: true }
	/**
	 * An answer with one of the stop reasons a text or tool_use step cannot give, and one text block if
	 * `text` is non-empty (streamed like any text; the message_delta carries the stop_reason).
	 * `refusal`: the model declined (`text` is what it wrote before it stopped). `model_context_window_exceeded`:
	 * the context window filled before max_tokens. `pause_turn`: a long server-tool turn paused, to be
	 * resumed by sending the answer back as is.
	 */
	| { stop_reason: ScriptedStopReason; text?: string; thinking?: string }
	/**
	 * Cut short at max_tokens: stop_reason max_tokens. `text` is the text written before the cut (no
	 * text block if absent or empty). With `tool_use` the cut lands inside the tool call, after the
	 * text: a stream sends the tool_use block's start and input_json_delta pieces carrying only the
	 * first half of JSON.stringify(input) (rounded down, at least 1 character), then content_block_stop,
	 * message_delta (max_tokens) and message_stop, as the real API stops mid-input; a non-streaming
	 * answer has the tool_use block with `input: {}`.
	 */
	| { max_tokens_stop: true; text?: string; tool_use?: { name: string; input: unknown; id?: string } };

export interface EmulatorOptions {
	/** Require `x-api-key` or `authorization: Bearer` (default true, like the real API). */
	requireKey?: boolean;
	/** Keys answered with 401 authentication_error (a revoked key, for key-rotation tests). */
	rejectKeys?: readonly string[];
	/** Standing per-model steps, e.g. `{ "claude-sonnet-5-5": { error: 529 } }`. */
	modelErrors?: Record<string, EmulatorStep>;
}

export interface RecordedRequest {
	method: string;
	path: string;
	/** null when the body was not valid JSON or lacked the field. */
	model: string | null;
	system: string | WireTextBlock[] | null;
	messages: WireMessage[] | null;
	tools: WireTool[] | null;
	max_tokens: number | null;
	stream: boolean;
	/** The key sent (x-api-key, else the bearer token), or null. */
	apiKey: string | null;
	/** Every request header, lower-cased names. */
	headers: Record<string, string>;
}

/** Thrown into waits when `reset()` releases in-flight requests. */
class Released extends Error {
	constructor() {
		super("released by emulator reset");
		this.name = "Released";
	}
}

const ERROR_TYPES: Record<EmulatorErrorStatus, ApiErrorType> = {
	400: "invalid_request_error",
	401: "authentication_error",
	404: "not_found_error",
	429: "rate_limit_error",
	500: "api_error",
	529: "overloaded_error",
};

const ERROR_MESSAGES: Record<EmulatorErrorStatus, string> = {
	400: "Invalid request (emulated)",
	401: "invalid x-api-key",
	404: "model: not found (emulated)",
	429: "Number of request tokens has exceeded your per-minute rate limit (emulated)",
	500: "Internal server error",
	529: "Overloaded",
};

const encoder = new TextEncoder();

export class MessagesEmulator {
	/** Every request that reached the messages endpoint, in order, parsed as far as it would parse. */
	readonly requests: RecordedRequest[] = [];
	/** Standing per-model steps; see the class comment for precedence. */
	modelErrors: Record<string, EmulatorStep>;

	readonly #requireKey: boolean;
	readonly #rejectKeys: Set<string>;
	readonly #initialModelErrors: Record<string, EmulatorStep>;
	#queue: Step[] = [];
	/** Cache prefixes already written, so the first use is a creation and later ones are reads. */
	#cached = new Set<string>();
	/** The text of each answer this emulator paused (pause_turn): a request may end on one, to continue it. */
	#paused = new Set<string>();
	#release = new AbortController();

	constructor(options: EmulatorOptions = {}) {
		this.#requireKey = options.requireKey ?? true;
		this.#rejectKeys = new Set(options.rejectKeys ?? []);
		for (const [model, step] of Object.entries(options.modelErrors ?? {})) toStep(step, `modelErrors.${model}`);
		this.#initialModelErrors = { ...options.modelErrors };
		this.modelErrors = { ...this.#initialModelErrors };
	}

	/** Appends scripted steps; each request consumes one. Throws TypeError on a malformed step. */
	enqueue(...steps: EmulatorStep[]): void {
		// Validated as a whole first, so a bad step queues none of them.
		const tagged = steps.map((step, i) => toStep(step, `steps[${i}]`));
		this.#queue.push(...tagged);
	}

	/** Steps still queued. */
	get queued(): number {
		return this.#queue.length;
	}

	/**
	 * Forgets the queue, recorded requests and cache state, restores the constructor's model errors,
	 * and releases requests still waiting (hang, delay) with a 500, so nothing outlives a test.
	 */
	reset(): void {
		this.#queue = [];
		this.requests.length = 0;
		this.#cached.clear();
		this.modelErrors = { ...this.#initialModelErrors };
		this.#release.abort(new Released());
		this.#release = new AbortController();
	}

	async handle(request: Request): Promise<Response> {
		const url = new URL(request.url);
		// A base URL may carry a path prefix (a gateway), so routes match on their suffix.
		const path = url.pathname.replace(/\/+$/, "");
		if (path.endsWith("/__emulator/script") && request.method === "POST") return this.#controlScript(request);
		if (path.endsWith("/__emulator/model_errors") && request.method === "POST") return this.#controlModelErrors(request);
		if (path.endsWith("/__emulator/reset") && request.method === "POST") {
			this.reset();
			return json(200, { ok: true });
		}
		if (path.endsWith("/__emulator/requests") && request.method === "GET") return json(200, this.requests);
		if (path.endsWith("/v1/messages")) {
			if (request.method !== "POST") return apiError(405, "invalid_request_error", `Method ${request.method} not allowed; use POST`);
			return this.#messages(request, url.pathname);
		}
		return apiError(404, "not_found_error", `Not found: ${url.pathname}`);
	}

	// ── Control routes (the Node server and benchmarks script the emulator over HTTP) ─────────

	async #controlScript(request: Request): Promise<Response> {
		let body: unknown;
		try {
			body = await request.json();
		} catch {
			return apiError(400, "invalid_request_error", "body must be a JSON array of steps");
		}
		const steps = Array.isArray(body) ? body : [body];
		try {
			this.enqueue(...(steps as EmulatorStep[]));
		} catch (error) {
			return apiError(400, "invalid_request_error", (error as Error).message);
		}
		return json(200, { queued: this.#queue.length });
	}

	async #controlModelErrors(request: Request): Promise<Response> {
		let body: unknown;
		try {
			body = await request.json();
		} catch {
			return apiError(400, "invalid_request_error", 'body must be a JSON object { "<model>": step | null }');
		}
		if (!isObject(body)) return apiError(400, "invalid_request_error", 'body must be a JSON object { "<model>": step | null }');
		try {
			// All validated before any is applied, so a bad entry changes nothing.
			for (const [model, step] of Object.entries(body)) if (step !== null) toStep(step, model);
		} catch (error) {
			return apiError(400, "invalid_request_error", (error as Error).message);
		}
		for (const [model, step] of Object.entries(body)) {
			if (step === null) delete this.modelErrors[model];
			else this.modelErrors[model] = step as EmulatorStep;
		}
		return json(200, { model_errors: this.modelErrors });
	}

	// ── POST /v1/messages ────────────────────────────────────────────────────────────────────

	async #messages(request: Request, path: string): Promise<Response> {
		const headers: Record<string, string> = {};
		request.headers.forEach((value, name) => {
			headers[name.toLowerCase()] = value;
		});
		const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.get("authorization") ?? "")?.[1]?.trim();
		const apiKey = request.headers.get("x-api-key") ?? bearer ?? null;

		let body: unknown = null;
		let parseFailed = false;
		let surrogate: string | null = null;
		try {
			body = JSON.parse(await request.text());
			surrogate = loneSurrogateProblem(body);
		} catch {
			parseFailed = true;
		}
		const b = isObject(body) ? body : {};
		this.requests.push({
			method: request.method,
			path,
			model: typeof b.model === "string" ? b.model : null,
			system: typeof b.system === "string" || Array.isArray(b.system) ? (b.system as string | WireTextBlock[]) : null,
			messages: Array.isArray(b.messages) ? (b.messages as WireMessage[]) : null,
			tools: Array.isArray(b.tools) ? (b.tools as WireTool[]) : null,
			max_tokens: typeof b.max_tokens === "number" ? b.max_tokens : null,
			stream: b.stream === true,
			apiKey,
			headers,
		});

		// Authentication comes before validation, as on the real API.
		if (apiKey === null && this.#requireKey) return apiError(401, "authentication_error", "x-api-key header is required");
		if (apiKey !== null && this.#rejectKeys.has(apiKey)) return apiError(401, "authentication_error", "invalid x-api-key");
		if (surrogate !== null) return apiError(400, "invalid_request_error", `The request body is not valid JSON: ${surrogate}`);
		if (parseFailed || !isObject(body)) return apiError(400, "invalid_request_error", "The request body is not valid JSON.");
		const problem = validate(body, (content) => this.#paused.has(textOf(content)));
		if (problem) return apiError(400, "invalid_request_error", problem);
		const req = body as unknown as ValidRequest;
		const unbound = unboundThinking(req);
		if (unbound) return apiError(400, "invalid_request_error", unbound);
		// The real API answers a model it does not serve with a 404 naming it. Which ids exist is the
		// API's to know; every Claude id, in Anthropic's, Bedrock's or Vertex's spelling, says "claude".
		if (!/claude/i.test(req.model)) return apiError(404, "not_found_error", `model: ${req.model}`);

		const standing = Object.hasOwn(this.modelErrors, req.model) ? this.modelErrors[req.model] : undefined;
		let step: Step | null;
		try {
			step = standing ? toStep(standing, `modelErrors.${req.model}`) : (this.#queue.shift() ?? null);
		} catch (error) {
			// Only reachable when modelErrors was assigned directly with a bad step.
			return apiError(500, "api_error", `emulator misconfigured: ${(error as Error).message}`);
		}
		const signal = AbortSignal.any([request.signal, this.#release.signal]);
		try {
			return await this.#answer(step, req, signal, 0);
		} catch (error) {
			if (error instanceof Released) return apiError(500, "api_error", "request released by emulator reset");
			// Aborted by the caller: reject as fetch would, so the SDK reports its own abort.
			throw error;
		}
	}

	async #answer(step: Step | null, req: ValidRequest, signal: AbortSignal, streamDelayMs: number): Promise<Response> {
		if (step?.kind === "delay") {
			await wait(step.ms, signal);
			return this.#answer(step.then, req, signal, step.ms);
		}
		if (step?.kind === "hang") await wait(Number.POSITIVE_INFINITY, signal);
		if (step?.kind === "error" && !(req.stream && step.afterEvents !== undefined)) {
			const extra: Record<string, string> = {};
			if (step.retryAfter !== undefined) {
				if (step.retryAfter !== null) extra["retry-after"] = String(step.retryAfter);
			} else if (step.status === 429 && step.errorCode !== SPEND_LIMIT_CODE) extra["retry-after"] = "1";
			return apiError(step.status, ERROR_TYPES[step.status], errorMessage(step), extra, step.errorCode);
		}

		const { content, stopReason, cutInput } = compose(step, req);
		const message: ResponseMessage = {
			id: newId("msg_01", 22),
			type: "message",
			role: "assistant",
			model: req.model,
			content,
			stop_reason: stopReason,
			stop_sequence: null,
			usage: this.#usage(req, content, cutInput),
		};
		if (stopReason === "pause_turn") this.#paused.add(textOf(content));
		const requestId = newId("req_011C", 20);

		if (!req.stream) {
			const text = JSON.stringify(message);
			if (step?.kind === "malformed") return new Response(text.slice(0, 40), { status: 200, headers: jsonHeaders(requestId) });
			if (step?.kind === "drop") return new Response(brokenBody(text), { status: 200, headers: jsonHeaders(requestId) });
			return new Response(text, { status: 200, headers: jsonHeaders(requestId) });
		}

		let fault: StreamFault = null;
		if (step?.kind === "drop") fault = { kind: "drop", after: step.after };
		else if (step?.kind === "malformed") fault = { kind: "malformed" };
		else if (step?.kind === "error" && step.afterEvents !== undefined) {
			fault = { kind: "error", after: step.afterEvents, body: errorBody(ERROR_TYPES[step.status], errorMessage(step), requestId, step.errorCode) };
		}
		const headers: Record<string, string> = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "request-id": requestId };
		if (fault === null && streamDelayMs === 0) {
			// A model with no latency has every event at once: one body, sized, so a server can send it in
			// one write. Event by event, each would be a read and a parser wake-up in the client, a cost
			// of the emulator that the benchmarks would count as drover's.
			const body = encoder.encode(streamEvents(message, cutInput).map((e) => sseFrame(e.type, JSON.stringify(e))).join(""));
			return new Response(body, { status: 200, headers: { ...headers, "content-length": String(body.byteLength) } });
		}
		return new Response(sseBody(streamEvents(message, cutInput), fault, streamDelayMs, signal), { status: 200, headers });
	}

	#usage(req: ValidRequest, content: ResponseBlock[], cutInput?: string): ResponseUsage {
		const tools = req.tools ?? [];
		const toolChars = tools.reduce((n, t) => n + JSON.stringify({ name: t.name, description: t.description, input_schema: t.input_schema }).length, 0);
		const system = typeof req.system === "string" ? [{ type: "text" as const, text: req.system }] : (req.system ?? []);
		const systemChars = system.map((b) => b.text.length);
		const messageChars = req.messages.reduce((n, m) => n + textOf(m.content).length, 0);

		// The cached prefix follows the API's order (tools, then system, then the messages' blocks) up
		// to the last breakpoint. A read is the longest prefix already written that ends at a block
		// boundary up to 20 blocks before a breakpoint (the API looks that far back for a hit); what
		// lies between it and the last breakpoint is written, and each breakpoint's prefix is kept.
		const boundaries = cacheBoundaries(req, toolChars);
		const breakpoints = boundaries.flatMap((b, i) => (b.ttl ? [i] : []));
		const lastBreakpoint = breakpoints.at(-1);
		let prefixChars = 0;
		let creation = 0;
		let read = 0;
		let ttl: "5m" | "1h" = "5m";
		if (lastBreakpoint !== undefined) {
			const end = boundaries[lastBreakpoint]!;
			prefixChars = end.chars;
			ttl = end.ttl ?? "5m";
			let hit: (typeof boundaries)[number] | undefined;
			for (let i = lastBreakpoint; i >= 0 && !hit; i--) {
				const near = breakpoints.some((b) => b >= i && b - i <= CACHE_LOOKBACK_BLOCKS);
				if (near && this.#cached.has(boundaries[i]!.key)) hit = boundaries[i];
			}
			const tokens = Math.ceil(prefixChars / 4);
			read = hit ? Math.min(tokens, Math.ceil(hit.chars / 4)) : 0;
			creation = tokens - read;
			for (const b of breakpoints) this.#cached.add(boundaries[b]!.key);
		}
		const totalChars = toolChars + systemChars.reduce((a, n) => a + n, 0) + messageChars;
		// A tool input cut at max_tokens counts what was written before the cut.
		const generated = content.reduce((n, b, i) => {
			if (b.type === "text") return n + b.text.length;
			if (b.type === "thinking") return n + b.thinking.length;
			return n + (cutInput !== undefined && i === content.length - 1 ? cutInput : JSON.stringify(b.input)).length;
		}, 0);
		return {
			input_tokens: Math.ceil((totalChars - prefixChars) / 4),
			output_tokens: Math.max(1, Math.ceil(generated / 4)),
			cache_creation_input_tokens: creation,
			cache_read_input_tokens: read,
			cache_creation: { ephemeral_5m_input_tokens: ttl === "5m" ? creation : 0, ephemeral_1h_input_tokens: ttl === "1h" ? creation : 0 },
			service_tier: "standard",
		};
	}
}

/** Block boundaries the API looks back through for a cache hit, before a breakpoint. */
const CACHE_LOOKBACK_BLOCKS = 20;

/** FNV-1a, 32 bits: a rolling key for a prompt prefix (the emulator's cache is a test peer's, not a security boundary). */
function fnv(text: string, seed = 0x811c9dc5): number {
	let h = seed;
	for (let i = 0; i < text.length; i++) {
		h ^= text.charCodeAt(i);
		h = Math.imul(h, 0x01000193) >>> 0;
	}
	return h;
}

/**
 * Each block boundary of a request in the API's order (system blocks, then every message's blocks;
 * a string content is one block): the characters before it as the usage counts them, a key naming
 * the prefix up to it (cache_control left out: a block marked once and not again is the same
 * content), and the ttl of a breakpoint there.
 */
function cacheBoundaries(req: ValidRequest, toolChars: number): { chars: number; key: string; ttl: "5m" | "1h" | null }[] {
	const out: { chars: number; key: string; ttl: "5m" | "1h" | null }[] = [];
	let chars = toolChars;
	let a = fnv(JSON.stringify([req.model, req.tools ?? []]));
	let b = fnv(JSON.stringify([req.tools ?? [], req.model]), 0x01234567);
	const add = (content: unknown, size: number, mark: WireCacheControl | null | undefined) => {
		const { cache_control: _, ...rest } = (typeof content === "object" && content !== null ? content : { text: content }) as Record<string, unknown>;
		const text = JSON.stringify(rest);
		a = fnv(text, a);
		b = fnv(text, b);
		chars += size;
		out.push({ chars, key: `${a.toString(16)}:${b.toString(16)}:${chars}`, ttl: mark ? (mark.ttl ?? "5m") : null });
	};
	const system = typeof req.system === "string" ? [{ type: "text" as const, text: req.system }] : (req.system ?? []);
	for (const block of system) add(block, block.text.length, block.cache_control);
	for (const message of req.messages) {
		const blocks = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
		// textOf joins a message's blocks with a newline: counted with the block after it.
		blocks.forEach((block, i) => add({ role: message.role, ...block }, textOf([block as WireContentBlock]).length + (i > 0 ? 1 : 0), (block as { cache_control?: WireCacheControl | null }).cache_control));
	}
	return out;
}

// ── Thinking signatures (the prefix check) ─────────────────────────────────────────────────────

/**
 * A rolling hash over a request's prefix in the API's order: system, tools, then each message's role
 * and blocks. A block counts by what it says, not how it is written: cache_control aside, a string
 * content as its one text block, a tool_result's string content as a text block.
 */
class Prefix {
	#a = 0x811c9dc5;
	#b = 0x01234567;

	add(piece: unknown): void {
		const text = JSON.stringify(piece);
		this.#a = fnv(text, this.#a);
		this.#b = fnv(text, this.#b);
	}

	/** The signature of a thinking block saying `thinking` here (the state is not moved). */
	sign(thinking: string): string {
		return `emulated_sig_${fnv(thinking, this.#a).toString(16)}${fnv(thinking, this.#b).toString(16)}`;
	}

	static of(req: ValidRequest): Prefix {
		const p = new Prefix();
		p.add(blocksOf(req.system ?? []).map(canonical));
		p.add((req.tools ?? []).map(({ cache_control: _, ...tool }) => tool));
		return p;
	}
}

const blocksOf = (content: string | WireContentBlock[]): WireContentBlock[] => (typeof content === "string" ? [{ type: "text", text: content }] : content);

function canonical(block: WireContentBlock): unknown {
	const { cache_control: _, ...rest } = block as Record<string, unknown>;
	if (rest.type === "text") return ["text", rest.text];
	if (rest.type === "tool_use") return ["tool_use", rest.id, rest.name, rest.input];
	if (rest.type === "tool_result") return ["tool_result", rest.tool_use_id, rest.content === undefined ? [] : blocksOf(rest.content as string | WireContentBlock[]).map(canonical), rest.is_error === true];
	if (rest.type === "thinking") return ["thinking", rest.thinking, rest.signature];
	return rest;
}

/** The signature of a new answer's thinking block: over the whole request (a paused turn it continues included). */
function signNew(req: ValidRequest, thinking: string): string {
	const p = Prefix.of(req);
	const last = req.messages.at(-1);
	const continued = last?.role === "assistant" ? last : null;
	for (const m of continued ? req.messages.slice(0, -1) : req.messages) {
		p.add(["role", m.role]);
		for (const block of blocksOf(m.content)) p.add(canonical(block));
	}
	p.add(["role", "assistant"]);
	for (const block of continued ? blocksOf(continued.content) : []) p.add(canonical(block));
	return p.sign(thinking);
}

/**
 * The API's refusal of a request sending back a thinking block that fails the prefix check, or null.
 * (The real API refuses this on accounts made since 2026-08-31 unless asked to drop such blocks.)
 */
function unboundThinking(req: ValidRequest): string | null {
	const p = Prefix.of(req);
	for (const [i, m] of req.messages.entries()) {
		p.add(["role", m.role]);
		for (const [j, block] of blocksOf(m.content).entries()) {
			if (block.type === "thinking") {
				const { thinking, signature } = block as { thinking?: unknown; signature?: unknown };
				if (typeof thinking !== "string" || signature !== p.sign(thinking)) {
					return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block. The block is bound to a different conversation. Remove the block, or set \`thinking.block_binding.prefix_mismatch_behavior\` to "drop_block".`;
				}
			}
			p.add(canonical(block));
		}
	}
	return null;
}

// ── Validation (the cheap checks the real API makes, with its message style) ─────────────────

interface ValidRequest {
	model: string;
	max_tokens: number;
	messages: WireMessage[];
	system?: string | WireTextBlock[];
	tools?: WireTool[];
	stream?: boolean;
}

/** `continues`: whether a final assistant turn is a paused answer sent back to continue it (allowed). */
function validate(body: Record<string, unknown>, continues: (content: WireMessage["content"]) => boolean = () => false): string | null {
	if (typeof body.model !== "string" || body.model === "") return "model: Field required";
	if (body.max_tokens === undefined) return "max_tokens: Field required";
	if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) return "max_tokens: Input should be a positive integer";
	if (body.messages === undefined) return "messages: Field required";
	if (!Array.isArray(body.messages)) return "messages: Input should be a valid list";
	if (body.messages.length === 0) return "messages: at least one message is required";
	if (body.system !== undefined) {
		if (typeof body.system !== "string") {
			if (!Array.isArray(body.system)) return "system: Input should be a valid string or list";
			for (const [i, block] of body.system.entries()) {
				if (!isObject(block) || block.type !== "text" || typeof block.text !== "string") return `system.${i}: Input should be a text block`;
			}
			const blank = blankText(body.system as Record<string, unknown>[]);
			if (blank) return `system: ${blank}`;
		}
	}
	if (body.tools !== undefined) {
		if (!Array.isArray(body.tools)) return "tools: Input should be a valid list";
		for (const [i, tool] of body.tools.entries()) {
			if (!isObject(tool) || typeof tool.name !== "string") return `tools.${i}.name: Field required`;
			const custom = tool.type === undefined || tool.type === "custom";
			if (custom && !isObject(tool.input_schema)) return `tools.${i}.custom.input_schema: Field required`;
		}
	}
	if (body.stream !== undefined && typeof body.stream !== "boolean") return "stream: Input should be a valid boolean";

	const messages = body.messages as unknown[];
	// The last user/assistant turn: the only one allowed empty content (as a prefill, refused below).
	const final = messages.findLastIndex((m) => isObject(m) && m.role !== "system");
	let previousRole: string | null = null;
	for (const [i, message] of messages.entries()) {
		if (!isObject(message)) return `messages.${i}: Input should be a valid dictionary`;
		const role = message.role;
		if (role !== "user" && role !== "assistant" && role !== "system") return `messages.${i}.role: Input should be 'user' or 'assistant'`;
		const content = message.content;
		if (typeof content !== "string" && !Array.isArray(content)) return `messages.${i}.content: Input should be a valid string or list`;
		if (Array.isArray(content)) {
			for (const [j, block] of content.entries()) {
				if (!isObject(block) || typeof block.type !== "string") return `messages.${i}.content.${j}.type: Field required`;
			}
		}
		if (content.length === 0 && !(i === final && role === "assistant")) {
			return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
		}
		// System-role turns sit outside the user/assistant alternation.
		if (role !== "system") {
			if (previousRole === null && role !== "user") return 'messages: first message must use the "user" role';
			if (previousRole === role) {
				return `messages: roles must alternate between "user" and "assistant", but found multiple "${role}" roles in a row`;
			}
		}
		const blocks = Array.isArray(content) ? (content as Record<string, unknown>[]) : [];
		const blank = blankText(typeof content === "string" ? [{ type: "text", text: content }] : blocks);
		if (blank) return `messages: ${blank}`;

		// tool_use ↔ tool_result pairing is strictly between neighbours: the previous message's
		// tool_use blocks are answered here, in a user turn, or nowhere.
		const before = i > 0 ? messages[i - 1] : undefined;
		const useIds = isObject(before) && before.role === "assistant" && Array.isArray(before.content) ? toolUseIds(before.content) : [];
		const resultIds = role === "user" ? blocks.filter((bl) => bl.type === "tool_result").map((bl) => String(bl.tool_use_id)) : [];
		const unexpected = resultIds.filter((id) => !useIds.includes(id));
		if (unexpected.length > 0) {
			const at = blocks.findIndex((bl) => bl.type === "tool_result" && unexpected.includes(String(bl.tool_use_id)));
			return `messages.${i}.content.${at}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${unexpected.join(", ")}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
		}
		// After the final assistant turn only system turns follow; the prefill refusal below names that.
		const missing = i - 1 === final ? [] : useIds.filter((id) => !resultIds.includes(id));
		if (missing.length > 0) {
			return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
		}

		if (role !== "system") previousRole = role;
	}
	const last = messages[final];
	// A turn paused by a long server tool (pause_turn) is continued by sending it back as it was.
	if (isObject(last) && last.role === "assistant" && !continues(last.content as WireMessage["content"])) {
		return "This model does not support assistant message prefill. The conversation must end with a user message.";
	}
	return null;
}

/** The ids of a turn's tool_use blocks. */
function toolUseIds(blocks: unknown[]): string[] {
	return blocks.filter((bl) => isObject(bl) && bl.type === "tool_use").map((bl) => String((bl as Record<string, unknown>).id));
}

/**
 * Why a list of blocks has an unusable text block (the API's wording, after the `messages: ` or
 * `system: ` prefix), or null. Text blocks nested in a tool_result's content count too.
 */
function blankText(blocks: Record<string, unknown>[]): string | null {
	for (const block of blocks) {
		if (block.type === "text" && typeof block.text === "string") {
			if (block.text === "") return "text content blocks must be non-empty";
			if (block.text.trim() === "") return "text content blocks must contain non-whitespace text";
		}
		if (block.type === "tool_result" && Array.isArray(block.content)) {
			const nested = blankText(block.content.filter(isObject));
			if (nested) return nested;
		}
	}
	return null;
}

/** A step tagged by its kind, so the code that plays it needs no key-presence checks. */
type Step =
	| { kind: "text"; text: string; thinking: string | undefined }
	| { kind: "tool_use"; calls: { name: string; input: unknown; id: string | undefined }[]; text: string | undefined; thinking: string | undefined }
	| { kind: "error"; status: EmulatorErrorStatus; retryAfter: number | null | undefined; message: string | undefined; errorCode: string | undefined; afterEvents: number | undefined }
	| { kind: "delay"; ms: number; then: Step | null }
	| { kind: "drop"; after: number }
	| { kind: "malformed" }
	| { kind: "hang" }
	| { kind: "stop_reason"; stopReason: ScriptedStopReason; text: string | undefined; thinking: string | undefined }
	| { kind: "max_tokens_stop"; text: string | undefined; toolUse: { name: string; input: unknown; id: string | undefined } | undefined };

/** Validates a step (it may come over HTTP as JSON) and tags it; throws TypeError naming the bad field. */
function toStep(value: unknown, at: string): Step {
	const bad = (why: string): never => {
		throw new TypeError(`${at}: ${why}`);
	};
	const count = (v: unknown, what: string): number => (Number.isInteger(v) && (v as number) >= 0 ? (v as number) : bad(`${what} must be an integer ≥ 0`));
	if (!isObject(value)) return bad("a step must be an object");
	const toolUse = (t: unknown): { name: string; input: unknown; id: string | undefined } => {
		if (!isObject(t) || typeof t.name !== "string" || t.name === "") return bad("tool_use needs a name");
		if (t.id !== undefined && typeof t.id !== "string") bad("tool_use.id must be a string");
		return { name: t.name, input: t.input ?? {}, id: t.id as string | undefined };
	};
	const optionalText = (): string | undefined => {
		if (value.text !== undefined && typeof value.text !== "string") bad("text must be a string");
		return value.text as string | undefined;
	};
	const thinking = (): string | undefined => {
		// "" is a thinking block whose text is omitted (the 5.5 models' default display), signed all the same.
		if (value.thinking !== undefined && typeof value.thinking !== "string") bad("thinking must be a string");
		return value.thinking as string | undefined;
	};
	if ("max_tokens_stop" in value) {
		if (value.max_tokens_stop !== true) bad("max_tokens_stop must be true");
		const text = optionalText();
		return { kind: "max_tokens_stop", text, toolUse: value.tool_use === undefined ? undefined : toolUse(value.tool_use) };
	}
	if ("tool_use" in value) {
		const given = value.tool_use;
		if (Array.isArray(given) && given.length === 0) bad("tool_use needs at least one call");
		const calls = Array.isArray(given) ? given.map(toolUse) : [toolUse(given)];
		return { kind: "tool_use", calls, text: optionalText(), thinking: thinking() };
	}
	if ("stop_reason" in value) {
		const reason = value.stop_reason;
		if (!SCRIPTED_STOP_REASONS.includes(reason as ScriptedStopReason)) {
			bad(`stop_reason must be one of ${SCRIPTED_STOP_REASONS.join(", ")} (end_turn, tool_use and max_tokens come from text, tool_use and max_tokens_stop steps)`);
		}
		return { kind: "stop_reason", stopReason: reason as ScriptedStopReason, text: optionalText(), thinking: thinking() };
	}
	if ("text" in value) {
		if (typeof value.text !== "string") bad("text must be a string");
		return { kind: "text", text: value.text as string, thinking: thinking() };
	}
	if ("error" in value) {
		const status = value.error;
		if (!(status === 400 || status === 401 || status === 404 || status === 429 || status === 500 || status === 529)) return bad("error must be one of 400, 401, 404, 429, 500, 529");
		if (value.retry_after !== undefined && value.retry_after !== null && !(typeof value.retry_after === "number" && value.retry_after >= 0)) bad("retry_after must be seconds ≥ 0, or null for none");
		if (value.message !== undefined && typeof value.message !== "string") bad("message must be a string");
		if (value.error_code !== undefined && !(typeof value.error_code === "string" && value.error_code !== "")) bad("error_code must be a non-empty string");
		return {
			kind: "error",
			status,
			retryAfter: value.retry_after as number | null | undefined,
			message: value.message as string | undefined,
			errorCode: value.error_code as string | undefined,
			afterEvents: value.after_events === undefined ? undefined : count(value.after_events, "after_events"),
		};
	}
	if ("delay_ms" in value) {
		if (!(typeof value.delay_ms === "number" && value.delay_ms >= 0)) bad("delay_ms must be a number ≥ 0");
		return { kind: "delay", ms: value.delay_ms as number, then: value.then === undefined ? null : toStep(value.then, `${at}.then`) };
	}
	if ("drop_after_events" in value) return { kind: "drop", after: count(value.drop_after_events, "drop_after_events") };
	if ("malformed" in value) return value.malformed === true ? { kind: "malformed" } : bad("malformed must be true");
	if ("hang" in value) return value.hang === true ? { kind: "hang" } : bad("hang must be true");
	return bad("unknown step; expected one of text, tool_use, stop_reason, max_tokens_stop, error, delay_ms, drop_after_events, malformed, hang");
}

/** An answer's content and stop reason; `cutInput` is the JSON a stream sends for a tool_use block cut at max_tokens. */
interface Composed {
	content: ResponseBlock[];
	stopReason: StopReason;
	cutInput?: string;
}

/** The content of the answer: the scripted step's, or the demo behaviour's; a thinking block first if it scripts one. */
function compose(step: Step | null, req: ValidRequest): Composed {
	const thinking = step?.kind === "text" || step?.kind === "tool_use" || step?.kind === "stop_reason" ? step.thinking : undefined;
	if (thinking === undefined) return composeAnswer(step, req);
	// Thinking counts against max_tokens (about 4 characters a token), as the real API counts it: what
	// it leaves is the answer's, and thinking that takes it all ends the answer there, cut.
	const spent = Math.ceil([...thinking].length / 4);
	const left = req.max_tokens - spent;
	if (left <= 0) {
		const cut = [...thinking].slice(0, req.max_tokens * 4).join("");
		return { content: [{ type: "thinking", thinking: cut, signature: signNew(req, cut) }], stopReason: "max_tokens" };
	}
	const composed = composeAnswer(step, { ...req, max_tokens: left });
	composed.content.unshift({ type: "thinking", thinking, signature: signNew(req, thinking) });
	return composed;
}

function composeAnswer(step: Step | null, req: ValidRequest): Composed {
	switch (step?.kind) {
		case "tool_use": {
			const content: ResponseBlock[] = [];
			if (step.text) content.push(textBlock(step.text));
			for (const call of step.calls) content.push(toolUseBlock(call.name, call.input, call.id));
			return { content, stopReason: "tool_use" };
		}
		case "stop_reason":
			return { content: step.text ? [textBlock(step.text)] : [], stopReason: step.stopReason };
		case "max_tokens_stop": {
			const content: ResponseBlock[] = step.text ? [textBlock(step.text)] : [];
			if (!step.toolUse) return { content, stopReason: "max_tokens" };
			// The input never finished, so a non-streaming answer has none; a stream shows the half that was written.
			content.push(toolUseBlock(step.toolUse.name, {}, step.toolUse.id));
			const points = [...JSON.stringify(step.toolUse.input)];
			const cutInput = points.slice(0, Math.max(1, Math.floor(points.length / 2))).join("");
			return { content, stopReason: "max_tokens", cutInput };
		}
		case "text":
			return finalText(step.text, req.max_tokens);
		default:
			// Faults (drop, malformed, a mid-stream error) break the demo answer partway.
			return demo(req);
	}
}

// ── Demo behaviour ─────────────────────────────────────────────────────────────────────────────

function demo(req: ValidRequest): Composed {
	const tool = (req.tools ?? []).find((t) => isObject(t.input_schema));
	const hasResult = req.messages.some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === "tool_result"));
	if (tool && !hasResult) {
		return { content: [toolUseBlock(tool.name, demoInput(tool))], stopReason: "tool_use" };
	}
	// Cut between characters: half an emoji would be a lone surrogate in the reply, which a caller then stores or sends on.
	const quote = headOf(lastInput(req.messages), 200);
	return finalText(`Emulated reply from the local Messages API emulator (no model was called). Last input: "${quote}"`, req.max_tokens);
}

function demoInput(tool: WireTool): Record<string, unknown> {
	if (tool.name === "http_fetch") {
		const host = /\b((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,})\b/i.exec(tool.description ?? "")?.[1]?.toLowerCase();
		return { url: `https://${host ?? "example.com"}/`, method: "GET" };
	}
	const schema = tool.input_schema ?? {};
	const input: Record<string, unknown> = {};
	for (const name of schema.required ?? []) input[name] = demoValue(name, schema.properties?.[name] ?? {});
	return input;
}

function demoValue(name: string, schema: JsonSchema): unknown {
	if (schema.default !== undefined) return schema.default;
	if (schema.enum && schema.enum.length > 0) return schema.enum[0];
	const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
	switch (type) {
		case "number":
		case "integer":
			return schema.minimum ?? 1;
		case "boolean":
			return true;
		case "array":
			return [];
		case "object": {
			const nested: Record<string, unknown> = {};
			for (const key of schema.required ?? []) nested[key] = demoValue(key, schema.properties?.[key] ?? {});
			return nested;
		}
		default: {
			const n = name.toLowerCase();
			if (schema.format === "uri" || n.includes("url")) return "https://example.com/";
			if (schema.format === "email" || n.includes("email")) return "demo@example.com";
			if (n.includes("title") || n.includes("subject") || n.includes("summary")) return "Demo title";
			if (n.includes("body") || n.includes("text") || n.includes("message") || n.includes("content")) return "Hello from the emulator.";
			return `demo ${name}`;
		}
	}
}

/** The last user turn's text, or the content of its last tool_result. */
function lastInput(messages: WireMessage[]): string {
	const user = messages.findLast((m) => m.role === "user");
	if (!user) return "";
	if (typeof user.content === "string") return user.content;
	const result = user.content.findLast((b) => b.type === "tool_result");
	if (result) return textOf((result as { content?: string | WireContentBlock[] }).content ?? "");
	return textOf(user.content);
}

// ── Building answers ───────────────────────────────────────────────────────────────────────────

function textBlock(text: string): ResponseBlock {
	return { type: "text", text, citations: null };
}

function toolUseBlock(name: string, input: unknown, id?: string): ResponseBlock {
	return { type: "tool_use", id: id ?? newId("toolu_01", 22), name, input: input ?? {}, caller: { type: "direct" } };
}

/** A final text, cut at max_tokens (about 4 characters a token) as the real API would; no block for "". */
function finalText(text: string, maxTokens: number): Composed {
	if (text === "") return { content: [], stopReason: "end_turn" };
	const chars = [...text];
	if (Math.ceil(chars.length / 4) > maxTokens) return { content: [textBlock(chars.slice(0, maxTokens * 4).join(""))], stopReason: "max_tokens" };
	return { content: [textBlock(text)], stopReason: "end_turn" };
}

function textOf(content: string | WireContentBlock[] | undefined): string {
	if (content === undefined) return "";
	if (typeof content === "string") return content;
	return content
		.map((block) => {
			if (block.type === "text") return String((block as WireTextBlock).text);
			if (block.type === "tool_use") {
				const use = block as { name: string; input: unknown };
				return use.name + JSON.stringify(use.input);
			}
			if (block.type === "tool_result") return textOf((block as { content?: string | WireContentBlock[] }).content);
			return "";
		})
		.join("\n");
}

// ── Streaming ──────────────────────────────────────────────────────────────────────────────────

type SseEvent = { type: string; [key: string]: unknown };
type StreamFault =
	| null
	| { kind: "drop"; after: number }
	| { kind: "malformed" }
	| { kind: "error"; after: number; body: ReturnType<typeof errorBody> };

/**
 * The event sequence the real API sends for a message. `cutInput`, when given, is the JSON the last
 * block (a tool_use cut at max_tokens) streams instead of its full input.
 */
function streamEvents(message: ResponseMessage, cutInput?: string): SseEvent[] {
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

function sseFrame(type: string, data: string): string {
	return `event: ${type}\ndata: ${data}\n\n`;
}

function frame(type: string, data: string): Uint8Array {
	return encoder.encode(sseFrame(type, data));
}

/**
 * One event per pull, so a fault lands after the consumer has read the events before it (erroring a
 * stream discards whatever is still queued in it).
 */
function sseBody(events: SseEvent[], fault: StreamFault, delayMs: number, requestSignal: AbortSignal): ReadableStream<Uint8Array> {
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
function brokenBody(text: string): ReadableStream<Uint8Array> {
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

// ── Small helpers ──────────────────────────────────────────────────────────────────────────────

/** Resolves after `ms` (never, for Infinity); rejects with the signal's reason when it aborts. */
function wait(ms: number, signal: AbortSignal): Promise<void> {
	return new Promise((resolve, reject) => {
		if (signal.aborted) {
			reject(signal.reason);
			return;
		}
		let timer: ReturnType<typeof setTimeout> | undefined;
		const onAbort = () => {
			if (timer !== undefined) clearTimeout(timer);
			reject(signal.reason);
		};
		signal.addEventListener("abort", onAbort, { once: true });
		if (Number.isFinite(ms)) {
			timer = setTimeout(() => {
				signal.removeEventListener("abort", onAbort);
				resolve();
			}, ms);
		}
	});
}

function chunks(text: string, size: number): string[] {
	// By code point, so a chunk boundary never splits a surrogate pair.
	const points = [...text];
	const out: string[] = [];
	for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(""));
	return out.length > 0 ? out : [""];
}

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

function newId(prefix: string, length: number): string {
	const bytes = crypto.getRandomValues(new Uint8Array(length));
	let id = prefix;
	for (const byte of bytes) id += ALPHABET[byte % ALPHABET.length];
	return id;
}

/** The first `end` UTF-16 units of `text`, one fewer if that would split a surrogate pair. */
function headOf(text: string, end: number): string {
	const last = text.charCodeAt(end - 1);
	return text.slice(0, last >= 0xd800 && last <= 0xdbff ? end - 1 : end);
}

/**
 * Why the real API's strict JSON parser refuses `value` (a parsed body), or null: JSON.parse takes a
 * `\ud83d` escape with no pair as a lone surrogate, where the API answers 400 "The request body is
 * not valid JSON: no low surrogate in string". Keys are checked too. (A low half alone is refused
 * as well; its wording here is that parser family's, not one seen from the API.)
 */
function loneSurrogateProblem(value: unknown): string | null {
	if (typeof value === "string") {
		// With the u flag, a surrogate matches only alone: a pair is one code point.
		const lone = /\p{Cs}/u.exec(value);
		if (lone === null) return null;
		return lone[0].charCodeAt(0) >= 0xdc00 ? "invalid high surrogate in string" : "no low surrogate in string";
	}
	if (Array.isArray(value)) {
		for (const item of value) {
			const problem = loneSurrogateProblem(item);
			if (problem !== null) return problem;
		}
		return null;
	}
	if (isObject(value)) {
		for (const [key, item] of Object.entries(value)) {
			const problem = loneSurrogateProblem(key) ?? loneSurrogateProblem(item);
			if (problem !== null) return problem;
		}
	}
	return null;
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function errorBody(type: ApiErrorType, message: string, requestId: string, errorCode?: string) {
	return { type: "error" as const, error: { type, message, ...(errorCode === undefined ? {} : { details: { error_code: errorCode } }) }, request_id: requestId };
}

/** The cause the API names (`error.details.error_code`) on the 429 of an organisation past its monthly spend cap. */
const SPEND_LIMIT_CODE = "enforced_spend_limit_reached";

/** A scripted error's message: its own, else the API's for its cause or status. */
function errorMessage(step: { status: EmulatorErrorStatus; message: string | undefined; errorCode: string | undefined }): string {
	if (step.message !== undefined) return step.message;
	if (step.errorCode === SPEND_LIMIT_CODE) {
		const now = new Date();
		const reset = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
		return `You have reached your API usage limits: your organization has crossed its monthly API usage threshold, set based on your organization's API tier. You will regain access on ${reset} at 00:00 UTC.`;
	}
	return ERROR_MESSAGES[step.status];
}

function jsonHeaders(requestId: string): Record<string, string> {
	return { "content-type": "application/json", "request-id": requestId };
}

function json(status: number, body: unknown): Response {
	return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

/** An error in the API's shape: `{type:"error", error:{type, message, details?}, request_id}` plus a request-id header. */
export function apiError(status: number, type: ApiErrorType, message: string, headers: Record<string, string> = {}, errorCode?: string): Response {
	const requestId = newId("req_011C", 20);
	return new Response(JSON.stringify(errorBody(type, message, requestId, errorCode)), {
		status,
		headers: { ...jsonHeaders(requestId), ...headers },
	});
}
