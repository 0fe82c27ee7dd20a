/**
 * Prompt injection scan, tiered (Hermes): "strict" for a bare prompt someone typed, "data" where
 * text nobody vetted as a prompt is present (a webhook payload, the notepad). Data legitimately
 * holds shell snippets and odd unicode, so that tier only refuses instruction overrides and strips
 * invisible characters instead of refusing them.
 *
 * Every check is linear in the input: regexes are bounded (no nested unbounded quantifiers over
 * overlapping classes), and the two checks that would not be are plain scans.
 */
export type ScanTier = "strict" | "data";

export type ScanResult = { ok: true; text: string } | { ok: false; reason: string };

interface Check {
	name: string;
	/** "override" checks run in both tiers; "strict" ones only on a bare prompt. */
	tier: "override" | "strict";
	test: (text: string) => boolean;
	/** The same phrase matched in the marked reading (see markedReadings), where the check has one. */
	marked?: (text: string) => boolean;
}

/**
 * What every character that shows as nothing stands as in the marked readings. A private-use code
 * point: no text is matched for it, NFKD and the look-alike fold leave it, and it is no word character.
 */
const SHOWN_AS_NOTHING = "\uE000";

/**
 * The pattern with a character that shows as nothing allowed after each of its letters (a soft hyphen
 * inside a word: "ig\u00ADnore") and as or within each of its spaces (one between words:
 * "ignore\u00ADprevious"), so that one reading tries both for each such character at once. Written
 * for the phrases below: literal letters, escapes, classes, groups and bounded quantifiers. A letter
 * takes one mark at most (two in a row are refused, or stripped, on their own), so a long run of them
 * after a letter is split with the space after it in two ways, not one way per mark: still linear.
 */
function tolerant(pattern: RegExp): RegExp {
	const src = pattern.source;
	let out = "";
	let inClass = false;
	let classStart = 0;
	for (let i = 0; i < src.length; i++) {
		const ch = src[i]!;
		if (ch === "\\") {
			const escape = src.slice(i, i + 2);
			i++;
			if (escape === "\\s") out += inClass ? `\\s${SHOWN_AS_NOTHING}` : `[\\s${SHOWN_AS_NOTHING}]`;
			else out += escape;
		} else if (inClass) {
			out += ch;
			if (ch === "]") {
				inClass = false;
				// A class of a phrase's free words ([\w'-]) takes a mark after each character, as a letter
				// does. Not one with \s (it takes marks as spaces already) nor a negated one (it matches a
				// mark itself): either way a run of marks could be split in many ways, not linear.
				const cls = out.slice(classStart);
				if (!cls.startsWith("[^") && !cls.includes("\\s")) out = `${out.slice(0, classStart)}(?:${cls}${SHOWN_AS_NOTHING}?)`;
			}
		} else if (ch === "[") {
			inClass = true;
			classStart = out.length;
			out += ch;
		} else if (ch === "(" && src[i + 1] === "?") {
			// A group's own syntax, (?: (?= (?! (?<= (?<!, is no letter of the phrase.
			const head = /^\(\?(?:<?[=!]|:)/.exec(src.slice(i))![0];
			out += head;
			i += head.length - 1;
		} else if (ch === "{") {
			const end = src.indexOf("}", i);
			out += src.slice(i, end + 1);
			i = end;
		} else if (/[A-Za-z]/.test(ch)) {
			out += `(?:${ch}${SHOWN_AS_NOTHING}?)`;
		} else {
			out += ch;
		}
	}
	return new RegExp(out, pattern.flags);
}

const re = (pattern: RegExp): Pick<Check, "test" | "marked"> => {
	const marked = tolerant(pattern);
	return { test: (text) => pattern.test(text), marked: (text) => marked.test(text) };
};

/** A check matched by any of `patterns`, each in every reading (see re). */
const reAny = (...patterns: RegExp[]): Pick<Check, "test" | "marked"> => {
	const each = patterns.map(re);
	return { test: (text) => each.some((p) => p.test(text)), marked: (text) => each.some((p) => p.marked!(text)) };
};

const CHECKS: Check[] = [
	{
		name: "ignore previous instructions",
		tier: "override",
		// No word break before "ignore", "disregard" or "forget": no ordinary word ends in one (see
		// readings), but for ignore files' names (.gitignore, dockerignore, .ignore), which are text.
		...re(
			/(?<!(?:\.|git|docker|npm|eslint|prettier|stylelint|helm|vercel|gcloud|cf|hg|cvs|bzr|slug|yarn|cursor|vscode|chrome|boto|tf|dep|rg|ag|fd))ignore\s+(?:(?:all|any|the|your|my|of|these|those)\s+){0,3}(?:(?:previous|prior|above|earlier|preceding|foregoing)\s+(?:instructions?|prompts?|rules|directions|directives|context)\b|(?:instructions?|prompts?|rules|directions|directives)\s+(?:above|before\s+this|given\s+(?:above|before|earlier)|you\s+(?:were|have\s+been)\s+given)\b)/i,
		),
	},
	{
		name: "disregard instructions or system prompt",
		tier: "override",
		...re(/disregard\s+(?:[\w'-]+\s+){0,4}?(?:instructions?|system\s+prompt|rules|guidelines|directives)\b/i),
	},
	{
		name: "forget your instructions",
		tier: "override",
		...re(/forget\s+(?:(?:all|everything|any|the|your|of)\s+){0,3}(?:(?:previous|prior|earlier|above)\s+)?(?:instructions|rules|guidelines|directives)\b/i),
	},
	{
		name: "you are now (role reassignment)",
		tier: "override",
		// "You are now in charge of the digest" is a normal sentence; a new identity or mode is not.
		...re(
			/\byou\s+are\s+now\s+(?:no\s+longer\b|(?:an?\s+|the\s+|my\s+)?(?:[\w-]+\s+){0,2}?(?:DAN|AI|assistant|model|bot|chatbot|persona|character|mode|jailbroken|unrestricted|unfiltered|uncensored|free\s+(?:from|of))\b)/i,
		),
	},
	{
		name: "reveal the system prompt",
		tier: "override",
		...re(
			/\b(?:reveal|print|show|output|repeat|display|leak|dump|tell\s+me)\s+(?:(?:me|us|your|the|full|entire|whole|complete|exact|original|initial|hidden|secret)\s+){0,4}(?:system\s+prompt|system\s+message|initial\s+instructions|hidden\s+instructions|instructions\s+above)\b/i,
		),
	},
	{
		name: "act without restrictions",
		tier: "override",
		...re(
			/\b(?:act|behave|respond|pretend)\s+(?:as|like|to\s+be)\s+(?:[\w'-]+\s+){0,6}?(?:without|with\s+no|free\s+of)\s+(?:any\s+)?(?:restrictions|limits|limitations|filters|rules|guidelines|censorship|safeguards)\b/i,
		),
	},
	{
		name: "DAN / jailbreak mode",
		tier: "override",
		...reAny(
			/\bDAN\s+mode\b|\bdo\s+anything\s+now\b|\bjailbr(?:eak|oken)\s+mode\b|\bdeveloper\s+mode\s+(?:enabled|on)\b/i,
			// The token itself is matched case-sensitively: "act as Dan" is a colleague, "act as DAN" is not.
			/\b(?:[Aa]ct|[Bb]ehave|[Pp]retend|[Yy]ou\s+are(?:\s+now)?)\s+(?:as\s+|like\s+|to\s+be\s+)?(?:an?\s+)?DAN\b/,
		),
	},
	{
		name: "fake role tag",
		tier: "override",
		...reAny(
			/<\s*\/?\s*(?:system|assistant|developer)\s*>|<\|\s*(?:im_start|im_end|im_sep|system|user|assistant|endoftext|start_header_id|end_header_id|eot_id)\s*\|>|\[\/?INST\]|<<\/?SYS>>/i,
			// The legacy Human/Assistant turn markers, exactly as that format wrote them.
			/\n\n(?:Human|Assistant):/,
		),
	},
	{ name: "base64 blob with a request to decode it", tier: "strict", test: (text) => hasLongBase64Run(text) && /\b(?:decode|decoded|base64|b64decode|atob)\b/i.test(text) },
	{
		name: "download piped to a shell (curl | sh)",
		tier: "strict",
		...re(
			/\b(?:curl|wget)\b[^\n|]{0,500}\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b|\b(?:iwr|irm|invoke-webrequest|invoke-restmethod)\b[^\n|]{0,500}\|\s*(?:iex|invoke-expression)\b/i,
		),
	},
	{ name: "rm -rf /", tier: "strict", test: hasRecursiveRootDelete },
	{
		name: "destructive shell command",
		tier: "strict",
		...re(/:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:|\bmkfs(?:\.\w{1,10})?\s+\/dev\/|\bdd\s+if=\S{1,200}\s+of=\/dev\/(?:sd|hd|nvme|xvd|disk)/i),
	},
];

const BASE64_CHAR = /[A-Za-z0-9+/_-]/;
const BASE64_BLOB_MIN = 200;

/** A run of more than 200 base64 characters, found in one pass (a regex would rescan short runs). */
function hasLongBase64Run(text: string): boolean {
	let run = 0;
	for (const ch of text) {
		run = BASE64_CHAR.test(ch) ? run + 1 : 0;
		if (run > BASE64_BLOB_MIN) return true;
	}
	return false;
}

/** `rm` with recursive and force flags (in any spelling) aimed at /, /*, ~ or $HOME. */
function hasRecursiveRootDelete(text: string): boolean {
	const command = /\brm\s+((?:-{1,2}[a-z-]{1,20}\s+){1,4})(?:--\s+)?(?:\/\*?|~\/?|\$HOME\/?|\$\{HOME\}\/?)(?=\s|$|[;|&"'`)])/gi;
	for (const match of text.matchAll(command)) {
		const flags = (match[1] ?? "").toLowerCase();
		const recursive = /(?:^|\s)-[a-z]*r|--recursive/.test(flags);
		const force = /(?:^|\s)-[a-z]*f|--force/.test(flags);
		if (recursive && force) return true;
	}
	return false;
}

// ── Invisible unicode ───────────────────────────────────────────────────────────────────────────

function invisibleKind(cp: number): string | null {
	if ((cp >= 0x200b && cp <= 0x200d) || (cp >= 0x2060 && cp <= 0x2064) || cp === 0xfeff || cp === 0x180e) return "zero-width character";
	// Shown as nothing inside a word: a soft hyphen, the combining grapheme joiner, Mongolian free
	// variation selectors, Hangul fillers, Khmer's invisible vowels; and the format controls of
	// interlinear annotation, musical notation, shorthand and hieroglyphs.
	if (
		cp === 0x00ad ||
		cp === 0x034f ||
		(cp >= 0x180b && cp <= 0x180d) ||
		cp === 0x180f ||
		cp === 0x115f ||
		cp === 0x1160 ||
		cp === 0x3164 ||
		cp === 0xffa0 ||
		cp === 0x17b4 ||
		cp === 0x17b5 ||
		(cp >= 0xfff9 && cp <= 0xfffb) ||
		(cp >= 0x1d173 && cp <= 0x1d17a) ||
		(cp >= 0x1bca0 && cp <= 0x1bca3) ||
		(cp >= 0x13430 && cp <= 0x1345f)
	) {
		return "invisible formatting character";
	}
	if ((cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef)) return "variation selector";
	// The embeddings, overrides and isolates, and the marks (LRM, RLM, ALM): every bidi control.
	if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp === 0x200e || cp === 0x200f || cp === 0x061c) return "bidi control";
	if (cp >= 0xe0000 && cp <= 0xe007f) return "tag character";
	return null;
}

const PICTOGRAPHIC = /\p{Extended_Pictographic}/u;
const EMOJI_TRAILER = /[\u{FE0F}\u{1F3FB}-\u{1F3FF}]/u;
const ZWNJ = 0x200c;
const ZWJ = 0x200d;
// The scripts whose spelling uses ZWJ and ZWNJ between letters (The Unicode Standard, 23.2 and the
// Indic chapters): Sinhala's touching letters (ශ්‍රී), Bengali's ra-phala (র‍্যা), Devanagari's eyelash
// ra (र्‍य), half forms and conjuncts kept apart, Persian's and Urdu's word-internal non-joins (می‌خواهم),
// Syriac's and Mongolian's joining forms. Each joiner counts only between a letter or mark and another
// of the same script, or right after a virama on a letter of that virama's script: one between Latin
// letters, between a Bengali letter and a Latin one, or after a virama put on a Latin letter, splits a
// word and is refused.
const joinerScript = (script: string) => new RegExp(`^(?=[\\p{L}\\p{M}])\\p{scx=${script}}$`, "u");
const JOINER_SCRIPTS = [
	"Arabic",
	"Syriac",
	"Mongolian",
	"Devanagari",
	"Bengali",
	"Gurmukhi",
	"Gujarati",
	"Oriya",
	"Tamil",
	"Telugu",
	"Kannada",
	"Malayalam",
	"Sinhala",
].map(joinerScript);
// The viramas of those scripts, each with its script: a joiner right after one selects a half form or
// an old-style chillu (അവന്‍), which may end a word. (IDNA's CONTEXTJ rule allows both joiners after a
// virama for this.)
const VIRAMAS = new Map(
	Object.entries({
		"\u094D": "Devanagari",
		"\u09CD": "Bengali",
		"\u0A4D": "Gurmukhi",
		"\u0ACD": "Gujarati",
		"\u0B4D": "Oriya",
		"\u0BCD": "Tamil",
		"\u0C4D": "Telugu",
		"\u0CCD": "Kannada",
		"\u0D3B": "Malayalam",
		"\u0D3C": "Malayalam",
		"\u0D4D": "Malayalam",
		"\u0DCA": "Sinhala",
	}).map(([virama, script]) => [virama, joinerScript(script)]),
);
const LETTER_OR_MARK = /[\p{L}\p{M}]/u;
// The cursive scripts: a ZWJ on the open side of one of their letters (or of a mark on one) shows that
// letter's joining form by itself, as an alphabet book writes beh's initial form "ب‍". With no letter
// on the other side it joins or splits no word, so it can hide no phrase.
const CURSIVE_LETTER_OR_MARK = /(?=[\p{L}\p{M}])[\p{scx=Arabic}\p{scx=Syriac}\p{scx=Mongolian}\p{scx=Nko}]/u;
const LETTER = /\p{L}/u;
const MONGOLIAN = /\p{sc=Mongolian}/u;
const HEBREW = /\p{sc=Hebrew}/u;
// Right-to-left letters. In text holding any, a bidi mark (LRM, RLM, ALM) orders a number, a Latin
// word or punctuation among them: after "world" in "שלום world‏", before the digits in "السعر ‎100 USD".
// Between two letters (or marks) of which neither is right-to-left it orders nothing a reader sees and
// only splits or joins words ("ignore‏all‏previous").
const RTL_LETTER = /(?=\p{L})[\p{sc=Hebrew}\p{sc=Arabic}\p{sc=Syriac}\p{sc=Thaana}\p{sc=Nko}\p{sc=Samaritan}\p{sc=Mandaic}\p{sc=Adlam}\p{sc=Hanifi_Rohingya}]/u;
const RTL_LETTER_OR_MARK =
	/(?=[\p{L}\p{M}])[\p{scx=Hebrew}\p{scx=Arabic}\p{scx=Syriac}\p{scx=Thaana}\p{scx=Nko}\p{scx=Samaritan}\p{scx=Mandaic}\p{scx=Adlam}\p{scx=Hanifi_Rohingya}]/u;
const BIDI_MARKS = new Set([0x200e, 0x200f, 0x061c]);
const HIEROGLYPH = /\p{sc=Egyptian_Hieroglyphs}/u;
const ALPHABETIC_LETTER = /[\p{sc=Latin}\p{sc=Greek}\p{sc=Cyrillic}]/u;
const BLACK_FLAG = 0x1f3f4;
const CANCEL_TAG = 0xe007f;

/**
 * A ZWJ or ZWNJ where a script's spelling puts one: after its virama on one of its letters (or marks,
 * a nukta), or between its letters and marks.
 */
function joinsScript(base: string, before: string, after: string): boolean {
	const viramaScript = VIRAMAS.get(before);
	if (viramaScript) return viramaScript.test(base);
	return JOINER_SCRIPTS.some((script) => script.test(before) && script.test(after));
}

/** Between two letters or marks of which neither is right-to-left, where a bidi mark orders nothing. */
function betweenLtrLetters(before: string, after: string): boolean {
	return [before, after].every((ch) => LETTER_OR_MARK.test(ch) && !RTL_LETTER_OR_MARK.test(ch));
}

/**
 * Invisible characters that carry no visible meaning here, with their positions. Legitimate uses
 * are not counted: ZWJ inside an emoji sequence (👩‍💻), ZWJ and ZWNJ inside a word of a script that
 * spells with them, a soft hyphen between letters (a hyphenation point), a bidi mark in text with
 * right-to-left letters (but not between two letters that are not), and tag characters inside a
 * subdivision flag (🏴 + tags + cancel tag).
 */
function findInvisible(text: string): { at: number; cp: number; kind: string }[] {
	const chars = Array.from(text);
	const found: { at: number; cp: number; kind: string }[] = [];
	let rtl: boolean | undefined;
	for (let i = 0; i < chars.length; i++) {
		const cp = chars[i]?.codePointAt(0) ?? 0;
		if (cp === BLACK_FLAG) {
			let j = i + 1;
			while (j < chars.length) {
				const t = chars[j]?.codePointAt(0) ?? 0;
				if (t < 0xe0020 || t > 0xe007e) break;
				j++;
			}
			if (j > i + 1 && chars[j]?.codePointAt(0) === CANCEL_TAG) {
				i = j;
				continue;
			}
		}
		const kind = invisibleKind(cp);
		if (kind === null) continue;
		const before = chars[i - 1] ?? "";
		const after = chars[i + 1] ?? "";
		if (cp === ZWJ) {
			let k = i - 1;
			while (k > 0 && EMOJI_TRAILER.test(chars[k] ?? "")) k--;
			if (PICTOGRAPHIC.test(chars[k] ?? "") && PICTOGRAPHIC.test(after)) continue;
		}
		if ((cp === ZWJ || cp === ZWNJ) && joinsScript(chars[i - 2] ?? "", before, after)) continue;
		if (cp === ZWJ && ((CURSIVE_LETTER_OR_MARK.test(before) && !LETTER_OR_MARK.test(after)) || (CURSIVE_LETTER_OR_MARK.test(after) && !LETTER_OR_MARK.test(before)))) continue;
		if (cp === 0x00ad && LETTER_OR_MARK.test(before) && LETTER.test(after)) continue;
		// Mongolian spelling selects letter forms with its free variation selectors; Hebrew pointing
		// orders marks with the grapheme joiner.
		if (((cp >= 0x180b && cp <= 0x180d) || cp === 0x180f) && MONGOLIAN.test(before)) continue;
		if (cp === 0x034f && HEBREW.test(before) && HEBREW.test(after)) continue;
		if (BIDI_MARKS.has(cp) && (rtl ??= RTL_LETTER.test(text)) && !betweenLtrLetters(before, after)) continue;
		if (cp >= 0x13430 && cp <= 0x1345f && HIEROGLYPH.test(before)) continue;
		// A variation selector picks a glyph for the character before it (❤️, 1️⃣, a CJK variant); after
		// a Latin, Greek or Cyrillic letter it selects nothing and only splits a word.
		if (kind === "variation selector" && !ALPHABETIC_LETTER.test(before)) continue;
		found.push({ at: i, cp, kind });
	}
	return found;
}

function codePointName(cp: number): string {
	return `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * Why the text is refused for invisible unicode (the strict tier's first check), or null. On its
 * own for text where wording is the author's call but hidden characters are never wanted: an
 * agent's system prompt. The place is counted in characters (code points) from 1, as the notepad's
 * and the model id's messages count.
 */
export function invisibleReason(text: string): string | null {
	const [hidden] = findInvisible(text);
	return hidden ? `invisible unicode ${codePointName(hidden.cp)} (${hidden.kind}) at character ${hidden.at + 1}` : null;
}

/** Removes the invisible characters findInvisible reports, keeping everything else byte for byte. */
export function stripInvisible(text: string): string {
	const found = findInvisible(text);
	if (found.length === 0) return text;
	const drop = new Set(found.map((f) => f.at));
	return Array.from(text)
		.filter((_, i) => !drop.has(i))
		.join("");
}

// Every character that shows as nothing, including the ones text needs (a soft hyphen, a bidi mark, a
// joiner), which are let through.
const SHOWS_AS_NOTHING = /[\p{Default_Ignorable_Code_Point}\p{Cf}]/gu;
const MARKS = /\p{M}/gu;

// Letters of other scripts drawn like the Latin letters the phrases are written in (a few rows of
// Unicode's confusables, UTS #39), and the dotless i, which neither NFKC nor a case-insensitive match
// makes an i. Only the copies that are matched are folded: the text kept is the text sent.
const LOOK_ALIKES: Record<string, string> = {
	// Latin
	ı: "i", ɩ: "i", ɪ: "i", ɑ: "a", ɡ: "g",
	// Cyrillic
	а: "a", А: "A", В: "B", с: "c", С: "C", ԁ: "d", е: "e", Е: "E", һ: "h", Н: "H", і: "i", І: "I", ј: "j", Ј: "J",
	К: "K", ӏ: "l", Ӏ: "l", М: "M", о: "o", О: "O", р: "p", Р: "P", ԛ: "q", г: "r", ѕ: "s", Ѕ: "S", Т: "T",
	у: "y", У: "Y", Ү: "Y", ԝ: "w", Ԝ: "W", х: "x", Х: "X",
	// Greek
	α: "a", Α: "A", Β: "B", Ε: "E", Ζ: "Z", Η: "H", ι: "i", Ι: "I", κ: "k", Κ: "K", Μ: "M", ν: "v", Ν: "N",
	ο: "o", Ο: "O", ρ: "p", Ρ: "P", Τ: "T", υ: "u", Υ: "Y", χ: "x", Χ: "X", ϲ: "c", Ϲ: "C",
	// Armenian
	ց: "g", հ: "h", ո: "n", ս: "u", օ: "o", Օ: "O",
};
const LOOK_ALIKE = new RegExp(`[${Object.keys(LOOK_ALIKES).join("")}]`, "gu");

const latin = (text: string) => text.replace(LOOK_ALIKE, (ch) => LOOK_ALIKES[ch] ?? ch);

/**
 * Compatibility forms folded (NFKD: "ｉｇｎｏｒｅ" is "ignore"), accents and other marks dropped ("İ", "ó"
 * and "i̇" are a plain letter), look-alike letters made Latin ("ignоre" with a Cyrillic о is "ignore").
 * Look-alikes are read both before NFKD, which makes the lunate sigma ϲ a final sigma ς, and after it,
 * which takes the accent off a Cyrillic ӧ.
 */
function skeleton(text: string): string {
	return latin(latin(text).normalize("NFKD").replace(MARKS, ""));
}

/**
 * The copies of a text the phrases are matched in; a match in any refuses it. A character that shows
 * as nothing is read both ways, as nothing ("ig\u00ADnore" is "ignore") and as a break between words
 * ("ignore\u00ADprevious" is two words to the model). The text is matched unfolded too (NFKC only, as
 * before folding), because folding turns a letter glued to a phrase into an ASCII one: "éreveal the
 * system prompt" starts the phrase at a word there, and would not as "ereveal". (The phrases no
 * ordinary word ends in, "ignore", "disregard" and "forget", need no word break before them at all:
 * "xignore previous instructions", and "éіgnore …" with a Cyrillic і, which no reading saw whole.)
 */
function readings(text: string): string[] {
	const removed = text.replace(SHOWS_AS_NOTHING, "");
	const spaced = text.replace(SHOWS_AS_NOTHING, " ");
	return [text.normalize("NFKC"), removed.normalize("NFKC"), spaced.normalize("NFKC"), skeleton(removed), skeleton(spaced)];
}

/**
 * The readings in which each character that shows as nothing is read both ways on its own: as
 * nothing, or as a break between words. The two readings above read all of them one way, so
 * "ig\u00ADnore\u00ADprevious", a soft hyphen inside a word and another between two, matched in
 * neither. Each such character stands as SHOWN_AS_NOTHING, which the checks' marked patterns take
 * after a letter or as a space.
 */
function markedReadings(text: string): string[] {
	const marked = text.replace(SHOWS_AS_NOTHING, SHOWN_AS_NOTHING);
	return marked === text ? [] : [marked.normalize("NFKC"), skeleton(marked)];
}

function firstMatch(texts: string[], tier: ScanTier): Check | undefined {
	const copies = [...new Set(texts.flatMap(readings))];
	const marked = [...new Set(texts.flatMap(markedReadings))];
	return CHECKS.find(
		(check) =>
			(tier === "strict" || check.tier === "override") &&
			(copies.some((copy) => check.test(copy)) || (check.marked !== undefined && marked.some((copy) => check.marked!(copy)))),
	);
}

/**
 * Scans a prompt before it reaches the model. "strict" refuses injection patterns, shell command
 * shapes and invisible unicode; "data" refuses only instruction overrides and returns the text
 * with invisible unicode removed (checked with it removed, so "ig\u200Bnore" cannot hide a phrase, and
 * as written, where "ignore\u200Bprevious" is two words).
 */
export function scanPrompt(text: string, tier: ScanTier): ScanResult {
	if (tier === "strict") {
		const hidden = invisibleReason(text);
		if (hidden) return { ok: false, reason: hidden };
		const check = firstMatch([text], "strict");
		return check ? { ok: false, reason: `prompt injection pattern: ${check.name}` } : { ok: true, text };
	}
	const cleaned = stripInvisible(text);
	// The text as sent, and as received: a character stripped may have stood between two words.
	const check = firstMatch([cleaned, text], "data");
	return check ? { ok: false, reason: `prompt injection pattern: ${check.name}` } : { ok: true, text: cleaned };
}
