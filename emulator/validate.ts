// Validation: the cheap checks the real API makes, with its message style.
import type { WireMessage, WireTextBlock, WireTool } from "./wire.ts";
import { isObject } from "./text.ts";

export interface ValidRequest {
	model: string;
	max_tokens: number;
	messages: WireMessage[];
	system?: string | WireTextBlock[];
	tools?: WireTool[];
	stream?: boolean;
}

/** `continues`: whether a final assistant turn is a paused answer sent back to continue it (allowed). */
export function validate(body: Record<string, unknown>, continues: (content: WireMessage["content"]) => boolean = () => false): string | null {
	if (typeof body.model !== "string" || body.model === "") return "model: Field required";
	if (body.max_tokens === undefined) return "max_tokens: Field required";
	if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) return "max_tokens: Input should be a positive integer";
	if (body.messages === undefined) return "messages: Field required";
	if (!Array.isArray(body.messages)) return "messages: Input should be a valid list";
	if (body.messages.length === 0) return "messages: at least one message is required";
	if (body.system !== undefined) {
		if (typeof body.system !== "string") {
			if (!Array.isArray(body.system)) return "system: Input should be a valid string or list";
			for (const [i, block] of body.system.entries()) {
				if (!isObject(block) || block.type !== "text" || typeof block.text !== "string") return `system.${i}: Input should be a text block`;
			}
			const blank = blankText(body.system as Record<string, unknown>[]);
			if (blank) return `system: ${blank}`;
		}
	}
	if (body.tools !== undefined) {
		if (!Array.isArray(body.tools)) return "tools: Input should be a valid list";
		for (const [i, tool] of body.tools.entries()) {
			if (!isObject(tool) || typeof tool.name !== "string") return `tools.${i}.name: Field required`;
			const custom = tool.type === undefined || tool.type === "custom";
			if (custom && !isObject(tool.input_schema)) return `tools.${i}.custom.input_schema: Field required`;
		}
	}
	if (body.stream !== undefined && typeof body.stream !== "boolean") return "stream: Input should be a valid boolean";

	const messages = body.messages as unknown[];
	// The last user/assistant turn: the only one allowed empty content (as a prefill, refused below).
	const final = messages.findLastIndex((m) => isObject(m) && m.role !== "system");
	let previousRole: string | null = null;
	for (const [i, message] of messages.entries()) {
		if (!isObject(message)) return `messages.${i}: Input should be a valid dictionary`;
		const role = message.role;
		if (role !== "user" && role !== "assistant" && role !== "system") return `messages.${i}.role: Input should be 'user' or 'assistant'`;
		const content = message.content;
		if (typeof content !== "string" && !Array.isArray(content)) return `messages.${i}.content: Input should be a valid string or list`;
		if (Array.isArray(content)) {
			for (const [j, block] of content.entries()) {
				if (!isObject(block) || typeof block.type !== "string") return `messages.${i}.content.${j}.type: Field required`;
			}
		}
		if (content.length === 0 && !(i === final && role === "assistant")) {
			return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
		}
		// System-role turns sit outside the user/assistant alternation.
		if (role !== "system") {
			if (previousRole === null && role !== "user") return 'messages: first message must use the "user" role';
			if (previousRole === role) {
				return `messages: roles must alternate between "user" and "assistant", but found multiple "${role}" roles in a row`;
			}
		}
		const blocks = Array.isArray(content) ? (content as Record<string, unknown>[]) : [];
		const blank = blankText(typeof content === "string" ? [{ type: "text", text: content }] : blocks);
		if (blank) return `messages: ${blank}`;

		// A result is matched to its call by id: an answer holding one id twice is refused sent back.
		const ids = new Set<string>();
		for (const [j, block] of blocks.entries()) {
			if (block.type !== "tool_use" && block.type !== "server_tool_use") continue;
			if (ids.has(String(block.id))) return `messages.${i}.content.${j}: \`tool_use\` ids must be unique`;
			ids.add(String(block.id));
		}

		// tool_use ↔ tool_result pairing is strictly between neighbours: the previous message's
		// tool_use blocks are answered here, in a user turn, or nowhere.
		const before = i > 0 ? messages[i - 1] : undefined;
		const useIds = isObject(before) && before.role === "assistant" && Array.isArray(before.content) ? toolUseIds(before.content) : [];
		const resultIds = role === "user" ? blocks.filter((bl) => bl.type === "tool_result").map((bl) => String(bl.tool_use_id)) : [];
		const unexpected = resultIds.filter((id) => !useIds.includes(id));
		if (unexpected.length > 0) {
			const at = blocks.findIndex((bl) => bl.type === "tool_result" && unexpected.includes(String(bl.tool_use_id)));
			return `messages.${i}.content.${at}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${unexpected.join(", ")}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
		}
		// After the final assistant turn only system turns follow; the prefill refusal below names that.
		const missing = i - 1 === final ? [] : useIds.filter((id) => !resultIds.includes(id));
		if (missing.length > 0) {
			return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
		}

		if (role !== "system") previousRole = role;
	}
	const last = messages[final];
	// A turn paused by a long server tool (pause_turn) is continued by sending it back as it was.
	if (isObject(last) && last.role === "assistant" && !continues(last.content as WireMessage["content"])) {
		return "This model does not support assistant message prefill. The conversation must end with a user message.";
	}
	return null;
}

/** The ids of a turn's tool_use blocks. */
function toolUseIds(blocks: unknown[]): string[] {
	return blocks.filter((bl) => isObject(bl) && bl.type === "tool_use").map((bl) => String((bl as Record<string, unknown>).id));
}

/**
 * Why a list of blocks has an unusable text block (the API's wording, after the `messages: ` or
 * `system: ` prefix), or null. Text blocks nested in a tool_result's content count too.
 */
function blankText(blocks: Record<string, unknown>[]): string | null {
	for (const block of blocks) {
		if (block.type === "text" && typeof block.text === "string") {
			if (block.text === "") return "text content blocks must be non-empty";
			if (block.text.trim() === "") return "text content blocks must contain non-whitespace text";
		}
		if (block.type === "tool_result" && Array.isArray(block.content)) {
			const nested = blankText(block.content.filter(isObject));
			if (nested) return nested;
		}
	}
	return null;
}
