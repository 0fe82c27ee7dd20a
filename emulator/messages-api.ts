/**
 * A local stand-in for the Anthropic Messages API that speaks its wire format, so the real SDK runs
 * unmodified against it. It serves the tests (inside workerd, behind the outbound guard), the
 * benchmarks and `npm start` without an API key. It is a test and demo peer: nothing in the Worker's
 * real code path imports it.
 *
 * Only web-standard APIs (Request, Response, ReadableStream, TextEncoder, AbortSignal, timers), so
 * the same class runs in workerd and in Node 22 (emulator/server.ts). Its parts: wire.ts (the shapes),
 * validate.ts, steps.ts (what answers), thinking.ts, cache.ts, sse.ts (streaming), errors.ts, text.ts.
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

import type { EmulatorOptions, EmulatorStep, RecordedRequest, ResponseBlock, ResponseMessage, ResponseUsage, WireMessage, WireTextBlock, WireTool } from "./wire.ts";
import { CACHE_LOOKBACK_BLOCKS, cacheBoundaries } from "./cache.ts";
import { unboundThinking } from "./thinking.ts";
import { type ValidRequest, validate } from "./validate.ts";
import { type Step, compose, toStep } from "./steps.ts";
import { type StreamFault, brokenBody, encoder, sseBody, sseFrame, streamEvents } from "./sse.ts";
import { isObject, loneSurrogateProblem, newId, textOf, wait } from "./text.ts";
import { ERROR_TYPES, SPEND_LIMIT_CODE, apiError, errorBody, errorMessage, json, jsonHeaders } from "./errors.ts";

/** Thrown into waits when `reset()` releases in-flight requests. */
class Released extends Error {
	constructor() {
		super("released by emulator reset");
		this.name = "Released";
	}
}

export class MessagesEmulator {
	/** Every request that reached the messages endpoint, in order, parsed as far as it would parse. */
	readonly requests: RecordedRequest[] = [];
	/** Standing per-model steps; see the class comment for precedence. */
	modelErrors: Record<string, EmulatorStep>;

	readonly #requireKey: boolean;
	readonly #keepRequests: number;
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
		this.#keepRequests = options.keepRequests ?? Number.POSITIVE_INFINITY;
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
		if (this.requests.length > this.#keepRequests) this.requests.splice(0, this.requests.length - this.#keepRequests);

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
