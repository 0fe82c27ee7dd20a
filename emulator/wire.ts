// The Messages API's wire shapes as the emulator reads and writes them (kept here rather than taken
// from the SDK: the emulator checks the SDK, not itself), and the steps a test scripts.

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

export const SCRIPTED_STOP_REASONS: readonly ScriptedStopReason[] = ["refusal", "model_context_window_exceeded", "pause_turn"];

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
	/** How many of the latest requests `requests` keeps (default: all, as a test reads them). */
	keepRequests?: number;
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
