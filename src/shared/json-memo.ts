/**
 * JSON.parse with a small cache keyed by the text. A Durable Object reads the same stored JSON (an
 * agent's definition, a job's setup and record) several times per step, and parsing it again cost
 * more than the SQL read. The values are shared between readers, so they are frozen: a reader that
 * tried to change one would throw instead of changing everyone's copy. The cache lives as long as
 * the isolate, which can host many agents' objects in its 128 MB: so it holds a few entries, and a
 * text longer than `maxChars` (a huge prompt) is parsed each time instead of held. `revive` brings
 * a value stored by an earlier release up to date (a field added since).
 */
export function jsonMemo<T>({ maxEntries = 16, maxChars = 64 * 1024, revive = (value: T) => value } = {}): (text: string) => T {
	const cache = new Map<string, T>();
	return (text) => {
		if (text.length > maxChars) return revive(JSON.parse(text) as T);
		let value = cache.get(text);
		if (value === undefined) {
			value = deepFreeze(revive(JSON.parse(text) as T));
			if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
			cache.set(text, value);
		}
		return value;
	};
}

function deepFreeze<T>(value: T): T {
	if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
		Object.freeze(value);
		for (const v of Object.values(value)) deepFreeze(v);
	}
	return value;
}
