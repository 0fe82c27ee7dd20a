import { describe, expect, it } from "vitest";
import { ModelCallError, type ModelRequest, type ModelResponse } from "../../src/agent/contracts.ts";
import { providerConfig } from "../../src/agent/credentials.ts";
import { ModelCallFailure, createModelClient } from "../../src/agent/model-client.ts";
import { fake, outboundLog } from "../helpers/outbound.ts";
import { trackTimers } from "../helpers/timers.ts";

const API = "https://api.anthropic.com";
const PRIMARY = "claude-sonnet-5-5";
const FALLBACK = "claude-haiku-5-5";
const KEYS = ["sk-ant-api03-key-zero-aaaaaaaa", "sk-ant-api03-key-one-bbbbbbbbb", "sk-ant-api03-key-two-cccccccc"];

// ── A small Messages API: real SSE event shapes, real error bodies ───────────────────────────────

interface SseEvent {
	event: string;
	data: unknown;
}

interface Usage {
	input_tokens: number;
	output_tokens: number;
	cache_creation_input_tokens: number;
	cache_read_input_tokens: number;
}

const USAGE: Usage = { input_tokens: 1200, output_tokens: 42, cache_creation_input_tokens: 800, cache_read_input_tokens: 3400 };

type Block = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

/** The events of one streamed message, as the API sends them: text and input_json arrive in pieces. */
function messageEvents(model: string, blocks: Block[], usage: Usage = USAGE, stopReason = "end_turn"): SseEvent[] {
	const events: SseEvent[] = [
		{
			event: "message_start",
			data: {
				type: "message_start",
				message: {
					id: "msg_01XFDUDYJgAACzvnptvVoYEL",
					type: "message",
					role: "assistant",
					model,
					content: [],
					stop_reason: null,
					stop_sequence: null,
					usage: {
						input_tokens: usage.input_tokens,
						output_tokens: 1,
						cache_creation_input_tokens: usage.cache_creation_input_tokens,
						cache_read_input_tokens: usage.cache_read_input_tokens,
					},
				},
			},
		},
	];
	blocks.forEach((block, index) => {
		if (block.type === "text") {
			events.push({ event: "content_block_start", data: { type: "content_block_start", index, content_block: { type: "text", text: "" } } });
			events.push({ event: "ping", data: { type: "ping" } });
			const half = Math.ceil(block.text.length / 2);
			for (const piece of [block.text.slice(0, half), block.text.slice(half)]) {
				events.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "text_delta", text: piece } } });
			}
		} else {
			events.push({
				event: "content_block_start",
				data: { type: "content_block_start", index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } },
			});
			const json = JSON.stringify(block.input);
			const third = Math.ceil(json.length / 3);
			for (const piece of [json.slice(0, third), json.slice(third, 2 * third), json.slice(2 * third)]) {
				events.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } } });
			}
		}
		events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
	});
	events.push({
		event: "message_delta",
		data: { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } },
	});
	events.push({ event: "message_stop", data: { type: "message_stop" } });
	return events;
}

function sse(events: SseEvent[]): Response {
	const body = events.map((e) => `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`).join("");
	return new Response(body, { status: 200, headers: { "content-type": "text/event-stream", "request-id": "req_011CTest" } });
}

function answer(model: string, text = "All green."): Response {
	return sse(messageEvents(model, [{ type: "text", text }]));
}

const ERROR_TYPES: Record<number, string> = {
	400: "invalid_request_error",
	401: "authentication_error",
	402: "billing_error",
	403: "permission_error",
	429: "rate_limit_error",
	500: "api_error",
	502: "api_error",
	529: "overloaded_error",
};

function apiError(status: number, message: string, headers: Record<string, string> = {}): Response {
	const body = { type: "error", error: { type: ERROR_TYPES[status] ?? "api_error", message }, request_id: "req_011CErr" };
	return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", "request-id": "req_011CErr", ...headers } });
}

// ── Recording what was sent ─────────────────────────────────────────────────────────────────────

interface Sent {
	url: string;
	/** The credential the SDK sent: 1.x sends the key as `authorization: Bearer <key>`. */
	key: string | null;
	xApiKey: string | null;
	/** Every header, to check that no key travels under another name. */
	headers: string;
	body: { model: string; stream: boolean; system?: unknown; tools?: unknown; messages: unknown; max_tokens: number };
}

async function record(request: Request, sent: Sent[]): Promise<Sent> {
	const auth = request.headers.get("authorization");
	const entry: Sent = {
		url: request.url,
		key: auth?.startsWith("Bearer ") ? auth.slice("Bearer ".length) : auth,
		xApiKey: request.headers.get("x-api-key"),
		headers: JSON.stringify([...request.headers]),
		body: (await request.json()) as Sent["body"],
	};
	sent.push(entry);
	return entry;
}

/** Fakes an origin with a list of responses, one per request, in order; records every request. */
function script(origin: string, ...responses: ((sent: Sent) => Response | Promise<Response>)[]): Sent[] {
	const sent: Sent[] = [];
	fake(origin, async (request) => {
		const entry = await record(request, sent);
		const respond = responses[sent.length - 1];
		if (!respond) throw new Error(`unexpected request #${sent.length} to ${origin}`);
		return respond(entry);
	});
	return sent;
}

const ok = (sent: Sent) => answer(sent.body.model);

function env(vars: { ANTHROPIC_API_KEY?: string; ANTHROPIC_BASE_URL?: string; ANTHROPIC_ALLOWED_BASE_URLS?: string }): Env {
	return { ANTHROPIC_API_KEY: "", ANTHROPIC_BASE_URL: "", ...vars } as unknown as Env;
}

function clock() {
	const sleeps: number[] = [];
	return { sleeps, sleep: async (ms: number) => void sleeps.push(ms), now: () => Date.parse("2026-11-20T09:00:00Z") };
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
	return {
		models: [PRIMARY, FALLBACK],
		system: [{ type: "text", text: "You write digests.", cache_control: { type: "ephemeral" } }],
		messages: [{ role: "user", content: "Summarize yesterday." }],
		tools: [],
		max_tokens: 1024,
		...overrides,
	};
}

async function failure(promise: Promise<ModelResponse>): Promise<ModelCallFailure> {
	try {
		await promise;
	} catch (error) {
		expect(error).toBeInstanceOf(ModelCallError);
		expect(error).toBeInstanceOf(ModelCallFailure);
		return error as ModelCallFailure;
	}
	throw new Error("expected the model call to fail, but it answered");
}

/** No key may appear in anything the client returns or throws. */
function expectNoKeys(value: unknown): void {
	const text = value instanceof Error ? `${value.message} ${JSON.stringify(value)}` : JSON.stringify(value);
	for (const key of KEYS) expect(text).not.toContain(key);
}

// ── Tests ───────────────────────────────────────────────────────────────────────────────────────

describe("createModelClient: a streamed call", () => {
	it("streams the answer and returns the message, the model, four usage classes and one attempt", async () => {
		const sent = script(API, ok);
		const t = clock();
		const client = createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), t);
		const res = await client.call(request());

		expect(res.model).toBe(PRIMARY);
		expect(res.message.model).toBe(PRIMARY);
		expect(res.message.role).toBe("assistant");
		expect(res.message.stop_reason).toBe("end_turn");
		expect(res.message.content).toEqual([{ type: "text", text: "All green." }]);
		expect(res.message.usage).toMatchObject(USAGE);
		expect(res.attempts).toEqual([{ model: PRIMARY, key: 0, status: "ok", waited_ms: 0, at: expect.any(Number) }]);
		expect(t.sleeps).toEqual([]);

		expect(sent).toHaveLength(1);
		expect(sent[0]?.url).toBe(`${API}/v1/messages`);
		expect(sent[0]?.key).toBe(KEYS[0]);
		expect(sent[0]?.body).toMatchObject({
			model: PRIMARY,
			stream: true,
			max_tokens: 1024,
			system: [{ type: "text", text: "You write digests.", cache_control: { type: "ephemeral" } }],
			messages: [{ role: "user", content: "Summarize yesterday." }],
		});
		// No tools configured: the field is left out rather than sent empty.
		expect(sent[0]?.body).not.toHaveProperty("tools");
		expectNoKeys(res);
	});

	it("passes tools through and assembles a tool_use input from input_json_delta pieces", async () => {
		const input = { url: "https://example.com/status", method: "GET" };
		const sent = script(API, (s) =>
			sse(messageEvents(s.body.model, [{ type: "text", text: "Checking." }, { type: "tool_use", id: "toolu_01A", name: "http_fetch", input }], USAGE, "tool_use")),
		);
		const tools = [{ name: "http_fetch", description: "Fetch a URL.", input_schema: { type: "object" as const, properties: { url: { type: "string" } } } }];
		const res = await createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), clock()).call(request({ tools }));

		expect(sent[0]?.body.tools).toEqual(tools);
		expect(res.message.stop_reason).toBe("tool_use");
		expect(res.message.content[1]).toMatchObject({ type: "tool_use", id: "toolu_01A", name: "http_fetch", input });
	});
});

describe("createModelClient: rate limits (429)", () => {
	it("rotates to the next key at once, without waiting, and later calls start from the key that worked", async () => {
		const sent = script(API, () => apiError(429, "Number of request tokens has exceeded your per-minute rate limit", { "retry-after": "30" }), ok, ok);
		const t = clock();
		const client = createModelClient(env({ ANTHROPIC_API_KEY: KEYS.join(",") }), t);

		const first = await client.call(request());
		expect(first.attempts).toEqual([
			{ model: PRIMARY, key: 0, status: 429, waited_ms: 0, at: expect.any(Number), request_id: "req_011CErr" },
			{ model: PRIMARY, key: 1, status: "ok", waited_ms: 0, at: expect.any(Number) },
		]);
		const second = await client.call(request());
		expect(second.attempts).toEqual([{ model: PRIMARY, key: 1, status: "ok", waited_ms: 0, at: expect.any(Number) }]);

		expect(sent.map((s) => s.key)).toEqual([KEYS[0], KEYS[1], KEYS[1]]);
		expect(t.sleeps).toEqual([]);
		expectNoKeys([first, second]);
	});

	it("when every key is limited, waits the smallest retry-after (seconds or ms header) and tries that key once more", async () => {
		const sent = script(
			API,
			() => apiError(429, "rate limited", { "retry-after": "4" }),
			() => apiError(429, "rate limited", { "retry-after-ms": "2500", "retry-after": "3" }),
			ok,
		);
		const t = clock();
		const res = await createModelClient(env({ ANTHROPIC_API_KEY: `${KEYS[0]}\n${KEYS[1]}` }), t).call(request());

		expect(t.sleeps).toEqual([2500]);
		expect(res.attempts).toEqual([
			{ model: PRIMARY, key: 0, status: 429, waited_ms: 0, at: expect.any(Number), request_id: "req_011CErr" },
			{ model: PRIMARY, key: 1, status: 429, waited_ms: 0, at: expect.any(Number), request_id: "req_011CErr" },
			{ model: PRIMARY, key: 1, status: "ok", waited_ms: 2500, at: expect.any(Number) },
		]);
		expect(sent.map((s) => s.key)).toEqual([KEYS[0], KEYS[1], KEYS[1]]);
		// Rate limits are not a reason to switch models.
		expect(sent.map((s) => s.body.model)).toEqual([PRIMARY, PRIMARY, PRIMARY]);
	});

	it("gives up with rate_limit and retryAfterMs, without waiting, when the soonest retry-after exceeds maxWaitMs", async () => {
		const sent = script(
			API,
			() => apiError(429, "rate limited", { "retry-after": "90" }),
			() => apiError(429, "rate limited", { "retry-after": "60" }),
			() => apiError(429, "rate limited", { "retry-after": "120" }),
		);
		const t = clock();
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS.join(" ") }), t).call(request({ models: [PRIMARY] })));

		expect(error.kind).toBe("rate_limit");
		expect(error.status).toBe(429);
		expect(error.retryAfterMs).toBe(60_000);
		expect(t.sleeps).toEqual([]);
		expect(sent.map((s) => s.key)).toEqual(KEYS);
		expect(error.attempts.map((a) => [a.key, a.status])).toEqual([
			[0, 429],
			[1, 429],
			[2, 429],
		]);
		expectNoKeys(error);
	});

	it("gives up with rate_limit when the one retry after waiting is limited again", async () => {
		script(
			API,
			() => apiError(429, "rate limited", { "retry-after": "2" }),
			() => apiError(429, "rate limited", { "retry-after": "45" }),
		);
		const t = clock();
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), t).call(request({ models: [PRIMARY] })));
		expect(error.kind).toBe("rate_limit");
		expect(error.retryAfterMs).toBe(45_000);
		expect(t.sleeps).toEqual([2000]);
		expect(error.attempts).toEqual([
			{ model: PRIMARY, key: 0, status: 429, waited_ms: 0, at: expect.any(Number), request_id: "req_011CErr" },
			{ model: PRIMARY, key: 0, status: 429, waited_ms: 2000, at: expect.any(Number), request_id: "req_011CErr" },
		]);
	});

	it("waits at most once per call, even when the next retry-after is short again", async () => {
		const sent = script(
			API,
			() => apiError(429, "rate limited", { "retry-after": "1" }),
			() => apiError(429, "rate limited", { "retry-after": "1" }),
		);
		const t = clock();
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), t).call(request({ models: [PRIMARY] })));
		expect([error.kind, error.status, error.retryAfterMs]).toEqual(["rate_limit", 429, 1000]);
		expect(t.sleeps).toEqual([1000]);
		expect(sent).toHaveLength(2);
	});

	it("waits out a rate limit of exactly maxWaitMs in the call: only a longer one is handed back", async () => {
		script(API, () => apiError(429, "rate limited", { "retry-after": "1" }), ok);
		const t = clock();
		const res = await createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), { ...t, maxWaitMs: 1000 }).call(request({ models: [PRIMARY] }));
		expect(t.sleeps).toEqual([1000]);
		expect(res.attempts.map((a) => [a.status, a.waited_ms])).toEqual([
			[429, 0],
			["ok", 1000],
		]);
	});

	it("honours a custom maxWaitMs", async () => {
		script(API, () => apiError(429, "rate limited", { "retry-after": "3" }));
		const t = clock();
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), { ...t, maxWaitMs: 1000 }).call(request({ models: [PRIMARY] })));
		expect([error.kind, error.retryAfterMs]).toEqual(["rate_limit", 3000]);
		expect(t.sleeps).toEqual([]);
	});

	it("asks the fallback model at once when every key is rate-limited on the primary for longer than it may wait (limits are the model's)", async () => {
		const sent = script(API, () => apiError(429, "rate limited", { "retry-after": "600" }), ok);
		const t = clock();
		const res = await createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), t).call(request());
		expect(res.model).toBe(FALLBACK);
		expect(sent.map((s) => s.body.model)).toEqual([PRIMARY, FALLBACK]);
		expect(res.attempts.map((a) => [a.model, a.status])).toEqual([
			[PRIMARY, 429],
			[FALLBACK, "ok"],
		]);
		expect(t.sleeps).toEqual([]);
	});

	it("comes back when the soonest of its models' rate limits ends, whichever model that is", async () => {
		const third = "claude-opus-5-5";
		const sent = script(
			API,
			() => apiError(429, "rate limited", { "retry-after": "600" }),
			() => apiError(429, "rate limited", { "retry-after": "300" }),
			() => apiError(429, "rate limited", { "retry-after": "900" }),
		);
		const t = clock();
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), t).call(request({ models: [PRIMARY, FALLBACK, third] })));
		expect(sent.map((s) => s.body.model)).toEqual([PRIMARY, FALLBACK, third]);
		expect([error.kind, error.status, error.retryAfterMs]).toEqual(["rate_limit", 429, 300_000]);
		expect(t.sleeps).toEqual([]);
	});

	it("is a rate limit still, to come back to when the primary's ends, when the fallback fails otherwise", async () => {
		script(
			API,
			() => apiError(429, "rate limited", { "retry-after": "90" }),
			() => apiError(529, "overloaded"),
			() => apiError(529, "overloaded"),
			() => apiError(529, "overloaded"),
		);
		const t = clock();
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), t).call(request()));
		expect([error.kind, error.status, error.retryAfterMs]).toEqual(["rate_limit", 429, 90_000]);
		expect(error.message).toContain(`${PRIMARY}: every key is rate limited for at least 90000 ms`);
		expect(error.attempts.map((a) => [a.model, a.status])).toEqual([
			[PRIMARY, 429],
			[FALLBACK, 529],
			[FALLBACK, 529],
			[FALLBACK, 529],
		]);
	});
});

describe("createModelClient: overloaded, server and network failures", () => {
	it("retries an overloaded model twice with 500 ms and 1500 ms backoff, then the fallback answers", async () => {
		const sent = script(
			API,
			() => apiError(529, "Overloaded"),
			() => apiError(529, "Overloaded"),
			() => apiError(529, "Overloaded"),
			ok,
		);
		const t = clock();
		const res = await createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), t).call(request());

		expect(res.model).toBe(FALLBACK);
		expect(res.message.model).toBe(FALLBACK);
		expect(res.attempts).toEqual([
			{ model: PRIMARY, key: 0, status: 529, waited_ms: 0, at: expect.any(Number), request_id: "req_011CErr" },
			{ model: PRIMARY, key: 0, status: 529, waited_ms: 500, at: expect.any(Number), request_id: "req_011CErr" },
			{ model: PRIMARY, key: 0, status: 529, waited_ms: 1500, at: expect.any(Number), request_id: "req_011CErr" },
			{ model: FALLBACK, key: 0, status: "ok", waited_ms: 0, at: expect.any(Number) },
		]);
		expect(t.sleeps).toEqual([500, 1500]);
		expect(sent.map((s) => s.body.model)).toEqual([PRIMARY, PRIMARY, PRIMARY, FALLBACK]);
	});

	it("waits as long as a 529 or 503's retry-after asks before the next try, up to maxWaitMs", async () => {
		script(
			API,
			() => apiError(529, "Overloaded", { "retry-after": "4" }),
			() => apiError(503, "Unavailable", { "retry-after": "90" }),
			ok,
		);
		const t = clock();
		const res = await createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), t).call(request());
		expect(t.sleeps).toEqual([4000, 10_000]);
		expect(res.attempts).toEqual([
			{ model: PRIMARY, key: 0, status: 529, waited_ms: 0, at: expect.any(Number), request_id: "req_011CErr" },
			{ model: PRIMARY, key: 0, status: 503, waited_ms: 4000, at: expect.any(Number), request_id: "req_011CErr" },
			{ model: PRIMARY, key: 0, status: "ok", waited_ms: 10_000, at: expect.any(Number) },
		]);
	});

	it("treats an overloaded_error event in the middle of a stream like a 529", async () => {
		const midStreamError = () => {
			const [start] = messageEvents(PRIMARY, []);
			return sse([start as SseEvent, { event: "error", data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } }]);
		};
		script(API, midStreamError, ok);
		const t = clock();
		const res = await createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), t).call(request());
		expect(res.attempts).toEqual([
			// The stream's own request id: the error came in its body.
			{ model: PRIMARY, key: 0, status: 529, waited_ms: 0, at: expect.any(Number), request_id: "req_011CTest" },
			{ model: PRIMARY, key: 0, status: "ok", waited_ms: 500, at: expect.any(Number) },
		]);
	});

	it("reads x-should-retry only from an HTTP error: an error event in a 200's stream is retried whatever that answer's headers say", async () => {
		const midStreamError = () => {
			const [start] = messageEvents(PRIMARY, []);
			const streamed = sse([start as SseEvent, { event: "error", data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } }]);
			const headers = new Headers(streamed.headers);
			headers.set("x-should-retry", "false");
			return new Response(streamed.body, { status: 200, headers });
		};
		script(API, midStreamError, ok);
		const res = await createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), clock()).call(request());
		expect(res.attempts.map((a) => [a.model, a.status])).toEqual([
			[PRIMARY, 529],
			[PRIMARY, "ok"],
		]);
	});

	it("retries a 500 on the same model and key, then succeeds", async () => {
		const sent = script(API, () => apiError(500, "Internal server error"), ok);
		const t = clock();
		const res = await createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), t).call(request());
		expect(res.model).toBe(PRIMARY);
		expect(res.attempts).toEqual([
			{ model: PRIMARY, key: 0, status: 500, waited_ms: 0, at: expect.any(Number), request_id: "req_011CErr" },
			{ model: PRIMARY, key: 0, status: "ok", waited_ms: 500, at: expect.any(Number) },
		]);
		expect(sent.map((s) => [s.body.model, s.key])).toEqual([
			[PRIMARY, KEYS[0]],
			[PRIMARY, KEYS[0]],
		]);
	});

	it("fails with overloaded after every model is exhausted (3 tries each)", async () => {
		script(API, ...Array.from({ length: 6 }, () => () => apiError(529, "Overloaded")));
		const t = clock();
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), t).call(request()));
		expect(error.kind).toBe("overloaded");
		expect(error.status).toBe(529);
		expect(error.message).toContain(FALLBACK);
		expect(error.attempts.map((a) => [a.model, a.status, a.waited_ms])).toEqual([
			[PRIMARY, 529, 0],
			[PRIMARY, 529, 500],
			[PRIMARY, 529, 1500],
			[FALLBACK, 529, 0],
			[FALLBACK, 529, 500],
			[FALLBACK, 529, 1500],
		]);
		expect(t.sleeps).toEqual([500, 1500, 500, 1500]);
	});

	it("obeys the API's x-should-retry: false ends a model's tries (on to the fallback), true retries a 4xx, and a 409 is retried", async () => {
		const sent = script(API, () => apiError(500, "Internal server error", { "x-should-retry": "false" }), () => apiError(500, "Internal server error", { "x-should-retry": "false" }));
		const t = clock();
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), t).call(request()));
		expect([error.kind, error.status]).toEqual(["server", 500]);
		expect(sent.map((s) => s.body.model)).toEqual([PRIMARY, FALLBACK]);
		expect(t.sleeps).toEqual([]);

		const again = script(API, () => apiError(400, "try again", { "x-should-retry": "true" }), () => apiError(409, "lock timeout"), ok);
		const t2 = clock();
		const res = await createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), t2).call(request({ models: [PRIMARY] }));
		expect(res.attempts.map((a) => a.status)).toEqual([400, 409, "ok"]);
		expect(again).toHaveLength(3);
		expect(t2.sleeps).toEqual([500, 1500]);
	});

	it("fails with server after 502s on the only model", async () => {
		script(API, ...Array.from({ length: 3 }, () => () => apiError(502, "Bad gateway")));
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), clock()).call(request({ models: [PRIMARY] })));
		expect([error.kind, error.status, error.attempts.length]).toEqual(["server", 502, 3]);
	});

	it("treats a rejected fetch as a network failure: retried, then the fallback, then kind network", async () => {
		const sent = script(
			API,
			...Array.from({ length: 6 }, () => () => {
				throw new TypeError("Network connection lost.");
			}),
		);
		const t = clock();
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), t).call(request()));
		expect(error.kind).toBe("network");
		expect(error.status).toBeNull();
		expect(error.attempts.map((a) => [a.model, a.status])).toEqual([
			[PRIMARY, "network"],
			[PRIMARY, "network"],
			[PRIMARY, "network"],
			[FALLBACK, "network"],
			[FALLBACK, "network"],
			[FALLBACK, "network"],
		]);
		expect(sent).toHaveLength(6);
		expect(t.sleeps).toEqual([500, 1500, 500, 1500]);
	});

	it("treats a stream cut before message_stop as a network failure and retries it", async () => {
		const cut = () => sse(messageEvents(PRIMARY, [{ type: "text", text: "Half an ans" }]).slice(0, 4));
		script(API, cut, ok);
		const res = await createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), clock()).call(request());
		expect(res.attempts.map((a) => a.status)).toEqual(["network", "ok"]);
		expect(res.message.content).toEqual([{ type: "text", text: "All green." }]);
	});

	it("gives up a stream that sends nothing for its idle timeout as a network failure, and retries it", async () => {
		const [start] = messageEvents(PRIMARY, []);
		const stall = () => new Response(new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new TextEncoder().encode(`event: message_start\ndata: ${JSON.stringify(start!.data)}\n\n`)) }), { headers: { "content-type": "text/event-stream" } });
		script(API, stall, ok);
		const timers = trackTimers((ms) => ms === 20);
		try {
			const res = await createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), { ...clock(), idleTimeoutMs: 20 }).call(request());
			expect(res.attempts.map((a) => a.status)).toEqual(["network", "ok"]);
			expect(res.message.content).toEqual([{ type: "text", text: "All green." }]);
			// Every read's idle timer is released once its bytes came (workerd caps an isolate's timers).
			expect(timers.set).toBeGreaterThan(1);
			expect(timers.pending.size).toBe(0);
		} finally {
			timers.restore();
		}
	});

	it("gives up a host that takes the request and sends no answer's headers within the idle timeout, as a stall, and retries it", async () => {
		// Answers nothing until the client gives up (a fetch is aborted by its signal).
		const silent = () => new Promise<Response>(() => {});
		let calls = 0;
		fake(API, (req) => {
			calls++;
			if (calls === 1) return new Promise<Response>((_, reject) => req.signal.addEventListener("abort", () => reject(new DOMException("The operation was aborted.", "AbortError")))).then(silent);
			return answer(PRIMARY);
		});
		const res = await createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), { ...clock(), idleTimeoutMs: 20 }).call(request());
		expect(calls).toBe(2);
		expect(res.attempts.map((a) => a.status)).toEqual(["network", "ok"]);
		expect(res.message.content).toEqual([{ type: "text", text: "All green." }]);
	});

	it("says a host that never answers failed for sending nothing, each try given up at the idle timeout", async () => {
		fake(API, (req) => new Promise<Response>((_, reject) => req.signal.addEventListener("abort", () => reject(new DOMException("The operation was aborted.", "AbortError")))));
		const err = await createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), { ...clock(), idleTimeoutMs: 20 })
			.call(request({ models: [PRIMARY] }))
			.catch((e: unknown) => e);
		expect(err).toBeInstanceOf(ModelCallFailure);
		expect((err as ModelCallFailure).kind).toBe("network");
		expect((err as ModelCallFailure).message).toContain("no answer began: the request timed out (the limit is 0.02 s)");
		expect((err as ModelCallFailure).attempts.map((a) => a.status)).toEqual(["network", "network", "network"]);
	});

	it("treats a malformed stream as a network failure", async () => {
		const malformed = () => new Response("event: message_start\ndata: {not json\n\n", { headers: { "content-type": "text/event-stream" } });
		script(API, malformed, ok);
		const res = await createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), clock()).call(request());
		expect(res.attempts.map((a) => a.status)).toEqual(["network", "ok"]);
	});
});

describe("createModelClient: auth and bad requests", () => {
	it("tries the next key after a 401, and fails with auth once the pool is used up", async () => {
		const sent = script(
			API,
			() => apiError(401, "invalid x-api-key"),
			() => apiError(401, "invalid x-api-key"),
		);
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: `${KEYS[0]}, ${KEYS[1]}` }), clock()).call(request()));
		expect(error.kind).toBe("auth");
		expect(error.status).toBe(401);
		expect(sent.map((s) => s.key)).toEqual([KEYS[0], KEYS[1]]);
		// An auth failure is not a model problem: the fallback model is never tried.
		expect(sent.map((s) => s.body.model)).toEqual([PRIMARY, PRIMARY]);
		expect(error.attempts).toEqual([
			{ model: PRIMARY, key: 0, status: 401, waited_ms: 0, at: expect.any(Number), request_id: "req_011CErr" },
			{ model: PRIMARY, key: 1, status: 401, waited_ms: 0, at: expect.any(Number), request_id: "req_011CErr" },
		]);
		expectNoKeys(error);
	});

	it("keeps the pool working when one key is revoked (403 then a good key)", async () => {
		const sent = script(API, () => apiError(403, "This key has been revoked"), ok);
		const res = await createModelClient(env({ ANTHROPIC_API_KEY: `${KEYS[0]},${KEYS[1]}` }), clock()).call(request());
		expect(res.attempts.map((a) => [a.key, a.status])).toEqual([
			[0, 403],
			[1, "ok"],
		]);
		expect(sent.map((s) => s.key)).toEqual([KEYS[0], KEYS[1]]);
	});

	it("keeps the pool working when one key's organisation cannot pay (402 then a good key), and fails with auth on a 402 alone", async () => {
		const sent = script(API, () => apiError(402, "Your credit balance is too low to access the Anthropic API"), ok);
		const res = await createModelClient(env({ ANTHROPIC_API_KEY: `${KEYS[0]},${KEYS[1]}` }), clock()).call(request());
		expect(res.attempts.map((a) => [a.key, a.status])).toEqual([
			[0, 402],
			[1, "ok"],
		]);
		expect(sent.map((s) => s.key)).toEqual([KEYS[0], KEYS[1]]);
		script(API, () => apiError(402, "Your credit balance is too low to access the Anthropic API"));
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), clock()).call(request()));
		expect([error.kind, error.status]).toEqual(["auth", 402]);
	});

	it("fails with auth at once on a single key", async () => {
		const sent = script(API, () => apiError(401, "invalid x-api-key"));
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), clock()).call(request()));
		expect([error.kind, error.status]).toEqual(["auth", 401]);
		expect(sent).toHaveLength(1);
	});

	it("fails with invalid_request on a 400 at once: no retry, no other key, no fallback model", async () => {
		const sent = script(API, () => apiError(400, "messages: roles must alternate between \"user\" and \"assistant\""));
		const t = clock();
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS.join(",") }), t).call(request()));
		expect(error.kind).toBe("invalid_request");
		expect(error.status).toBe(400);
		expect(error.message).toContain("roles must alternate");
		expect(sent).toHaveLength(1);
		expect(t.sleeps).toEqual([]);
		expect(error.attempts).toEqual([{ model: PRIMARY, key: 0, status: 400, waited_ms: 0, at: expect.any(Number), request_id: "req_011CErr" }]);
	});
});

describe("createModelClient: abort", () => {
	it("fails with aborted without sending anything when the signal is already aborted", async () => {
		const controller = new AbortController();
		controller.abort();
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), clock()).call(request({ signal: controller.signal })));
		expect(error.kind).toBe("aborted");
		expect(outboundLog).toEqual([]);
	});

	it("fails with aborted at once when the signal fires mid-request: no retry, no fallback", async () => {
		const controller = new AbortController();
		const sent: Sent[] = [];
		fake(API, async (req) => {
			await record(req.clone(), sent);
			controller.abort();
			// What a real fetch does when its signal fires.
			throw new DOMException("The operation was aborted.", "AbortError");
		});
		const t = clock();
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), t).call(request({ signal: controller.signal })));
		expect(error.kind).toBe("aborted");
		expect(sent).toHaveLength(1);
		expect(t.sleeps).toEqual([]);
		// Nothing was reported before the abort: the try is there, with no tokens to count.
		expect(error.attempts).toEqual([{ model: PRIMARY, key: 0, status: "aborted", waited_ms: 0, at: expect.any(Number) }]);
	});

	it("reports the tokens a stream had reported when the abort cut it: message_start's", async () => {
		const controller = new AbortController();
		fake(API, (req) => {
			const [start] = messageEvents(PRIMARY, [{ type: "text", text: "Half" }]);
			let pulls = 0;
			const body = new ReadableStream<Uint8Array>(
				{
					pull: (c) => {
						// The first read gets message_start; the next one waits while the cancel comes.
						if (++pulls === 1) return c.enqueue(new TextEncoder().encode(`event: ${start!.event}\ndata: ${JSON.stringify(start!.data)}\n\n`));
						// A real transport errors the body of a request that was aborted.
						req.signal.addEventListener("abort", () => c.error(new DOMException("The operation was aborted.", "AbortError")), { once: true });
						controller.abort();
					},
				},
				{ highWaterMark: 0 },
			);
			return new Response(body, { headers: { "content-type": "text/event-stream" } });
		});
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), clock()).call(request({ signal: controller.signal })));
		expect(error.kind).toBe("aborted");
		expect(error.attempts).toEqual([{ model: PRIMARY, key: 0, status: "aborted", waited_ms: 0, at: expect.any(Number), usage: { ...USAGE, output_tokens: 1 }, whole: false }]);
	});

	it("reports a whole answer's tokens when it arrives after the abort, from a transport that had not noticed it", async () => {
		const controller = new AbortController();
		fake(API, async () => {
			controller.abort();
			await Promise.resolve();
			return answer(PRIMARY, "Too late.");
		});
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), clock()).call(request({ signal: controller.signal })));
		expect(error.kind).toBe("aborted");
		expect(error.attempts).toEqual([{ model: PRIMARY, key: 0, status: "aborted", waited_ms: 0, at: expect.any(Number), usage: expect.objectContaining(USAGE), whole: true }]);
	});

	it("waits for an aborted exchange no longer than abortedReadMs, and reports what had arrived by then", async () => {
		const controller = new AbortController();
		const [start] = messageEvents(PRIMARY, [{ type: "text", text: "Half" }]);
		fake(API, () => {
			const body = new ReadableStream<Uint8Array>({
				start: (c) => {
					c.enqueue(new TextEncoder().encode(`event: ${start!.event}\ndata: ${JSON.stringify(start!.data)}\n\n`));
					// A body that never ends, nor notices the abort.
					queueMicrotask(() => controller.abort());
				},
			});
			return new Response(body, { headers: { "content-type": "text/event-stream" } });
		});
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), { ...clock(), abortedReadMs: 20 }).call(request({ signal: controller.signal })));
		expect(error.attempts).toEqual([{ model: PRIMARY, key: 0, status: "aborted", waited_ms: 0, at: expect.any(Number), usage: { ...USAGE, output_tokens: 1 }, whole: false }]);
	});

	it("stops waiting out a backoff when the signal fires during it", async () => {
		const controller = new AbortController();
		script(API, () => apiError(529, "Overloaded"));
		const sleeps: number[] = [];
		const sleep = (ms: number) => {
			sleeps.push(ms);
			controller.abort();
			return new Promise<void>(() => {}); // a wait that never ends on its own
		};
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] }), { sleep }).call(request({ signal: controller.signal })));
		expect(error.kind).toBe("aborted");
		expect(sleeps).toEqual([500]);
		expect(error.attempts).toEqual([{ model: PRIMARY, key: 0, status: 529, waited_ms: 0, at: expect.any(Number), request_id: "req_011CErr" }]);
	});

	it("releases a backoff's timer when the signal fires during it", async () => {
		// workerd lets an isolate hold 10,000 pending timers; an abandoned wait must not keep one.
		const controller = new AbortController();
		// The backoff's wait is set: the call is cancelled during it.
		const backoffs = trackTimers((ms) => ms === 500, () => queueMicrotask(() => controller.abort()));
		try {
			script(API, () => apiError(529, "Overloaded"));
			const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0] })).call(request({ signal: controller.signal })));
			expect(error.kind).toBe("aborted");
			expect(error.attempts).toEqual([{ model: PRIMARY, key: 0, status: 529, waited_ms: 0, at: expect.any(Number), request_id: "req_011CErr" }]);
			expect(backoffs.set).toBe(1);
			expect(backoffs.pending.size).toBe(0);
		} finally {
			backoffs.restore();
		}
	});
});

describe("credentials: the exfiltration guard", () => {
	const refused = [
		"https://evil.example",
		"https://evil.example/v1",
		"http://api.anthropic.com",
		"https://api.anthropic.com.evil.example",
		"https://api.anthropic.com@evil.example",
		"https://api.anthropic.com:8443",
		"http://127.0.0.1:8788",
	];
	for (const base of refused) {
		it(`refuses to send a key to ${base}: guard error naming the host, no request made`, async () => {
			const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0], ANTHROPIC_BASE_URL: base }), clock()).call(request()));
			expect(error.kind).toBe("guard");
			expect(error.message).toContain(new URL(base).host);
			expectNoKeys(error);
			expect(outboundLog).toEqual([]);
		});
	}

	it("refuses a gateway that is not on the allowlist, even with an allowlist set", async () => {
		const error = await failure(
			createModelClient(
				env({ ANTHROPIC_API_KEY: KEYS[0], ANTHROPIC_BASE_URL: "https://other-gateway.example.net", ANTHROPIC_ALLOWED_BASE_URLS: "https://gateway.example.net" }),
				clock(),
			).call(request()),
		);
		expect(error.kind).toBe("guard");
		expect(error.message).toContain("other-gateway.example.net");
		expect(outboundLog).toEqual([]);
	});

	it("refuses a base URL that is not a URL without echoing it (it may be a misplaced key)", async () => {
		const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0], ANTHROPIC_BASE_URL: KEYS[1] }), clock()).call(request()));
		expect(error.kind).toBe("guard");
		expectNoKeys(error);
		expect(outboundLog).toEqual([]);
	});

	it("sends keys to a gateway listed in ANTHROPIC_ALLOWED_BASE_URLS, under its path", async () => {
		const gateway = "https://gateway.example.net";
		const sent = script(gateway, ok);
		const res = await createModelClient(
			env({ ANTHROPIC_API_KEY: KEYS[2], ANTHROPIC_BASE_URL: `${gateway}/anthropic`, ANTHROPIC_ALLOWED_BASE_URLS: `https://other.example, ${gateway}` }),
			clock(),
		).call(request());
		expect(res.attempts).toEqual([{ model: PRIMARY, key: 0, status: "ok", waited_ms: 0, at: expect.any(Number) }]);
		expect(sent.map((s) => [s.url, s.key])).toEqual([[`${gateway}/anthropic/v1/messages`, KEYS[2]]]);
	});

	it("does not follow a gateway's redirect with the key: fails saying where it points, the other host never called", async () => {
		const gateway = "https://gateway.example.net";
		fake(gateway, () => new Response(null, { status: 307, headers: { location: "https://evil.example/v1/messages?token=abc" } }));
		let followed = 0;
		fake("https://evil.example", () => {
			followed++;
			return new Response("{}");
		});
		const error = await failure(
			createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0], ANTHROPIC_BASE_URL: gateway, ANTHROPIC_ALLOWED_BASE_URLS: gateway }), clock()).call(request()),
		);
		expect(error.kind).toBe("invalid_request");
		expect(error.status).toBe(307);
		expect(error.message).toContain("answered 307, a redirect to evil.example, which drover does not follow with the key");
		expect(error.message).not.toContain("token=abc");
		expect(followed).toBe(0);
		expectNoKeys(error);
	});

	it("accepts the Anthropic host spelled out explicitly", async () => {
		const sent = script(API, ok);
		await createModelClient(env({ ANTHROPIC_API_KEY: KEYS[0], ANTHROPIC_BASE_URL: `${API}/` }), clock()).call(request());
		expect(sent.map((s) => s.key)).toEqual([KEYS[0]]);
	});

	it("fails with auth when there is no key and no local emulator", async () => {
		for (const base of ["", "https://api.anthropic.com", "https://gateway.example.net"]) {
			const error = await failure(createModelClient(env({ ANTHROPIC_API_KEY: " , ", ANTHROPIC_BASE_URL: base }), clock()).call(request()));
			expect([error.kind, error.message]).toEqual(["auth", "ANTHROPIC_API_KEY is not set"]);
		}
		expect(outboundLog).toEqual([]);
	});

	it("serves an emulator on a loopback base URL with the placeholder credential, never a real key", async () => {
		const emulator = "http://127.0.0.1:8788";
		const sent = script(emulator, ok, ok);
		const client = createModelClient(env({ ANTHROPIC_API_KEY: "", ANTHROPIC_BASE_URL: emulator }), clock());
		await client.call(request());
		await client.call(request());
		expect(sent.map((s) => [s.url, s.key])).toEqual([
			[`${emulator}/v1/messages`, "emulator"],
			[`${emulator}/v1/messages`, "emulator"],
		]);
		// The test Worker has a real-looking ANTHROPIC_API_KEY binding; the SDK must not pick it up.
		for (const s of sent) {
			expect(s.xApiKey).toBeNull();
			expect(s.headers).not.toMatch(/sk-ant/);
		}
	});

	it("providerConfig parses the key pool and reports the mode: the emulator only without a key, at a loopback address", () => {
		expect(providerConfig(env({ ANTHROPIC_API_KEY: ` ${KEYS[0]},${KEYS[1]}\n${KEYS[2]}  ${KEYS[0]} ` }))).toEqual({ keys: KEYS, baseURL: null, emulator: false });
		for (const base of ["http://localhost:8788", "http://127.0.0.1:8788", "http://[::1]:8788/"]) {
			expect(providerConfig(env({ ANTHROPIC_BASE_URL: base }))).toEqual({ keys: [], baseURL: base, emulator: true });
		}
		// A key is never sent to a local address not allowed to receive it: refused, not an emulator.
		expect(() => providerConfig(env({ ANTHROPIC_API_KEY: KEYS[0], ANTHROPIC_BASE_URL: "http://localhost:8788" }))).toThrow(/may not receive ANTHROPIC_API_KEY/);
		expect(() => providerConfig(env({}))).toThrow();
		expect(providerConfig(env({ ANTHROPIC_API_KEY: KEYS[0] })).emulator).toBe(false);
	});
});
