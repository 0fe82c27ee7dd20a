/**
 * Secret redaction for everything drover stores or shows: error text before it becomes an incident,
 * tool results and model output before they reach logs, request details in job records.
 *
 * Properties the callers rely on:
 * - Idempotent: `redact(redact(s)) === redact(s)`, so text can pass through more than one layer
 *   (the DO, the index, the log) without being mangled further.
 * - Linear time: no pattern has nested or overlapping unbounded quantifiers, and the PEM scan is a
 *   single forward pass, so a hostile 1 MB tool result cannot stall a Durable Object.
 * - Ordinary text survives: prose, job ids, UUIDs, ISO dates, URLs without credentials, hex digests.
 *   Generic tokens are only recognised by their context (a `Bearer` scheme, a named header or
 *   parameter), never by "looks random", which is what keeps UUIDs and digests intact.
 *
 * Where it helps an operator tell which credential leaked, a short non-secret prefix is kept
 * (`sk-ant-api03-[REDACTED]`, `ghp_[REDACTED]`, `AKIA[REDACTED]`, `https://hooks.slack.com/services/[REDACTED]`).
 */

import { replaceSecretValues } from "./secret-values.ts";

export const REDACTED = "[REDACTED]";

const hasMarker = (s: string) => s.includes(REDACTED);

/**
 * Whether a word after an auth scheme is a credential rather than prose or a placeholder: token68
 * characters only, at least 8, and a digit or 20+ characters. Keeps "Bearer authentication failed",
 * "send Authorization: Bearer <token>" and "Bearer $TOKEN" as written.
 */
const looksLikeCredential = (word: string) => /^[A-Za-z0-9._~+\/-]{8,}=*$/.test(word) && (/\d/.test(word) || word.length >= 20);

type Replacer = (match: string, ...groups: string[]) => string;
interface Rule {
	readonly name: string;
	readonly pattern: RegExp;
	readonly replace: string | Replacer;
}

const NON_SECRET_LITERALS = new Set(["null", "undefined", "none", "true", "false"]);
// `null}` or `false)` as matched inside JSON or code. Only short values can be one of the literals, which
// also keeps this clear of a regex like /[)}\]]+$/, quadratic on a long run of brackets.
const isNonSecretLiteral = (value: string) => value.length <= 12 && NON_SECRET_LITERALS.has(value.toLowerCase().replace(/[)}\]]{1,3}$/, ""));

// Schemes whose word is kept in front of the redacted credential, as in `Authorization: Basic [REDACTED]`.
const AUTH_SCHEMES = new Set(["basic", "bearer", "token", "digest", "negotiate", "ntlm", "apikey", "aws4-hmac-sha256"]);

/**
 * The rules, applied in order. Provider-specific patterns come before the generic context ones so the
 * recognisable prefix survives (an Anthropic key under `x-api-key:` keeps its `sk-ant-` prefix).
 * Every rule leaves the marker (and a kept prefix followed by it) alone, so the passes of redact()
 * settle, almost always after the first.
 */
// JSON inside a JSON string (an error body a tool's result quotes) escapes its quotes: the rules that
// read a quoted key or value take `\"` for `"`, and a value ends at one.
// Each rule's word boundary, (?<!(?<!\\)[A-Za-z0-9_-]), takes a letter right after a backslash for
// the end of a JSON escape (`\n`, `\t`, `\r`): redaction runs on JSON text (a tool's JSON result, a
// webhook payload), where a credential on a new line follows the letter n.
const RULES: readonly Rule[] = [
	// JWTs: the header segment is base64url JSON, so it starts with `eyJ` (`{"`). The signature segment
	// may be empty (alg "none"), hence `*`.
	{
		name: "jwt",
		pattern: /(?<!(?<!\\)[A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*/g,
		replace: REDACTED,
	},
	// Anthropic: sk-ant-api03-…, sk-ant-admin01-…, sk-ant-oat01-…; keep the kind, drop the secret.
	{
		name: "anthropic",
		pattern: /(?<!(?<!\\)[A-Za-z0-9_-])(sk-ant-(?:[a-z]{2,8}\d{2}-)?)[A-Za-z0-9_-]{16,}/g,
		replace: `$1${REDACTED}`,
	},
	// OpenAI-style: sk-…, sk-proj-…, sk-svcacct-…, sk-admin-…. After the Anthropic rule, whose output
	// (`sk-ant-api03-[REDACTED]`) has far fewer than 20 key characters after `sk-`, so it is not re-matched.
	{
		name: "openai",
		pattern: /(?<!(?<!\\)[A-Za-z0-9_-])(sk-(?:proj-|svcacct-|admin-)?)[A-Za-z0-9_-]{20,}/g,
		replace: `$1${REDACTED}`,
	},
	// Stripe secret and restricted keys, and webhook signing secrets.
	{
		name: "stripe",
		pattern: /(?<!(?<!\\)[A-Za-z0-9_])((?:sk|rk)_(?:live|test)_|whsec_)[A-Za-z0-9]{10,}/g,
		replace: `$1${REDACTED}`,
	},
	// GitHub: classic (ghp_ gho_ ghu_ ghs_ ghr_) and fine-grained (github_pat_) tokens.
	{
		name: "github",
		pattern: /(?<!(?<!\\)[A-Za-z0-9_])(gh[pousr]_|github_pat_)[A-Za-z0-9_]{20,}/g,
		replace: `$1${REDACTED}`,
	},
	// Slack tokens: bot, user, app-level (xapp-), refresh (xoxe-) and legacy ones.
	{
		name: "slack-token",
		pattern: /(?<!(?<!\\)[A-Za-z0-9_-])(xox[abeprs]-|xapp-)[A-Za-z0-9-]{10,}/g,
		replace: `$1${REDACTED}`,
	},
	// AWS access key ids (long-term AKIA, temporary ASIA). Exactly 16 more characters.
	{
		name: "aws-access-key-id",
		pattern: /(?<![A-Z0-9])(AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])/g,
		replace: `$1${REDACTED}`,
	},
	// Google API keys.
	{
		name: "google-api-key",
		pattern: /(?<!(?<!\\)[A-Za-z0-9_-])(AIza)[0-9A-Za-z_-]{35}/g,
		replace: `$1${REDACTED}`,
	},
	// Slack incoming webhooks and workflow triggers: the path after /services/ is the credential.
	{
		name: "slack-webhook",
		pattern: /(hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9_\/-]+/gi,
		replace: `$1${REDACTED}`,
	},
	// Discord webhooks: /api/webhooks/<id>/<token>; the id alone is harmless but the pair is the key.
	{
		name: "discord-webhook",
		pattern: /((?:ptb\.|canary\.)?discord(?:app)?\.com\/api\/(?:v\d{1,2}\/)?webhooks\/)[A-Za-z0-9_\/-]+/gi,
		replace: `$1${REDACTED}`,
	},
	// Credentials in a URL's authority: scheme://user:pass@host → scheme://[REDACTED]@host. The password
	// part may itself contain `@` (greedy, then back to the last `@` of the authority). A bare
	// `user@host` (ssh://git@github.com) is not a credential and is kept.
	{
		name: "url-credentials",
		pattern: /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{0,30}:\/\/)[^\s\/?#@:]*:[^\s\/?#]*@/g,
		replace: `$1${REDACTED}@`,
	},
	// Query (and OAuth fragment) parameters that carry credentials: value redacted, name kept.
	{
		name: "query-parameter",
		pattern:
			/([?&#](?:token|key|api_key|apikey|api-key|access_token|refresh_token|id_token|auth|auth_token|signature|sig|secret|client_secret|password|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential)=)([^&#\s"'<>]+)/gi,
		replace: (match, name: string, value: string) => (value === REDACTED ? match : `${name}${REDACTED}`),
	},
	// PEM private keys are handled by redactPem (a forward scan, not a regex) before these rules.

	// Sensitive header lines (curl -v, raw HTTP dumps, logged request headers): the whole value goes,
	// whatever the scheme, since e.g. an AWS SigV4 Authorization value is a credential in every part.
	{
		name: "header-line",
		pattern: /^([ \t>]*(?:proxy-authorization|authorization|cookie|set-cookie|x-api-key|x-auth-token)[ \t]*:[ \t]*)[^\r\n]+/gim,
		replace: `$1${REDACTED}`,
	},
	// The same lines in JSON text (a dump inside a tool's JSON result): a line starts after `\n` or `\r`,
	// and its value ends at the string's closing quote or the next escape, an escaped quote within it.
	{
		name: "header-line-json",
		pattern: /(?<=\\[nr])([ \t>]*(?:proxy-authorization|authorization|cookie|set-cookie|x-api-key|x-auth-token)[ \t]*:[ \t]*)(?:[^"\\\r\n]|\\")+/gi,
		replace: (match, prefix: string) => (hasMarker(match) ? match : `${prefix}${REDACTED}`),
	},
	// `Authorization: <scheme> <credential>` anywhere else (curl -H arguments, serialised headers):
	// keep the scheme word, redact the credential.
	{
		name: "authorization-inline",
		pattern: /((?:proxy-)?authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?)((?:[^\s"',;\\]|\\(?!["']))+)(?:([ \t]+)((?:[^\s"',;\\]|\\(?!["']))+))?/gi,
		replace: (match, prefix: string, first: string, gap: string | undefined, second: string | undefined) => {
			if (AUTH_SCHEMES.has(first.toLowerCase())) {
				// A scheme alone ("Authorization: Basic") or with a placeholder hides nothing.
				if (second === undefined || !looksLikeCredential(second)) return match;
				return `${prefix}${first}${gap}${REDACTED}`;
			}
			if (!looksLikeCredential(first)) return match;
			return `${prefix}${REDACTED}${gap ?? ""}${second ?? ""}`;
		},
	},
	// `Bearer <token>` anywhere. A token needs a digit or 20+ characters, so prose such as
	// "Bearer authentication failed" keeps its words (and still classifies as an auth failure).
	{
		name: "bearer",
		pattern: /(?<!(?<!\\)[A-Za-z0-9_-])(bearer[ \t]+)([A-Za-z0-9._~+\/-]{8,}=*)/gi,
		replace: (match, scheme: string, token: string) => (looksLikeCredential(token) ? `${scheme}${REDACTED}` : match),
	},
	// A signature parameter outside a query string, e.g. the last part of an AWS SigV4 Authorization
	// value in a curl -H argument. Only long values: "signature=invalid" in an error message stays.
	{
		name: "signature",
		pattern: /(?<!(?<!\\)[A-Za-z0-9_-])((?:x-amz-|x-goog-)?signature=)([A-Za-z0-9+\/%_-]{16,}=*)/gi,
		replace: `$1${REDACTED}`,
	},
	// `password=…`, `"api_key": "…"`, `client_secret: …` in free text (connection strings, env dumps,
	// YAML, JSON inside an error message). Names are matched whole: `ANTHROPIC_API_KEY is not set` and
	// `max_tokens: 1024` are left alone. Bare "secret"/"token" are not listed: too common in prose. No
	// space before the separator, so code quoted in an answer (`const apiKey = config.key`) survives.
	// The AWS CLI's credentials and config files write `aws_secret_access_key = …` with spaces, which
	// the key-value rule below leaves alone for prose's sake; these names never occur in prose.
	{
		name: "aws-credentials-file",
		pattern: /(?<!(?<!\\)[A-Za-z0-9_-])((?:aws_secret_access_key|aws_session_token)[ \t]*[:=][ \t]*["']?)([A-Za-z0-9+\/=]{16,})/gi,
		replace: `$1${REDACTED}`,
	},
	// AWS credentials as JSON (instance metadata, STS, `aws configure export-credentials`): the secret
	// and the session token under their own names, which neither rule above knows.
	{
		name: "aws-credentials-json",
		pattern: /(\\?"(?:SecretAccessKey|SessionToken|Token)\\?"[ \t]*:[ \t]*\\?")([A-Za-z0-9+\/=]{16,})/g,
		replace: `$1${REDACTED}`,
	},
	// drover's own token list (an env dump, .dev.vars, YAML, JSON): every entry goes, commas and all.
	// Only a `name:role:token` value: "API_TOKENS: no tokens configured" is drover's own prose.
	{
		name: "api-tokens",
		pattern: /(?<!(?<!\\)[A-Za-z0-9_-])(API_TOKENS\\?["']?[ \t]*[:=][ \t]*\\?["']?)([\w.-]{1,64}:(?:read|operate|admin):[^\s"'&;\\]+)/g,
		replace: `$1${REDACTED}`,
	},
	// Environment dumps: an upper-case variable whose name ends in a credential's word
	// (`DB_PASSWORD=…`, `GITHUB_TOKEN=…`, `TICKETS_URL_SIGNING_KEY=…`), right before its `=` or `:`,
	// so prose that names one ("ANTHROPIC_API_KEY is not set") keeps it.
	{
		name: "env-variable",
		pattern: /(?<!(?<!\\)[A-Za-z0-9_-])([A-Z0-9]+(?:_[A-Z0-9]+)*_(?:PASSWORD|PASSWD|TOKEN|SECRET|API_KEY|APIKEY|SECRET_KEY|ACCESS_KEY|PRIVATE_KEY|SIGNING_KEY|WEBHOOK_URL)["']?[:=][ \t]*["']?)([^\s"'&,;]+)/g,
		replace: (match, prefix: string, value: string) =>
			hasMarker(value) || value.startsWith("-----BEGIN") || isNonSecretLiteral(value) ? match : `${prefix}${REDACTED}`,
	},
	{
		name: "key-value",
		pattern:
			/(?<!(?<!\\)[A-Za-z0-9_-])((?:password|passwd|client_secret|(?:x-)?api[_-]?key|access[_-]?token|refresh[_-]?token|auth[_-]?token|private[_-]?key|secret[_-]?key|aws_secret_access_key)\\?["']?[:=][ \t]*\\?["']?)((?:[^\s"'&,;\\]|\\(?!["']))+)/gi,
		// A PEM value was already reduced to BEGIN…[REDACTED]…END by redactPem; keep its markers readable.
		// Literal absences ("password": null) say no secret was there; redactDeep keeps null for the same reason.
		replace: (match, prefix: string, value: string) =>
			hasMarker(value) || value.startsWith("-----BEGIN") || isNonSecretLiteral(value) ? match : `${prefix}${REDACTED}`,
	},
];

// Labels are bounded ({0,40}) so a run of "-----BEGIN AAAA…" cannot backtrack without limit.
const PEM_BEGIN = /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/g;
const PEM_END = /-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/g;
// What a PEM body may hold when the END line is missing (truncated logs): base64, line breaks (raw or
// JSON-escaped) and the RFC 1421 headers of encrypted keys (Proc-Type, DEK-Info).
const PEM_TRUNCATED_BODY = /(?:\[REDACTED\])?[A-Za-z0-9+\/=\s\\:,-]*/y;

/**
 * Private key blocks, BEGIN through END, become `BEGIN…[REDACTED]…END` (markers kept, so an operator
 * sees what kind of key leaked). A block cut off before its END line (a truncated log) is redacted as
 * far as PEM-body characters reach, which may take some following words with it: the safe direction.
 * One forward pass: once an END search fails, no later BEGIN can find one either.
 */
function redactPem(text: string): string {
	if (!text.includes("PRIVATE KEY")) return text;
	let out = "";
	let pos = 0;
	let noEndAfter = Infinity;
	PEM_BEGIN.lastIndex = 0;
	for (let begin = PEM_BEGIN.exec(text); begin !== null; begin = PEM_BEGIN.exec(text)) {
		const bodyStart = begin.index + begin[0].length;
		let end: RegExpExecArray | null = null;
		if (bodyStart < noEndAfter) {
			PEM_END.lastIndex = bodyStart;
			end = PEM_END.exec(text);
			if (end === null) noEndAfter = bodyStart;
		}
		out += text.slice(pos, begin.index) + begin[0] + REDACTED;
		if (end !== null) {
			out += end[0];
			pos = end.index + end[0].length;
		} else {
			PEM_TRUNCATED_BODY.lastIndex = bodyStart;
			PEM_TRUNCATED_BODY.exec(text);
			pos = PEM_TRUNCATED_BODY.lastIndex;
		}
		PEM_BEGIN.lastIndex = pos;
	}
	return out + text.slice(pos);
}

function redactOnce(text: string): string {
	let out = redactPem(text);
	for (const rule of RULES) {
		// String.replace with a global regex resets lastIndex itself, so the shared RegExp objects are safe.
		out = typeof rule.replace === "string" ? out.replace(rule.pattern, rule.replace) : out.replace(rule.pattern, rule.replace);
	}
	return out;
}

/**
 * Passes over the text until nothing changes. One pass is almost always enough, but a redaction can
 * create the boundary an earlier rule needed: `AIza…sk_live_…` run together hides the Stripe key behind
 * the Google key's last letter until that key becomes `AIza[REDACTED]`. Repeating to a fixed point both
 * catches it and makes redact idempotent by construction. Every pass only ever replaces unredacted
 * text with the marker, so the loop is short; the cap is a guard, not an expected exit.
 */
const MAX_PASSES = 8;

/**
 * Text that no rule can match without: one scan of this tells that most strings (ids, timestamps,
 * prose) hold nothing to redact, instead of one scan per rule on every log field and JSONL line.
 * Each alternative is a literal some rule requires; case-insensitive, so it only ever lets more
 * text through to the rules. A new rule adds its own literal here.
 */
const MAY_HOLD_SECRET =
	/API_TOKENS|eyJ|sk-|[sr]k_|whsec_|gh[pousr]_|github_pat_|xox|xapp-|AKIA|ASIA|AIza|hooks\.slack\.com|discord|:\/\/|=|authorization|cookie|x-api-key|x-auth-token|bearer|PRIVATE KEY|(?:passw(?:or)?d|client_secret|api[_-]?key|access[_-]?token|refresh[_-]?token|auth[_-]?token|private[_-]?key|secret[_-]?key|aws_secret_access_key)\\?["']?[:=]|(?:SecretAccessKey|SessionToken|Token)\\?"/i;

/** Redacts every secret this module recognises in `text`, and the Worker's own secrets by value. Idempotent, linear time. */
export function redact(text: string): string {
	// The Worker's own secrets by value first, which no pattern knows (a drover token, a signing
	// key), and whole: a rule redacting part of a URL secret (its user and password) would leave the
	// rest (a path that is a credential too) for no value to match. Once: a rule's marker never
	// makes a value appear.
	const own = replaceSecretValues(text, REDACTED);
	if (!MAY_HOLD_SECRET.test(own)) return own;
	let out = own;
	for (let pass = 0; pass < MAX_PASSES; pass++) {
		const next = redactOnce(out);
		if (next === out) break;
		out = next;
	}
	return out;
}

/**
 * Keys whose value is a credential whatever it looks like; matched case-insensitively and with `-`
 * and `_` treated alike, but whole: `max_tokens`, `input_tokens` and `url_secret` (which names a
 * secret, it does not hold one) are not sensitive.
 */
const SENSITIVE_KEYS: ReadonlySet<string> = new Set(
	[
		"authorization",
		"proxy_authorization",
		"cookie",
		"set_cookie",
		"x_api_key",
		"api_key",
		"apikey",
		"x_auth_token",
		"auth_token",
		"token",
		"access_token",
		"refresh_token",
		"id_token",
		"password",
		"passwd",
		"secret",
		"client_secret",
		"private_key",
		"secret_key",
		"aws_secret_access_key",
		"secretaccesskey",
		"secret_access_key",
		"sessiontoken",
		"session_token",
		"aws_session_token",
		"signing_key",
	],
);

export const isSensitiveKey = (key: string): boolean => SENSITIVE_KEYS.has(key.toLowerCase().replaceAll("-", "_"));

function isPlainObject(value: object): value is Record<string, unknown> {
	const proto = Object.getPrototypeOf(value);
	return proto === Object.prototype || proto === null;
}

// null/undefined and "" hide nothing and say something useful ("the token was empty"), so they stay.
const redactSensitiveValue = (value: unknown): unknown => (value === null || value === undefined || value === "" ? value : REDACTED);

/**
 * A copy of `value` with every string redacted and every value under a sensitive key replaced whole
 * by `[REDACTED]`. Walks plain objects, arrays, Maps and Headers (cycles preserved); object keys are
 * redacted too. Other objects (Dates, class instances) are returned as they are. The input is not
 * modified. The static type is kept for the caller's convenience: a sensitive field that held an
 * object or number holds the string `[REDACTED]` afterwards.
 */
export function redactDeep<T>(value: T): T {
	return walk(value, new WeakMap()) as T;
}

function walk(value: unknown, seen: WeakMap<object, unknown>): unknown {
	if (typeof value === "string") return redact(value);
	if (typeof value !== "object" || value === null) return value;
	const already = seen.get(value);
	if (already !== undefined) return already;

	if (Array.isArray(value)) {
		const out: unknown[] = [];
		seen.set(value, out);
		for (const item of value) out.push(walk(item, seen));
		return out;
	}
	if (typeof Headers !== "undefined" && value instanceof Headers) {
		const out = new Headers();
		seen.set(value, out);
		for (const [key, item] of value) out.append(key, isSensitiveKey(key) ? REDACTED : redact(item));
		return out;
	}
	if (value instanceof Map) {
		const out = new Map<unknown, unknown>();
		seen.set(value, out);
		for (const [key, item] of value) {
			const sensitive = typeof key === "string" && isSensitiveKey(key);
			out.set(typeof key === "string" ? redact(key) : key, sensitive ? redactSensitiveValue(item) : walk(item, seen));
		}
		return out;
	}
	if (isPlainObject(value)) {
		const out: Record<string, unknown> = Object.getPrototypeOf(value) === null ? Object.create(null) : {};
		seen.set(value, out);
		for (const [key, item] of Object.entries(value)) {
			// defineProperty, not assignment: a "__proto__" key from JSON.parse must stay a plain property.
			Object.defineProperty(out, redact(key), {
				value: isSensitiveKey(key) ? redactSensitiveValue(item) : walk(item, seen),
				enumerable: true,
				writable: true,
				configurable: true,
			});
		}
		return out;
	}
	return value;
}
