// The emulator's prompt cache: which prefixes a request could read or write, as the API counts them.
import type { WireCacheControl, WireContentBlock } from "./wire.ts";
import type { ValidRequest } from "./validate.ts";
import { textOf } from "./text.ts";

/** Block boundaries the API looks back through for a cache hit, before a breakpoint. */
export const CACHE_LOOKBACK_BLOCKS = 20;

/** FNV-1a, 32 bits: a rolling key for a prompt prefix (the emulator's cache is a test peer's, not a security boundary). */
export function fnv(text: string, seed = 0x811c9dc5): number {
	let h = seed;
	for (let i = 0; i < text.length; i++) {
		h ^= text.charCodeAt(i);
		h = Math.imul(h, 0x01000193) >>> 0;
	}
	return h;
}

/**
 * Each block boundary of a request in the API's order (system blocks, then every message's blocks;
 * a string content is one block): the characters before it as the usage counts them, a key naming
 * the prefix up to it (cache_control left out: a block marked once and not again is the same
 * content), and the ttl of a breakpoint there.
 */
export function cacheBoundaries(req: ValidRequest, toolChars: number): { chars: number; key: string; ttl: "5m" | "1h" | null }[] {
	const out: { chars: number; key: string; ttl: "5m" | "1h" | null }[] = [];
	let chars = toolChars;
	let a = fnv(JSON.stringify([req.model, req.tools ?? []]));
	let b = fnv(JSON.stringify([req.tools ?? [], req.model]), 0x01234567);
	const add = (content: unknown, size: number, mark: WireCacheControl | null | undefined) => {
		const { cache_control: _, ...rest } = (typeof content === "object" && content !== null ? content : { text: content }) as Record<string, unknown>;
		const text = JSON.stringify(rest);
		a = fnv(text, a);
		b = fnv(text, b);
		chars += size;
		out.push({ chars, key: `${a.toString(16)}:${b.toString(16)}:${chars}`, ttl: mark ? (mark.ttl ?? "5m") : null });
	};
	const system = typeof req.system === "string" ? [{ type: "text" as const, text: req.system }] : (req.system ?? []);
	for (const block of system) add(block, block.text.length, block.cache_control);
	for (const message of req.messages) {
		const blocks = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
		// textOf joins a message's blocks with a newline: counted with the block after it.
		blocks.forEach((block, i) => add({ role: message.role, ...block }, textOf([block as WireContentBlock]).length + (i > 0 ? 1 : 0), (block as { cache_control?: WireCacheControl | null }).cache_control));
	}
	return out;
}
