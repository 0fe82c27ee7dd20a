/**
 * URLs drover POSTs to that live in Worker secrets: the alert webhook (ALERT_WEBHOOK_URL), delivery
 * and hook targets and webhook tools (fleet.yaml's `url_secret`). Such a URL can carry a credential
 * (Slack-style hook paths, user:password@), so its value must never reach a log line, a stored error
 * or a tool result. Every caller goes through here, so the two guards cannot be forgotten:
 * - resolve first: a value that is not an http(s) URL is never fetched, because a runtime's
 *   "Invalid URL: <value>" would quote it;
 * - scrub after: a network error's message may quote the URL it failed on.
 */
import { isReservedSecret } from "../config/reserved-secrets.ts";
import type { LogFields } from "../log.ts";
import { redact } from "../security/redact.ts";
import { startAtEnd } from "../security/secret-values.ts";
import { clip } from "../shared/clip.ts";
import { isHttpUrl } from "../shared/http-url.ts";

/**
 * A Worker secret whose NAME is only known at run time (fleet.yaml's `url_secret`, `webhook.secret`,
 * `<url_secret>_SIGNING_KEY`): `wrangler types` cannot list those in Env. Unset and empty are both
 * `undefined`; anything that is not a string (a binding of that name) is too.
 */
export function secretNamed(env: object, name: string): string | undefined {
	// A definition stored before a release reserved the name still holds it: it is not read for it.
	return isReservedSecret(name) ? undefined : secretValue(Reflect.get(env, name));
}

/** A secret's value, or `undefined` when it is unset, empty or not a string. */
export function secretValue(value: unknown): string | undefined {
	return typeof value === "string" && value !== "" ? value : undefined;
}

export type SecretUrl =
	/** Unset or empty: the feature is off (or, for a configured target, misconfigured). */
	| { kind: "missing" }
	/** Set, but not an http(s) URL: not fetched, and its value is never quoted. */
	| { kind: "not-http" }
	| { kind: "url"; url: string };

/** Sorts a secret's value (from Env, or from {@link secretNamed}) into what a caller may do with it. */
export function resolveSecretUrl(value: unknown): SecretUrl {
	if (typeof value !== "string" || value === "") return { kind: "missing" };
	if (!isHttpUrl(value)) return { kind: "not-http" };
	return { kind: "url", url: value };
}

/**
 * Where a URL secret is POSTed, and the Authorization its user and password make
 * (`https://user:pass@host/…`): fetch drops them, and the receiver answered 401 with no word of why.
 * Sent as Basic auth, as curl sends them; a POST with its own Authorization keeps it.
 */
export function postTarget(url: string): { url: string; headers: Record<string, string> } {
	const parsed = new URL(url);
	if (parsed.username === "" && parsed.password === "") return { url, headers: {} };
	// A malformed escape (`%zz`) is sent as written, as curl does.
	const user = safeDecode(parsed.username);
	const password = safeDecode(parsed.password);
	parsed.username = parsed.password = "";
	const bytes = new TextEncoder().encode(`${user}:${password}`);
	return { url: parsed.href, headers: { authorization: `Basic ${btoa(String.fromCharCode(...bytes))}` } };
}

/** A part of the URL this long or longer is taken for a credential wherever it appears on its own. */
const SECRET_PART_CHARS = 12;

/**
 * `message` with every occurrence of the secret URL (as written and as the runtime normalises it,
 * e.g. a lowercased host or an added trailing slash) replaced by `placeholder`, then redacted. The
 * URL's path, query, userinfo and each long segment of them go too: a server echoes its own path
 * ("Cannot POST /services/T0/B0/secret", a 404 page), and a hook path is the credential itself.
 */
export function scrubSecretUrl(message: string, url: string, placeholder = "<url>"): string {
	return redact(replaceForms(message, secretForms(url), placeholder));
}

/**
 * A server's answer quoted in part: scrubbed whole before it is cut to `maxChars`, since a cut
 * through an echoed URL leaves a piece no form matches. `readWasCut` says the answer itself stops
 * where a read cap cut it: a secret form it ends on in part goes too. The cut ends in "…" and never
 * halves an emoji: a lone surrogate is stored as bytes that read back as U+FFFD, and the Messages API
 * refuses a request holding one.
 */
export function scrubbedExcerpt(message: string, url: string, placeholder: string, maxChars: number, readWasCut = false): string {
	const forms = secretForms(url);
	let out = replaceForms(message, forms, placeholder);
	if (readWasCut) out = dropPartialTail(out, forms, placeholder);
	return clip(redact(out), maxChars);
}

function secretForms(url: string): string[] {
	const parsed = URL.parse(url);
	const forms = new Set([url]);
	if (parsed) {
		forms.add(parsed.href);
		// As posted: without its user and password (see postTarget), which fetch's errors would quote.
		if (parsed.username || parsed.password) forms.add(postTarget(url).url);
		const parts = [parsed.pathname + parsed.search, parsed.pathname, parsed.search.slice(1), parsed.username, parsed.password];
		for (const segment of `${parsed.pathname}/${parsed.search.slice(1)}`.split(/[/?&=]/)) parts.push(segment, safeDecode(segment));
		for (const part of parts) if (part.length >= SECRET_PART_CHARS) forms.add(part);
	}
	// And as servers echo them: JSON-escaped (PHP writes `\/` for `/`) and percent-encoded (a redirect's
	// or an error page's quoting of its own URL); a hook URL's segments are often too short to go alone.
	for (const form of [...forms]) {
		forms.add(form.replaceAll("/", "\\/"));
		const encoded = encodeURIComponent(form);
		forms.add(encoded);
		forms.add(encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()));
	}
	// The longer first, so that one of them being a prefix of another leaves no tail behind.
	return [...forms].sort((a, b) => b.length - a.length);
}

function replaceForms(message: string, forms: readonly string[], placeholder: string): string {
	let out = message;
	for (const form of forms) out = out.split(form).join(placeholder);
	return out;
}

/** A form's first few characters give too little away to be worth a placeholder that reads oddly. */
const PARTIAL_TAIL_MIN_CHARS = 4;

function dropPartialTail(text: string, forms: readonly string[], placeholder: string): string {
	const longest = startAtEnd(text, forms.map((form) => ({ form, open: PARTIAL_TAIL_MIN_CHARS })));
	return longest === 0 ? text : text.slice(0, text.length - longest) + placeholder;
}

function safeDecode(segment: string): string {
	try {
		return decodeURIComponent(segment);
	} catch {
		return segment;
	}
}

/** Log fields (errorFields' message and stack) with the secret URL scrubbed from every string. */
export function scrubSecretUrlFields(fields: LogFields, url: string, placeholder = "<url>"): LogFields {
	return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, typeof v === "string" ? scrubSecretUrl(v, url, placeholder) : v]));
}
