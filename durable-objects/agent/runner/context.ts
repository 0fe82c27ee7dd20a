import type { MessageParam } from "../../../src/agent/contracts.ts";
import { MESSAGE_COLUMNS, readMessageRows, rewriteMessage, toMessage } from "./messages.ts";
import { dropThinkingAfter } from "./thinking.ts";

/**
 * What of a job's tool results the model sees. The JSONL output always keeps every result whole;
 * the conversation resent to the model every turn keeps them cut, and only the recent ones, so a
 * long job fits the context window and the object's memory stays bounded however much it reads.
 */

/**
 * A tool result goes to the model cut to this many characters (about 25,000 tokens). Uncut results
 * of up to a megabyte would overflow the context window within a turn or two.
 */
export const MODEL_TOOL_RESULT_CHARS = 100_000;

/**
 * The tool results a conversation keeps, in characters (about 100,000 tokens, where the Messages
 * API's own context editing clears by default). Past it the oldest results are cleared down to half
 * the budget at once, so the prompt cache is broken every few turns rather than every turn.
 */
export const TOOL_RESULTS_BUDGET_CHARS = 400_000;

const CLEARED_PREFIX = "[drover: tool result cleared";

/**
 * `length` is the whole result's, when `result` is only its head; `max` is what this result may
 * keep (less than MODEL_TOOL_RESULT_CHARS when its turn's results share TOOL_RESULTS_BUDGET_CHARS).
 */
export function forModel(result: string, length = result.length, max = MODEL_TOOL_RESULT_CHARS): string {
	if (result.length <= max && length <= max) return result;
	// Never end on the first half of a surrogate pair: a lone surrogate is not valid UTF-8 to send.
	const high = result.charCodeAt(max - 1);
	const end = high >= 0xd800 && high <= 0xdbff ? max - 1 : max;
	return `${result.slice(0, end)}\n[drover: result cut from ${Math.max(length, result.length)} to ${end} characters; the whole result is in the job's output]`;
}

/**
 * A turn's results as the model is sent them, in the turn's order: each cut to MODEL_TOOL_RESULT_CHARS
 * and to its share of the turn's budget (see turnShares). `result` may be only the head of a result
 * whose whole length is `resultLength`.
 */
export function turnResultsForModel(calls: readonly { result: string | null; resultLength: number }[]): string[] {
	const shares = turnShares(calls.map((c) => Math.min(c.resultLength, MODEL_TOOL_RESULT_CHARS)));
	return calls.map((c, i) => forModel(c.result ?? "", c.resultLength, shares[i]));
}

/** The least a result of a turn with many is cut to, whatever its share. */
const MIN_SHARE_CHARS = 1000;

/**
 * What each of a turn's results may keep of `lengths` (each already at most MODEL_TOOL_RESULT_CHARS)
 * so that together they stay within `budget`: results under an even share keep all of theirs, the
 * others split what is left evenly. The budget is the conversation's own (TOOL_RESULTS_BUDGET_CHARS),
 * which a turn's results would pass anyway: 21 parallel fetches of 100,000 characters would hand the
 * model 2.1 million characters at once. It counts characters, not bytes: as JSON a control character
 * is six (\u0001), so a turn's message can still be over the 2 MB a row holds, and is then stored in
 * pieces (see messages.ts).
 */
export function turnShares(lengths: readonly number[], budget = TOOL_RESULTS_BUDGET_CHARS): number[] {
	const total = lengths.reduce((a, b) => a + b, 0);
	if (total <= budget) return [...lengths];
	const order = lengths.map((length, i) => ({ length, i })).sort((a, b) => a.length - b.length);
	const shares = new Array<number>(lengths.length);
	let left = budget;
	order.forEach(({ length, i }, k) => {
		const share = Math.max(MIN_SHARE_CHARS, Math.floor(left / (order.length - k)));
		shares[i] = Math.min(length, share);
		left = Math.max(0, left - shares[i]);
	});
	return shares;
}

interface Block {
	type: string;
	content?: unknown;
	[key: string]: unknown;
}

const sizeOf = (content: unknown) => (typeof content === "string" ? content.length : JSON.stringify(content ?? "").length);

/**
 * Clears the oldest tool results from a job's stored conversation once they exceed the budget,
 * keeping the latest message's results (the model has not read them yet). Returns how many results
 * and characters were cleared; the caller records it in the job's output.
 */
export function clearOldToolResults(sql: SqlStorage, jobId: string, budget = TOOL_RESULTS_BUDGET_CHARS): { results: number; chars: number } {
	const none = { results: 0, chars: 0 };
	// Summed inside SQLite, so a turn under the budget parses nothing in JS; the stored JSON's own
	// length would not do, since many small results pass the budget in overhead alone and every later
	// turn would parse the whole conversation for nothing to clear. A message stored in pieces is not
	// JSON in its row (SQLite's JSON functions would refuse it): one is summed in JS, below.
	const summed = sql
		// `+?` keeps the cached plan: see schema.ts.
		.exec<{ n: number | null; chunked: number }>(
			`SELECT sum(CASE WHEN chunks IS NOT NULL THEN 0 WHEN json_type(content) = 'array' THEN
			          (SELECT sum(length(json_extract(content, b.fullkey || '.content'))) FROM json_each(content) b
			           WHERE json_extract(content, b.fullkey || '.type') = 'tool_result') ELSE 0 END) AS n,
			        count(chunks) AS chunked
			 FROM messages WHERE job_id = +? AND role = 'user'`,
			jobId,
		)
		.one();
	let under = summed.n ?? 0;
	if (summed.chunked > 0 && under <= budget) {
		// Only the messages stored in pieces are read and parsed here, not every user message.
		const chunked = readMessageRows(sql, jobId, `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE job_id = ? AND role = 'user' AND chunks IS NOT NULL`, jobId);
		for (const row of chunked) {
			const content = toMessage(row).content as string | Block[];
			if (Array.isArray(content)) for (const b of content) if (b.type === "tool_result") under += sizeOf(b.content);
		}
	}
	if (under <= budget) return none;
	const rows = readMessageRows(sql, jobId, `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE job_id = ? AND role = 'user' ORDER BY seq`, jobId).map((row) => ({
		row,
		content: toMessage(row).content as string | Block[],
	}));
	const results = rows.flatMap((r) => (Array.isArray(r.content) ? r.content.filter((b) => b.type === "tool_result") : []));
	let total = results.reduce((n, b) => n + sizeOf(b.content), 0);
	if (total <= budget) return none;
	const cleared = { results: 0, chars: 0 };
	let first: number | null = null;
	for (const { row, content } of rows.slice(0, -1)) {
		if (total <= budget / 2) break;
		if (!Array.isArray(content)) continue;
		let changed = false;
		for (const block of content) {
			if (total <= budget / 2) break;
			if (block.type !== "tool_result" || (typeof block.content === "string" && block.content.startsWith(CLEARED_PREFIX))) continue;
			const size = sizeOf(block.content);
			const note = `${CLEARED_PREFIX} from the conversation to keep it within the context window (${size} characters); the whole result is in the job's output]`;
			if (size <= note.length) continue;
			block.content = note;
			total -= size - note.length;
			cleared.results++;
			cleared.chars += size;
			changed = true;
		}
		if (changed) {
			rewriteMessage(sql, jobId, row, content as unknown as MessageParam["content"]);
			first ??= row.seq;
		}
	}
	// The model's thinking since the first message changed was signed over its old results.
	if (first !== null) dropThinkingAfter(sql, jobId, first);
	return cleared;
}

/** Block types a cache breakpoint may sit on at the end of a user turn. */
const MARKABLE = new Set(["text", "tool_result", "image", "document"]);

/**
 * The request's conversation with prompt-cache breakpoints, when the agent has tools: each turn
 * re-sends the whole conversation, which the next turn then reads back at a tenth of the input
 * price instead of paying for it again (its new part written once, at 1.25 times). The last user
 * turn's last block is marked, and the one before it too: the API looks back only 20 blocks from a
 * breakpoint for a hit, and a turn of many parallel tool calls adds more than that. With the system
 * prompt's that is 3 of the 4 breakpoints a request may have. A tool-less job makes one turn, and
 * would pay the write for nothing. Below the model's minimum (about 1,024 tokens) the API caches
 * nothing and refuses nothing. The stored conversation is left as it is: `messages` is the turn's
 * own copy (readMessages parses afresh).
 */
export function withCacheBreakpoint(messages: MessageParam[], hasTools: boolean): MessageParam[] {
	if (!hasTools || messages.at(-1)?.role !== "user") return messages;
	const users = messages.filter((m) => m.role === "user").slice(-2);
	for (const m of users) mark(m);
	return messages;
}

function mark(message: MessageParam): void {
	const cache_control = { type: "ephemeral" as const };
	if (typeof message.content === "string") {
		message.content = [{ type: "text", text: message.content, cache_control }];
		return;
	}
	const block = message.content.at(-1);
	// The API refuses a breakpoint on an empty text block (drover's own never are: prompts are checked).
	if (!block || !MARKABLE.has(block.type) || (block.type === "text" && block.text.trim() === "")) return;
	Object.assign(block, { cache_control });
}
