/**
 * The Messages API client the agent loop calls once per turn. drover owns the retry policy (the
 * SDK's own retries are off) so that every wait is bounded, visible in `attempts`, and never long
 * enough to pin a Durable Object: a long rate limit is handed back to the loop as `retryAfterMs`,
 * which it turns into an alarm.
 */
import { BaseAnthropic } from "@anthropic-ai/sdk/client";
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "@anthropic-ai/sdk/core/error";
import { Messages } from "@anthropic-ai/sdk/resources/messages/messages";

/**
 * The SDK's client with only the Messages resource: the full `Anthropic` class also pulls in every
 * other resource (beta, files, batches…), which nearly doubles the Worker's bundle.
 */
class Anthropic extends BaseAnthropic {
	messages: Messages = new Messages(this);
}
import {
	ModelCallError,
	type Message,
	type ModelClient,
	type ModelErrorKind,
	type ModelRequest,
	type ModelResponse,
} from "./contracts.ts";
import { DEFAULT_BASE_URL, EMULATOR_API_KEY, providerConfig, type ProviderConfig, type ProviderEnv } from "./credentials.ts";
import { abortable } from "../shared/abortable.ts";
import { deadline } from "../shared/deadline.ts";
import { messageFromSse, usageFromSse } from "./streamed-message.ts";
import { retryAfterMs } from "../shared/retry-after.ts";
import { outboundFetch } from "../shared/subrequests.ts";
import { fetchErrorMessage } from "../shared/fetch-error.ts";

export type ModelAttempt = ModelResponse["attempts"][number];

export interface ModelClientOptions {
	/** The fetch the SDK uses; defaults to the global one, looked up per request. */
	fetch?: typeof fetch;
	/** Waits between tries, ending early (and releasing its timer) when `signal` aborts; injected by tests so time is driven, never slept. */
	sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
	/** The clock, for `retry-after` given as an HTTP date. */
	now?: () => number;
	/** The longest rate-limit wait held in the call; longer ones are handed back as retryAfterMs. */
	maxWaitMs?: number;
	/** How long a streamed answer may send nothing before the try is given up (see STREAM_IDLE_TIMEOUT_MS); tests shorten it. */
	idleTimeoutMs?: number;
	/** How long an aborted call waits for its exchange to end, to learn what it was billed (see ABORTED_READ_MS). */
	abortedReadMs?: number;
}

/** A ModelCallError that also carries the tries made, so a failed turn is as visible as a good one. */
export class ModelCallFailure extends ModelCallError {
	readonly attempts: ModelAttempt[];

	constructor(kind: ModelErrorKind, message: string, attempts: ModelAttempt[], status: number | null = null, retryAfterMs: number | null = null, requestId: string | null = null) {
		super(kind, message, status, retryAfterMs, requestId);
		this.attempts = attempts;
	}
}

/** Waits before the 2nd and 3rd try of a model that answered overloaded, 5xx or not at all. */
const TRANSIENT_BACKOFF_MS: readonly number[] = [500, 1500];
const DEFAULT_MAX_WAIT_MS = 10_000;
// A rate limit's 429 says when to come back (retry-after); a gateway's might not: assume a short,
// honest pause. (The API's one 429 without it, the monthly spend cap's, is no rate limit: see
// SPEND_LIMIT_CODE.)
export const DEFAULT_RETRY_AFTER_MS = 5_000;

/**
 * The cause the API names (`error.details.error_code`) when the key's organisation has reached its
 * tier's monthly spend cap: a 429 `rate_limit_error` with no retry-after, and no request gets through
 * until 00:00 UTC on the 1st of the next month (or the limit is raised). Not a rate limit to wait
 * out: waiting, retrying and fallback models (the cap is the organisation's, not a model's) would
 * only spend the job's timeout in requests. The key is refused, as a 402's is.
 */
const SPEND_LIMIT_CODE = "enforced_spend_limit_reached";

/**
 * The error a spend-capped call fails with. The same text all month (an incident's signature: run
 * after run of it is one incident), and classed `auth` by its words ("forbidden"; no "rate limit",
 * "quota" or "429", which would class it a rate limit to wait out): the organisation's billing, as a
 * 402 is. The date is when the cap lifts, the 1st of next month, unless it is raised sooner.
 */
export function spendLimitMessage(now: number): string {
	const at = new Date(now);
	const reset = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
	return `the organisation's monthly spend limit is reached (enforced_spend_limit_reached): its requests are forbidden until the limit resets at 00:00 UTC on ${reset}, unless it is raised sooner in the Claude Console`;
}

/**
 * A streamed answer that sends nothing for this long has stalled (the API pings about every 15 s while
 * it works): the try is given up as a network failure, retried with backoff, instead of holding the
 * job until its deadline (30 minutes by default) and failing it as timed out. It bounds the wait for
 * the answer's headers too (the SDK's own timeout, 10 minutes by default, was that wait's only
 * bound): a host that takes the connection and answers nothing is given up as one that stalls.
 */
const STREAM_IDLE_TIMEOUT_MS = 60_000;

/**
 * An aborted call (a cancel, the job's deadline) is billed for what the API did before the abort
 * reached it: the input, and the output written so far, or the whole answer if it was already on
 * its way. The call waits this long for its exchange to end, so the tokens its stream reported
 * are counted: a fetch ends its body at the abort at once, and an answer that had already come
 * whole is read whole. Well within a cancel's own wait for the job to end (5 s). A transport that
 * took longer to notice the abort would leave only what had arrived by then.
 */
const ABORTED_READ_MS = 1_000;

type Transient = "overloaded" | "server" | "network";

type Failure =
	| { kind: "aborted" }
	| { kind: "rate_limit"; status: number; retryAfterMs: number | null; detail: string }
	| { kind: "auth"; status: number; detail: string }
	| { kind: "spend_limit"; status: number; detail: string }
	| { kind: "invalid_request"; status: number; detail: string }
	| { kind: Transient; status: number | null; detail: string; retryAfterMs?: number | null; final?: boolean };

// A mid-stream `event: error` carries no HTTP status, only the error type: map it to the status the
// same failure has when it happens before the stream starts, so both are handled alike.
const STATUS_OF_ERROR_TYPE: Record<string, number> = {
	invalid_request_error: 400,
	authentication_error: 401,
	billing_error: 402,
	permission_error: 403,
	not_found_error: 404,
	request_too_large: 413,
	rate_limit_error: 429,
	api_error: 500,
	timeout_error: 504,
	overloaded_error: 529,
};

/** The output limit a 400 refusing max_tokens names ("max_tokens: 32000 > 8192, which is the maximum allowed…"), or null. */
function outputLimitOf(detail: string): number | null {
	const limit = /\bmax_tokens: \d+ > (\d+), which is the maximum allowed/.exec(detail)?.[1];
	return limit === undefined ? null : Number(limit);
}

function classifyStatus(status: number, type: string | null, detail: string, headers: Headers | undefined, now: number, code: string | null = null, httpError = true): Failure {
	// Told by the cause the body names, not its words (which may change) nor its status alone.
	if (code === SPEND_LIMIT_CODE) return { kind: "spend_limit", status, detail: spendLimitMessage(now) };
	if (status >= 300 && status < 400) {
		// Its host only: a Location's path or query may carry a token.
		const to = URL.parse(headers?.get("location") ?? "", "https://invalid.invalid")?.host;
		const where = to && to !== "invalid.invalid" ? ` to ${to}` : "";
		return { kind: "invalid_request", status, detail: `the Messages API host answered ${status}, a redirect${where}, which drover does not follow with the key: set ANTHROPIC_BASE_URL to where it points (and list it in ANTHROPIC_ALLOWED_BASE_URLS)` };
	}
	if (status === 429) return { kind: "rate_limit", status, retryAfterMs: retryAfterMs(headers, now), detail };
	// 402 (billing) belongs to the key's organisation, so another key in the pool may still work.
	if (status === 401 || status === 402 || status === 403) return { kind: "auth", status, detail };
	// The API's own word on whether this request may be tried again, which its SDK obeys over the
	// status: "false" ends this model's tries (a fallback model is another request), "true" makes a
	// 4xx a passing failure.
	// Only an HTTP error's own: an error event inside a 200's stream has that answer's headers.
	const shouldRetry = httpError ? headers?.get("x-should-retry") : null;
	const final = shouldRetry === "false" ? { final: true } : {};
	// A 529 or 503 may say when to come back, as a 429 does: the backoff waits at least that long.
	const after = status === 529 || status === 503 ? retryAfterMs(headers, now) : null;
	if (status === 529 || type === "overloaded_error") return { kind: "overloaded", status, detail, retryAfterMs: after, ...final };
	// 409 is a lock that timed out (the SDK retries it, as it does 408).
	if (status >= 500 || status === 408 || status === 409 || shouldRetry === "true") return { kind: "server", status, detail, retryAfterMs: after, ...final };
	// Any other 4xx says the request itself is wrong: the same request to another model or key fails too.
	return { kind: "invalid_request", status, detail };
}

function classify(error: unknown, signal: AbortSignal | undefined, now: number, idleMs: number): Failure {
	if (signal?.aborted || error instanceof APIUserAbortError) return { kind: "aborted" };
	// The SDK's "Request timed out.": its timeout is set to the idle limit (see STREAM_IDLE_TIMEOUT_MS).
	// (Also a connection's own timeout the SDK reads as one, which may come sooner.)
	if (error instanceof APIConnectionTimeoutError) return { kind: "network", status: null, detail: `no answer began: the request timed out (the limit is ${idleMs / 1000} s)` };
	if (error instanceof APIConnectionError) return { kind: "network", status: null, detail: fetchErrorMessage(error) };
	if (error instanceof APIError) {
		const type = typeof error.type === "string" ? error.type : null;
		const detail = [type, error.apiMessage ?? (error.status === undefined ? error.message : null)].filter(Boolean).join(": ") || error.message;
		if (typeof error.status === "number") return classifyStatus(error.status, type, detail, error.headers, now, error.errorCode);
		const status = type === null ? undefined : STATUS_OF_ERROR_TYPE[type];
		return classifyStatus(status ?? 500, type, detail, error.headers, now, error.errorCode, false);
	}
	// A fetch that rejects, a stream cut before message_stop or stalled, malformed SSE: the answer never arrived.
	return { kind: "network", status: null, detail: fetchErrorMessage(error) };
}

/**
 * A response's body as text, read chunk by chunk so that a stream that stops sending (its connection
 * open, its headers long since in) is given up after `idleMs` with no bytes, not waited on for good.
 * The error is a plain one: the answer never arrived, a network failure (see classify).
 */
async function readBody(response: Response, idleMs: number, read: { text: string; requestId: string | null }): Promise<string> {
	if (!response.body) return "";
	const reader = response.body.getReader();
	const decoder = new TextDecoder();
	let text = "";
	let timer: ReturnType<typeof setTimeout> | undefined;
	try {
		for (;;) {
			const stalled = new Promise<never>((_, reject) => {
				timer = setTimeout(() => reject(new Error(`the stream stalled: nothing arrived for ${idleMs / 1000} s`)), idleMs);
			});
			const { done, value } = await Promise.race([reader.read(), stalled]);
			clearTimeout(timer);
			if (done) return text + decoder.decode();
			text += decoder.decode(value, { stream: true });
			// What has come so far, for an abort that ends the read (see billedBeforeAbort).
			read.text = text;
		}
	} catch (error) {
		// Releases the connection a stalled stream still holds.
		reader.cancel().catch(() => {});
		throw error;
	} finally {
		clearTimeout(timer);
	}
}

/**
 * The tokens an aborted try was billed, as its stream reported them (see ABORTED_READ_MS): the whole
 * answer's usage when it came all the same, else what the stream had said when it was cut; null
 * when nothing was reported (the abort came before the answer began).
 */
async function billedBeforeAbort(exchange: Promise<{ body: string }>, read: { text: string; requestId: string | null }, ms: number): Promise<{ usage: Message["usage"]; whole: boolean } | null> {
	const limit = deadline(ms);
	let body: string;
	try {
		body = (await abortable(exchange, limit.signal)).body;
	} catch {
		body = read.text;
	} finally {
		limit.clear();
	}
	try {
		return { usage: messageFromSse(body).usage, whole: true };
	} catch {
		const usage = usageFromSse(body);
		return usage ? { usage, whole: false } : null;
	}
}

/** Waits out a deadline, or until `signal` aborts; either way its timer is released. */
async function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
	const limit = deadline(ms, signal);
	if (!limit.signal.aborted) await new Promise<void>((resolve) => limit.signal.addEventListener("abort", () => resolve(), { once: true }));
	limit.clear();
}

export function createModelClient(env: ProviderEnv, options: ModelClientOptions = {}): ModelClient {
	const sleep = options.sleep ?? defaultSleep;
	const now = options.now ?? Date.now;
	const maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
	const idleTimeoutMs = options.idleTimeoutMs ?? STREAM_IDLE_TIMEOUT_MS;
	const abortedReadMs = options.abortedReadMs ?? ABORTED_READ_MS;
	// Looked up per request rather than captured, and called unbound (workerd refuses a fetch whose
	// `this` is the SDK client); counted when `env` is a pass's (see subrequests.ts).
	const send: typeof fetch = options.fetch ?? outboundFetch(env);
	// The key goes to the host providerConfig checked and nowhere else: a redirect would carry the
	// key's header to wherever it points, unless the runtime strips that header, which depends on the
	// header's name and the compatibility date. A 3xx fails the call instead (see classifyStatus).
	const doFetch: typeof fetch = (input, init) => send(input, { ...init, redirect: "manual" });
	// The key the next call starts with: it stays on a key that works and moves past one that was
	// rate-limited or refused, so later calls do not keep hitting the same wall.
	let cursor = 0;
	const sdkClients = new Map<string, Anthropic>();

	function sdkFor(config: ProviderConfig, index: number): Anthropic {
		const baseURL = config.baseURL ?? DEFAULT_BASE_URL;
		const id = `${index}\n${baseURL}`;
		let client = sdkClients.get(id);
		if (!client) {
			// Always an explicit key and base URL, so the SDK never falls back to process.env or a
			// credentials file: the host checked by providerConfig is the only one that gets a key.
			const apiKey = config.emulator ? EMULATOR_API_KEY : (config.keys[index] ?? "");
			// No OpenTelemetry: Workers observability traces the fetch already, and the SDK's spans and
			// propagation headers cost CPU on every call for a tracer nobody registered.
			client = new Anthropic({ apiKey, baseURL, maxRetries: 0, fetch: doFetch, openTelemetry: false });
			sdkClients.set(id, client);
		}
		return client;
	}

	return {
		async call(request: ModelRequest): Promise<ModelResponse> {
			const attempts: ModelAttempt[] = [];
			const signal = request.signal;
			let secrets: string[] = [];
			// A gateway might echo a key back in an error body; nothing we return may carry one.
			const redact = (text: string) => secrets.reduce((t, key) => t.split(key).join("[redacted key]"), text);
			const failure = (kind: ModelErrorKind, message: string, status: number | null = null, retryAfter: number | null = null, requestId: string | null = null) =>
				new ModelCallFailure(kind, redact(message), attempts, status, retryAfter, requestId);
			const abortedError = () => failure("aborted", "the model call was aborted");

			async function pause(ms: number): Promise<void> {
				if (signal?.aborted) throw abortedError();
				if (!signal) return sleep(ms);
				let onAbort = () => {};
				const aborted = new Promise<never>((_, reject) => {
					onAbort = () => reject(abortedError());
					signal.addEventListener("abort", onAbort, { once: true });
				});
				try {
					await Promise.race([sleep(ms, signal), aborted]);
				} finally {
					signal.removeEventListener("abort", onAbort);
				}
				if (signal.aborted) throw abortedError();
			}

			let config: ProviderConfig;
			try {
				config = providerConfig(env);
			} catch (error) {
				if (error instanceof ModelCallError) throw new ModelCallFailure(error.kind, error.message, attempts, error.status, error.retryAfterMs);
				throw error;
			}
			secrets = config.keys;
			if (request.models.length === 0) throw failure("invalid_request", "no model to call: the request lists no models");
			if (signal?.aborted) throw abortedError();

			const poolSize = config.emulator ? 1 : config.keys.length;
			if (cursor >= poolSize) cursor = 0;
			// Per call: keys refused (401/402/403, a spend cap's 429) and keys rate-limited, with their retry-after.
			const refused = new Set<number>();
			const limited = new Map<number, number>();
			let waitedForLimit = false;
			let last: { kind: Transient | "invalid_request"; status: number | null; detail: string; model: string; requestId: string | null } | null = null;
			// The soonest a model rate-limited past what a call waits may be asked again. Rate limits are
			// the model's (the API counts them per model): a fallback may answer meanwhile, so it is asked
			// first; if none answers, the call is a rate limit still, to come back to then.
			let limitedFor: { ms: number; model: string; detail: string; requestId: string | null } | null = null;
			const onToFallback = (model: string, ms: number, detail: string, requestId: string | null): boolean => {
				if (model === request.models.at(-1)) return false;
				if (limitedFor === null || ms < limitedFor.ms) limitedFor = { ms, model, detail, requestId };
				limited.clear();
				waitedForLimit = false;
				return true;
			};
			const limitedFailure = (model: string, ms: number, detail: string, requestId: string | null) => {
				const soonest = limitedFor !== null && limitedFor.ms < ms ? limitedFor.ms : ms;
				return failure("rate_limit", `${model}: ${detail}`, 429, soonest, requestId);
			};

			const nextUsableKey = (from: number): number | null => {
				for (let step = 1; step <= poolSize; step++) {
					const key = (from + step) % poolSize;
					if (!refused.has(key) && !limited.has(key)) return key;
				}
				return null;
			};

			for (const model of request.models) {
				let transientTries = 0;
				let waited = 0;
				let maxTokens = request.max_tokens;
				for (;;) {
					const key = cursor;
					let message: Message;
					const read: { text: string; requestId: string | null } = { text: "", requestId: null };
					let exchange: Promise<{ headers: Headers; body: string }> | null = null;
					try {
						exchange = (async () => {
							const response = await sdkFor(config, key)
								.messages.create(
									{
										model,
										max_tokens: maxTokens,
										messages: request.messages,
										...(request.system.length > 0 ? { system: request.system } : {}),
										...(request.tools.length > 0 ? { tools: request.tools } : {}),
										stream: true,
									},
									{ signal, timeout: idleTimeoutMs },
								)
								.asResponse();
							// Before the body: a stream that breaks after its headers has its id too.
							read.requestId = response.headers.get("request-id");
							return { headers: response.headers, body: await readBody(response, idleTimeoutMs, read) };
						})();
						// The call ends at the abort (a cancel, the job's deadline) even where the transport
						// has not noticed it yet, once it has read what it was billed (within ABORTED_READ_MS):
						// a cancel answers with the job cancelled, not still waiting.
						const { headers, body } = signal ? await abortable(exchange, signal) : await exchange;
						message = messageFromSse(body, headers);
					} catch (error) {
						const f = classify(error, signal, now(), idleTimeoutMs);
						if (f.kind === "aborted") {
							// Billed all the same for what the API did before the abort: counted, not acted on.
							const billed = exchange ? await billedBeforeAbort(exchange, read, abortedReadMs) : null;
							attempts.push({ model, key, status: "aborted", waited_ms: waited, at: now(), ...(billed ? { usage: billed.usage, whole: billed.whole } : {}) });
							throw abortedError();
						}
						// The API's id for this answer (an error's headers, or a stream's that broke after them).
						const requestId = (error instanceof APIError && !(error instanceof APIConnectionError) ? error.requestID : null) || read.requestId || null;
						attempts.push({
							model,
							key,
							status: f.status ?? "network",
							waited_ms: waited,
							at: now(),
							...(f.kind === "network" ? { detail: redact(f.detail) } : {}),
							...(requestId ? { request_id: requestId } : {}),
						});
						waited = 0;

						if (f.kind === "invalid_request") {
							// A model whose output limit is below the request's max_tokens (an older one, as a
							// fallback) names its limit: asked again within it.
							const cap = outputLimitOf(f.detail);
							if (cap !== null && cap < maxTokens) {
								maxTokens = cap;
								continue;
							}
							// A model that does not exist here (retired, or not offered to this key) is the one
							// request error another model may not share: on to the next fallback, if any.
							if (f.status === 404 && model !== request.models.at(-1)) {
								last = { kind: "invalid_request", status: f.status, detail: f.detail, model, requestId };
								break;
							}
							throw failure("invalid_request", `${model}: ${f.detail}`, f.status, null, requestId);
						}

						if (f.kind === "auth" || f.kind === "spend_limit" || f.kind === "rate_limit") {
							if (f.kind !== "rate_limit") {
								// The key's organisation's: another key in the pool, of another, may still work; no
								// fallback model will (a spend cap is not a model's either).
								refused.add(key);
								limited.delete(key);
							} else {
								const after = f.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
								// Tried once more after waiting, and limited again: the loop should come back later.
								if (waitedForLimit) {
									if (onToFallback(model, after, `rate limited again after waiting: ${f.detail}`, requestId)) break;
									throw limitedFailure(model, after, `rate limited again after waiting: ${f.detail}`, requestId);
								}
								limited.set(key, after);
							}
							const next = nextUsableKey(key);
							if (next !== null) {
								cursor = next;
								continue;
							}
							if (limited.size === 0) {
								const pool = poolSize > 1 ? `all ${poolSize} keys in the pool were refused; last: ` : "";
								// A spend cap is not the model's: its error names none, so it reads the same whoever met it.
								throw failure(f.kind, `${f.kind === "auth" ? `${model}: ` : ""}${pool}${f.detail}`, f.status, null, requestId);
							}
							// Every usable key is rate-limited: wait for the soonest, if that is short, then try once more.
							let soonestKey = 0;
							let soonest = Number.POSITIVE_INFINITY;
							for (const [k, ms] of limited) {
								if (ms < soonest) [soonestKey, soonest] = [k, ms];
							}
							if (soonest > maxWaitMs) {
								if (onToFallback(model, soonest, `every key is rate limited for at least ${soonest} ms: ${f.detail}`, requestId)) break;
								throw limitedFailure(model, soonest, `every key is rate limited for at least ${soonest} ms: ${f.detail}`, requestId);
							}
							await pause(soonest);
							waited = soonest;
							waitedForLimit = true;
							limited.clear();
							cursor = soonestKey;
							continue;
						}

						last = { kind: f.kind, status: f.status, detail: f.detail, model, requestId };
						const backoff = f.final ? undefined : TRANSIENT_BACKOFF_MS[transientTries];
						if (backoff === undefined) break; // this model is exhausted: on to the next fallback
						transientTries++;
						// A retry-after is honoured up to the longest wait held in a call; the tries stay bounded.
						const wait = Math.min(Math.max(backoff, f.retryAfterMs ?? 0), Math.max(backoff, maxWaitMs));
						await pause(wait);
						waited = wait;
						continue;
					}
					cursor = key;
					// A safety classifier's refusal is a normal answer, billed; another Claude model usually
					// answers the same request, so it goes on, unchanged, to the next fallback. The last
					// model's refusal is the answer.
					const billedLeft = request.maxBilled === undefined ? Infinity : request.maxBilled - attempts.filter((a) => a.status === "refusal").length - 1;
					if (message.stop_reason === "refusal" && model !== request.models.at(-1) && billedLeft > 0) {
						attempts.push({ model, key, status: "refusal", waited_ms: waited, at: now(), usage: message.usage, ...(read.requestId ? { request_id: read.requestId } : {}) });
						break;
					}
					attempts.push({ model, key, status: "ok", waited_ms: waited, at: now() });
					return { message, model, attempts };
				}
			}

			const tried = request.models.join(", ");
			// A model rate-limited, the others failing otherwise: come back when its limit ends.
			if (limitedFor !== null) {
				const { ms, model, detail, requestId } = limitedFor;
				throw failure("rate_limit", `no model answered (tried ${tried}); ${model}: ${detail}; last: ${last?.model ?? "?"}: ${last?.detail ?? "unknown error"}`, 429, ms, requestId);
			}
			const kind = last?.kind ?? "server";
			throw failure(kind, `no model answered (tried ${tried}); last: ${last?.model ?? "?"}: ${last?.detail ?? "unknown error"}`, last?.status ?? null, null, last?.requestId ?? null);
		},
	};
}
