/** How deep caller-supplied JSON may nest where drover walks it (hashing, validation, redaction). */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether `value` nests no deeper than `limit` objects and arrays. Iterative, and stops at the first
 * branch past the limit: the recursive walks it guards would overflow the stack on input thousands
 * of levels deep (a 500 where the caller deserves a 400).
 */
export function withinDepth(value: unknown, limit = MAX_JSON_DEPTH): boolean {
	const stack: [unknown, number][] = [[value, 0]];
	while (stack.length > 0) {
		const [v, depth] = stack.pop()!;
		if (v === null || typeof v !== "object") continue;
		if (depth >= limit) return false;
		for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
	}
	return true;
}

/**
 * Whether JSON text nests deeper than `limit` objects and arrays, read from the text itself (brackets
 * outside strings), so input thousands of levels deep is refused before any parser or walk recurses
 * into it. Assumes nothing about validity: parsing still decides that.
 */
export function textNestsDeeper(text: string, limit = MAX_JSON_DEPTH): boolean {
	let depth = 0;
	let inString = false;
	for (let i = 0; i < text.length; i++) {
		const ch = text.charCodeAt(i);
		if (inString) {
			if (ch === 0x5c) i++; // a backslash escapes the next character
			else if (ch === 0x22) inString = false;
		} else if (ch === 0x22) inString = true;
		else if (ch === 0x7b || ch === 0x5b) {
			if (++depth > limit) return true;
		} else if (ch === 0x7d || ch === 0x5d) depth--;
	}
	return false;
}
