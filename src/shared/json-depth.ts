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
