/**
 * The http_fetch tool: a GET or POST to an allowlisted host, with the URL guard applied to the
 * request and to every redirect, one deadline, and a response read only up to the tool's cap.
 * Refusals and network errors come back as `{ ok: false }` for the model to read, never as throws.
 */
import type { Tool } from "../../config/schema.ts";
import { log } from "../../log.ts";
import { redactCut } from "../../security/cut.ts";
import { abortable } from "../../shared/abortable.ts";
import { outboundFetch } from "../../shared/subrequests.ts";
import type { ToolContext, ToolOutcome } from "../contracts.ts";
import { type CappedBody, decodeLenient, failureKind, failureReason, readCapped, toolDeadline } from "./http-common.ts";
import { checkUrl } from "./url-guard.ts";

export type HttpFetchTool = Extract<Tool, { type: "http_fetch" }>;

export const MAX_REDIRECTS = 5;

const INPUT_KEYS = ["url", "method", "body", "headers"];

// Headers the model may not set. authorization/cookie: credentials for a host belong in an
// operator-configured webhook tool, not in model output that is stored in the job record; host:
// would address another virtual host than the one the guard checked; proxy-*: meant for proxies.
// x-http-method(-override) and x-method-override: many servers take them as the request's method,
// which would turn a tool limited to GET into one that deletes.
const FORBIDDEN_HEADER = /^(?:authorization|cookie|host|proxy-.*|x-http-method(?:-override)?|x-method-override)$/;
// Hop-by-hop and framing headers describe one connection, which the runtime owns; dropped silently.
const HOP_BY_HOP = new Set(["connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade", "content-length"]);
// Dropped when a redirect turns a POST into a GET, as fetch itself does (the body is gone).
const BODY_HEADERS = ["content-type", "content-encoding", "content-language", "content-location"];
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

interface FetchRequest {
	url: URL;
	method: "GET" | "POST";
	body: string | undefined;
	headers: Headers;
}

type Parsed = { ok: true; request: FetchRequest } | { ok: false; reason: string };

/**
 * Runs one http_fetch call. `ok` says whether an HTTP exchange happened: any status, 404 included,
 * is `ok: true` with the status in the content, since a status is information for the model.
 */
export async function httpFetch(tool: HttpFetchTool, input: unknown, ctx: ToolContext): Promise<ToolOutcome> {
	const parsed = parseInput(tool, input);
	if (!parsed.ok) return { ok: false, content: parsed.reason, failure: parsed.reason.startsWith("refused:") ? "refused" : "bad_input" };
	const limit = toolDeadline(ctx.signal);
	try {
		return await follow(tool, ctx, parsed.request, limit.signal);
	} finally {
		limit.clear();
	}
}

/** Sends the request, following redirects (each target re-checked), and renders the answer. */
async function follow(tool: HttpFetchTool, ctx: ToolContext, request: FetchRequest, signal: AbortSignal): Promise<ToolOutcome> {
	const { headers } = request;
	let { url, method, body } = request;
	for (let redirects = 0; ; redirects++) {
		let response: Response;
		try {
			signal.throwIfAborted();
			response = await abortable(outboundFetch(ctx.env)(url, { method, headers, body, redirect: "manual", signal }), signal);
		} catch (error) {
			return { ok: false, content: `${method} ${url.href} failed: ${failureReason(error, signal, method !== "GET")}`, failure: failureKind(signal) };
		}

		const location = response.headers.get("location");
		if (!REDIRECT_STATUSES.has(response.status) || location === null) {
			return render(tool, response, url, redirects, signal, ctx);
		}
		// The redirect's own body is never read; cancelling frees the connection.
		response.body?.cancel().catch(() => {});
		if (redirects >= MAX_REDIRECTS) {
			return { ok: false, content: `too many redirects: gave up after following ${MAX_REDIRECTS} (the last one, from ${url.href}, pointed to ${location})`, failure: "too_many_redirects" };
		}
		let next: string;
		try {
			next = new URL(location, url).href;
		} catch {
			return { ok: false, content: `redirect from ${url.href} has an invalid Location: ${location}`, failure: "bad_location" };
		}
		const check = checkUrl(next, tool.allow_hosts);
		// From https to http the request (a POST's body, the model's headers) would cross the network
		// in clear text, though the model asked for https: refused like a host not allowed.
		if (check.ok && url.protocol === "https:" && check.url.protocol === "http:") {
			log.warn("tool.http_fetch.redirect_refused", { agent: ctx.agent.name, job_id: ctx.jobId, from_host: url.hostname, status: response.status });
			return { ok: false, content: `redirect refused: ${url.href} answered ${response.status} pointing to ${next}, which would leave https for plain http`, failure: "redirect_refused" };
		}
		if (!check.ok) {
			log.warn("tool.http_fetch.redirect_refused", { agent: ctx.agent.name, job_id: ctx.jobId, from_host: url.hostname, status: response.status });
			return { ok: false, content: `redirect refused: ${url.href} answered ${response.status} pointing to ${next}, which is refused: ${check.reason}`, failure: "redirect_refused" };
		}
		if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")) {
			method = "GET";
			body = undefined;
			for (const name of BODY_HEADERS) headers.delete(name);
		}
		url = check.url;
	}
}

function parseInput(tool: HttpFetchTool, input: unknown): Parsed {
	if (typeof input !== "object" || input === null || Array.isArray(input)) {
		return { ok: false, reason: `input must be an object with ${INPUT_KEYS.join(", ")}` };
	}
	const fields = input as Record<string, unknown>;
	const unknownKeys = Object.keys(fields).filter((k) => !INPUT_KEYS.includes(k));
	if (unknownKeys.length > 0) {
		return { ok: false, reason: `unknown input field(s) ${unknownKeys.join(", ")}; allowed: ${INPUT_KEYS.join(", ")}` };
	}

	if (typeof fields.url !== "string") return { ok: false, reason: "url is required and must be a string" };

	const allowed: readonly string[] = tool.methods;
	const defaultMethod = allowed.includes("GET") ? "GET" : (allowed[0] ?? "GET");
	const method = fields.method === undefined ? defaultMethod : typeof fields.method === "string" ? fields.method.toUpperCase() : "";
	if (method !== "GET" && method !== "POST") return { ok: false, reason: `method must be one of ${allowed.join(", ")}` };
	if (!allowed.includes(method)) return { ok: false, reason: `method ${method} is not allowed; allowed: ${allowed.join(", ")}` };

	if (fields.body !== undefined && typeof fields.body !== "string") return { ok: false, reason: "body must be a string" };
	if (fields.body !== undefined && method !== "POST") return { ok: false, reason: "body is only allowed with POST" };

	const headers = new Headers();
	if (fields.headers !== undefined) {
		if (typeof fields.headers !== "object" || fields.headers === null || Array.isArray(fields.headers)) {
			return { ok: false, reason: "headers must be an object of header name to string value" };
		}
		for (const [name, value] of Object.entries(fields.headers)) {
			const lower = name.toLowerCase();
			if (typeof value !== "string") return { ok: false, reason: `header ${name} must have a string value` };
			if (FORBIDDEN_HEADER.test(lower)) return { ok: false, reason: `header ${name} is not allowed (authorization, cookie, host, proxy-* and method-override headers are refused)` };
			if (HOP_BY_HOP.has(lower)) continue;
			try {
				headers.set(name, value);
			} catch {
				return { ok: false, reason: `header ${name} has an invalid name or value` };
			}
		}
	}

	const check = checkUrl(fields.url, tool.allow_hosts);
	if (!check.ok) return { ok: false, reason: `refused: ${check.reason}` };
	return { ok: true, request: { url: check.url, method, body: fields.body, headers } };
}

async function render(tool: HttpFetchTool, response: Response, url: URL, redirects: number, signal: AbortSignal, ctx: ToolContext): Promise<ToolOutcome> {
	const contentType = response.headers.get("content-type");
	let body: CappedBody;
	try {
		body = await readCapped(response.body, tool.max_response_bytes, signal);
	} catch (error) {
		// The server answered: whatever it did is done, and its status says how it went (a body its
		// deadline stopped is body_read still; one a forced cancel cut off says so).
		return { ok: false, content: `HTTP ${response.status}, but reading the body of ${url.href} failed: ${failureReason(error, signal)}`, failure: failureKind(signal) === "cut_off" ? "cut_off" : "body_read" };
	}
	log.info("tool.http_fetch", {
		agent: ctx.agent.name,
		job_id: ctx.jobId,
		host: url.hostname,
		status: response.status,
		bytes: body.bytes.byteLength,
		truncated: body.truncated,
		redirects,
	});

	// A body the cap cut may end partway through a credential, whose piece no redaction matches
	// later: redacted here, before the cut end is handed on, and that end dropped if it starts one.
	const text = body.truncated ? redactCut(bodyText(body, contentType)) : bodyText(body, contentType);
	const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
	const truncation = body.truncated ? `\n[truncated at ${tool.max_response_bytes} bytes]` : "";
	return { ok: true, content: `${status}\ncontent-type: ${contentType ?? "(none)"}\n\n${text}${truncation}` };
}

// Declared binary types are described, never decoded: bytes rendered as text are noise to the model
// and cost tokens. "+json"/"+xml" suffixes (image/svg+xml, application/vnd.api+json) are text.
const TEXT_TYPE = /^(?:text\/|application\/(?:json|xml|javascript|ecmascript|x-www-form-urlencoded|x-ndjson|ndjson|yaml|x-yaml|toml|graphql|sql|csv|rtf)$)|\+(?:json|xml|yaml)$/;
const BINARY_TYPE = /^(?:image|audio|video|font|model)\/|^application\/(?:octet-stream|pdf|zip|gzip|x-gzip|x-tar|x-7z-compressed|x-bzip2|zstd|wasm|x-protobuf|protobuf|msword|vnd\.)/;

/**
 * A text body's encoding in the order browsers take it (WHATWG Encoding, HTML): a byte order mark
 * over any label, then the header's charset, then for HTML a <meta> charset in its first 1,024 bytes.
 * Without the last two, a Shift_JIS or UTF-16 page reached the model as mojibake.
 */
function textCharset(bytes: Uint8Array, mime: string, declared: string | undefined): string | undefined {
	if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8";
	if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
	if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
	if (declared !== undefined || mime !== "text/html") return declared;
	// Read as single bytes: the <meta> tag is ASCII in every encoding a page may name there.
	const head = new TextDecoder("windows-1252").decode(bytes.subarray(0, 1024));
	const label = /<meta\b[^>]*?charset\s*=\s*["']?([A-Za-z0-9_.:-]+)/i.exec(head)?.[1];
	return label === undefined ? undefined : prescanEncoding(label);
}

/**
 * The HTML prescan's own rule for a <meta> label: a tag readable as ASCII means the bytes are not
 * UTF-16, so a UTF-16 label ("utf-16", "unicode", "ucs-2"...) is taken as UTF-8, and x-user-defined
 * as windows-1252. Without it a UTF-8 page saying utf-16 reached the model as CJK-looking garbage.
 */
function prescanEncoding(label: string): string {
	let encoding: string;
	try {
		encoding = new TextDecoder(label).encoding;
	} catch {
		return label;
	}
	if (encoding === "utf-16le" || encoding === "utf-16be") return "utf-8";
	if (encoding === "x-user-defined") return "windows-1252";
	return encoding;
}

function bodyText(body: CappedBody, contentType: string | null): string {
	if (body.bytes.byteLength === 0) return "(empty body)";
	const [essence = "", ...params] = (contentType ?? "").split(";").map((p) => p.trim());
	const mime = essence.toLowerCase();
	const described = `[binary body: ${body.bytes.byteLength}${body.truncated ? "+" : ""} bytes of ${mime || "unknown type"}, not shown]`;
	if (TEXT_TYPE.test(mime)) {
		const declared = params.find((p) => /^charset=/i.test(p))?.slice(8).replace(/^"|"$/g, "");
		return decodeLenient(body, textCharset(body.bytes, mime, declared));
	}
	if (BINARY_TYPE.test(mime)) return described;
	// Undeclared or unfamiliar types: shown only when the bytes are valid UTF-8 without NULs.
	try {
		const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body.bytes, { stream: body.truncated });
		return text.includes("\u0000") ? described : text;
	} catch {
		return described;
	}
}
