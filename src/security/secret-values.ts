/**
 * The values of the Worker's own secrets (its API tokens, API keys, webhook secrets, signing keys and
 * URL secrets), for redact() to replace wherever they appear: a token pasted into a prompt or a
 * notepad value is stored and shown to every read token, and no pattern can tell a drover token,
 * an HMAC key or a webhook URL's path from ordinary text. Read once an isolate from its bindings
 * (a secret changed is a new deployment, so a new isolate).
 */
import { env } from "cloudflare:workers";

/** wrangler.toml's [vars] whose names read as a secret's: not secrets (a job's answer quoting the Worker's public URL keeps it). */
const PUBLIC_VARS = new Set(["ANTHROPIC_BASE_URL", "PUBLIC_URL"]);

/**
 * The bindings taken for secrets, by name: drover's own, and those named as fleet.yaml's secrets
 * are (`*_URL`, `*_SECRET`, `*_SIGNING_KEY`, …). A var of the Worker's own named so is taken too: its
 * value is then replaced where it appears whole, nothing worse.
 */
const SECRET_NAME = /^(?:API_TOKENS|ANTHROPIC_API_KEY|.*_(?:URL|SECRET|KEY|TOKEN|TOKENS|PASSWORD))$/;

/** Shorter values are not looked for: they could be words (the tokens and keys drover takes are 16 characters or more). */
const MIN_CHARS = 12;

/**
 * Each secret whole; API_TOKENS' entries and their tokens, and ANTHROPIC_API_KEY's keys, each too.
 * `urls`: those that are URLs, matched only where the URL ends (not as the start of a longer one).
 */
export function secretValues(bindings: object): { words: string[]; urls: string[] } {
	const words = new Set<string>();
	const urls = new Set<string>();
	for (const [name, value] of Object.entries(bindings)) {
		if (typeof value !== "string" || !SECRET_NAME.test(name) || PUBLIC_VARS.has(name)) continue;
		const whole = value.trim();
		const pieces = [whole];
		if (name === "API_TOKENS") for (const entry of whole.split(",")) pieces.push(entry.trim(), entry.trim().split(":").slice(2).join(":"));
		if (name === "ANTHROPIC_API_KEY") pieces.push(...whole.split(/[\s,]+/));
		for (const piece of pieces) if (piece.length >= MIN_CHARS) (/^https?:\/\//i.test(piece) ? urls : words).add(piece);
	}
	// The longest first: a token that is part of its whole entry is replaced with it.
	const byLength = (set: Set<string>) => [...set].sort((a, b) => b.length - a.length);
	return { words: byLength(words), urls: byLength(urls) };
}

const escaped = (values: string[]) => values.map((v) => v.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")).join("|");

/**
 * A value as other text may spell it: inside a JSON string (its quotes and backslashes escaped, and
 * with PHP's and some other encoders' `\/` for each slash) and percent-encoded (a URL as a query
 * parameter, in either case of hex). Most tokens have none (letters, digits, `-` and `_` are the
 * same in all of them); a URL secret or a key with `+` or `/` has several.
 */
function spellings(value: string): { plain: string[]; percent: string[] } {
	const json = JSON.stringify(value).slice(1, -1);
	const percent = encodeURIComponent(value);
	return { plain: [value, json, json.replaceAll("/", "\\/")], percent: [percent, percent.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase())] };
}

/**
 * The values to look for, by what a text must hold for any of them to be in it: the values as
 * written always; an escaped or encoded spelling only where the text holds its first escape (`\/`,
 * `%3A`, …). A search of a long text costs a pass a value, and a spelling is searched for in the
 * few texts that hold its escape, not in every line a job writes.
 */
interface Lookup {
	plain: string[];
	gated: [gate: string, values: string[]][];
}

function lookup(values: string[], plain: Set<string>): Lookup {
	const gated = new Map<string, string[]>();
	for (const v of values) {
		if (plain.has(v)) continue;
		const gate = /\\.|%[0-9A-Fa-f]{2}/.exec(v)?.[0] ?? "";
		gated.set(gate, [...(gated.get(gate) ?? []), v]);
	}
	return { plain: values.filter((v) => plain.has(v)), gated: [...gated] };
}

const holdsAny = (text: string, { plain, gated }: Lookup): boolean =>
	plain.some((v) => text.includes(v)) || gated.some(([gate, values]) => text.includes(gate) && values.some((v) => text.includes(v)));

let own: { lookup: Lookup; pattern: RegExp } | null | undefined;

/**
 * Text with the Worker's secret values replaced by `marker`, wherever they stand (after a JSON
 * escape's letter too) and however they are spelt (see spellings), a URL unless it is the start of
 * a longer path; the same
 * text, not scanned by the expression, when none of them is in it (a string search each: redact
 * runs on every log field and JSONL line, and an expression of alternatives has no fast scan).
 */
export function replaceSecretValues(text: string, marker: string): string {
	if (own === undefined) {
		const values = secretValues(env);
		// The longest first, as secretValues orders them; a spelling the same as another's once.
		const spelt = (list: string[], kinds: ("plain" | "percent")[]) =>
			[...new Set(list.flatMap((v) => kinds.flatMap((kind) => spellings(v)[kind])))].sort((a, b) => b.length - a.length);
		const words = spelt(values.words, ["plain", "percent"]);
		const [urls, encodedUrls] = [spelt(values.urls, ["plain"]), spelt(values.urls, ["percent"]).filter((v) => !values.urls.includes(v))];
		// A URL followed by more of its path is another URL (a public endpoint's page); by a query, a
		// fragment, a closing slash or punctuation, it is this one. So in a JSON string (`\/` for `/`),
		// and percent-encoded (a query parameter's value, which `&` ends; `%2F` continues its path).
		const parts = [
			words.length ? `(?:${escaped(words)})` : "",
			urls.length ? `(?:${escaped(urls)})(?![\\w%~=&-]|\\\\?\\/[\\w%~.-])` : "",
			encodedUrls.length ? `(?:${escaped(encodedUrls)})(?![\\w~-]|%2[Ff][\\w%~.-])` : "",
		].filter(Boolean);
		const asWritten = new Set([...values.words, ...values.urls]);
		own = parts.length === 0 ? null : { lookup: lookup([...words, ...urls, ...encodedUrls], asWritten), pattern: new RegExp(parts.join("|"), "g") };
	}
	if (own === null || !holdsAny(text, own.lookup)) return text;
	return text.replace(own.pattern, marker);
}
