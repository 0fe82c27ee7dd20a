/** The drover HTTP API over fetch: bearer auth, the API's JSON errors turned into ApiError. */
import { TOKEN_CHARS_MESSAGE, tokenCharsOk } from "../src/api/auth/tokens.ts";
import { graphemeSlice } from "../src/shared/clip.ts";
import { KeptAnswers } from "../src/shared/kept-answers.ts";
import { retryAfterMs } from "../src/shared/retry-after.ts";
import { problemOf, type Shape } from "./shapes.ts";

export const DEFAULT_URL = "http://localhost:8787";

/** The media type of a job's output, one JSON object a line. */
export const JSONL = "application/x-ndjson";

/**
 * The exit code of a `--wait` or `--follow` that lost a job's stream and could not have it again: the
 * job's outcome is unknown (it may still be running). Not 1, a failed job's (or any error's), nor 2,
 * a cancelled job's or a usage error's.
 */
export const EXIT_LOST = 3;

/** The exit code of a `--wait` stopped by Ctrl-C (SIGINT), 128 + 2 as a shell gives a command its signal ended. */
export const EXIT_INTERRUPTED = 130;

/** The exit code of a `--wait` given up at its `--wait-timeout`, timeout(1)'s: a script that wrapped the wait in `timeout` saw the same. */
export const EXIT_TIMED_OUT = 124;

/**
 * The exit code of a request the API answered with its 404: what the command names (a job, an
 * agent, an incident, a session, a notepad key) does not exist, as opposed to a refusal (1) or a
 * server that is away (5). `drover job <id> || …` can tell "no such job" from "drover is down".
 */
export const EXIT_NOT_FOUND = 4;

/**
 * The exit code of a request with no answer (a refused connection, an unknown host, the 30 s
 * timeout, a connection broken mid-answer) or one that says to come back later (a 5xx, a 429 or a
 * 408): the server's state, not the command's fault, so a script may run it again later (a
 * trigger with --idempotency-key, so a retry cannot start a second job).
 */
export const EXIT_UNAVAILABLE = 5;

/**
 * The exit code an error answer of `status` (and `code`) ends the command with: EXIT_NOT_FOUND,
 * EXIT_UNAVAILABLE or 1. A 500 `config_invalid` is a refusal, not the server failing: the Worker's
 * own configuration (API_TOKENS, an edited fleet.yaml) is unusable, and no retry mends it until an
 * operator does.
 */
export function exitCodeOf(status: number, code?: string): number {
	if (status === 404) return EXIT_NOT_FOUND;
	if (code === "config_invalid") return 1;
	if (status >= 500 || status === 429 || status === 408) return EXIT_UNAVAILABLE;
	return 1;
}

/** Ends the command with `exitCode` after printing `drover: <message>` (and the hint) on stderr. */
export class CliError extends Error {
	readonly exitCode: number;
	readonly hint: string | null;

	constructor(message: string, exitCode = 1, hint: string | null = null) {
		super(message);
		this.name = "CliError";
		this.exitCode = exitCode;
		this.hint = hint;
	}
}

/**
 * A request that got no answer (exit 5). `sent`: it may have reached the server and been carried
 * out (the connection broke or timed out after it was made), not refused before it left (no
 * server there, no such host), so a retry of a non-idempotent request may do it twice.
 */
export class NoAnswerError extends CliError {
	readonly sent: boolean;

	constructor(message: string, sent: boolean, hint: string | null = null) {
		super(message, EXIT_UNAVAILABLE, hint);
		this.name = "NoAnswerError";
		this.sent = sent;
	}
}

/**
 * What a request refused before it left says (undici's and the OS's codes: no server there, no such
 * host, no route, no connection made in time): nothing can have arrived. Anything else (a reset or
 * closed socket, a timeout, an answer that is not HTTP) may follow a request the server read.
 */
const NOTHING_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EAI_NONAME", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "UND_ERR_CONNECT_TIMEOUT", "ERR_SSL_WRONG_VERSION_NUMBER"]);

/** A TLS certificate the client will not trust: not the server being away, and no retry mends it. */
const UNTRUSTED_CERT = /^(?:CERT_|ERR_TLS_CERT|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_(?:VERIFY_LEAF_SIGNATURE|GET_ISSUER_CERT(?:_LOCALLY)?)$|HOSTNAME_MISMATCH$)/;

/** An error answer from the API: `{"error": {"code", "message", "request_id"}}`, or what stood in for it. */
export class ApiError extends CliError {
	readonly status: number;
	readonly code: string;
	/** The id the Worker logged the request under (its X-Request-Id), for its operator to find it by. */
	readonly requestId: string | null;
	/** How long the answer's Retry-After asked to be left alone (a 429, a 503); null when it said nothing. */
	retryAfterMs: number | null = null;
	/** The answer's `details.issues` (each a field's path and what is wrong with it), when it had them. */
	issues: { path: string; message: string }[] = [];

	constructor(status: number, code: string, message: string, hint = hintFor(status, message, code), requestId: string | null = null) {
		super(message, exitCodeOf(status, code), hint);
		this.name = "ApiError";
		this.status = status;
		this.code = code;
		this.requestId = requestId;
	}
}

/** An error answer a client may ride out and ask again (a restart, a deploy, a limit): exit 5's, not a refusal. */
export function worthRetrying(err: ApiError): boolean {
	return err.exitCode === EXIT_UNAVAILABLE;
}

/** The hint after a refusal for the token's role: the API's 403, or one the CLI foresees (drover edit). */
export const STRONGER_ROLE_HINT = "this needs a token with a stronger role (read < operate < admin): set DROVER_TOKEN (or --token) to one";

function hintFor(status: number, message: string, code: string): string | null {
	// A run refused by a paused or disabled agent: say how to let it run.
	const agent = /^agent (\S+) is (paused|disabled)/.exec(message)?.[1];
	if (code === "agent_paused" && agent) {
		return message.includes(" paused: auto:")
			? "it paused itself: fix what it names, and it resumes on its own at its next tick or run request"
			: `resume it with: drover resume ${agent}`;
	}
	if (code === "agent_disabled") return "it is disabled in its definition: set enabled: true (fleet.yaml, or drover apply for an API agent) to run it";
	// A fork, continue or approve refused because the agent changed since the job ran; the API names
	// its body field. An approved call's job goes on with the definition it started with, not the new one.
	if (status === 409 && message.includes("allow_definition_change")) {
		return message.includes("to approve anyway")
			? "to approve it anyway, add --allow-definition-change: the job goes on with the definition it started with, its tools as they were then"
			: "to run it under the agent's current definition anyway, add --allow-definition-change";
	}
	// The API names its JSONL route; a person at the CLI reads it through drover.
	const logless = /^job (\S+) keeps no plain-text log /.exec(message)?.[1];
	if (status === 404 && logless) return `drover logs --job ${logless} prints its output`;
	if (status === 401) return "check DROVER_TOKEN (or --token): it must be the token part of one of the Worker's API_TOKENS entries (name:role:token)";
	if (status === 403) return STRONGER_ROLE_HINT;
	return null;
}

/** What fetch's "fetch failed" hides: ECONNREFUSED, ENOTFOUND, a TLS error… */
export function networkReason(err: unknown): string {
	if (!(err instanceof Error)) return String(err);
	if (err.name === "TimeoutError") return "timed out";
	const cause = (err as { cause?: unknown }).cause;
	if (cause instanceof Error) {
		const code = (cause as { code?: unknown }).code;
		return typeof code === "string" && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message;
	}
	return err.message;
}

/** The system's code for why fetch failed (ECONNREFUSED, ERR_SSL_…), when it gives one. */
function causeCode(err: unknown): string | null {
	const code = err instanceof Error ? ((err as { cause?: { code?: unknown } }).cause?.code ?? null) : null;
	return typeof code === "string" ? code : null;
}

export interface RequestOptions {
	method?: string;
	query?: Record<string, string | number | undefined>;
	body?: unknown;
	/** A body sent as it is, of its media type (an agent's definition as YAML), rather than `body` as JSON. */
	text?: { content: string; type: string };
	headers?: Record<string, string>;
	/** false for the routes that need no token (/healthz). */
	auth?: boolean;
	/** Whole-request deadline; streams pass null (they last as long as the job). */
	timeoutMs?: number | null;
	signal?: AbortSignal;
	/** Error statuses whose body is still the answer (GET /healthz gives its report with a 503). */
	accept?: readonly number[];
}

export interface ClientConfig {
	url: string;
	token: string | undefined;
}

export class ApiClient {
	readonly url: string;
	readonly #token: string | undefined;
	/** JSON GETs' answers, to revalidate (src/shared/kept-answers.ts): one client serves one process and one token. */
	readonly #kept = new KeptAnswers(64, 4_000_000);

	constructor(config: ClientConfig) {
		// DROVER_URL set but empty (a CI secret that is not defined, `export DROVER_URL=`) was said to
		// lack its scheme, with localhost as the example: it is said to be empty.
		if (config.url.trim() === "") {
			throw new CliError("--url/DROVER_URL is empty", 2, `set it to the drover Worker's base URL, such as https://drover.example.workers.dev, or unset DROVER_URL for the default, ${DEFAULT_URL}`);
		}
		// "localhost:8787" parses as a URL of the scheme "localhost:", "drover.example.com" not at all.
		if (!config.url.includes("://")) {
			// Echoed only when it is a bare host[:port][/path]: anything else may carry a secret.
			const example = /^[\w.-]+(:\d+)?(\/[\w./-]*)?$/.test(config.url) ? `http://${config.url}` : DEFAULT_URL;
			throw new CliError("--url/DROVER_URL must include the scheme, http:// or https://", 2, `include the scheme, e.g. ${example}`);
		}
		let base: URL;
		try {
			base = new URL(config.url);
		} catch {
			// Shown to say what was wrong, but not any user:password@ it carries, nor a query or fragment (a token?).
			throw new CliError(`--url/DROVER_URL is not a URL: ${JSON.stringify(config.url.replace(/\/\/.*@/, "//…@").replace(/([?#]).*/s, "$1…"))}`, 2);
		}
		if (base.protocol !== "http:" && base.protocol !== "https:") {
			throw new CliError(`--url/DROVER_URL must be http(s), not ${base.protocol}`, 2);
		}
		// fetch refuses such a URL anyway, and its error would echo the password.
		if (base.username !== "" || base.password !== "") {
			throw new CliError("--url/DROVER_URL must not carry credentials (user:password@)", 2, "pass the API token with DROVER_TOKEN or --token");
		}
		// Paths are appended to the base as text: "…/?token=abc" would become "…/?token=abc/v1/jobs", every
		// request the same wrong one. Not echoed: a query may hold a token. (The href, not search and
		// hash: a bare "?" or "#" leaves those empty but still ends the href.)
		if (/[?#]/.test(base.href)) {
			throw new CliError("--url/DROVER_URL must not carry a query string or fragment (?… or #…)", 2, "give the Worker's base URL alone, such as https://drover.example.workers.dev; pass the API token with DROVER_TOKEN or --token");
		}
		// The API's paths (/v1/…) are added to it: a base of …/v1 would ask for /v1/v1/jobs, "no route".
		const path = base.pathname.replace(/\/+$/, "");
		if (/\/v1$/i.test(path)) {
			throw new CliError("--url/DROVER_URL is the Worker's origin, without /v1: the CLI adds the API's paths itself", 2, `use ${base.origin}${path.slice(0, -3)}`);
		}
		this.url = base.toString().replace(/\/+$/, "");
		this.#token = config.token === "" ? undefined : config.token;
	}

	get hasToken(): boolean {
		return this.#token !== undefined;
	}

	/** The raw response of a successful (2xx) request; an error answer throws ApiError (a CliError when it is not drover's). */
	async fetch(path: string, options: RequestOptions = {}): Promise<Response> {
		const url = this.#urlOf(path, options);
		const headers: Record<string, string> = { accept: "application/json", ...options.headers };
		if (options.auth !== false) {
			if (this.#token === undefined) {
				throw new CliError("no API token", 1, "set DROVER_TOKEN or pass --token (the token part of a name:role:token entry of the Worker's API_TOKENS)");
			}
			// fetch refuses such a header value with an error that echoes the token, which would read as
			// the network failing; said here, without the token.
			if (!tokenCharsOk(this.#token)) {
				throw new CliError(`DROVER_TOKEN (or --token) ${TOKEN_CHARS_MESSAGE}`, 1, "set it to the token part alone of a name:role:token entry of the Worker's API_TOKENS, as printed");
			}
			headers.authorization = `Bearer ${this.#token}`;
		}
		let body: string | undefined;
		if (options.body !== undefined) {
			body = JSON.stringify(options.body);
			headers["content-type"] = "application/json";
		} else if (options.text !== undefined) {
			body = options.text.content;
			headers["content-type"] = options.text.type;
		}
		const timeout = options.timeoutMs === undefined ? 30_000 : options.timeoutMs;
		const signals = [options.signal, timeout === null ? undefined : AbortSignal.timeout(timeout)].filter((s): s is AbortSignal => s !== undefined);
		let res: Response;
		try {
			res = await fetch(url, { method: options.method ?? "GET", headers, body, signal: signals.length ? AbortSignal.any(signals) : undefined });
		} catch (err) {
			// https:// to a plain HTTP server (npm start's is one) fails the TLS handshake: OpenSSL's
			// "wrong version number" line says nothing a user can act on.
			if (url.protocol === "https:" && causeCode(err) === "ERR_SSL_WRONG_VERSION_NUMBER") {
				throw new CliError(`cannot reach ${this.url}: it does not speak TLS (ERR_SSL_WRONG_VERSION_NUMBER)`, 1, `the server speaks plain HTTP, not HTTPS, as npm start's local drover does: use ${this.url.replace(/^https:/, "http:")}`);
			}
			const code = causeCode(err);
			if (code !== null && UNTRUSTED_CERT.test(code)) {
				throw new CliError(`cannot reach ${this.url}: ${networkReason(err)}`, 1, "its TLS certificate is not one this machine trusts: fix the certificate, or give Node the CA that signed it (NODE_EXTRA_CA_CERTS)");
			}
			const sent = code === null ? err instanceof Error && err.name === "TimeoutError" : !NOTHING_SENT.has(code);
			throw new NoAnswerError(`cannot reach ${this.url}: ${networkReason(err)}`, sent, this.url === DEFAULT_URL ? "is drover running? set DROVER_URL (or --url) to its address" : null);
		}
		if (!res.ok && !options.accept?.includes(res.status)) throw await this.#errorOf(res, requestOf(path, options));
		return res;
	}

	#urlOf(path: string, options: RequestOptions): URL {
		const url = new URL(this.url + path);
		for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
		return url;
	}

	/**
	 * An error answer as the CliError to end with. drover answers every 4xx with its JSON error, so
	 * one without it (a 404 "Not found: /v1/jobs") is another server's: said as for any answer that
	 * is not drover's. A 5xx without it stays an HTTP error (a gateway before a Worker that is down),
	 * and so do 408 and 429, which proxies send too.
	 */
	async #errorOf(res: Response, request: string): Promise<CliError> {
		const err = await errorFrom(res);
		if (err.code === NOT_AN_API_ERROR && res.status < 500 && res.status !== 408 && res.status !== 429) {
			return this.notDrover(`${request}: answered ${res.status} ${mediaType(res)}, not drover's JSON error`);
		}
		// A whole API_TOKENS entry given as the token: the generic hint would not say what is wrong with it.
		if (err.status === 401 && this.#token !== undefined && WHOLE_ENTRY.test(this.#token)) {
			return new ApiError(err.status, err.code, err.message, "DROVER_TOKEN (or --token) looks like a whole API_TOKENS entry (name:role:token): set it to the token part alone, what follows the second colon");
		}
		return err;
	}

	/**
	 * The answer's JSON, checked against `shape` (the fields the caller reads): an answer without
	 * them is not drover's (a wrong --url, a catch-all proxy), and says so in one line.
	 */
	async json<T>(path: string, shape: Shape<T>, options: RequestOptions = {}): Promise<T> {
		return (await this.answer(path, shape, options)).value;
	}

	/**
	 * As `json`, with the answer's status: a 200 where a create answers 201 is a replay of an earlier
	 * request. A GET asked before is revalidated: its kept answer is sent back as `If-None-Match`, and
	 * a 304 is read as that answer's 200 again.
	 */
	async answer<T>(path: string, shape: Shape<T>, options: RequestOptions = {}): Promise<{ status: number; value: T }> {
		const key = (options.method ?? "GET") === "GET" ? this.#urlOf(path, options).href : null;
		const kept = key === null ? undefined : this.#kept.get(key);
		const res = await this.fetch(path, kept ? { ...options, headers: { ...options.headers, "if-none-match": kept.etag }, accept: [...(options.accept ?? []), 304] } : options);
		const revalidated = kept !== undefined && res.status === 304;
		const text = revalidated ? kept.text : await readText(res, this.url);
		const status = revalidated ? 200 : res.status;
		const request = requestOf(path, options);
		let value: unknown;
		try {
			value = JSON.parse(text);
		} catch {
			throw this.notDrover(`${request}: answered ${res.status} ${mediaType(res)}, not JSON`);
		}
		const problem = problemOf(shape, value);
		if (problem !== null) throw this.notDrover(`${request}: ${problem}`);
		// Only a 200 is tagged; an answer without a tag (a server older than the ETags) is not kept.
		const etag = revalidated ? kept.etag : res.headers.get("etag");
		if (key !== null) this.#kept.keep(key, status === 200 && etag ? { etag, text } : null);
		return { status, value: value as T };
	}

	/** The error for an answer that is not the drover API's: "<url> does not answer as a drover API (GET /v1/jobs: missing `jobs`)". */
	notDrover(what: string): CliError {
		return new CliError(`${this.url} does not answer as a drover API (${what})`);
	}

	/**
	 * The answer's text, asked for and checked as `type` (application/yaml, application/x-ndjson):
	 * another type (a catch-all's 200 `{"ok":true}`) is not drover's answer, and would be printed as if it were.
	 */
	async text(path: string, type: string, options: RequestOptions = {}): Promise<string> {
		return (await this.textAnswer(path, type, options)).text;
	}

	/** text(), with the answer's headers (a tail's X-Drover-First-Line). */
	async textAnswer(path: string, type: string, options: RequestOptions = {}): Promise<{ text: string; headers: Headers }> {
		const res = await this.fetch(path, { ...options, headers: { ...options.headers, accept: type } });
		if (mediaType(res) !== type) {
			await res.body?.cancel().catch(() => {});
			throw this.notDrover(`${requestOf(path, options)}: answered ${mediaType(res)}, not ${type}`);
		}
		return { text: await readText(res, this.url), headers: res.headers };
	}
}

/** A request as messages name it: "GET /v1/jobs", without the query. */
function requestOf(path: string, options: RequestOptions): string {
	return `${options.method ?? "GET"} ${path.split("?")[0]}`;
}

/** An API_TOKENS entry, "name:role:token", where only its token belongs in the Authorization header. */
const WHOLE_ENTRY = /^[^:]+:(read|operate|admin):./;

/** The code of an error answer without the API's JSON error object. */
const NOT_AN_API_ERROR = "http_error";

/** The answer's media type ("text/plain" of "text/plain; charset=utf-8"), or that it has none. */
function mediaType(res: Response): string {
	const type = res.headers.get("content-type")?.split(";")[0]!.trim().toLowerCase();
	return type ? type : "without a content type";
}

async function readText(res: Response, url: string): Promise<string> {
	try {
		return await res.text();
	} catch (err) {
		throw new NoAnswerError(`the connection to ${url} broke: ${networkReason(err)}`, true);
	}
}

/**
 * Reads the API's error body; a proxy's HTML page or an empty 502 still gives a useful message.
 * drover's error always has a string `code` beside its `message`: another API's error of a like
 * shape (the Anthropic API's {"type":"error","error":{"type":"not_found_error","message":…}}, at a
 * --url pointing there) is not taken for it.
 */
export async function errorFrom(res: Response): Promise<ApiError> {
	const err = await errorOfBody(res);
	err.retryAfterMs = retryAfterMs(res.headers, Date.now());
	return err;
}

async function errorOfBody(res: Response): Promise<ApiError> {
	const text = await res.text().catch(() => "");
	try {
		const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; details?: { issues?: unknown }; request_id?: unknown } } | null;
		if (body?.error && typeof body.error.message === "string" && typeof body.error.code === "string") {
			const message = withIssues(body.error.message, body.error.details?.issues);
			// Shown as the body has it, when it has the shape of one (an older Worker sends none).
			const requestId = typeof body.error.request_id === "string" && /^[\w.:=-]{1,100}$/.test(body.error.request_id) ? body.error.request_id : null;
			const err = new ApiError(res.status, body.error.code, message, undefined, requestId);
			err.issues = issuesOf(body.error.details?.issues);
			return err;
		}
	} catch {
		// Not JSON: fall through to the status line.
	}
	// Cut between characters: half an emoji would print as U+FFFD.
	const snippet = graphemeSlice(text.replace(/\s+/g, " ").trim(), 200);
	return new ApiError(res.status, NOT_AN_API_ERROR, `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""}${snippet ? `: ${snippet}` : ""}`);
}

/** The issues of an error's details that have a path and a message, both text. */
function issuesOf(issues: unknown): { path: string; message: string }[] {
	if (!Array.isArray(issues)) return [];
	return issues.filter((i): i is { path: string; message: string } => typeof i === "object" && i !== null && typeof (i as { path?: unknown }).path === "string" && typeof (i as { message?: unknown }).message === "string");
}

/**
 * A message with its `details.issues` one a line when there are several: "invalid body: a: x; b: y"
 * joins them, which is hard to read past two or three.
 */
function withIssues(message: string, issues: unknown): string {
	if (!Array.isArray(issues)) return message;
	const shown = issues
		.filter((i): i is { path?: unknown; message: string } => typeof i === "object" && i !== null && typeof (i as { message?: unknown }).message === "string")
		.map((i) => (typeof i.path === "string" && i.path !== "" ? `${i.path}: ${i.message}` : i.message));
	// One issue reads well as it is ("invalid param: id: must be …").
	if (shown.length < 2) return message;
	// The API's message is usually a prefix and then these same issues joined by "; ": keep the prefix.
	const joined = shown.join("; ");
	if (message.endsWith(joined)) return listed(message.slice(0, -joined.length).replace(/[\s:]+$/, ""), shown);
	// A message that already names every issue its own way (an invalid fleet.yaml's, one "  - " line
	// each) reads as it is: adding the list would print each issue twice.
	if (shown.every((line) => message.includes(line))) return message;
	return listed(message, shown);
}

/** "head:" and the issues under it, one a line. */
function listed(head: string, shown: readonly string[]): string {
	return `${head || "invalid request"}:\n${shown.map((line) => `  - ${line}`).join("\n")}`;
}

/** The exit code a job's final status maps to: 0 completed, 2 cancelled, 1 anything else (EXIT_LOST, 3: no final status had). */
export function outcomeCode(status: string): number {
	if (status === "completed") return 0;
	if (status === "cancelled") return 2;
	return 1;
}
