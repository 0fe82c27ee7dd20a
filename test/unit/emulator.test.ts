import Anthropic from "@anthropic-ai/sdk";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { MessagesEmulator } from "../../emulator/messages-api.ts";
import type { EmulatorOptions, WireTool } from "../../emulator/wire.ts";
import { fake } from "../helpers/outbound.ts";
import { trackTimers } from "../helpers/timers.ts";

const MODEL = "claude-sonnet-5-5";
const FALLBACK = "claude-haiku-5-5";

let emulator: MessagesEmulator;
let client: Anthropic;

/** A fresh emulator behind the outbound guard, and the real SDK pointed at its default host. */
function setUp(options?: EmulatorOptions): void {
	emulator = new MessagesEmulator(options);
	fake("https://api.anthropic.com", (req) => emulator.handle(req));
}

beforeEach(() => {
	setUp();
	client = new Anthropic({ apiKey: "sk-ant-test", maxRetries: 0 });
});

const ask = (text: string) => ({ model: MODEL, max_tokens: 1024, messages: [{ role: "user" as const, content: text }] });

/** Raw POST, for bodies the SDK's types would refuse. */
function post(body: unknown, headers: Record<string, string> = { "x-api-key": "sk-ant-test" }): Promise<Response> {
	return fetch("https://api.anthropic.com/v1/messages", {
		method: "POST",
		headers: { "content-type": "application/json", ...headers },
		body: JSON.stringify(body),
	});
}

describe("the requests an emulator keeps", () => {
	it("are the latest keepRequests (npm start's runs as long as it does), all by default", async () => {
		setUp({ keepRequests: 2 });
		for (const text of ["one", "two", "three"]) await client.messages.create(ask(text));
		expect(emulator.requests.map((r) => r.messages?.[0]?.content)).toEqual(["two", "three"]);
		setUp();
		for (const text of ["one", "two", "three"]) await client.messages.create(ask(text));
		expect(emulator.requests).toHaveLength(3);
	});
});

describe("non-streaming messages.create", () => {
	it("returns a Message in the API's shape with a request id", async () => {
		emulator.enqueue({ text: "Hello there." });
		const { data: message, response } = await client.messages.create(ask("Say hello")).withResponse();
		expect(message).toMatchObject({
			type: "message",
			role: "assistant",
			model: MODEL,
			content: [{ type: "text", text: "Hello there." }],
			stop_reason: "end_turn",
			stop_sequence: null,
			usage: { input_tokens: 3, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
		});
		expect(message.id).toMatch(/^msg_01[0-9A-Za-z]{22}$/);
		expect(response.headers.get("request-id")).toMatch(/^req_/);
	});

	it("answers several tool calls in one turn, in order, when scripted with an array, and refuses an empty one", async () => {
		emulator.enqueue({ text: "Both at once.", tool_use: [{ name: "lookup", input: { q: "a" } }, { name: "lookup", input: { q: "b" }, id: "toolu_second" }] });
		const message = await client.messages.create(ask("go"));
		expect(message.stop_reason).toBe("tool_use");
		expect(message.content.map((b) => b.type)).toEqual(["text", "tool_use", "tool_use"]);
		expect(message.content.slice(1)).toMatchObject([
			{ name: "lookup", input: { q: "a" } },
			{ name: "lookup", input: { q: "b" }, id: "toolu_second" },
		]);
		expect(() => emulator.enqueue({ tool_use: [] })).toThrow(/steps\[0\]: tool_use needs at least one call/);
	});

	it("stops with max_tokens when scripted, and when the text exceeds the request's max_tokens", async () => {
		emulator.enqueue({ max_tokens_stop: true, text: "Cut sh" }, { text: "x".repeat(40) });
		const scripted = await client.messages.create(ask("go"));
		expect(scripted.stop_reason).toBe("max_tokens");
		expect(scripted.content).toEqual([{ type: "text", text: "Cut sh", citations: null }]);
		const long = await client.messages.create({ ...ask("go"), max_tokens: 3 });
		expect(long.stop_reason).toBe("max_tokens");
		expect(long.content).toEqual([{ type: "text", text: "x".repeat(12), citations: null }]);
		expect(long.usage.output_tokens).toBe(3);
	});

	it("serves a base URL with a path prefix and accepts a bearer token", async () => {
		fake("https://gateway.example.test", (req) => emulator.handle(req));
		const viaGateway = new Anthropic({ authToken: "gw-token", apiKey: null, baseURL: "https://gateway.example.test/anthropic", maxRetries: 0 });
		emulator.enqueue({ text: "via gateway" });
		const message = await viaGateway.messages.create(ask("hi"));
		expect(message.content[0]).toMatchObject({ text: "via gateway" });
		expect(emulator.requests[0]).toMatchObject({ path: "/anthropic/v1/messages", apiKey: "gw-token" });
	});
});

describe("streaming", () => {
	it("sends the real event sequence and the SDK assembles a tool_use input from input_json_delta pieces", async () => {
		const input = { url: "https://api.github.com/repos/cloudflare/workerd/commits?per_page=5", method: "GET", headers: { accept: "application/json" } };
		emulator.enqueue({ text: "Let me look that up.", tool_use: { name: "http_fetch", input, id: "toolu_01fixed" } });
		const stream = client.messages.stream({ ...ask("What changed?"), tools: [httpFetchTool()] });
		const events: string[] = [];
		const pieces: string[] = [];
		stream.on("streamEvent", (event) => {
			events.push(event.type);
			if (event.type === "content_block_delta" && event.delta.type === "input_json_delta") pieces.push(event.delta.partial_json);
		});
		const message = await stream.finalMessage();

		expect(message.stop_reason).toBe("tool_use");
		expect(message.content).toHaveLength(2);
		expect(message.content[0]).toMatchObject({ type: "text", text: "Let me look that up." });
		expect(message.content[1]).toMatchObject({ type: "tool_use", id: "toolu_01fixed", name: "http_fetch", input });
		expect(pieces.filter((p) => p !== "").length).toBeGreaterThanOrEqual(3);
		expect(pieces.join("")).toBe(JSON.stringify(input));
		// message_start, content blocks (text deltas, then input_json deltas), message_delta, message_stop; pings are skipped by the SDK.
		expect(events[0]).toBe("message_start");
		expect(events.slice(-2)).toEqual(["message_delta", "message_stop"]);
		const blockEvents = events.slice(1, -2).filter((t) => t !== "content_block_delta");
		expect(blockEvents).toEqual(["content_block_start", "content_block_stop", "content_block_start", "content_block_stop"]);
		expect(message.usage.output_tokens).toBe(Math.ceil(("Let me look that up.".length + JSON.stringify(input).length) / 4));
	});

	it("frames every event as `event: <type>` + `data: <json>` with message_start usage and a ping", async () => {
		emulator.enqueue({ text: "abc" });
		const res = await post({ ...ask("hi"), stream: true });
		expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
		const frames = (await res.text()).split("\n\n").filter(Boolean);
		const parsed = frames.map((f) => {
			const [event, data] = f.split("\n");
			return { event: event?.replace(/^event: /, ""), data: JSON.parse(data?.replace(/^data: /, "") ?? "null") as { type: string } & Record<string, unknown> };
		});
		expect(parsed.map((p) => p.event)).toEqual([
			"message_start",
			"ping",
			"content_block_start",
			"content_block_delta",
			"content_block_stop",
			"message_delta",
			"message_stop",
		]);
		for (const p of parsed) expect(p.data.type).toBe(p.event);
		expect(parsed[0]?.data).toMatchObject({
			message: { content: [], stop_reason: null, usage: { input_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } },
		});
		expect(parsed[5]?.data).toEqual({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 1 } });
	});

	it("sends an undelayed stream as one sized body, and a delayed one event by event", async () => {
		const chunksOf = async (res: Response) => {
			const chunks: string[] = [];
			const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
			for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
			return chunks;
		};
		emulator.enqueue({ text: "at once" });
		const instant = await post({ ...ask("hi"), stream: true });
		const whole = await chunksOf(instant);
		expect(whole).toHaveLength(1);
		expect(Number(instant.headers.get("content-length"))).toBe(new TextEncoder().encode(whole[0]).byteLength);
		expect(whole[0]!.split("\n\n").filter(Boolean)).toHaveLength(7);

		emulator.enqueue({ delay_ms: 1, then: { text: "slowly" } });
		const delayed = await post({ ...ask("hi"), stream: true });
		expect(delayed.headers.get("content-length")).toBeNull();
		const events = await chunksOf(delayed);
		expect(events).toHaveLength(7);
		expect(events.every((e) => e.startsWith("event: "))).toBe(true);
	});

	it("a dropped connection mid-stream rejects the SDK's stream", async () => {
		emulator.enqueue({ drop_after_events: 3 });
		const stream = client.messages.stream(ask("hi"));
		const seen: string[] = [];
		stream.on("streamEvent", (e) => seen.push(e.type));
		await expect(stream.finalMessage()).rejects.toThrow(/connection drop/);
		expect(seen).toEqual(["message_start", "content_block_start"]); // the third event was the ping
	});

	it("a malformed event rejects the SDK's stream", async () => {
		emulator.enqueue({ malformed: true });
		const stream = client.messages.stream(ask("hi"));
		const error = await stream.finalMessage().catch((e: unknown) => e);
		expect(error).toBeInstanceOf(Anthropic.AnthropicError);
		expect((error as Error).message).toMatch(/in JSON at position/);
	});

	it("a mid-stream error event surfaces as the SDK's APIError with the error type", async () => {
		emulator.enqueue({ error: 529, after_events: 2 });
		const stream = client.messages.stream(ask("hi"));
		const error = await stream.finalMessage().catch((e: unknown) => e);
		expect(error).toBeInstanceOf(Anthropic.APIError);
		expect((error as InstanceType<typeof Anthropic.APIError>).type).toBe("overloaded_error");
	});

	it("delay_ms waits before answering and again after message_start, then plays its `then` step", async () => {
		emulator.enqueue({ delay_ms: 25, then: { text: "slow but sure" } });
		// Counted, not timed: the waits are the emulator's 25 ms timers, each run to its end.
		const waits = trackTimers((ms) => ms === 25);
		try {
			const message = await client.messages.stream(ask("hi")).finalMessage();
			expect(message.content[0]).toMatchObject({ text: "slow but sure" });
		} finally {
			waits.restore();
		}
		expect(waits.set).toBe(2);
		expect(waits.fired).toBe(2);
		expect(waits.pending.size).toBe(0);
	});
});

describe("usage and prompt caching", () => {
	it("counts ~4 characters a token, creates the cached prefix once, then reads it", async () => {
		const system = [
			{ type: "text" as const, text: "S".repeat(400), cache_control: { type: "ephemeral" as const } },
			{ type: "text" as const, text: "tail", },
		];
		const tools = [httpFetchTool()];
		const toolChars = JSON.stringify({ name: tools[0]?.name, description: tools[0]?.description, input_schema: tools[0]?.input_schema }).length;
		const prefix = Math.ceil((toolChars + 400) / 4);
		const request = { model: MODEL, max_tokens: 100, system, tools, messages: [{ role: "user" as const, content: "12345678" }] };

		emulator.enqueue({ text: "one" }, { text: "two" });
		const first = await client.messages.create(request);
		const second = await client.messages.stream(request).finalMessage();
		expect(first.usage).toMatchObject({ cache_creation_input_tokens: prefix, cache_read_input_tokens: 0, input_tokens: Math.ceil((4 + 8) / 4) });
		expect(first.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: prefix, ephemeral_1h_input_tokens: 0 });
		expect(second.usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: prefix, input_tokens: 3 });

		// A different prefix is a new cache entry; no cache_control means no caching at all.
		emulator.enqueue({ text: "three" }, { text: "four" });
		const changed = await client.messages.create({ ...request, system: [{ ...system[0]!, text: "T".repeat(400) }] });
		expect(changed.usage).toMatchObject({ cache_creation_input_tokens: prefix, cache_read_input_tokens: 0 });
		const plain = await client.messages.create({ ...request, system: "S".repeat(400), tools: [] });
		expect(plain.usage).toMatchObject({ input_tokens: Math.ceil(408 / 4), cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
	});
});

describe("prompt caching of a conversation (a breakpoint on its last block)", () => {
	it("writes the conversation once, and the next turn reads it back from a block boundary before its own breakpoint", async () => {
		const system = [{ type: "text" as const, text: "S".repeat(400), cache_control: { type: "ephemeral" as const } }];
		const prompt = "P".repeat(4000);
		const turn1 = [{ role: "user" as const, content: [{ type: "text" as const, text: prompt, cache_control: { type: "ephemeral" as const } }] }];
		emulator.enqueue({ text: "A".repeat(40) }, { text: "done" });
		const first = await client.messages.create({ model: MODEL, max_tokens: 100, system, messages: turn1 });
		// The system and the prompt written, nothing after the last breakpoint.
		expect(first.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: Math.ceil((400 + 4000) / 4), input_tokens: 0 });

		// The next turn: the prompt unmarked now, the answer, and a new marked user turn.
		const turn2 = [
			{ role: "user" as const, content: [{ type: "text" as const, text: prompt }] },
			{ role: "assistant" as const, content: "A".repeat(40) },
			{ role: "user" as const, content: [{ type: "text" as const, text: "Q".repeat(80), cache_control: { type: "ephemeral" as const } }] },
		];
		const second = await client.messages.create({ model: MODEL, max_tokens: 100, system, messages: turn2 });
		expect(second.usage).toMatchObject({
			cache_read_input_tokens: Math.ceil((400 + 4000) / 4),
			cache_creation_input_tokens: Math.ceil((400 + 4000 + 40 + 80) / 4) - Math.ceil((400 + 4000) / 4),
			input_tokens: 0,
		});
		// Without the breakpoint on the conversation, only the system prefix is read.
		emulator.enqueue({ text: "again" });
		const unmarked = await client.messages.create({ model: MODEL, max_tokens: 100, system, messages: [{ role: "user" as const, content: prompt }] });
		expect(unmarked.usage).toMatchObject({ cache_read_input_tokens: 100, cache_creation_input_tokens: 0, input_tokens: 1000 });
	});
});

describe("errors, as the SDK's typed errors", () => {
	it("429 is a RateLimitError with a readable retry-after", async () => {
		emulator.enqueue({ error: 429, retry_after: 7 });
		const error = await client.messages.create(ask("hi")).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(Anthropic.RateLimitError);
		const e = error as InstanceType<typeof Anthropic.RateLimitError>;
		expect(e.status).toBe(429);
		expect(e.headers?.get("retry-after")).toBe("7");
		expect(e.type).toBe("rate_limit_error");
		expect(e.requestID).toMatch(/^req_/);
		expect(e.error).toMatchObject({ type: "error", error: { type: "rate_limit_error" }, request_id: e.requestID });
	});

	it("the monthly spend cap's 429 names its cause in details and sends no retry-after; retry_after: null sends none on any 429", async () => {
		emulator.enqueue({ error: 429, error_code: "enforced_spend_limit_reached" }, { error: 429, retry_after: null });
		const capped = (await client.messages.create(ask("hi")).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.RateLimitError>;
		expect(capped).toBeInstanceOf(Anthropic.RateLimitError);
		expect(capped).toMatchObject({ status: 429, type: "rate_limit_error", errorCode: "enforced_spend_limit_reached" });
		expect(capped.headers?.get("retry-after")).toBeNull();
		expect(capped.apiMessage).toMatch(/^You have reached your API usage limits: .* You will regain access on \d{4}-\d{2}-01 at 00:00 UTC\.$/);
		expect(capped.error).toMatchObject({ type: "error", error: { type: "rate_limit_error", details: { error_code: "enforced_spend_limit_reached" } }, request_id: capped.requestID });
		const bare = (await client.messages.create(ask("hi")).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.RateLimitError>;
		expect(bare).toMatchObject({ status: 429, errorCode: null });
		expect(bare.headers?.get("retry-after")).toBeNull();
	});

	it("529 is an APIError with status 529 and overloaded_error; 500 is api_error", async () => {
		emulator.enqueue({ error: 529 }, { error: 500, message: "boom" });
		const overloaded = await client.messages.create(ask("hi")).catch((e: unknown) => e);
		expect(overloaded).toBeInstanceOf(Anthropic.APIError);
		expect(overloaded).toMatchObject({ status: 529, type: "overloaded_error" });
		const server = await client.messages.stream(ask("hi")).finalMessage().catch((e: unknown) => e);
		expect(server).toBeInstanceOf(Anthropic.InternalServerError);
		expect(server).toMatchObject({ status: 500, type: "api_error" });
		expect((server as Error).message).toContain("boom");
	});

	it("401: a scripted one, a rejected key, and a missing key", async () => {
		setUp({ rejectKeys: ["sk-ant-revoked"] });
		emulator.enqueue({ error: 401 });
		await expect(client.messages.create(ask("hi"))).rejects.toBeInstanceOf(Anthropic.AuthenticationError);

		const revoked = new Anthropic({ apiKey: "sk-ant-revoked", maxRetries: 0 });
		const error = await revoked.messages.create(ask("hi")).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
		expect(error).toMatchObject({ status: 401, type: "authentication_error" });

		const res = await post(ask("hi"), {});
		expect(res.status).toBe(401);
		expect(await res.json()).toMatchObject({ type: "error", error: { type: "authentication_error", message: "x-api-key header is required" } });
		// Every attempt is recorded, rejected ones too (key rotation tests need to see which key was tried).
		expect(emulator.requests.map((r) => r.apiKey)).toEqual(["sk-ant-test", "sk-ant-revoked", null]);
	});

	it("404 not_found_error for a model id that is not Claude's, as the real API answers one; any Claude id in its Anthropic, Bedrock or Vertex spelling is served", async () => {
		for (const model of ["gpt-4", "llama-3-70b", "sonnet"]) {
			const res = await post({ ...ask("hi"), model });
			expect(res.status, model).toBe(404);
			expect(res.headers.get("request-id")).toMatch(/^req_/);
			expect(await res.json()).toMatchObject({ type: "error", error: { type: "not_found_error", message: `model: ${model}` } });
		}
		// Through the SDK: a NotFoundError; a standing step for the model does not answer in its place.
		emulator.modelErrors["gpt-4"] = { text: "served anyway" };
		await expect(client.messages.create({ ...ask("hi"), model: "gpt-4" })).rejects.toMatchObject({ status: 404, type: "not_found_error" });
		for (const model of ["claude-sonnet-5-5", "claude-3-5-haiku-latest", "anthropic.claude-3-5-sonnet-20240620-v1:0", "us.anthropic.claude-sonnet-4-20250514-v1:0", "claude-3-5-sonnet@20240620"]) {
			expect((await client.messages.create({ ...ask("hi"), model })).stop_reason, model).toBe("end_turn");
		}
	});

	it("400 invalid_request_error for missing fields, roles that do not alternate and a stray tool_result", async () => {
		const cases: [unknown, RegExp][] = [
			[{ messages: [{ role: "user", content: "x" }], max_tokens: 5 }, /^model: Field required/],
			[{ model: MODEL, messages: [{ role: "user", content: "x" }] }, /^max_tokens: Field required/],
			[{ model: MODEL, max_tokens: 5 }, /^messages: Field required/],
			[{ model: MODEL, max_tokens: 5, messages: [{ role: "assistant", content: "x" }] }, /first message must use the "user" role/],
			[
				{ model: MODEL, max_tokens: 5, messages: [{ role: "user", content: "a" }, { role: "user", content: "b" }] },
				/roles must alternate .* multiple "user" roles in a row/,
			],
			[
				{
					model: MODEL,
					max_tokens: 5,
					messages: [
						{ role: "user", content: "a" },
						{ role: "assistant", content: [{ type: "tool_use", id: "toolu_a", name: "t", input: {} }] },
						{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_b", content: "r" }] },
					],
				},
				/^messages\.2\.content\.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_b/,
			],
		];
		for (const [body, message] of cases) {
			const res = await post(body);
			expect(res.status, JSON.stringify(body)).toBe(400);
			expect(res.headers.get("request-id")).toMatch(/^req_/);
			const json = (await res.json()) as { type: string; error: { type: string; message: string }; request_id: string };
			expect(json.type).toBe("error");
			expect(json.error.type).toBe("invalid_request_error");
			expect(json.error.message).toMatch(message);
		}
		// Through the SDK: a BadRequestError.
		const stray = client.messages.create({
			...ask("x"),
			messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_zz", content: "r" }] }],
		});
		await expect(stray).rejects.toBeInstanceOf(Anthropic.BadRequestError);
	});
});

describe("a lone UTF-16 surrogate in a request (half an emoji, as a cut text leaves it)", () => {
	it("is refused as the real API refuses it: 400 invalid_request_error, the body not valid JSON; in a key too", async () => {
		const bodies = [
			`{"model":"${MODEL}","max_tokens":5,"messages":[{"role":"user","content":"cut at \\ud83d"}]}`,
			`{"model":"${MODEL}","max_tokens":5,"messages":[{"role":"user","content":"cut at \\ud83d and on"}]}`,
			`{"model":"${MODEL}","max_tokens":5,"messages":[{"role":"user","content":"ok"}],"metadata":{"\\ud800":"x"}}`,
		];
		for (const body of bodies) {
			const res = await fetch("https://api.anthropic.com/v1/messages", { method: "POST", headers: { "content-type": "application/json", "x-api-key": "sk-ant-test" }, body });
			expect(res.status, body).toBe(400);
			expect(await res.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error", message: "The request body is not valid JSON: no low surrogate in string" } });
		}
		// A low half alone (the end of an emoji whose head was cut off).
		const low = await post({ model: MODEL, max_tokens: 5, messages: [{ role: "user", content: "\ude00 tail" }] });
		expect(low.status).toBe(400);
		expect(((await low.json()) as { error: { message: string } }).error.message).toBe("The request body is not valid JSON: invalid high surrogate in string");
		// Through the SDK, which sends the lone half as an escape: a BadRequestError. Whole emoji pass.
		await expect(client.messages.create(ask(`tool said ${"😀".slice(0, 1)}`))).rejects.toBeInstanceOf(Anthropic.BadRequestError);
		expect((await client.messages.create(ask("tool said 😀"))).stop_reason).toBe("end_turn");
	});

	it("is never made by the demo reply, whose quote of the last input stops before an emoji it would halve", async () => {
		const prompt = `${"a".repeat(199)}😀 tail`;
		const reply = await client.messages.create(ask(prompt));
		const text = reply.content[0]?.type === "text" ? reply.content[0].text : "";
		// Shown escaped: a lone surrogate in a failed assertion's message breaks the test runner's channel.
		expect(text.isWellFormed(), JSON.stringify(text.slice(-10))).toBe(true);
		expect(text.endsWith(`Last input: "${"a".repeat(199)}"`)).toBe(true);
	});
});

describe("conversation rules the real API enforces (400 invalid_request_error)", () => {
	const user = (content: unknown) => ({ role: "user", content });
	const assistant = (content: unknown) => ({ role: "assistant", content });
	const use = (id: string) => ({ type: "tool_use", id, name: "t", input: {} });
	const result = (id: string) => ({ type: "tool_result", tool_use_id: id, content: "r" });
	const body = (messages: unknown[], extra: Record<string, unknown> = {}) => ({ model: MODEL, max_tokens: 5, messages, ...extra });

	async function rejected(request: unknown): Promise<string> {
		const res = await post(request);
		expect(res.status, JSON.stringify(request)).toBe(400);
		const json = (await res.json()) as { type: string; error: { type: string; message: string } };
		expect(json).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
		return json.error.message;
	}

	it("every message but a final assistant one has non-empty content, as a string or a list", async () => {
		const message = "all messages must have non-empty content except for the optional final assistant message";
		expect(await rejected(body([user("")]))).toBe(`messages.0: ${message}`);
		expect(await rejected(body([user([])]))).toBe(`messages.0: ${message}`);
		expect(await rejected(body([user("a"), assistant([]), user("b")]))).toBe(`messages.1: ${message}`);
		expect(await rejected(body([user("a"), assistant(""), user("b")]))).toBe(`messages.1: ${message}`);
		// An empty final assistant message passes this rule and meets the prefill rule instead.
		expect(await rejected(body([user("a"), assistant([])]))).toBe(
			"This model does not support assistant message prefill. The conversation must end with a user message.",
		);
	});

	it("text blocks in messages, tool results and system must contain non-whitespace text", async () => {
		const whitespace = "text content blocks must contain non-whitespace text";
		const empty = "text content blocks must be non-empty";
		expect(await rejected(body([user([{ type: "text", text: " \n\t" }])]))).toBe(`messages: ${whitespace}`);
		expect(await rejected(body([user("  ")]))).toBe(`messages: ${whitespace}`);
		expect(await rejected(body([user([{ type: "text", text: "ok" }, { type: "text", text: "" }])]))).toBe(`messages: ${empty}`);
		expect(await rejected(body([user("a"), assistant([{ type: "text", text: "\n\n" }, use("toolu_a")]), user([result("toolu_a")])]))).toBe(
			`messages: ${whitespace}`,
		);
		const blankResult = { type: "tool_result", tool_use_id: "toolu_a", content: [{ type: "text", text: " " }] };
		expect(await rejected(body([user("a"), assistant([use("toolu_a")]), user([blankResult])]))).toBe(`messages: ${whitespace}`);
		expect(await rejected(body([user("a")], { system: [{ type: "text", text: "You are terse." }, { type: "text", text: "  " }] }))).toBe(
			`system: ${whitespace}`,
		);
		expect(await rejected(body([user("a")], { system: [{ type: "text", text: "" }] }))).toBe(`system: ${empty}`);
		// A tool_result with empty content is fine, as is a system string.
		emulator.enqueue({ text: "ok" }, { text: "ok" });
		expect((await post(body([user("a"), assistant([use("toolu_a")]), user([{ type: "tool_result", tool_use_id: "toolu_a", content: "" }])]))).status).toBe(200);
		expect((await post(body([user("a")], { system: "" }))).status).toBe(200);
	});

	it("the conversation must end with a user message (no assistant prefill)", async () => {
		const prefill = "This model does not support assistant message prefill. The conversation must end with a user message.";
		expect(await rejected(body([user("a"), assistant("The answer is")]))).toBe(prefill);
		// A trailing tool call without its result is a prefill too: there is no next message to hold the result.
		expect(await rejected(body([user("a"), assistant([use("toolu_a")])]))).toBe(prefill);
		const stream = client.messages.stream({ ...ask("a"), messages: [{ role: "user", content: "a" }, { role: "assistant", content: "Sure:" }] });
		const error = await stream.finalMessage().catch((e: unknown) => e);
		expect(error).toBeInstanceOf(Anthropic.BadRequestError);
		expect(error).toMatchObject({ status: 400, error: { error: { type: "invalid_request_error", message: prefill } } });
	});

	it("every tool_use is answered by a tool_result in the very next message, and every tool_result answers one", async () => {
		expect(await rejected(body([user("a"), assistant([use("toolu_a"), use("toolu_b")]), user([result("toolu_a")])]))).toBe(
			"messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_b. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
		);
		expect(await rejected(body([user("a"), assistant([use("toolu_a"), use("toolu_b")]), user("go on")]))).toBe(
			"messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a, toolu_b. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
		);
		// A result two messages later does not count, and it answers nothing in its own previous message.
		expect(
			await rejected(body([user("a"), assistant([use("toolu_a")]), user([result("toolu_a")]), assistant("done"), user([{ type: "text", text: "more" }, result("toolu_a")])])),
		).toBe(
			"messages.4.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_a. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
		);
		expect(await rejected(body([user("a"), assistant([use("toolu_a")]), user([result("toolu_a"), result("toolu_x")])]))).toBe(
			"messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
		);
		// One id twice in an answer (as a model behind a gateway may give it) is refused, answered or not.
		expect(await rejected(body([user("a"), assistant([use("toolu_a"), use("toolu_a")]), user([result("toolu_a")])]))).toBe("messages.1.content.1: `tool_use` ids must be unique");
		// All answered, text alongside the results: accepted.
		emulator.enqueue({ text: "ok" });
		const ok = await post(body([user("a"), assistant([{ type: "text", text: "Both." }, use("toolu_a"), use("toolu_b")]), user([result("toolu_b"), result("toolu_a"), { type: "text", text: "and?" }])]));
		expect(ok.status).toBe(200);
	});
});

describe("scripted stop reasons and cut answers", () => {
	const sse = async (res: Response) =>
		(await res.text())
			.split("\n\n")
			.filter(Boolean)
			.map((f) => JSON.parse(f.split("\n")[1]!.replace(/^data: /, "")) as { type: string } & Record<string, unknown>);

	it("{ text: \"\" } answers no content with end_turn, streamed with no content block", async () => {
		emulator.enqueue({ text: "" }, { text: "" });
		const message = await client.messages.create(ask("hi"));
		expect(message.content).toEqual([]);
		expect(message.stop_reason).toBe("end_turn");
		const events = await sse(await post({ ...ask("hi"), stream: true }));
		expect(events.map((e) => e.type)).toEqual(["message_start", "ping", "message_delta", "message_stop"]);
		expect(events[2]).toMatchObject({ delta: { stop_reason: "end_turn" } });
	});

	it("{ stop_reason } answers refusal, model_context_window_exceeded or pause_turn, with a text block when given", async () => {
		emulator.enqueue({ stop_reason: "refusal", text: "I can't help with that." }, { stop_reason: "model_context_window_exceeded" }, { stop_reason: "pause_turn", text: "" });
		const refusal = await client.messages.create(ask("hi"));
		expect(refusal.stop_reason).toBe("refusal");
		expect(refusal.content).toEqual([{ type: "text", text: "I can't help with that.", citations: null }]);
		const full = await client.messages.create(ask("hi"));
		expect(full).toMatchObject({ stop_reason: "model_context_window_exceeded", content: [] });
		const paused = await client.messages.create(ask("hi"));
		expect(paused).toMatchObject({ stop_reason: "pause_turn", content: [] });

		emulator.enqueue({ stop_reason: "pause_turn", text: "Still searching" });
		const stream = client.messages.stream(ask("hi"));
		const deltas: string[] = [];
		stream.on("streamEvent", (e) => {
			if (e.type === "message_delta") deltas.push(String(e.delta.stop_reason));
		});
		const streamed = await stream.finalMessage();
		expect(streamed.stop_reason).toBe("pause_turn");
		expect(streamed.content).toEqual([{ type: "text", text: "Still searching", citations: null }]);
		expect(deltas).toEqual(["pause_turn"]);

		expect(() => emulator.enqueue({ stop_reason: "end_turn" } as never)).toThrow(/steps\[0\]: stop_reason must be one of refusal, model_context_window_exceeded, pause_turn/);
	});

	it("max_tokens_stop: text alone, nothing at all, or cut inside a tool call's input", async () => {
		const input = { url: "https://api.github.com/repos/cloudflare/workerd", method: "GET" };
		const json = JSON.stringify(input);
		emulator.enqueue({ max_tokens_stop: true }, { max_tokens_stop: true, text: "Let me check.", tool_use: { name: "http_fetch", input, id: "toolu_01cut" } });
		expect(await client.messages.create(ask("hi"))).toMatchObject({ stop_reason: "max_tokens", content: [] });
		const cut = await client.messages.create({ ...ask("hi"), tools: [httpFetchTool()] });
		expect(cut.stop_reason).toBe("max_tokens");
		expect(cut.content).toEqual([
			{ type: "text", text: "Let me check.", citations: null },
			{ type: "tool_use", id: "toolu_01cut", name: "http_fetch", input: {}, caller: { type: "direct" } },
		]);

		// Streaming: the input_json_delta pieces carry the first half of the input, then the block and the message stop.
		emulator.enqueue({ max_tokens_stop: true, tool_use: { name: "http_fetch", input, id: "toolu_01cut" } });
		const events = await sse(await post({ ...ask("hi"), tools: [httpFetchTool()], stream: true }));
		expect(events.map((e) => e.type).filter((t) => t !== "content_block_delta")).toEqual([
			"message_start",
			"ping",
			"content_block_start",
			"content_block_stop",
			"message_delta",
			"message_stop",
		]);
		expect(events[2]).toMatchObject({ index: 0, content_block: { type: "tool_use", id: "toolu_01cut", name: "http_fetch", input: {} } });
		const pieces = events.filter((e) => e.type === "content_block_delta").map((e) => (e.delta as { type: string; partial_json: string }));
		expect(pieces.every((d) => d.type === "input_json_delta")).toBe(true);
		expect(pieces.map((d) => d.partial_json).join("")).toBe(json.slice(0, Math.floor(json.length / 2)));
		expect(events.at(-2)).toMatchObject({ type: "message_delta", delta: { stop_reason: "max_tokens", stop_sequence: null } });

		// Through the SDK's stream: the same stop, with the tool_use block holding whatever the half parses to.
		emulator.enqueue({ max_tokens_stop: true, text: "On it.", tool_use: { name: "http_fetch", input } });
		const streamed = await client.messages.stream({ ...ask("hi"), tools: [httpFetchTool()] }).finalMessage();
		expect(streamed.stop_reason).toBe("max_tokens");
		expect(streamed.content.map((b) => b.type)).toEqual(["text", "tool_use"]);
		expect(streamed.content[1]).not.toMatchObject({ input });

		// A one-character input still streams one character.
		emulator.enqueue({ max_tokens_stop: true, tool_use: { name: "t", input: 7 } });
		const tiny = await sse(await post({ ...ask("hi"), stream: true }));
		expect(tiny.filter((e) => e.type === "content_block_delta").map((e) => (e.delta as { partial_json: string }).partial_json).join("")).toBe("7");

		expect(() => emulator.enqueue({ max_tokens_stop: true, tool_use: { input: {} } } as never)).toThrow(/steps\[0\]: tool_use needs a name/);
	});
});

describe("hang", () => {
	it("never answers until the request's AbortSignal fires", async () => {
		emulator.enqueue({ hang: true });
		const handled = vi.fn();
		fake("https://api.anthropic.com", (req) => {
			const answer = emulator.handle(req);
			answer.then(() => handled("resolved"), () => handled("rejected"));
			return answer;
		});
		const controller = new AbortController();
		const call = client.messages.create(ask("hi"), { signal: controller.signal });
		const outcome = call.then(
			() => "answered",
			(e: unknown) => e,
		);
		await vi.waitFor(() => expect(emulator.requests).toHaveLength(1));
		expect(handled).not.toHaveBeenCalled();

		controller.abort();
		expect(await outcome).toBeInstanceOf(Anthropic.APIUserAbortError);
		// Settled once, by the abort: an emulator that answered, before the abort or after it, would
		// have resolved the request instead (no wait is needed to see that, only the settling).
		await vi.waitFor(() => expect(handled).toHaveBeenCalled());
		expect(handled.mock.calls).toEqual([["rejected"]]);
	});

	it("reset() releases a hung request with a 500 api_error", async () => {
		emulator.enqueue({ hang: true });
		const call = client.messages.create(ask("hi")).catch((e: unknown) => e);
		await vi.waitFor(() => expect(emulator.requests).toHaveLength(1));
		emulator.reset();
		expect(await call).toMatchObject({ status: 500, type: "api_error" });
		expect(emulator.requests).toHaveLength(0);
	});
});

describe("scripting", () => {
	it("plays queued steps in order, one per request, then falls back to the demo behaviour", async () => {
		emulator.enqueue({ text: "first" }, { tool_use: { name: "lookup", input: { q: "x" } } }, { text: "third" });
		expect(emulator.queued).toBe(3);
		const answers = [];
		for (let i = 0; i < 4; i++) answers.push(await client.messages.create(ask(`turn ${i}`)));
		expect(answers.map((m) => m.stop_reason)).toEqual(["end_turn", "tool_use", "end_turn", "end_turn"]);
		expect(answers[0]?.content[0]).toMatchObject({ text: "first" });
		expect(answers[1]?.content[0]).toMatchObject({ type: "tool_use", name: "lookup", input: { q: "x" } });
		expect((answers[1]?.content[0] as { id: string }).id).toMatch(/^toolu_01/);
		expect(answers[2]?.content[0]).toMatchObject({ text: "third" });
		expect(answers[3]?.content[0]).toMatchObject({ text: expect.stringContaining('Last input: "turn 3"') });
		expect(emulator.queued).toBe(0);
	});

	it("refuses a malformed step without queueing any of the batch", () => {
		expect(() => emulator.enqueue({ text: "ok" }, { error: 418 } as never)).toThrow(/steps\[1\]: error must be one of/);
		expect(emulator.queued).toBe(0);
	});

	it("model_errors fail one model on every call and leave the queue to the model that answers", async () => {
		setUp({ modelErrors: { [MODEL]: { error: 529 } } });
		emulator.enqueue({ text: "from the fallback" });
		for (let i = 0; i < 2; i++) {
			await expect(client.messages.create(ask("hi"))).rejects.toMatchObject({ status: 529, type: "overloaded_error" });
		}
		expect(emulator.queued).toBe(1);
		const fallback = await client.messages.create({ ...ask("hi"), model: FALLBACK });
		expect(fallback.model).toBe(FALLBACK);
		expect(fallback.content[0]).toMatchObject({ text: "from the fallback" });
		expect(emulator.requests.map((r) => r.model)).toEqual([MODEL, MODEL, FALLBACK]);

		// reset() restores the configured model errors; they can be cleared at runtime.
		delete emulator.modelErrors[MODEL];
		emulator.reset();
		await expect(client.messages.create(ask("hi"))).rejects.toMatchObject({ status: 529 });
	});

	it("is scriptable over HTTP: script, model_errors, requests, reset", async () => {
		const control = (path: string, body?: unknown) =>
			fetch(`https://api.anthropic.com/__emulator/${path}`, body === undefined ? {} : { method: "POST", body: JSON.stringify(body) });
		expect(await (await control("script", [{ text: "scripted over http" }, { error: 429 }])).json()).toEqual({ queued: 2 });
		const bad = await control("script", [{ nope: true }]);
		expect(bad.status).toBe(400);
		expect(await bad.json()).toMatchObject({ error: { type: "invalid_request_error", message: expect.stringMatching(/^steps\[0\]: unknown step/) } });

		expect((await client.messages.create(ask("hi"))).content[0]).toMatchObject({ text: "scripted over http" });
		const limited = await client.messages.create(ask("hi")).catch((e: unknown) => e);
		expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
		expect((limited as InstanceType<typeof Anthropic.RateLimitError>).headers?.get("retry-after")).toBe("1");

		expect((await control("model_errors", { [FALLBACK]: { error: 500 } })).status).toBe(200);
		await expect(client.messages.create({ ...ask("hi"), model: FALLBACK })).rejects.toMatchObject({ status: 500 });

		const recorded = (await (await control("requests")).json()) as { model: string; apiKey: string }[];
		expect(recorded.map((r) => r.model)).toEqual([MODEL, MODEL, FALLBACK]);
		expect(recorded[0]?.apiKey).toBe("sk-ant-test");

		expect((await control("reset", {})).status).toBe(200);
		expect(emulator.requests).toHaveLength(0);
		expect((await client.messages.create({ ...ask("hi"), model: FALLBACK })).stop_reason).toBe("end_turn");
	});
});

describe("demo behaviour", () => {
	it("calls the first tool while no tool_result exists, then answers quoting the tool result", async () => {
		const tools = [httpFetchTool(), webhookTool()];
		const first = await client.messages.create({ ...ask("Summarize the latest commits"), tools });
		expect(first.stop_reason).toBe("tool_use");
		const call = first.content[0];
		expect(call).toMatchObject({ type: "tool_use", name: "http_fetch", input: { url: "https://api.github.com/", method: "GET" } });
		if (call?.type !== "tool_use") throw new Error("expected a tool_use block");

		const result = `{"commits":[${'"a",'.repeat(100)}"z"]}`;
		const second = await client.messages.create({
			...ask("Summarize the latest commits"),
			tools,
			messages: [
				{ role: "user", content: "Summarize the latest commits" },
				{ role: "assistant", content: first.content },
				{ role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: result }] },
			],
		});
		expect(second.stop_reason).toBe("end_turn");
		const text = second.content[0]?.type === "text" ? second.content[0].text : "";
		expect(text.endsWith(`Last input: "${result.slice(0, 200)}"`)).toBe(true);
		// Deterministic: the same conversation gets the same text.
		const again = await client.messages.create({ ...ask("x"), messages: [{ role: "user", content: "Summarize the latest commits" }] });
		const again2 = await client.messages.create({ ...ask("x"), messages: [{ role: "user", content: "Summarize the latest commits" }] });
		expect(again.content).toEqual(again2.content);
	});

	it("fills a tool's required properties from its input_schema", async () => {
		const message = await client.messages.create({ ...ask("File it"), tools: [webhookTool()] });
		expect(message.content[0]).toMatchObject({
			type: "tool_use",
			name: "create_ticket",
			input: { title: "Demo title", priority: "low", count: 1 },
		});
		// Only required properties are filled.
		expect(Object.keys((message.content[0] as { input: object }).input).sort()).toEqual(["count", "priority", "title"]);
	});
});

describe("request recording", () => {
	it("records every request parsed, with the key and headers the SDK sent", async () => {
		const system = [{ type: "text" as const, text: "You are terse." }];
		await client.messages.create({ ...ask("one"), system });
		await client.messages.stream({ ...ask("two"), tools: [httpFetchTool()] }).finalMessage();
		expect(emulator.requests).toHaveLength(2);
		const [a, b] = emulator.requests;
		expect(a).toMatchObject({ method: "POST", path: "/v1/messages", model: MODEL, system, stream: false, max_tokens: 1024, apiKey: "sk-ant-test", tools: null });
		expect(a?.messages).toEqual([{ role: "user", content: "one" }]);
				// SDK 1.14 sends the API key as a bearer token.
		expect(a?.headers.authorization).toBe("Bearer sk-ant-test");
		expect(a?.headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
		expect(b).toMatchObject({ stream: true, tools: [{ name: "http_fetch" }] });
	});
});

function httpFetchTool(): WireTool & Anthropic.Tool {
	return {
		name: "http_fetch",
		description: "Fetch a URL over HTTPS. Allowed hosts: api.github.com, example.com. Methods: GET.",
		input_schema: {
			type: "object",
			properties: { url: { type: "string" }, method: { type: "string", enum: ["GET"] } },
			required: ["url"],
		},
	};
}

function webhookTool(): WireTool & Anthropic.Tool {
	return {
		name: "create_ticket",
		description: "Create a ticket.",
		input_schema: {
			type: "object",
			properties: {
				title: { type: "string" },
				priority: { type: "string", enum: ["low", "high"] },
				count: { type: "integer" },
				notes: { type: "string" },
			},
			required: ["title", "priority", "count"],
		},
	};
}

describe("thinking and the prefix check", () => {
	it("streams a scripted thinking block first, signed, and takes it back as it came", async () => {
		emulator.enqueue({ thinking: "Let me think.", text: "Done." }, { text: "Again." });
		const first = await client.messages.stream(ask("Think first")).finalMessage();
		expect(first.content.map((b) => b.type)).toEqual(["thinking", "text"]);
		const block = first.content[0] as Anthropic.ThinkingBlock;
		expect(block.thinking).toBe("Let me think.");
		expect(block.signature).toMatch(/^emulated_sig_/);
		// The prompt it thought after, sent back as a block with a cache breakpoint on it: the same content,
		// no change (cache_control is not part of it, nor whether a text is a string or a block).
		const messages: Anthropic.MessageParam[] = [
			{ role: "user", content: [{ type: "text", text: "Think first", cache_control: { type: "ephemeral" } }] },
			{ role: "assistant", content: first.content },
			{ role: "user", content: "And?" },
		];
		const second = await client.messages.create({ model: MODEL, max_tokens: 1024, messages });
		expect(second.content).toMatchObject([{ type: "text", text: "Again." }]);
	});

	it("refuses a thinking block sent back after something before it changed, in the API's words", async () => {
		emulator.enqueue({ thinking: "Let me think.", text: "Done." });
		const first = await client.messages.create(ask("Think first"));
		const changed = [
			{ role: "user", content: "Think first, edited" },
			{ role: "assistant", content: first.content },
			{ role: "user", content: "And?" },
		];
		const res = await post({ model: MODEL, max_tokens: 1024, messages: changed });
		expect(res.status).toBe(400);
		expect(((await res.json()) as { error: { type: string; message: string } }).error).toEqual({
			type: "invalid_request_error",
			message:
				'messages.1.content.0: Invalid `signature` in `thinking` block. The block is bound to a different conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".',
		});
		// A block's own text changed is refused too; the block left out is not.
		const tampered = [changed[0]!, { role: "assistant", content: [{ ...first.content[0]!, thinking: "Something else." }, first.content[1]!] }, changed[2]!];
		tampered[0] = { role: "user", content: "Think first" };
		expect((await post({ model: MODEL, max_tokens: 1024, messages: tampered })).status).toBe(400);
		emulator.enqueue({ text: "Fine." });
		const without = [tampered[0]!, { role: "assistant", content: [first.content[1]!] }, changed[2]!];
		expect((await post({ model: MODEL, max_tokens: 1024, messages: without })).status).toBe(200);
	});
});
