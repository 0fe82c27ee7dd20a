// A lone UTF-16 surrogate (`\ud800` in JSON) is a string no storage keeps: SQLite and R2 take UTF-8,
// where it becomes U+FFFD. It is refused at the boundary instead of changed silently.
const LONE_SURROGATE = /\p{Cs}/u;

/** The path of the first key or string in a parsed JSON value holding a lone surrogate, or null. */
export function loneSurrogatePath(value: unknown): string | null {
	const stack: [unknown, string][] = [[value, ""]];
	while (stack.length > 0) {
		const [v, path] = stack.pop()!;
		if (typeof v === "string") {
			if (LONE_SURROGATE.test(v)) return path || "(root)";
		} else if (Array.isArray(v)) {
			for (let i = 0; i < v.length; i++) stack.push([v[i], `${path}[${i}]`]);
		} else if (v !== null && typeof v === "object") {
			for (const [key, child] of Object.entries(v)) {
				const at = path ? `${path}.${key}` : key;
				if (LONE_SURROGATE.test(key)) return at;
				stack.push([child, at]);
			}
		}
	}
	return null;
}

export const LONE_SURROGATE_MESSAGE = "holds an unpaired UTF-16 surrogate (such as \\ud800), which no text can store";
