import { formatPath } from "./zod-issues.ts";

/**
 * The first key written twice in one object of a JSON text, with the path of that object, or null.
 * JSON.parse keeps the last of them without a word, where fleet.yaml (YAML) refuses the second: an
 * agent sent as JSON with two `prompt`s ran the one its writer may have meant to replace. For a text
 * JSON.parse has accepted (anything else is read as far as it goes); one pass, no values built.
 */
export function duplicateJsonKey(text: string): { path: string; key: string } | null {
	type Frame = { keys: Set<string> | null; key: string | number; expectKey: boolean };
	const stack: Frame[] = [];
	// Each frame's key is where the frame above it sits: the path down to the innermost object.
	const path = () => stack.slice(0, -1).map((f) => f.key);
	for (let i = 0; i < text.length; i++) {
		const c = text[i];
		if (c === '"') {
			let end = i + 1;
			while (end < text.length && text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
			const top = stack.at(-1);
			if (top?.keys && top.expectKey) {
				const raw = text.slice(i, end + 1);
				const key = raw.includes("\\") ? (JSON.parse(raw) as string) : raw.slice(1, -1);
				if (top.keys.has(key)) return { path: formatPath([...path(), key]), key };
				top.keys.add(key);
				top.key = key;
				top.expectKey = false;
			}
			i = end;
		} else if (c === "{" || c === "[") {
			stack.push({ keys: c === "{" ? new Set() : null, key: c === "{" ? "" : 0, expectKey: c === "{" });
		} else if (c === "}" || c === "]") {
			stack.pop();
		} else if (c === ",") {
			const top = stack.at(-1);
			if (top?.keys) top.expectKey = true;
			else if (top) top.key = (top.key as number) + 1;
		}
	}
	return null;
}

