/**
 * The seams between the agent loop (durable-objects/agent/runner) and its parts: the model client,
 * the tools and prompt assembly. Each part is built and tested on its own against these shapes.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type { AgentDefinition } from "../config/schema.ts";

export type MessageParam = Anthropic.MessageParam;
export type Message = Anthropic.Message;
/** A client tool drover runs, or an Anthropic server tool passed through. */
export type ToolParam = Anthropic.ToolUnion;
export type TextBlockParam = Anthropic.TextBlockParam;
export type ToolResultBlockParam = Anthropic.ToolResultBlockParam;

// ── Model client ────────────────────────────────────────────────────────────────────────────────
export interface ModelRequest {
	/** The agent's model first, then its fallback models, in order. */
	models: readonly string[];
	system: TextBlockParam[];
	messages: MessageParam[];
	tools: ToolParam[];
	max_tokens: number;
	/** Aborts the in-flight request (cancel, timeout). */
	signal?: AbortSignal;
	/**
	 * At most this many billed answers (max_requests' rest): a refusal that uses the last is the
	 * answer, not followed by a fallback, which would be a billed request past the limit.
	 */
	maxBilled?: number;
}

export interface ModelResponse {
	message: Message;
	/** The model that answered (a fallback when the primary was overloaded, unknown or refused). */
	model: string;
	/**
	 * Every attempt made, for the job's JSONL `system` lines: key index, model, status, waited ms. A
	 * `refusal` answered and was billed (its `usage`), and the same request went on to the next model.
	 * An `aborted` one (a failed call's last: a cancel, the job's deadline) has the `usage` the API
	 * reported before the abort, if any: the whole answer's when it came all the same (`whole`), or
	 * what the stream had said when it was cut. A `network` one says what happened (`detail`: the
	 * connection failed, the answer never began, the stream stalled or was cut short). `at` is when the
	 * try ended (ms since the epoch), so each try's line is dated as it happened, not as the call ended.
	 * `request_id` is the `request-id` header of a try that did not answer (an error's, or a stream's
	 * that broke after its headers): what the API's support asks for.
	 */
	attempts: { model: string; key: number; status: number | "network" | "refusal" | "aborted" | "ok"; waited_ms: number; at: number; usage?: Anthropic.Usage; whole?: boolean; detail?: string; request_id?: string }[];
}

export type ModelErrorKind = "rate_limit" | "spend_limit" | "overloaded" | "server" | "auth" | "invalid_request" | "network" | "guard" | "aborted";

/**
 * A model call that failed after its bounded retries; `retryAfterMs` when the caller should come back
 * later; `requestId`, the API's id for the answer the message reports (null where none came), kept
 * out of the message: the message is an incident's signature, and an id in it would make each
 * failure an incident of its own.
 */
export class ModelCallError extends Error {
	readonly kind: ModelErrorKind;
	readonly status: number | null;
	readonly retryAfterMs: number | null;
	readonly requestId: string | null;

	constructor(kind: ModelErrorKind, message: string, status: number | null = null, retryAfterMs: number | null = null, requestId: string | null = null) {
		super(message);
		this.name = "ModelCallError";
		this.kind = kind;
		this.status = status;
		this.retryAfterMs = retryAfterMs;
		this.requestId = requestId;
	}
}

export interface ModelClient {
	call(request: ModelRequest): Promise<ModelResponse>;
}

// ── Tools ──────────────────────────────────────────────────────────────────────────────────────
export interface ToolContext {
	agent: AgentDefinition;
	env: Env;
	jobId: string;
	/** Aborted by a forced cancel of the job (`cancel --force`): the call's requests are cut off with it. */
	signal?: AbortSignal;
}

export interface ToolOutcome {
	ok: boolean;
	/** What the model reads as the tool_result content. */
	content: string;
	/**
	 * A failure's kind for the tool.call log line (a few words, never the content: it can quote a URL,
	 * and redaction misses a credential in a query such as ?code=…).
	 */
	failure?: string;
}

// ── Prompt ─────────────────────────────────────────────────────────────────────────────────────
export interface PromptParts {
	/** System blocks; the last stable block carries cache_control so runs share a cached prefix. */
	system: TextBlockParam[];
	/** The first user message's text: notepad block (if any) then the prompt. */
	user: string;
}
