export const ELLIPSIS = "…";

export const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

const encoder = new TextEncoder();

/** Bytes of `text` as UTF-8 (what a row, a body or a limit in bytes counts). */
export const utf8Length = (text: string): number => encoder.encode(text).length;

/** Code points in `text`, as most languages count a string's characters (Python's len): a surrogate pair is one. */
export function codePointLength(text: string): number {
	let pairs = 0;
	for (let i = 0; i < text.length - 1; i++) {
		if (isHighSurrogate(text.charCodeAt(i)) && isLowSurrogate(text.charCodeAt(i + 1))) {
			pairs++;
			i++;
		}
	}
	return text.length - pairs;
}

/** The first `end` UTF-16 units of `text`, one fewer if that would split a surrogate pair (an emoji). */
export function safeSlice(text: string, end: number): string {
	return end > 0 && end < text.length && isHighSurrogate(text.charCodeAt(end - 1)) ? text.slice(0, end - 1) : text.slice(0, end);
}

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/**
 * How far back from a cut the text is segmented: more than any character a reader sees as one (a
 * family emoji is 11 units, a flag 4), few enough that a cut costs microseconds. Segmenting a whole
 * head costs about a microsecond a character: a page of 200 tool calls' 4,000-character previews
 * would spend most of a second of CPU on it.
 */
const LOOKBACK = 64;

/** A regional indicator (half of a flag) at `i`: U+1F1E6–U+1F1FF, a surrogate pair. */
const regionalIndicatorAt = (text: string, i: number): boolean => {
	const low = text.charCodeAt(i + 1);
	return text.charCodeAt(i) === 0xd83c && low >= 0xdde6 && low <= 0xddff;
};

/**
 * The largest offset of `text` at or before `end` (and after `from`, itself such an offset) where a
 * cut splits no character a reader sees as one (a grapheme cluster): not an emoji's surrogate pair,
 * a family or a flag made of several emoji, nor a letter and its accent. One character longer than
 * the lookback (a letter under dozens of combining marks) is cut between code points.
 */
export function graphemeEnd(text: string, end: number, from = 0): number {
	if (end >= text.length) return text.length;
	if (end <= from) return from;
	let start = Math.max(from, end - LOOKBACK);
	if (start > from && isLowSurrogate(text.charCodeAt(start))) start--;
	// Regional indicators pair from the start of their run: a window that opens inside one opens on a
	// pair's first half, or each flag after it would be read from its second.
	if (regionalIndicatorAt(text, start)) {
		let before = 0;
		while (start - 2 * (before + 1) >= from && regionalIndicatorAt(text, start - 2 * (before + 1))) before++;
		if (before % 2 === 1) start -= 2;
	}
	// Whether `end` is a boundary depends on what precedes it and the code point at it, no further.
	let last = start;
	for (const { index } of graphemes.segment(text.slice(start, end + 2))) {
		if (start + index > end) break;
		last = start + index;
	}
	if (last > from) return last;
	return isHighSurrogate(text.charCodeAt(end - 1)) && end - 1 > from ? end - 1 : end;
}

/** The head of `text` that graphemeEnd keeps of its first `end` units. */
export function graphemeSlice(text: string, end: number): string {
	return text.slice(0, graphemeEnd(text, end));
}

/**
 * `text` if it fits in `limit` UTF-16 units, else its head plus "…" in at most that budget: a reader
 * sees it was cut, and no character is split (a lone half of a surrogate pair is not valid UTF-8 to
 * send or store; half a flag or a family emoji, or an accent without its letter, shows as something
 * else). Limits are counted in UTF-16 units, never fewer than the code points services count, so it is safe.
 */
export function clip(text: string, limit: number): string {
	if (text.length <= limit) return text;
	return graphemeSlice(text, limit - ELLIPSIS.length) + ELLIPSIS;
}
