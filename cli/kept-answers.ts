/**
 * The last JSON answer to each GET (path and query) that carried an ETag, so that the next GET of it
 * sends the tag and an unchanged answer comes back as a 304 with no body: `logs <agent> --follow`
 * asks for the same page of jobs every 2 s, and it is unchanged most times. Kept as text, which the
 * reader parses afresh, so a caller changing what it got cannot change what the next one gets.
 * Bounded as the dashboard's is: the least recently used go first past MAX_ENTRIES answers or
 * MAX_CHARS characters, and one answer over a quarter of MAX_CHARS is not kept (it would push out
 * all the others for a single revalidation).
 */
export interface KeptAnswer {
	etag: string;
	text: string;
}

const MAX_ENTRIES = 64;
const MAX_CHARS = 4_000_000;

export class KeptAnswers {
	// A Map iterates in insertion order: re-inserting on each use keeps the least recently used first.
	readonly #answers = new Map<string, KeptAnswer>();
	#chars = 0;

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
		if (answer === null || answer.text.length > MAX_CHARS / 4) return;
		this.#answers.set(key, answer);
		this.#chars += answer.text.length;
		for (const [oldest, kept] of this.#answers) {
			if (this.#answers.size <= MAX_ENTRIES && this.#chars <= MAX_CHARS) break;
			this.#answers.delete(oldest);
			this.#chars -= kept.text.length;
		}
	}
}
