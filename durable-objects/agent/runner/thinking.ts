import type Anthropic from "@anthropic-ai/sdk";
import type { MessageParam } from "../../../src/agent/contracts.ts";
import { hasInvalidInput } from "../../../src/agent/streamed-message.ts";
import { redactDeep } from "../../../src/security/redact.ts";
import { isBlankText, MESSAGE_COLUMNS, readMessageRows, rewriteMessage, toMessage } from "./messages.ts";

/**
 * A model's thinking blocks are signed over everything before them: the system prompt, the tools and
 * each earlier message and block (the API's prefix check, run by the models with preserved thinking,
 * Claude's 5.5 models among them, which think unasked). Sent back after something before it changed,
 * a block fails the whole request (400 "The block is bound to a different conversation") on accounts
 * made since 2026-08-31, or is dropped unsaid on older ones. Where drover changes a conversation it
 * keeps (a secret in an answer redacted, old tool results cleared, a session's oldest runs left out, a
 * follow-up run under a changed definition), it leaves out the thinking produced before the change
 * that sits after it, as the API's docs advise; thinking produced since is signed over the changed
 * conversation, and kept.
 */
export const isThinking = (block: { type: string }): boolean => block.type === "thinking" || block.type === "redacted_thinking";

/** What an assistant turn whose thinking all had to go holds instead: the API refuses an empty turn. */
const LEFT_OUT: Anthropic.ContentBlockParam = { type: "text", text: "[drover: this turn's thinking was left out]" };

/**
 * A model's answer as it is stored and sent back: redacted, blank text blocks left out (the API
 * refuses them sent back), and a thinking block after the first block so changed left out too.
 * Thinking blocks themselves are kept as they came: a changed one is refused.
 */
export function storedAnswer(blocks: readonly Anthropic.ContentBlockParam[]): Anthropic.ContentBlockParam[] {
	// An answer without thinking (the emulator's, older models') is only redacted: nothing to compare.
	const thinks = blocks.some(isThinking);
	const kept: Anthropic.ContentBlockParam[] = [];
	let changed = false;
	for (const block of blocks) {
		if (isThinking(block)) {
			if (!changed) kept.push(block);
			continue;
		}
		if (isBlankText(block)) {
			changed = true;
			continue;
		}
		// A call whose input was not valid JSON is kept with what could be read of it: not as written.
		if (thinks && hasInvalidInput(block)) changed = true;
		const redacted = redactDeep(block);
		if (thinks && !changed) changed = JSON.stringify(redacted) !== JSON.stringify(block);
		kept.push(redacted);
	}
	return kept;
}

/** A message's content without its thinking blocks (never empty: see LEFT_OUT). */
export function withoutThinking<C extends MessageParam["content"]>(content: C): C {
	if (typeof content === "string" || !content.some(isThinking)) return content;
	const rest = content.filter((b) => !isThinking(b));
	return (rest.length > 0 ? rest : [LEFT_OUT]) as C;
}

/** Messages with the thinking of each assistant turn left out: carried on after a change before them all. */
export const messagesWithoutThinking = (messages: readonly MessageParam[]): MessageParam[] =>
	messages.map((m) => (m.role === "assistant" ? { ...m, content: withoutThinking(m.content) } : m));

/**
 * Leaves the thinking out of a job's stored assistant turns after message `seq`, which was just
 * changed: the turns before it keep theirs, whose signatures still hold. Only turns holding some
 * are written again.
 */
export function dropThinkingAfter(sql: SqlStorage, jobId: string, seq: number): boolean {
	const rows = readMessageRows(sql, jobId, `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE job_id = ? AND role = 'assistant' AND seq > ? ORDER BY seq`, jobId, seq);
	let dropped = false;
	for (const row of rows) {
		const { content } = toMessage(row);
		const kept = withoutThinking(content);
		if (kept === content) continue;
		rewriteMessage(sql, jobId, row, kept);
		dropped = true;
	}
	return dropped;
}

/** Leaves the thinking out of every assistant turn of a job's stored conversation; whether it held any. */
export const dropAllThinking = (sql: SqlStorage, jobId: string): boolean => dropThinkingAfter(sql, jobId, 0);

/**
 * The API's refusal of a request carrying a thinking block whose prefix changed ("Invalid `signature`
 * in `thinking` block. The block is bound to a different conversation."), as drover's error carries it.
 */
export const UNBOUND_THINKING = /Invalid `signature` in `(?:redacted_)?thinking` block|bound to a different conversation/;
