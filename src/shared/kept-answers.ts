/**
 * The last JSON answer to each GET (path and query) that carried an ETag, so that the next GET of it
 * sends the tag and an unchanged answer comes back as a 304 with no body: the CLI's `logs <agent>
 * --follow` and the dashboard's views ask for the same pages every few seconds, unchanged most times.
 * Kept as text, which the reader parses afresh, so a caller changing what it got cannot change what
 * the next one gets. Bounded: the least recently used go first past `maxEntries` answers or
 * `maxChars` characters, and one answer over a quarter of `maxChars` is not kept (it would push out
 * all the others for a single revalidation).
 *
 * Self-contained (no import, no module-level name): the dashboard gets it by its source, as it gets
 * the SSE parser (src/dashboard/client/index.ts).
 */
export interface KeptAnswer {
	etag: string;
	text: string;
}

export class KeptAnswers {
	// A Map iterates in insertion order: re-inserting on each use keeps the least recently used first.
	readonly #answers = new Map<string, KeptAnswer>();
	readonly #maxEntries: number;
	readonly #maxChars: number;
	#chars = 0;

	constructor(maxEntries: number, maxChars: number) {
		this.#maxEntries = maxEntries;
		this.#maxChars = maxChars;
	}

	get(key: string): KeptAnswer | undefined {
		return this.#answers.get(key);
	}

	/** Keeps `answer` for `key` as the most recently used; null forgets it (an answer without a tag). */
	keep(key: string, answer: KeptAnswer | null): void {
		const old = this.#answers.get(key);
		if (old) {
			this.#answers.delete(key);
			this.#chars -= old.text.length;
		}
		if (answer === null || answer.text.length > this.#maxChars / 4) return;
		this.#answers.set(key, answer);
		this.#chars += answer.text.length;
		for (const [oldest, kept] of this.#answers) {
			if (this.#answers.size <= this.#maxEntries && this.#chars <= this.#maxChars) break;
			this.#answers.delete(oldest);
			this.#chars -= kept.text.length;
		}
	}

	/** Forgets every answer: another token may be answered otherwise. */
	clear(): void {
		this.#answers.clear();
		this.#chars = 0;
	}
}
