// Small helpers: waits, ids, text cut between characters, JSON the API's parser would refuse.
import type { WireContentBlock, WireTextBlock } from "./wire.ts";

/** Resolves after `ms` (never, for Infinity); rejects with the signal's reason when it aborts. */
export function wait(ms: number, signal: AbortSignal): Promise<void> {
	return new Promise((resolve, reject) => {
		if (signal.aborted) {
			reject(signal.reason);
			return;
		}
		let timer: ReturnType<typeof setTimeout> | undefined;
		const onAbort = () => {
			if (timer !== undefined) clearTimeout(timer);
			reject(signal.reason);
		};
		signal.addEventListener("abort", onAbort, { once: true });
		if (Number.isFinite(ms)) {
			timer = setTimeout(() => {
				signal.removeEventListener("abort", onAbort);
				resolve();
			}, ms);
		}
	});
}

export function chunks(text: string, size: number): string[] {
	// By code point, so a chunk boundary never splits a surrogate pair.
	const points = [...text];
	const out: string[] = [];
	for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(""));
	return out.length > 0 ? out : [""];
}

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

export function newId(prefix: string, length: number): string {
	const bytes = crypto.getRandomValues(new Uint8Array(length));
	let id = prefix;
	for (const byte of bytes) id += ALPHABET[byte % ALPHABET.length];
	return id;
}

/** The first `end` UTF-16 units of `text`, one fewer if that would split a surrogate pair. */
export function headOf(text: string, end: number): string {
	const last = text.charCodeAt(end - 1);
	return text.slice(0, last >= 0xd800 && last <= 0xdbff ? end - 1 : end);
}

/**
 * Why the real API's strict JSON parser refuses `value` (a parsed body), or null: JSON.parse takes a
 * `\ud83d` escape with no pair as a lone surrogate, where the API answers 400 "The request body is
 * not valid JSON: no low surrogate in string". Keys are checked too. (A low half alone is refused
 * as well; its wording here is that parser family's, not one seen from the API.)
 */
export function loneSurrogateProblem(value: unknown): string | null {
	if (typeof value === "string") {
		// With the u flag, a surrogate matches only alone: a pair is one code point.
		const lone = /\p{Cs}/u.exec(value);
		if (lone === null) return null;
		return lone[0].charCodeAt(0) >= 0xdc00 ? "invalid high surrogate in string" : "no low surrogate in string";
	}
	if (Array.isArray(value)) {
		for (const item of value) {
			const problem = loneSurrogateProblem(item);
			if (problem !== null) return problem;
		}
		return null;
	}
	if (isObject(value)) {
		for (const [key, item] of Object.entries(value)) {
			const problem = loneSurrogateProblem(key) ?? loneSurrogateProblem(item);
			if (problem !== null) return problem;
		}
	}
	return null;
}

export function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A message's content as plain text: its text blocks, tool calls and results, a line each. */
export function textOf(content: string | WireContentBlock[] | undefined): string {
	if (content === undefined) return "";
	if (typeof content === "string") return content;
	return content
		.map((block) => {
			if (block.type === "text") return String((block as WireTextBlock).text);
			if (block.type === "tool_use") {
				const use = block as { name: string; input: unknown };
				return use.name + JSON.stringify(use.input);
			}
			if (block.type === "tool_result") return textOf((block as { content?: string | WireContentBlock[] }).content);
			return "";
		})
		.join("\n");
}
