export const ELLIPSIS = "…";

export const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;

/** The first `end` UTF-16 units of `text`, one fewer if that would split a surrogate pair (an emoji). */
export function safeSlice(text: string, end: number): string {
	return end > 0 && end < text.length && isHighSurrogate(text.charCodeAt(end - 1)) ? text.slice(0, end - 1) : text.slice(0, end);
}

/**
 * `text` if it fits in `limit` UTF-16 units, else its head plus "…" in exactly that budget: a reader
 * sees it was cut, and no surrogate pair is split (a lone half is not valid UTF-8 to send or store).
 * Limits are counted in UTF-16 units, never fewer than the code points services count, so it is safe.
 */
export function clip(text: string, limit: number): string {
	if (text.length <= limit) return text;
	return safeSlice(text, limit - ELLIPSIS.length) + ELLIPSIS;
}
