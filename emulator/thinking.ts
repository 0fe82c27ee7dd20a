// Thinking signatures: the prefix check of the models with preserved thinking.
import type { WireContentBlock } from "./wire.ts";
import { fnv } from "./cache.ts";
import type { ValidRequest } from "./validate.ts";

/**
 * A rolling hash over a request's prefix in the API's order: system, tools, then each message's role
 * and blocks. A block counts by what it says, not how it is written: cache_control aside, a string
 * content as its one text block, a tool_result's string content as a text block.
 */
class Prefix {
	#a = 0x811c9dc5;
	#b = 0x01234567;

	add(piece: unknown): void {
		const text = JSON.stringify(piece);
		this.#a = fnv(text, this.#a);
		this.#b = fnv(text, this.#b);
	}

	/** The signature of a thinking block saying `thinking` here (the state is not moved). */
	sign(thinking: string): string {
		return `emulated_sig_${fnv(thinking, this.#a).toString(16)}${fnv(thinking, this.#b).toString(16)}`;
	}

	static of(req: ValidRequest): Prefix {
		const p = new Prefix();
		p.add(blocksOf(req.system ?? []).map(canonical));
		p.add((req.tools ?? []).map(({ cache_control: _, ...tool }) => tool));
		return p;
	}
}

const blocksOf = (content: string | WireContentBlock[]): WireContentBlock[] => (typeof content === "string" ? [{ type: "text", text: content }] : content);

function canonical(block: WireContentBlock): unknown {
	const { cache_control: _, ...rest } = block as Record<string, unknown>;
	if (rest.type === "text") return ["text", rest.text];
	if (rest.type === "tool_use") return ["tool_use", rest.id, rest.name, rest.input];
	if (rest.type === "tool_result") return ["tool_result", rest.tool_use_id, rest.content === undefined ? [] : blocksOf(rest.content as string | WireContentBlock[]).map(canonical), rest.is_error === true];
	if (rest.type === "thinking") return ["thinking", rest.thinking, rest.signature];
	return rest;
}

/** The signature of a new answer's thinking block: over the whole request (a paused turn it continues included). */
export function signNew(req: ValidRequest, thinking: string): string {
	const p = Prefix.of(req);
	const last = req.messages.at(-1);
	const continued = last?.role === "assistant" ? last : null;
	for (const m of continued ? req.messages.slice(0, -1) : req.messages) {
		p.add(["role", m.role]);
		for (const block of blocksOf(m.content)) p.add(canonical(block));
	}
	p.add(["role", "assistant"]);
	for (const block of continued ? blocksOf(continued.content) : []) p.add(canonical(block));
	return p.sign(thinking);
}

/**
 * The API's refusal of a request sending back a thinking block that fails the prefix check, or null.
 * (The real API refuses this on accounts made since 2026-08-31 unless asked to drop such blocks.)
 */
export function unboundThinking(req: ValidRequest): string | null {
	const p = Prefix.of(req);
	for (const [i, m] of req.messages.entries()) {
		p.add(["role", m.role]);
		for (const [j, block] of blocksOf(m.content).entries()) {
			if (block.type === "thinking") {
				const { thinking, signature } = block as { thinking?: unknown; signature?: unknown };
				if (typeof thinking !== "string" || signature !== p.sign(thinking)) {
					return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block. The block is bound to a different conversation. Remove the block, or set \`thinking.block_binding.prefix_mismatch_behavior\` to "drop_block".`;
				}
			}
			p.add(canonical(block));
		}
	}
	return null;
}
