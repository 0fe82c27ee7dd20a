import type { MessageParam, ToolResultBlockParam, TextBlockParam } from "../../../src/agent/contracts.ts";
import { utf8Length } from "../../../src/shared/clip.ts";

/**
 * A job's conversation: the `messages` table, one row per message, committed after every turn. A
 * message whose JSON is over MESSAGE_CHUNK_BYTES is stored in pieces (schema step 28): writing one
 * takes several statements, so every write here is made inside the caller's transactionSync, and a
 * message is never left half-written.
 */

/**
 * Past this many bytes of UTF-8 a message's JSON is stored in pieces of at most this many: the
 * platform refuses a value or row over 2 MB (locally nothing does), and one answer can carry a
 * server tool's result (a fetched PDF, in base64) of several.
 */
export const MESSAGE_CHUNK_BYTES = 1_000_000;

/**
 * The most of one message drover stores. Every turn reads the conversation back, joins a chunked
 * message, parses it and serializes the request again (some five copies in memory at once): one of
 * 32 MB (all the Messages API takes) would pass the isolate's 128 MB and crash the object at every
 * pass. A larger answer ends its job message_too_large.
 */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/** A message that could not be stored: over MAX_MESSAGE_BYTES, or refused by SQLite for its size. Its message says why. */
export class MessageTooLargeError extends Error {
	override readonly name = "MessageTooLargeError";
	readonly bytes: number;
	constructor(bytes: number, message: string, options?: ErrorOptions) {
		super(message, options);
		this.bytes = bytes;
	}
}

/** A row of AgentDO's `messages` table: one message of a job's conversation, its content as JSON (whole once read). */
export interface MessageRow {
	seq: number;
	role: string;
	content: string;
	/** How many pieces the message is stored in; null when its row holds it whole. */
	chunks: number | null;
	[key: string]: SqlStorageValue;
}

/** A stored message: the Messages API's shape, with its place in the conversation. */
export interface StoredMessage {
	seq: number;
	role: "user" | "assistant";
	content: MessageParam["content"];
}

/** The columns a MessageRow is read with. */
export const MESSAGE_COLUMNS = "seq, role, content, chunks";

/** Parsed afresh on every read, never memoized: callers edit the content they get (see clearOldToolResults). */
export function toMessage(row: MessageRow): StoredMessage {
	return { seq: row.seq, role: row.role as StoredMessage["role"], content: JSON.parse(row.content) as MessageParam["content"] };
}

/**
 * Runs a query for MessageRows (selecting MESSAGE_COLUMNS) and joins each stored in pieces back into
 * its whole JSON. Joined here, not in SQL: a string over 2 MB is refused there too.
 */
export function readMessageRows(sql: SqlStorage, jobId: string, query: string, ...bindings: unknown[]): MessageRow[] {
	const rows = sql.exec<MessageRow>(query, ...bindings).toArray();
	return rows.map((row) => (row.chunks === null ? row : { ...row, content: wholeContent(sql, jobId, row) }));
}

function wholeContent(sql: SqlStorage, jobId: string, row: MessageRow): string {
	const rest = sql
		.exec<{ content: string }>("SELECT content FROM message_chunks WHERE job_id = ? AND seq = ? AND chunk < ? ORDER BY chunk", jobId, row.seq, row.chunks)
		.toArray();
	if (rest.length !== (row.chunks ?? 1) - 1) throw new Error(`message ${row.seq} of job ${jobId} has ${rest.length + 1} of its ${row.chunks} pieces`);
	return row.content + rest.map((r) => r.content).join("");
}

export function readMessages(sql: SqlStorage, jobId: string): MessageParam[] {
	// `+?` keeps the cached plan: see schema.ts.
	return readMessageRows(sql, jobId, `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE job_id = +? ORDER BY seq`, jobId).map((row) => {
		// The API takes a message as role and content, nothing else.
		const { role, content } = toMessage(row);
		return { role, content };
	});
}

/** The job's last assistant message, if it has one. */
export function lastAssistantMessage(sql: SqlStorage, jobId: string): StoredMessage | null {
	const row = readMessageRows(sql, jobId, `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE job_id = ? AND role = 'assistant' ORDER BY seq DESC LIMIT 1`, jobId)[0];
	return row ? toMessage(row) : null;
}


/**
 * A message's JSON cut into pieces of at most MESSAGE_CHUNK_BYTES of UTF-8 (one piece when it fits),
 * never between the two halves of a surrogate pair (a half alone would be stored as U+FFFD), and its
 * size in bytes. Refused whole over MAX_MESSAGE_BYTES.
 */
function piecesOf(json: string): { pieces: string[]; bytes: number | null } {
	// A UTF-16 unit is at most 3 bytes of UTF-8: most messages are never measured (bytes null).
	if (json.length * 3 <= MESSAGE_CHUNK_BYTES) return { pieces: [json], bytes: null };
	const pieces: string[] = [];
	let start = 0;
	let size = 0;
	let bytes = 0;
	for (let i = 0; i < json.length; i++) {
		const c = json.charCodeAt(i);
		const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < json.length && (json.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
		const n = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
		if (size + n > MESSAGE_CHUNK_BYTES) {
			pieces.push(json.slice(start, i));
			start = i;
			size = 0;
		}
		size += n;
		bytes += n;
		if (pair) i++;
	}
	pieces.push(json.slice(start));
	if (bytes > MAX_MESSAGE_BYTES) throw new MessageTooLargeError(bytes, `over the ${MAX_MESSAGE_BYTES} bytes a message may be (each turn holds it in memory several times over)`);
	return { pieces, bytes };
}

/** Runs a message's writes; a refusal for its size (SQLITE_TOOBIG) is a MessageTooLargeError naming it. */
function writing<T>(json: string, bytes: number | null, write: () => T): T {
	try {
		return write();
	} catch (err) {
		const text = err instanceof Error ? err.message : String(err);
		if (!/SQLITE_TOOBIG|too big/i.test(text)) throw err;
		throw new MessageTooLargeError(bytes ?? utf8Length(json), `refused by storage (${text})`, { cause: err });
	}
}

/** Stores the pieces after the first (a message's row holds the first). */
function writeChunks(sql: SqlStorage, jobId: string, seq: number, pieces: readonly string[]): void {
	for (let i = 1; i < pieces.length; i++) {
		sql.exec("INSERT OR REPLACE INTO message_chunks (job_id, seq, chunk, content) VALUES (?, ?, ?, ?)", jobId, seq, i, pieces[i]!);
	}
}

/** Appends a message to the job's conversation; returns its sequence number. Inside a transaction: see the top. */
export function appendMessage(sql: SqlStorage, jobId: string, message: MessageParam): number {
	const json = JSON.stringify(message.content);
	const { pieces, bytes } = piecesOf(json);
	return writing(json, bytes, () => {
		const seq = sql
			.exec<{ seq: number }>(
				"INSERT INTO messages (job_id, seq, role, content, chunks) SELECT ?1, coalesce(max(seq), 0) + 1, ?2, ?3, ?4 FROM messages WHERE job_id = +?1 RETURNING seq",
				jobId,
				message.role,
				pieces[0]!,
				pieces.length > 1 ? pieces.length : null,
			)
			.one().seq;
		writeChunks(sql, jobId, seq, pieces);
		return seq;
	});
}

/** Replaces a stored message's content (`row` as read), in as many pieces as it now takes. Inside a transaction: see the top. */
export function rewriteMessage(sql: SqlStorage, jobId: string, row: Pick<MessageRow, "seq" | "chunks">, content: MessageParam["content"]): void {
	const json = JSON.stringify(content);
	const { pieces, bytes } = piecesOf(json);
	writing(json, bytes, () => {
		sql.exec("UPDATE messages SET content = ?, chunks = ? WHERE job_id = ? AND seq = ?", pieces[0]!, pieces.length > 1 ? pieces.length : null, jobId, row.seq);
		writeChunks(sql, jobId, row.seq, pieces);
		if ((row.chunks ?? 1) > pieces.length) sql.exec("DELETE FROM message_chunks WHERE job_id = ? AND seq = ? AND chunk >= ?", jobId, row.seq, pieces.length);
	});
}

/** Deletes a stored message, its pieces too. */
function deleteMessage(sql: SqlStorage, jobId: string, row: Pick<MessageRow, "seq" | "chunks">): void {
	sql.exec("DELETE FROM messages WHERE job_id = ? AND seq = ?", jobId, row.seq);
	if (row.chunks !== null) sql.exec("DELETE FROM message_chunks WHERE job_id = ? AND seq = ?", jobId, row.seq);
}

/** Adds `blocks` to the conversation's last message (a paused turn's continuation); its seq. */
export function extendLastMessage(sql: SqlStorage, jobId: string, blocks: readonly unknown[]): number {
	const last = lastRow(sql, jobId);
	if (!last) throw new Error(`job ${jobId} has no message to extend`);
	const content = toMessage(last).content;
	const before = typeof content === "string" ? [{ type: "text", text: content }] : content;
	rewriteMessage(sql, jobId, last, [...before, ...blocks] as MessageParam["content"]);
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
	const row = lastRow(sql, jobId);
	const prompt: TextBlockParam = { type: "text", text };
	if (!row) {
		appendMessage(sql, jobId, { role: "user", content: text });
		return;
	}
	const last = toMessage(row);
	const content = last.content;
	if (last.role === "user") {
		const blocks = typeof content === "string" ? [{ type: "text" as const, text: content }] : content;
		rewriteMessage(sql, jobId, row, [...blocks, prompt]);
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
	const row = lastRow(sql, jobId);
	if (!row || row.role === "user") return;
	const results = unansweredResults(toMessage(row).content, answer);
	if (results.length > 0) appendMessage(sql, jobId, { role: "user", content: results });
	else deleteMessage(sql, jobId, row);
}

/**
 * Drops a copied conversation's refused last answer: the API asks for the refused turn to be taken
 * out before going on, or the same classifier refuses again. The continue's prompt then joins the
 * turn that was refused, as a rephrasing of it.
 */
export function dropRefusedAnswer(sql: SqlStorage, jobId: string): void {
	const last = lastRow(sql, jobId);
	if (last?.role === "assistant") deleteMessage(sql, jobId, last);
}

/** The conversation's last message as stored (its content whole). */
function lastRow(sql: SqlStorage, jobId: string): MessageRow | undefined {
	return readMessageRows(sql, jobId, `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE job_id = +? ORDER BY seq DESC LIMIT 1`, jobId)[0];
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
 * Copies another job's conversation (continue, fork), its messages before `beforeSeq` when given.
 * Blank text blocks (answers stored before they were left out) and an empty answer (a final turn
 * with nothing in it) are left out: the API refuses both once a turn follows them.
 */
export function copyMessages(sql: SqlStorage, fromJob: string, toJob: string, beforeSeq: number | null = null): number {
	const messages = cleanedMessages(sql, fromJob, beforeSeq);
	for (const m of messages) appendMessage(sql, toJob, m);
	return messages.length;
}

/** The `"type":"tool_use"` every tool_use block's JSON holds (JSON.stringify writes no spaces; a string's own quotes are escaped). */
const TOOL_USE_MARK = '"type":"tool_use"';

/**
 * The seq of the job's last message when it is an answer a fork without a prompt drops whole: an
 * assistant turn with no tool_use block, whose calls would need results. Looked for in SQLite, piece
 * by piece and across the seams between pieces, so that an answer of up to MAX_MESSAGE_BYTES is never
 * brought into the isolate only to be dropped. A mark that is not a block's (one in a tool's input)
 * only costs the read this spares: the answer is then copied and reopened as before.
 */
export function answerToDrop(sql: SqlStorage, jobId: string): number | null {
	const last = sql.exec<{ seq: number; role: string }>("SELECT seq, role FROM messages WHERE job_id = +? ORDER BY seq DESC LIMIT 1", jobId).toArray()[0];
	if (last?.role !== "assistant") return null;
	const seam = TOOL_USE_MARK.length - 1;
	const marked = sql
		.exec<{ marked: number }>(
			`WITH pieces (chunk, content) AS (
				SELECT 0, content FROM messages WHERE job_id = ?1 AND seq = ?2
				UNION ALL SELECT chunk, content FROM message_chunks WHERE job_id = ?1 AND seq = ?2
			)
			SELECT EXISTS (SELECT 1 FROM pieces WHERE instr(content, ?3) > 0)
			    OR EXISTS (SELECT 1 FROM pieces a JOIN pieces b ON b.chunk = a.chunk + 1 WHERE instr(substr(a.content, -?4) || substr(b.content, 1, ?4), ?3) > 0) AS marked`,
			jobId,
			last.seq,
			TOOL_USE_MARK,
			seam,
		)
		.one().marked;
	return marked ? null : last.seq;
}

/** A job's conversation as another job carries it on (see copyMessages), its messages before `beforeSeq` when given. */
export function cleanedMessages(sql: SqlStorage, jobId: string, beforeSeq: number | null = null): MessageParam[] {
	const rows =
		beforeSeq === null
			? readMessages(sql, jobId)
			: readMessageRows(sql, jobId, `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE job_id = +? AND seq < ? ORDER BY seq`, jobId, beforeSeq).map((row) => {
					const { role, content } = toMessage(row);
					return { role, content };
				});
	return rows.flatMap((m) => {
		const content = typeof m.content === "string" ? m.content : m.content.filter((b) => !isBlankText(b));
		return content.length === 0 ? [] : [{ ...m, content } as MessageParam];
	});
}

