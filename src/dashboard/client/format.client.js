// @ts-check
// ── formatting ──
// Control characters the page would draw as empty boxes or act on: the C0 controls but \n and \t, DEL and
// the C1 controls (as the CLI's printable(), cli/format.ts), and the bidirectional controls, which
// reorder the text around them ("evil\u202eexe.txt" would read as "eviltxt.exe").
const UNPRINTABLE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** Text from outside drover (model output, tool results, errors) with those characters shown as visible escapes, \x1b or \u202e. @param {string} text */
const printable = (text) =>
	String(text).replace(UNPRINTABLE, (c) => {
		const code = c.charCodeAt(0);
		return code < 0x100 ? "\\x" + code.toString(16).padStart(2, "0") : "\\u" + code.toString(16).padStart(4, "0");
	});
/**
 * A value as indented JSON for a person to read and edit, with UNPRINTABLE's characters written as
 * JSON's own \u escapes: still JSON, parsing back to the same value, but a right-to-left override
 * in a tool's input cannot make it read as something else than what would be sent.
 * @param {unknown} value
 */
const printableJson = (value) =>
	JSON.stringify(value, null, 2).replace(UNPRINTABLE, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
/**
 * The first `n` code points of `text`, then "…" when there is more: a cut by UTF-16 units could
 * keep half an emoji, read out as a replacement character. Walks only the head of a long line.
 * @param {string} text @param {number} n
 */
const headChars = (text, n) => {
	let end = 0;
	for (let count = 0; end < text.length && count < n; count++) end += /** @type {number} */ (text.codePointAt(end)) > 0xffff ? 2 : 1;
	return end < text.length ? text.slice(0, end) + "…" : text;
};
const rtf = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
/** @type {[Intl.RelativeTimeFormatUnit, number][]} */
const UNITS = [["year", 31536000], ["month", 2592000], ["week", 604800], ["day", 86400], ["hour", 3600], ["minute", 60], ["second", 1]];
/** @param {number} ms */
function relText(ms) {
	const d = (ms - Date.now()) / 1000;
	const a = Math.abs(d);
	// "paused since just now", "last tick just now": a bare "now" reads as the present, not a moment ago.
	if (a < 5) return d < 0 ? "just now" : "now";
	for (let i = 0; i < UNITS.length; i++) {
		const [unit, sec] = UNITS[i];
		if (a < sec) continue;
		// Rounded up to the next unit's first whole one, said in it: 59.6 s is "1 minute ago", not
		// "60 seconds ago", and 59 min 40 s "1 hour ago", not "60 minutes ago".
		const bigger = UNITS[i - 1];
		if (bigger && Math.round(a / sec) * sec >= bigger[1]) return rtf.format(Math.round(d / bigger[1]), bigger[0]);
		return rtf.format(Math.round(d / sec), unit);
	}
	return "now";
}
// Times are the browser's, and every absolute one says its zone ("1 Dec 2026, 18:22:26 GMT-8"), so
// none is read as UTC (which the usage page's days are, and says).
/** The browser's time zone, short ("GMT-8", "UTC", "CET"), at ms (a zone's summer name differs). @param {number} [ms] */
const zoneName = (ms) => (new Intl.DateTimeFormat("en-GB", { timeZoneName: "short" }).formatToParts(ms === undefined ? new Date() : new Date(ms)).find((p) => p.type === "timeZoneName") || { value: "" }).value;
// Each format made once: Date's toLocaleString(…, options) builds a new formatter at every call,
// about half a millisecond each in Chromium, and a 20,000-line log asks two of them a line (its time,
// and its title): 18 s of the 24 s the page was frozen drawing it. Same output, as the spec defines
// those methods by these formats; an invalid time still reads "Invalid Date" (format() would throw).
/** @param {Intl.DateTimeFormatOptions} options */
const dateFormat = (options) => {
	const f = new Intl.DateTimeFormat("en-GB", options);
	return (/** @type {number} */ ms) => (Number.isFinite(ms) ? f.format(ms) : "Invalid Date");
};
/** @param {number} ms */
const absText = dateFormat({ day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" });
const slotText = dateFormat({ day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" });
const clockText = dateFormat({ hour: "numeric", minute: "numeric", second: "numeric", hour12: false });
/**
 * A relative time that keeps itself current; the absolute one is its tooltip. `lead`: the words before
 * it while the time is to come and once it has passed ("expires in 4 minutes", "expired 1 minute ago"),
 * chosen again at each refresh: chosen once, a page left open read "expires 1 minute ago".
 * @param {?string} iso @param {[string, string]} [lead]
 */
function when(iso, lead) {
	if (!iso) return h("span", { class: "muted", text: "—" });
	const ms = Date.parse(iso);
	const t = h("time", { class: "rel", datetime: iso, title: absText(ms), "data-lead-future": lead && lead[0], "data-lead-past": lead && lead[1] });
	t.textContent = relWords(t, ms);
	return t;
}
/** @param {Element} t @param {number} ms */
const relWords = (t, ms) => (t.getAttribute(ms > Date.now() ? "data-lead-future" : "data-lead-past") || "") + relText(ms);
// Each 15 s: only a time whose words changed is rewritten. Each was, a new text node every time (the
// 2,000 and more of a 1,000-agent fleet shown whole), taking away a selection in one.
function refreshTimes() {
	for (const t of document.querySelectorAll("time.rel")) setText(t, relWords(t, Date.parse(t.getAttribute("datetime") || "")));
}
/**
 * An absolute time (for ledgers, where the slot itself matters), with the relative one beneath. Each
 * on one line: a table's narrow column on a phone broke "7 Dec, 11:15:03 UTC" and "3 hours ago" into
 * five lines a row (the table scrolls sideways instead). @param {?string} iso
 */
const slotTime = (iso) =>
	iso
		? [h("span", { class: "nowrap", text: slotText(Date.parse(iso)) }), h("span", { class: "sub nowrap" }, when(iso))]
		: h("span", { class: "muted", text: "—" });
/**
 * A record's time (when a job was created, started, finished): the absolute one with its zone, then
 * the relative one. A tooltip alone kept it from keyboard and touch users, and from an operator
 * writing up an incident. @param {?string} iso
 */
const exactTime = (iso) => (iso ? [h("span", { text: absText(Date.parse(iso)) }), " (", when(iso), ")"] : h("span", { class: "muted", text: "—" }));
/** @param {string} iso */
const clock = (iso) => clockText(Date.parse(iso));
/** Every duration the dashboard shows (a job's, a tool call's): "27 ms", "4.2 s", "3 min 5 s", "2 h 3 min". @param {?number} sec */
function dur(sec) {
	if (sec === null || sec === undefined) return "—";
	// Under a second in milliseconds, as the CLI says it: a 27 ms call shown as "0.0 s" read as no time
	// at all. Rounded first, so that 0.9996 s is "1.0 s", not "1000 ms".
	// Each unit chosen by the figure it rounds to in the same way: 9.96 s is "10 s", not "10.0 s", and
	// 119.6 s "2 min", not "1 min 60 s".
	const ms = Math.round(sec * 1000);
	if (ms < 1000) return ms + " ms";
	const tenths = Math.round(sec * 10) / 10;
	if (tenths < 10) return tenths.toFixed(1) + " s";
	const whole = Math.round(sec);
	if (whole < 60) return whole + " s";
	const m = Math.floor(whole / 60);
	const s = whole % 60;
	if (m < 60) return m + " min" + (s ? " " + s + " s" : "");
	return Math.floor(m / 60) + " h " + (m % 60) + " min";
}
const numberFormat = new Intl.NumberFormat("en");
/** @param {?number} [n] */
const num = (n) => (n === null || n === undefined ? "—" : numberFormat.format(Number(n)));
/** @param {string} s */
const words = (s) => String(s).replace(/_/g, " ");
/** @param {string} status @param {string} [prefix] */
const badge = (status, prefix) => h("span", { class: "badge " + (prefix || "s-") + status, text: words(status) });
/**
 * A job's failed tool calls, said beside its status: completed says the run ended with an answer, not
 * that every call it made succeeded; an indeterminate job's were cut off (failedCallsWord, the CLI's
 * words). Null when none failed (or, while it runs, none are counted).
 * @param {{ made: number, failed: number } | null | undefined} t @param {string} status
 */
const failedCalls = (t, status) => (t && t.failed ? t.failed + " of " + t.made + " tool call" + (t.made === 1 ? "" : "s") + " " + failedCallsWord(status, t.failed) : null);
/** @param {string} id */
const jobLink = (id) => h("a", { href: "/jobs/" + enc(id), class: "mono", text: id });
/** @param {string} name */
const agentLink = (name) => h("a", { href: "/agents/" + enc(name) + "/runs", text: name });
/** @type {(ms: number, signal: AbortSignal) => Promise<void>} */
const sleep = (ms, signal) =>
	new Promise((resolve) => {
		const t = setTimeout(resolve, ms);
		signal.addEventListener("abort", () => { clearTimeout(t); resolve(); }, { once: true });
	});
