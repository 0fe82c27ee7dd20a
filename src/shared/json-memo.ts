/**
 * JSON.parse with a small cache keyed by the text. A Durable Object reads the same stored JSON (an
 * agent's definition, a job's setup) several times per step, and parsing it again cost more than
 * the SQL read. The values are shared between readers, so they are frozen: a reader that tried to
 * change one would throw instead of changing everyone's copy.
 */
export function jsonMemo<T>(max = 16): (text: string) => T {
	const cache = new Map<string, T>();
	return (text) => {
		let value = cache.get(text);
		if (value === undefined) {
			value = deepFreeze(JSON.parse(text) as T);
			if (cache.size >= max) cache.delete(cache.keys().next().value as string);
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
