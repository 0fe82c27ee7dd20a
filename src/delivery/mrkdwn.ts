/**
 * The model's standard Markdown as Slack mrkdwn, for a delivery to a Slack incoming webhook.
 *
 * Slack's Block Kit `markdown` block would render Markdown itself, but incoming webhooks refuse it
 * (HTTP 500, slackapi/slack-github-action#440), and a delivery target is an incoming webhook; so the
 * answer stays in mrkdwn sections and is converted here. Only what mrkdwn spells differently is
 * rewritten: **bold** and __bold__ → *bold*, *italic* → _italic_, ~~strike~~ → ~strike~,
 * [text](http…) → <url|text>, # Heading → *Heading*, "- item"/"* item" → "• item"; a marker that a
 * letter or wide character touches from outside gets a zero-width space there. Code spans and
 * fenced code blocks keep their text as written (a fence loses only its language tag, which mrkdwn
 * would show as the code's first line). Everything is escaped (&, <, >) first, so an answer's
 * `<!channel>` or `<@U123>` stays text; the only `<…>` in the output are the links made here, and
 * those are http(s) or mailto only, never a mention or a `!` command.
 */

/** Slack's escaping: exactly &, < and >, so `<!channel>` or `<https://x|y>` in an answer stays text. */
export function escapeSlack(text: string): string {
	return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** The fence mrkdwn understands; every fence this writes is this, alone on its line. */
export const FENCE = "```";

const OPENING_FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const HEADING = /^ {0,3}#{1,6}(?=[ \t]|$)/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const BULLET = /^([ \t]*)[-*+][ \t]+/;
const LINK_SCHEME = /^(?:https?:\/\/|mailto:)/i;

/** Converts Markdown to escaped mrkdwn; a fence the answer left open (cut at max_tokens) is closed. */
export function markdownToMrkdwn(markdown: string): string {
	const out: string[] = [];
	let fence: RegExp | null = null; // the line that closes the open block
	// A CRLF line would end in "\r", and no heading, rule or closing fence would match it.
	for (const line of markdown.replaceAll("\r\n", "\n").split("\n")) {
		if (fence) {
			if (fence.test(line)) {
				out.push(FENCE);
				fence = null;
			} else out.push(inertFences(escapeSlack(line)));
			continue;
		}
		const open = OPENING_FENCE.exec(line);
		// A backtick fence's info string holds no backtick (CommonMark); one that does is inline code.
		if (open && !(open[1]![0] === "`" && open[2]!.includes("`"))) {
			fence = new RegExp(`^ {0,3}${open[1]![0]}{${open[1]!.length},}[ \\t]*$`);
			out.push(FENCE);
			continue;
		}
		out.push(convertLine(line));
	}
	if (fence) out.push(FENCE);
	return out.join("\n");
}

/**
 * A code line's backtick runs broken by a zero-width space: mrkdwn ends a block at any ```, so a fence
 * shown inside one (a Markdown block quoting a Python one) would end it there.
 */
function inertFences(line: string): string {
	return line.replace(/``(?=`)/g, "``\u200b");
}

function convertLine(line: string): string {
	if (RULE.test(line)) return "───";
	const heading = HEADING.exec(line);
	if (heading) {
		const text = headingText(line.slice(heading[0].length));
		// A heading is bolded whole; bold inside it would close the outer bold early.
		return text === "" ? "" : `*${inline(text, "")}*`;
	}
	const bullet = BULLET.exec(line);
	if (bullet) return `${bullet[1]}• ${inline(line.slice(bullet[0].length), "*")}`;
	return inline(line, "*");
}

/** A heading's text without its closing #s (a run of # after a space, or the whole text). */
function headingText(rest: string): string {
	const text = rest.trim();
	let end = text.length;
	while (end > 0 && text[end - 1] === "#") end--;
	if (end === 0) return "";
	return end < text.length && (text[end - 1] === " " || text[end - 1] === "\t") ? text.slice(0, end).trimEnd() : text;
}

/** A line's inline Markdown as mrkdwn, code spans kept as written; `bold` is what **x** becomes. */
function inline(text: string, bold: string): string {
	// Code spans, links and bare URLs are set aside while the rest is rewritten (so a URL's _ or * is
	// never taken for emphasis), then put back; emphasis or a link around a code span still converts.
	const held: string[] = [];
	const mark = unusedMark(text);
	const hold = (token: string) => `${mark}${held.push(token) - 1}${mark}`;
	// Code spans first (a backtick run to the next run of the same length), as CommonMark reads them.
	// A run is tried from its first backtick only: from each of a long run's, the scan is quadratic.
	let out = text.replace(/(?<!`)(`+)([^`]|[^`][^\n]{0,1000}?[^`])\1(?!`)/g, (code: string) => hold(escapeSlack(code)));
	out = formatted(out, bold, mark, hold);
	// A link's label may hold a code span: put back until no mark is left (two rounds at most).
	const back = new RegExp(`${mark}(\\d+)${mark}`, "g");
	for (let round = 0; round < 3 && out.includes(mark); round++) out = out.replace(back, (_, i: string) => held[Number(i)]!);
	return out;
}

/** Text outside code spans (held ones marked): escaped, then links made and emphasis rewritten. */
function formatted(raw: string, bold: string, mark: string, hold: (token: string) => string): string {
	if (raw === "") return raw;
	let text = escapeSlack(raw);
	text = text.replace(/!?\[([^\]\n]{1,500})\]\(((?:[^\s()]|\([^\s()]{0,2000}\)){1,2000})(?:[ \t]+"[^"\n]{0,2000}")?\)/g, (_, label: string, url: string) =>
		LINK_SCHEME.test(url) ? hold(`<${url.replaceAll("|", "%7C")}|${emphasis(label, bold, mark)}>`) : `${label} (${url})`,
	);
	// An autolink (escaped above): a link again, if it is http(s) or mailto and has no label.
	text = text.replace(/&lt;((?:https?:\/\/|mailto:)[^\s|]{1,2000}?)&gt;/gi, (_, url: string) => hold(`<${url}>`));
	// A bare URL ends at a held token's mark: one written right before a link must not swallow it.
	text = text.replace(new RegExp(`\\bhttps?:\\/\\/[^\\s*${mark}]+`, "g"), (url) => hold(url));
	return emphasis(text, bold, mark);
}

/** Markdown's emphasis in escaped text as mrkdwn's; `mark` is absent from the text. */
function emphasis(text: string, bold: string, mark: string): string {
	// mrkdwn's bold is Markdown's italic: bold is marked first, so the italic pass does not take it.
	const b = `${mark}b${mark}`;
	// A span is rewritten as `open` + its text + `close`, spaced from a letter outside it (see TOUCHING).
	const span = (open: string, close: string, spaced = true) => (whole: string, inner: string, at: number, line: string) => {
		const before = spaced && touches(codePointBefore(line, at)) ? ZWSP : "";
		const after = spaced && touches(codePointAt(line, at + whole.length)) ? ZWSP : "";
		return `${before}${open}${inner}${close}${after}`;
	};
	// Spans are bounded: a line of unclosed markers would otherwise be scanned to its end from each one.
	return text
		.replace(/\*\*\*(\S(?:.{0,500}?\S)??)\*\*\*/g, span(`${b}_`, `_${b}`))
		.replace(/\*\*(\S(?:.{0,500}?\S)??)\*\*/g, span(b, b, bold !== ""))
		.replace(/(?<!\w)__(\S(?:.{0,500}?\S)??)__(?!\w)/g, span(b, b, bold !== ""))
		.replace(/(?<![\w*])\*([^*\s](?:[^*]{0,500}?[^*\s])?)\*(?![\w*])/g, span("_", "_"))
		.replace(/~~(\S(?:.{0,500}?\S)??)~~/g, span("~", "~"))
		.replaceAll(b, bold);
}

const ZWSP = "\u200b";

/**
 * What Slack will not take for the outer side of a *, _ or ~ marker: it formats a span only where a
 * space or punctuation is outside the marker, so "これは*重要*です" shows its asterisks (known:
 * seratch/ChatGPT-in-Slack#61 and #121). Letters, digits, marks, emoji and East Asian wide
 * characters (CJK punctuation and full-width forms among them) touching a marker get a zero-width
 * space between, which Slack takes for the break and shows as nothing.
 */
const TOUCHING = /^[\p{L}\p{N}\p{M}\p{Extended_Pictographic}\u2e80-\u2fff\u3001-\u303f\u3200-\u33ff\ufe10-\ufe1f\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]$/u;
const touches = (char: string): boolean => TOUCHING.test(char);

const codePointAt = (text: string, at: number): string => (at < text.length ? String.fromCodePoint(text.codePointAt(at)!) : "");

function codePointBefore(text: string, at: number): string {
	if (at <= 0) return "";
	const unit = text.charCodeAt(at - 1);
	return codePointAt(text, unit >= 0xdc00 && unit <= 0xdfff && at >= 2 ? at - 2 : at - 1);
}

/** A private-use character the text does not hold, to mark what is set aside in it. */
function unusedMark(text: string): string {
	for (let code = 0xe000; ; code++) {
		const c = String.fromCharCode(code);
		if (!text.includes(c)) return c;
	}
}
