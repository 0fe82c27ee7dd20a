/**
 * Incident identity and failure classes, after Hermes' cron incidents: the same error from the same
 * agent, however its whitespace or case varies, is one incident, so a failing schedule pages once and
 * then counts, instead of opening an incident on every tick.
 *
 * Callers pass error text that is already redacted (see src/security/redact.ts): the signature is
 * stored and shown, so it must never be derived from a secret an operator could brute-force back.
 */
import { sha256Hex } from "../shared/hash.ts";

/** How much of the normalised error identifies it: long errors often end in request ids and timestamps. */
const SIGNATURE_PREFIX_CHARS = 200;
/** Hex characters of the sha256 kept: 48 bits, ample for one agent's distinct errors. */
const SIGNATURE_HEX_CHARS = 12;
/** Characters of the agent name in an incident id, as Hermes keeps `job_id[:6]`. */
const INCIDENT_ID_AGENT_CHARS = 6;

/**
 * Whitespace as Hermes' Python reads it (str.isspace, which its `\s` and strip() match): JavaScript's
 * `\s` and trim() also take U+FEFF (a byte order mark, kept by Python) and leave U+001C-U+001F and
 * U+0085 (NEL), so an error quoting a body that starts with a BOM was another window than Hermes'.
 */
const PYTHON_WHITESPACE_RUN = /[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/g;

/**
 * Hermes' re.sub(r"\s+", " ", error).strip().lower(): collapse every run of whitespace to one space,
 * trim, lowercase, so cosmetic differences are not new incidents.
 */
export function normalizeError(text: string): string {
	return text.replace(PYTHON_WHITESPACE_RUN, " ").replace(/^ | $/g, "").toLowerCase();
}

/** The normalization of releases before 2026-12-07: JavaScript's whitespace. */
function jsNormalized(text: string): string {
	return text.replace(/\s+/g, " ").trim().toLowerCase();
}

/**
 * The first 12 hex of sha256(agent + normalizeError(error)[:200]), the 200 counted in code points
 * as Hermes' Python slice counts them: UTF-16 units would cut an emoji in half (hashed as U+FFFD,
 * so two errors differing only in it would be one incident) and hash fewer characters than Hermes.
 */
export async function incidentSignature(agent: string, error: string): Promise<string> {
	const digest = await sha256Hex(agent + Array.from(normalizeError(error)).slice(0, SIGNATURE_PREFIX_CHARS).join(""));
	return digest.slice(0, SIGNATURE_HEX_CHARS);
}

/**
 * The signatures earlier releases gave the same error, where they differ from incidentSignature's:
 * those of 2026-12-02 to 2026-12-06 normalized with JavaScript's whitespace (see
 * PYTHON_WHITESPACE_RUN), and those before also counted the 200 in UTF-16 units (an emoji in the
 * window was cut in half). An incident one of them opened keeps counting its error instead of a
 * second one opening. Empty for the usual error, which all three hash alike.
 */
export async function legacySignatures(agent: string, error: string): Promise<string[]> {
	const current = Array.from(normalizeError(error)).slice(0, SIGNATURE_PREFIX_CHARS).join("");
	const js = jsNormalized(error);
	const windows = [Array.from(js).slice(0, SIGNATURE_PREFIX_CHARS).join(""), js.slice(0, SIGNATURE_PREFIX_CHARS)];
	const distinct = [...new Set(windows)].filter((w) => w !== current);
	return Promise.all(distinct.map(async (w) => (await sha256Hex(agent + w)).slice(0, SIGNATURE_HEX_CHARS)));
}

/** `<agent[:6]>_<signature>`: readable at a glance, unique through the signature (which hashes the full agent name). */
export function incidentId(agent: string, signature: string): string {
	return `${agent.slice(0, INCIDENT_ID_AGENT_CHARS)}_${signature}`;
}

const FAILURE_CLASSES = ["rate_limit", "timeout", "auth", "delivery", "config", "script", "agent", "unknown"] as const;
export type FailureClass = (typeof FAILURE_CLASSES)[number];

// Keyword lists, matched as substrings of the normalised (lowercased) error text. Numeric codes and
// the script class's words are matched as whole tokens instead (see hasKeyword), so "job-…-abc403" or
// "14290 tokens" is not a 403/429, nor a tool's "description" a script.

/** Too many requests or out of quota. Deliberately not "overloaded": a 529 is the provider's capacity, not our rate. */
export const RATE_LIMIT_KEYWORDS = ["429", "rate limit", "rate_limit", "rate-limit", "quota", "too many requests"] as const;
export const TIMEOUT_KEYWORDS = ["timeout", "timed out", "deadline", "408", "504"] as const;
export const AUTH_KEYWORDS = ["401", "403", "unauthorized", "authentication", "forbidden", "invalid api key", "invalid x-api-key", "permission"] as const;
export const DELIVERY_KEYWORDS = ["delivery", "deliver", "webhook", "slack", "discord"] as const;
export const CONFIG_KEYWORDS = ["config", "fleet.yaml", "not set", "missing secret", "invalid cron", "definition", "retired", "not allowed base url", "guard"] as const;
/** A script the job ran failed: drover runs none of its own, but a tool may (`run_script`, "exit code 1"). */
export const SCRIPT_KEYWORDS = ["script", "scripts", "exit code", "exit status"] as const;
export const AGENT_KEYWORDS = ["max_turns", "usage_limit", "usage limit", "indeterminate", "model output", "tool", "refused", "invalid_request", "max_tokens", "context window", "too large to store"] as const;

/**
 * The classes in the order they are tried; the first that matches wins. The order settles errors that
 * name two causes, from the most specific and actionable to the most general:
 *   1. rate_limit — "429 from slack webhook" is throttling, not a delivery fault: retry later.
 *   2. timeout    — "webhook timed out" is a timeout, whatever timed out.
 *   3. auth       — a 401 on the Slack webhook is a credential problem before it is a delivery one.
 *   4. delivery   — the run itself succeeded; only sending its answer failed.
 *   5. config     — fleet.yaml or a secret is wrong: fix the configuration, not the agent.
 *   6. script     — a script failed (a tool that runs one, cut off or exiting non-zero), before…
 *   7. agent      — the model or its tools misbehaved (max_turns, refusals, bad requests).
 *   8. unknown    — nothing matched.
 * (Hermes' order, in which `script` stands for its jobs' pre-run scripts.)
 */
export const CLASSIFICATION_ORDER: readonly {
	readonly class: Exclude<FailureClass, "unknown">;
	readonly keywords: readonly string[];
	/** Keywords match only as whole tokens. */
	readonly tokens?: true;
}[] = [
	{ class: "rate_limit", keywords: RATE_LIMIT_KEYWORDS },
	{ class: "timeout", keywords: TIMEOUT_KEYWORDS },
	{ class: "auth", keywords: AUTH_KEYWORDS },
	{ class: "delivery", keywords: DELIVERY_KEYWORDS },
	{ class: "config", keywords: CONFIG_KEYWORDS },
	{ class: "script", keywords: SCRIPT_KEYWORDS, tokens: true },
	{ class: "agent", keywords: AGENT_KEYWORDS },
];

const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";
const isAlnum = (c: string | undefined) => c !== undefined && /[a-z0-9]/.test(c);

function hasKeyword(text: string, keyword: string, tokens = false): boolean {
	if (!tokens && !isDigit(keyword[0])) return text.includes(keyword);
	// A status code counts only as a token of its own: "HTTP 429", "status=429", "(429)".
	for (let at = text.indexOf(keyword); at !== -1; at = text.indexOf(keyword, at + 1)) {
		if (!isAlnum(text[at - 1]) && !isAlnum(text[at + keyword.length])) return true;
	}
	return false;
}

/**
 * The failure class of an error: the first class in CLASSIFICATION_ORDER with a keyword in the
 * normalised text, an HTTP status among them as a token of its own ("HTTP 429", "(403)"), so a 401
 * whose message says "timed out" is a timeout. Every failure drover files is its error's text alone.
 */
export function classifyFailure(text: string): FailureClass {
	const normalized = normalizeError(text);
	for (const entry of CLASSIFICATION_ORDER) {
		if (entry.keywords.some((keyword) => hasKeyword(normalized, keyword, entry.tokens))) return entry.class;
	}
	return "unknown";
}
