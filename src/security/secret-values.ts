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
		pieces.push(...urlPassword(whole));
		for (const piece of pieces) if (piece.length >= MIN_CHARS) (/^https?:\/\//i.test(piece) ? urls : words).add(piece);
	}
	// The longest first: a token that is part of its whole entry is replaced with it.
	const byLength = (set: Set<string>) => [...set].sort((a, b) => b.length - a.length);
	return { words: byLength(words), urls: byLength(urls) };
}

/**
 * A URL secret's password as its receiver sees it, decoded (`p@ss…` of `p%40ss…`), and the Basic
 * credential drover sends it as (base64 of `user:password`, as postTarget makes it): a receiver
 * refusing it ("wrong password p@ss…") or echoing its headers quotes these, not the URL. A URL with a
 * user and no password (`https://<token>@host`, as Git hosts take a token) carries its credential as
 * the user: that user, and `user:` in Basic, as postTarget sends it.
 */
function urlPassword(value: string): string[] {
	const url = /^https?:\/\//i.test(value) ? URL.parse(value) : null;
	if (!url || (url.password === "" && url.username === "")) return [];
	const decode = (part: string) => {
		try {
			return decodeURIComponent(part);
		} catch {
			return part;
		}
	};
	const [user, password] = [decode(url.username), decode(url.password)];
	const basic = btoa(String.fromCharCode(...new TextEncoder().encode(`${user}:${password}`)));
	// Without a password, a user too short to be a credential is left (and its Basic with it): a name, not a secret.
	if (password === "") return user.length >= MIN_CHARS ? [user, basic] : [];
	return [password, basic];
}

const escaped = (values: string[]) => values.map((v) => v.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")).join("|");

/**
 * Which characters of a URL are read in any case: its scheme and its host (RFC 3986: `HTTPS://HOOKS.SLACK.COM/…`
 * is the URL stored as `https://hooks.slack.com/…`), not its user, password, path or query, which stay
 * as written. A value that is no URL has none.
 */
function caselessAt(value: string): (i: number) => boolean {
	const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^\/?#]*)/.exec(value);
	if (!m) return () => false;
	const schemeEnd = m[1]!.length;
	const authority = schemeEnd + 3;
	const hostStart = authority + m[2]!.lastIndexOf("@") + 1;
	const hostEnd = authority + m[2]!.length;
	return (i) => i < schemeEnd || (i >= hostStart && i < hostEnd);
}

const isLetter = (c: string) => /^[A-Za-z]$/.test(c);

/** A value's characters (code points, as the tree takes them), each with its offset in UTF-16 units (as caselessAt counts). */
function* withOffsets(value: string): Generator<[number, string]> {
	let at = 0;
	for (const c of value) {
		yield [at, c];
		at += c.length;
	}
}

/** A URL's scheme and host with their letters lower-cased, the rest as written: one spelling for each URL a caseless match finds. */
function foldUrl(url: string): string {
	const caseless = caselessAt(url);
	return [...withOffsets(url)].map(([i, c]) => (caseless(i) ? c.toLowerCase() : c)).join("");
}

/** An expression for a URL as written, its scheme's and host's letters in either case. */
function urlLiteral(url: string): string {
	const caseless = caselessAt(url);
	return [...withOffsets(url)].map(([i, c]) => (caseless(i) && isLetter(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : escaped([c]))).join("");
}

/** A case-sensitive run shorter than this is in too many texts to be worth searching for first (see secretValueReplacer). */
const MIN_NEEDLE_CHARS = 8;

/**
 * What a text must hold, as written, to hold `value` as written: the value itself, or for a URL the
 * longest run of it no caseless letter breaks (its path, mostly): a string search instead of an expression.
 */
function needleOf(value: string, isUrl: boolean): string {
	if (!isUrl) return value;
	const caseless = caselessAt(value);
	let best = "";
	let run = "";
	for (const [i, c] of withOffsets(value)) {
		if (caseless(i) && isLetter(c)) run = "";
		else if ((run += c).length > best.length) best = run;
	}
	return best;
}

/** Characters no encoder escapes (a URL's unreserved ones, less `~`, which form encoding escapes). */
const UNESCAPED = /[A-Za-z0-9._-]/;

/** A hexadecimal number's digits, each letter in either case. */
const anyCase = (hex: string) => hex.replace(/[a-f]/gi, (d) => `[${d.toLowerCase()}${d.toUpperCase()}]`);

/**
 * An expression for one character as encoders spell it: as written; percent-encoded (its UTF-8
 * bytes, each in either case of hex, and encoded once more, `%252F`, as a URL in a query parameter
 * of a URL in another); JSON-escaped (`\"`, `\\`, a control character's short escape, PHP's `\/`, and
 * `\u002f`, `\u0026`, `\u003c`…, as Go's, .NET's and Gson's encoders write `<`, `>`, `&`, `=`, `+` and
 * `'`, in either case); a space as form encoding's `+` too; as an HTML character reference (`&#x2F;`,
 * `&#47;`, `&sol;`, `&amp;`, a numeric one padded with zeros as PHP's `&#039;`: a URL in a page an
 * http_fetch read, or in an HTML-escaping template's output). Mixed within a value (Python's quote() leaves `/` as written and escapes `:`) and each
 * character in its own case of hex.
 */
function charPattern(c: string): string {
	const literal = escaped([c]);
	if (UNESCAPED.test(c)) return literal;
	const percent = [...new TextEncoder().encode(c)].map((b) => `%(?:25)?${anyCase(b.toString(16).padStart(2, "0"))}`).join("");
	const unicode = [...Array(c.length).keys()].map((i) => `\\\\u${anyCase(c.charCodeAt(i).toString(16).padStart(4, "0"))}`).join("");
	const point = c.codePointAt(0)!;
	// Numeric references may be padded with zeros: PHP's htmlspecialchars writes ' as &#039;.
	const html = `&#(?:[xX]0*${anyCase(point.toString(16))}|0*${point});`;
	return `(?:${[literal, percent, unicode, html, ...shortEscapes(c).map((e) => escaped([e])), ...(NAMED_REFERENCES[c] ?? [])].join("|")})`;
}

/**
 * HTML's named references for the characters a URL or a token is likely to hold (WHATWG's list, as
 * written: they are case-sensitive); any other character is found by its numeric one (`&#x3A;`, `&#58;`).
 */
const NAMED_REFERENCES: Record<string, string[]> = {
	"/": ["&sol;"],
	"&": ["&amp;", "&AMP;"],
	":": ["&colon;"],
	"?": ["&quest;"],
	"=": ["&equals;"],
	"#": ["&num;"],
	"%": ["&percnt;"],
	"+": ["&plus;"],
	"@": ["&commat;"],
	"~": ["&tilde;"],
	"<": ["&lt;", "&LT;"],
	">": ["&gt;", "&GT;"],
	'"': ["&quot;", "&QUOT;"],
	"'": ["&apos;"],
	",": ["&comma;"],
	";": ["&semi;"],
	"!": ["&excl;"],
	"$": ["&dollar;"],
	"*": ["&ast;"],
	"(": ["&lpar;"],
	")": ["&rpar;"],
	"[": ["&lsqb;"],
	"]": ["&rsqb;"],
};

/** A character's JSON short escape (`\"`, `\\`, `\n`, PHP's `\/`) and a space's `+`, where it has them. */
function shortEscapes(c: string): string[] {
	const short = c === "/" ? "\\/" : JSON.stringify(c).slice(1, -1);
	return [...(short !== c && !short.startsWith("\\u") ? [short] : []), ...(c === " " ? ["+"] : [])];
}

/**
 * A `/` in any of those spellings, then what continues a path: after a URL secret, it makes a
 * longer URL (a page under a public endpoint), not this one.
 */
const SLASH_ON = String.raw`(?:\\?\/|\\u002[fF]|%(?:25)?2[fF]|&#[xX]0*2[fF];|&#0*47;|&sol;)[\w%~.-]`;
/** A percent-encoded character that continues a path's segment: a letter, a digit, `-`, `_` or `~` (not `.`, which may end a sentence). */
const PERCENT_ON = String.raw`%(?:25)?(?:3[0-9]|[46][1-9A-Fa-f]|[57][0-9Aa]|2[Dd]|5[Ff]|7[Ee])`;

/** Each spelling of a hexadecimal number's letters in either case (`2f`, `2F`). */
const caseVariants = (hex: string): string[] =>
	[...hex].reduce<string[]>((acc, d) => acc.flatMap((head) => [...new Set([d.toLowerCase(), d.toUpperCase()])].map((x) => head + x)), [""]);

/**
 * What each of a character's other spellings starts with (`%3A`, `%3a`, `%253A`, `\u003a`, `\/`, a
 * space's `+`): a text holding none of them holds the character only as written.
 */
function escapesOf(c: string): { percent: string[]; unicode: string[]; short: string[] } {
	const byte = caseVariants(new TextEncoder().encode(c)[0]!.toString(16).padStart(2, "0"));
	return {
		percent: byte.flatMap((hex) => [`%${hex}`, `%25${hex}`]),
		unicode: caseVariants(c.charCodeAt(0).toString(16).padStart(4, "0")).map((hex) => `\\u${hex}`),
		short: shortEscapes(c),
	};
}

/**
 * What makes a URL secret as written the start of a longer URL (a public endpoint's page), not this
 * one: more of its path (in a JSON string too, `\/` for a slash). A query, a fragment, a closing
 * slash or punctuation ends it.
 */
const AS_WRITTEN_GOES_ON = String.raw`[\w%~=&-]|\\?\/[\w%~.-]|\\u002[fF][\w%~.-]`;
const goesOn = new RegExp(`^(?:${AS_WRITTEN_GOES_ON})`);

/**
 * Every value in every spelling (see charPattern), and what a text must hold for the expression to
 * run: an escape one of the values' characters may be spelt with (`%3A` or `%3a` for a URL's `:`,
 * `%2F`, `\/`, `\u002f`, …). The expression has no fast scan; a text holding no escape, or only
 * others (a JSON line's `\"` and `\n`, a query's `%20`), pays a few string searches and no pass of it.
 */
interface EverySpelling {
	pattern: RegExp;
	percent: string[];
	unicode: string[];
	short: string[];
	/** Whether any of the values' characters is escaped: each then has HTML references (see charPattern). */
	html: boolean;
	/** Whether the text holds, as written, a run of one of the values that no spelling escapes (see anchorOf). */
	anchored: (text: string) => boolean;
}

/**
 * What every spelling of a value holds as written: its longest run of characters no encoder escapes
 * (UNESCAPED; the expression takes each of them only as written), as a string search where that run
 * has no letter read in any case and is 8 characters or more, else as a case-insensitive literal
 * (a URL's host: a run ends at its `/`, `:` or `@`, so it is all host or all path). A text holding
 * an escape (an HTML page's `&amp;`, a JSON line's `\"`) and none of these runs holds no value in
 * any spelling: the expression, which has no fast scan, is not run over it (an `&amp;` in every
 * fetched page otherwise sent each through it).
 */
function anchorOf(value: string, isUrl: boolean): (text: string) => boolean {
	const caseless = isUrl ? caselessAt(value) : () => false;
	let strict = "";
	let loose = "";
	let run = "";
	let looseRun = "";
	for (const [i, c] of withOffsets(value)) {
		if (!UNESCAPED.test(c)) {
			run = looseRun = "";
			continue;
		}
		if ((looseRun += c).length > loose.length) loose = looseRun;
		if (caseless(i) && isLetter(c)) run = "";
		else if ((run += c).length > strict.length) strict = run;
	}
	if (strict.length >= MIN_NEEDLE_CHARS || strict.length === loose.length) return strict === "" ? () => true : (text) => text.includes(strict);
	const any = new RegExp(escaped([loose]), "i");
	return (text) => any.test(text);
}

/**
 * The values as a tree of their characters (`https://` once, then each host): as an alternative a
 * value, each of 15 URL secrets was tried at every `h` of a text (a 740 KB text 2.5 ms a pass,
 * against 0.6 ms as a tree). Where a value is the start of another, the longer is tried first.
 */
interface Node {
	next: Map<string, Node>;
	/** Where a value ends here, what must not follow it (a URL's lookahead; "" for a word), else undefined. */
	end?: string;
}

/**
 * A tree's key for a letter read in any case (a URL's scheme or host): apart from the letter as
 * written, which a word's is. Its character class costs the expression its fast scan for a letter:
 * a 750 KB text holding escapes took 3.6 ms a pass, against 1.8 ms with the host only as written
 * (a text without escapes is not scanned by it). A pre-check for the URLs' case-sensitive parts
 * cost as much, in string searches.
 */
const CASELESS = "\0";

function treePattern(node: Node): string {
	const alternatives = [...node.next].map(([c, child]) => (c.startsWith(CASELESS) ? `[${c.slice(1)}${c.slice(1).toUpperCase()}]` : charPattern(c)) + treePattern(child));
	if (node.end !== undefined) alternatives.push(node.end);
	return alternatives.length === 1 ? alternatives[0]! : `(?:${alternatives.join("|")})`;
}

function everySpelling(words: string[], urls: string[]): EverySpelling | null {
	const escapable = [...words, ...urls].flatMap((v) => [...v].filter((c) => !UNESCAPED.test(c)));
	if (escapable.length === 0) return null;
	// A URL followed by more of its path is another URL; by a query, a fragment, punctuation, a
	// closing slash, `&` (a query parameter's value ends there) or an escape's end, it is this one.
	const after = `(?![\\w~-]|${SLASH_ON}|${PERCENT_ON})`;
	const root: Node = { next: new Map() };
	for (const [values, end] of [[words, ""], [urls, after]] as const) {
		for (const value of values) {
			const caseless = values === urls ? caselessAt(value) : () => false;
			let node = root;
			for (const [i, ch] of withOffsets(value)) {
				const c = caseless(i) && isLetter(ch) ? CASELESS + ch.toLowerCase() : ch;
				node = node.next.get(c) ?? node.next.set(c, { next: new Map() }).get(c)!;
			}
			node.end = end;
		}
	}
	const escapes = [...new Set(escapable)].map(escapesOf);
	return {
		pattern: new RegExp(treePattern(root), "g"),
		percent: [...new Set(escapes.flatMap((e) => e.percent))],
		unicode: [...new Set(escapes.flatMap((e) => e.unicode))],
		short: [...new Set(escapes.flatMap((e) => e.short))],
		html: escapes.length > 0,
		anchored: anyOf([...words.map((w) => anchorOf(w, false)), ...urls.map((u) => anchorOf(u, true))]),
	};
}

const anyOf =
	(tests: ((text: string) => boolean)[]) =>
	(text: string): boolean =>
		tests.some((t) => t(text));

/**
 * Any HTML character reference: one search (the references a value's characters have are dozens of
 * strings, hex in either case), the values' own runs (`anchored`) then telling a page that may hold
 * one of them from the many that only hold `&amp;`.
 */
const HTML_REFERENCE = /&(?:#[0-9]+|#[xX][0-9A-Fa-f]+|[A-Za-z]+);/;

const holdsEscape = (text: string, { percent, unicode, short, html }: EverySpelling): boolean =>
	(text.includes("%") && percent.some((e) => text.includes(e))) ||
	(text.includes("\\u") && unicode.some((e) => text.includes(e))) ||
	(html && text.includes("&") && HTML_REFERENCE.test(text)) ||
	short.some((e) => text.includes(e));

/**
 * What replaces the secret values of `bindings` in a text (see replaceSecretValues), or null when
 * there are none.
 */
export function secretValueReplacer(bindings: object): ((text: string, marker: string) => string) | null {
	const { words, urls } = secretValues(bindings);
	const urlsWritten = urls.map(urlLiteral).join("|");
	const parts = [words.length ? `(?:${escaped(words)})` : "", urls.length ? `(?:${urlsWritten})(?!${AS_WRITTEN_GOES_ON})` : ""].filter(Boolean);
	if (parts.length === 0) return null;
	// A URL with no path has only `://` or a `.` as written (https://ops.example.com): a needle most
	// URL-bearing lines hold, which sent every one of them through the pattern (twice the time over
	// 10,000 JSONL lines). Its pre-check is then the URL read in any case, one literal, still a fast scan.
	const needles = [...new Set([...words.map((w) => needleOf(w, false)), ...urls.map((u) => needleOf(u, true)).filter((n) => n.length >= MIN_NEEDLE_CHARS)])];
	const caseless = urls.filter((u) => needleOf(u, true).length < MIN_NEEDLE_CHARS).map((u) => new RegExp(escaped([u]), "i"));
	const holdsAsWritten = (text: string) => needles.some((n) => text.includes(n)) || caseless.some((r) => r.test(text));
	const pattern = new RegExp(parts.join("|"), "g");
	const urlSet = new Set(urls.map(foldUrl));
	const every = everySpelling(words, urls);
	/**
	 * The values as written, over the every-spelling pass's result (a URL it left, matched whole as
	 * another URL, hid from it what it spans: a token as its last segment, a secret running on past
	 * its end), a URL followed by a marker that pass put taken as going on: it did, into the secret
	 * the marker stands for. Made once a marker.
	 */
	const after = new Map<string, RegExp>();
	const afterPass = (marker: string): RegExp => {
		let made = after.get(marker);
		if (!made) {
			const more = [words.length ? `(?:${escaped(words)})` : "", urls.length ? `(?:${urlsWritten})(?!${AS_WRITTEN_GOES_ON}|${String.raw`\\?\/?`}${escaped([marker])})` : ""];
			made = new RegExp(more.filter(Boolean).join("|"), "g");
			after.set(marker, made);
		}
		return made;
	};
	return (text, marker) => {
		if (every && holdsEscape(text, every) && every.anchored(text)) {
			// One pass for all spellings; a URL as written by the rule for it as written (which leaves it before `&`, `=` or `%`).
			const rest = text.replace(every.pattern, (found: string, at: number) =>
				urlSet.has(foldUrl(found)) && goesOn.test(text.slice(at + found.length, at + found.length + 3)) ? found : marker,
			);
			return holdsAsWritten(rest) ? rest.replace(afterPass(marker), marker) : rest;
		}
		return holdsAsWritten(text) ? text.replace(pattern, marker) : text;
	};
}

let own: ((text: string, marker: string) => string) | null | undefined;

/**
 * Text with the Worker's secret values replaced by `marker`, wherever they stand (after a JSON
 * escape's letter too) and however they are spelt (see charPattern), a URL unless it is the start
 * of a longer path, its scheme and host in any case (see caselessAt); the same text, not scanned by an expression, when none of them is in it as
 * written and it holds none of their escapes (a string search each: redact runs on every log field
 * and JSONL line, and an expression of alternatives has no fast scan).
 */
export function replaceSecretValues(text: string, marker: string): string {
	if (own === undefined) own = secretValueReplacer(env);
	return own === null ? text : own(text, marker);
}

/** A secret's first few characters give too little away to be worth cutting a text's last word for. */
const PREFIX_MIN_CHARS = 4;

/**
 * Where a text cut short may end partway through one of `bindings`' secret values: each value's
 * spellings a cut text ends on (as written, its URL's scheme and host in any case; JSON-escaped
 * `\/`; percent-encoded), each with how much of it is no secret (a URL's `https://host/`, which a
 * page under a public endpoint shares). `tailLength(text)`: the length of the longest end of `text`
 * that is more than that of such a spelling's start, and not all of it (a whole value is
 * replaceSecretValues'), or 0.
 */
export function secretPrefixFinder(bindings: object): (text: string) => number {
	const { words, urls } = secretValues(bindings);
	const forms: { form: string; open: number; fold: boolean }[] = [];
	for (const [values, isUrl] of [[words, false], [urls, true]] as const) {
		for (const value of values) {
			const open = isUrl ? openPart(value) : "";
			forms.push({ form: isUrl ? foldUrl(value) : value, open: Math.max(open.length + 1, PREFIX_MIN_CHARS), fold: isUrl });
			for (const spell of [(s: string) => s.replaceAll("/", "\\/"), encodeURIComponent]) {
				const form = spell(value);
				if (form !== value) forms.push({ form, open: Math.max(spell(open).length + 1, PREFIX_MIN_CHARS), fold: false });
			}
		}
	}
	return (text) => startAtEnd(text, forms);
}

/**
 * The length of the longest end of `text` that is the start of one of `forms` (not the whole form),
 * at least its `open` characters long (`fold`: a URL whose scheme and host are read in any case), or
 * 0: where a text cut short ends partway through a secret. A delivery's scrub of its own URL's forms
 * (secret-url.ts) asks the same.
 */
export function startAtEnd(text: string, forms: readonly { form: string; open: number; fold?: boolean }[]): number {
	let longest = 0;
	const last = text.at(-1);
	if (last === undefined) return 0;
	for (const { form, open, fold = false } of forms) {
		// Only where the form has the text's last character can a start of it end the text.
		for (let k = Math.min(form.length - 1, text.length); k >= open && k > longest; k--) {
			if (form[k - 1] !== last && !(fold && form[k - 1] === last.toLowerCase())) continue;
			const tail = text.slice(text.length - k);
			if ((fold ? foldUrl(tail) : tail) === form.slice(0, k)) longest = k;
		}
	}
	return longest;
}

/** What of a URL secret is no secret: its scheme and host (`https://host/`), or only its scheme when it holds a user and password. */
function openPart(url: string): string {
	const m = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^\/?#]*)\/?/.exec(url);
	if (!m) return "";
	return m[1]!.includes("@") ? m[0].slice(0, m[0].indexOf("//") + 2) : m[0];
}

let ownPrefix: ((text: string) => number) | undefined;

/** How many characters at the end of `text` are the start of one of the Worker's own secret values (see secretPrefixFinder), or 0. */
export function secretPrefixAtEnd(text: string): number {
	ownPrefix ??= secretPrefixFinder(env);
	return ownPrefix(text);
}
