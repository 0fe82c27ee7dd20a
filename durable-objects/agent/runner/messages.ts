import type { MessageParam, ToolResultBlockParam, TextBlockParam } from "../../../src/agent/contracts.ts";

/** A job's conversation: the `messages` table, one row per message, committed after every turn. */

/** A row of AgentDO's `messages` table: one message of a job's conversation, its content as JSON. */
export interface MessageRow {
	seq: number;
	role: string;
	content: string;
	[key: string]: SqlStorageValue;
}

/** A stored message: the Messages API's shape, with its place in the conversation. */
export interface StoredMessage {
	seq: number;
	role: "user" | "assistant";
	content: MessageParam["content"];
}

/** Parsed afresh on every read, never memoized: callers edit the content they get (see clearOldToolResults). */
export function toMessage(row: MessageRow): StoredMessage {
	return { seq: row.seq, role: row.role as StoredMessage["role"], content: JSON.parse(row.content) as MessageParam["content"] };
}

export function readMessages(sql: SqlStorage, jobId: string): MessageParam[] {
	return sql
		// `+?` keeps the cached plan: see schema.ts.
		.exec<MessageRow>("SELECT seq, role, content FROM messages WHERE job_id = +? ORDER BY seq", jobId)
		.toArray()
		.map((row) => {
			// The API takes a message as role and content, nothing else.
			const { role, content } = toMessage(row);
			return { role, content };
		});
}

/** The job's last assistant message, if it has one. */
export function lastAssistantMessage(sql: SqlStorage, jobId: string): StoredMessage | null {
	const row = sql.exec<MessageRow>("SELECT seq, role, content FROM messages WHERE job_id = ? AND role = 'assistant' ORDER BY seq DESC LIMIT 1", jobId).toArray()[0];
	return row ? toMessage(row) : null;
}

/** Appends a message to the job's conversation; returns its sequence number. */
export function appendMessage(sql: SqlStorage, jobId: string, message: MessageParam): number {
	return sql
		.exec<{ seq: number }>(
			"INSERT INTO messages (job_id, seq, role, content) SELECT ?1, coalesce(max(seq), 0) + 1, ?2, ?3 FROM messages WHERE job_id = +?1 RETURNING seq",
			jobId,
			message.role,
			JSON.stringify(message.content),
		)
		.one().seq;
}

/** Adds `blocks` to the conversation's last message (a paused turn's continuation); its seq. */
export function extendLastMessage(sql: SqlStorage, jobId: string, blocks: readonly unknown[]): number {
	const last = lastMessage(sql, jobId);
	if (!last) throw new Error(`job ${jobId} has no message to extend`);
	const before = typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content;
	sql.exec("UPDATE messages SET content = ? WHERE job_id = ? AND seq = ?", JSON.stringify([...before, ...blocks]), jobId, last.seq);
	return last.seq;
}

/**
 * The result a copied conversation gives a tool call its job ended without answering: what the
 * source job recorded of it (see follow-up.ts), since a call told "no result" may be made again.
 */
export type AnswerToolUse = (toolUseId: string) => ToolResultBlockParam;

/**
 * Adds the user's `text` as the conversation's next user turn, keeping the roles alternating and
 * every tool_use answered, as the Messages API requires: a copied conversation may end on a user
 * turn (its job stopped before the model answered) or on tool calls its job stopped at (cancelled,
 * timed out or interrupted while they waited or ran); the text joins that user turn, or follows
 * the calls' results as `answer` gives them.
 */
export function appendUserText(sql: SqlStorage, jobId: string, text: string, answer: AnswerToolUse): void {
	const last = lastMessage(sql, jobId);
	const prompt: TextBlockParam = { type: "text", text };
	if (!last) {
		appendMessage(sql, jobId, { role: "user", content: text });
		return;
	}
	const content = last.content;
	if (last.role === "user") {
		const blocks = typeof content === "string" ? [{ type: "text" as const, text: content }] : content;
		sql.exec("UPDATE messages SET content = ? WHERE job_id = ? AND seq = ?", JSON.stringify([...blocks, prompt]), jobId, last.seq);
		return;
	}
	const results = unansweredResults(content, answer);
	appendMessage(sql, jobId, { role: "user", content: results.length > 0 ? [...results, prompt] : text });
}

/**
 * Readies a copied conversation to be answered again (a fork without a prompt): its final answer is
 * dropped; its unanswered tool calls get their results as `answer` gives them; a last user turn (the
 * job stopped before the model answered it) is kept as it is. The API takes no conversation that
 * ends on an assistant turn.
 */
export function reopenConversation(sql: SqlStorage, jobId: string, answer: AnswerToolUse): void {
	const last = lastMessage(sql, jobId);
	if (!last || last.role === "user") return;
	const results = unansweredResults(last.content, answer);
	if (results.length > 0) appendMessage(sql, jobId, { role: "user", content: results });
	else sql.exec("DELETE FROM messages WHERE job_id = ? AND seq = ?", jobId, last.seq);
}

/**
 * Drops a copied conversation's refused last answer: the API asks for the refused turn to be taken
 * out before going on, or the same classifier refuses again. The continue's prompt then joins the
 * turn that was refused, as a rephrasing of it.
 */
export function dropRefusedAnswer(sql: SqlStorage, jobId: string): void {
	const last = lastMessage(sql, jobId);
	if (last?.role === "assistant") sql.exec("DELETE FROM messages WHERE job_id = ? AND seq = ?", jobId, last.seq);
}

function lastMessage(sql: SqlStorage, jobId: string): StoredMessage | undefined {
	const row = sql.exec<MessageRow>("SELECT seq, role, content FROM messages WHERE job_id = +? ORDER BY seq DESC LIMIT 1", jobId).toArray()[0];
	return row && toMessage(row);
}

function unansweredResults(content: MessageParam["content"], answer: AnswerToolUse): ToolResultBlockParam[] {
	const unanswered = typeof content === "string" ? [] : content.filter((b) => b.type === "tool_use");
	return unanswered.map((b) => answer((b as { id: string }).id));
}

/**
 * A text block with nothing but whitespace in it ("", or the "\n\n" a model may put before its tool
 * calls): the API refuses one sent back ("text content blocks must contain non-whitespace text").
 */
export function isBlankText(block: { type: string; text?: unknown }): boolean {
	return block.type === "text" && typeof block.text === "string" && block.text.trim() === "";
}

/**
 * An answer's text, as a reader sees it. Adjacent text blocks are one run of text, joined as they
 * are: the API splits a sentence into blocks where a citation starts or ends, each carrying its own
 * whitespace ("According to Wikipedia, " + "the capital is Paris" + "."). Text on either side of
 * another block (a tool call, a server tool's result) is a new run, on a new line.
 */
export function answerText(blocks: readonly { type: string; text?: string }[]): string {
	let text = "";
	let broken = false;
	for (const b of blocks) {
		if (b.type !== "text" || typeof b.text !== "string") {
			broken = text !== "";
			continue;
		}
		text += (broken ? "\n" : "") + b.text;
		broken = false;
	}
	return text;
}

/**
 * Copies another job's conversation (continue, fork). Blank text blocks (answers stored before they
 * were left out) and an empty answer (a final turn with nothing in it) are left out: the API refuses
 * both once a turn follows them.
 */
export function copyMessages(sql: SqlStorage, fromJob: string, toJob: string): number {
	const messages = cleanedMessages(sql, fromJob);
	for (const m of messages) appendMessage(sql, toJob, m);
	return messages.length;
}

/** A job's conversation as another job carries it on (see copyMessages). */
export function cleanedMessages(sql: SqlStorage, jobId: string): MessageParam[] {
	return readMessages(sql, jobId).flatMap((m) => {
		const content = typeof m.content === "string" ? m.content : m.content.filter((b) => !isBlankText(b));
		return content.length === 0 ? [] : [{ ...m, content } as MessageParam];
	});
}

