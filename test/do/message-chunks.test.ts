import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import {
	answerToDrop,
	appendMessage,
	lastAssistantMessage,
	MAX_MESSAGE_BYTES,
	MESSAGE_CHUNK_BYTES,
	MessageTooLargeError,
	readMessages,
	rewriteMessage,
} from "../../durable-objects/agent/runner/messages.ts";
import { clearOldToolResults } from "../../durable-objects/agent/runner/context.ts";
import type { MessageParam } from "../../src/agent/contracts.ts";
import { vi } from "vitest";

const encoder = new TextEncoder();

/** Runs `fn` on a fresh agent object's SQLite, in one transaction as the runner writes messages. */
function inObject<T>(name: string, fn: (sql: SqlStorage) => T): Promise<T> {
	return runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => state.storage.transactionSync(() => fn(state.storage.sql)));
}

const pieces = (sql: SqlStorage, jobId: string) =>
	sql
		.exec<{ seq: number; chunks: number | null; content: string }>(
			"SELECT seq, chunks, content FROM messages WHERE job_id = ?1 UNION ALL SELECT seq, chunk, content FROM message_chunks WHERE job_id = ?1",
			jobId,
		)
		.toArray();

describe("a message stored in pieces", () => {
	it("reads back exactly as written, no piece over the limit and no character split, whatever its bytes", async () => {
		// One, two, three and four bytes a character (an emoji is a surrogate pair), so pieces end mid-run of each.
		const text = "a é € 😀 ".repeat(300_000);
		const answer: MessageParam = { role: "assistant", content: [{ type: "text", text }] };
		const { stored, read, last, jobIds } = await inObject("chunks-round-trip", (sql) => {
			appendMessage(sql, "job-a", { role: "user", content: "Go." });
			appendMessage(sql, "job-a", answer);
			return { stored: pieces(sql, "job-a"), read: readMessages(sql, "job-a"), last: lastAssistantMessage(sql, "job-a"), jobIds: sql.exec("SELECT count(*) AS n FROM message_chunks WHERE job_id != 'job-a'").one().n };
		});
		expect(read).toEqual([{ role: "user", content: "Go." }, answer]);
		expect(last).toEqual({ seq: 2, ...answer });
		expect(jobIds).toBe(0);
		const bytes = encoder.encode(JSON.stringify(answer.content)).length;
		const rows = stored.filter((r) => r.seq === 2);
		expect(rows.length).toBe(Math.ceil(bytes / MESSAGE_CHUNK_BYTES));
		for (const r of rows) {
			expect(encoder.encode(r.content).length).toBeLessThanOrEqual(MESSAGE_CHUNK_BYTES);
			// A piece that ended between a surrogate pair's halves would hold a lone one.
			expect(r.content).toMatch(/^[^\uD800-\uDFFF]*(?:[\uD800-\uDBFF][\uDC00-\uDFFF][^\uD800-\uDFFF]*)*$/);
		}
		// The user's short message is one row, as every message stored before pieces existed.
		expect(stored.filter((r) => r.seq === 1)).toEqual([{ seq: 1, chunks: null, content: '"Go."' }]);
	});

	it("rewritten smaller, keeps no piece it no longer has; rewritten larger, takes more", async () => {
		const big = [{ type: "text" as const, text: "x".repeat(2_500_000) }];
		const result = await inObject("chunks-rewrite", (sql) => {
			const seq = appendMessage(sql, "job-r", { role: "user", content: big });
			const row = sql.exec<{ chunks: number | null }>("SELECT chunks FROM messages WHERE job_id = 'job-r' AND seq = ?", seq).one();
			rewriteMessage(sql, "job-r", { seq, chunks: row.chunks }, "cleared");
			const small = { read: readMessages(sql, "job-r"), rows: pieces(sql, "job-r").length };
			rewriteMessage(sql, "job-r", { seq, chunks: null }, big);
			return { before: row.chunks, small, large: { read: readMessages(sql, "job-r"), rows: pieces(sql, "job-r").length } };
		});
		expect(result.before).toBe(3);
		expect(result.small).toEqual({ read: [{ role: "user", content: "cleared" }], rows: 1 });
		expect(result.large).toEqual({ read: [{ role: "user", content: big }], rows: 3 });
	});

	it("is refused whole, nothing written, past what the Messages API would ever take back", async () => {
		const outcome = await inObject("chunks-too-large", (sql) => {
			let error: unknown = null;
			try {
				appendMessage(sql, "job-t", { role: "assistant", content: [{ type: "text", text: "z".repeat(MAX_MESSAGE_BYTES) }] });
			} catch (err) {
				error = err;
			}
			return { error: error instanceof MessageTooLargeError ? { bytes: error.bytes, message: error.message } : String(error), rows: pieces(sql, "job-t").length };
		});
		expect(outcome).toEqual({ error: { bytes: MAX_MESSAGE_BYTES + 27, message: expect.stringContaining(`over the ${MAX_MESSAGE_BYTES} bytes a message may be`) }, rows: 0 });
	});

	it("refuses a message of 9 MB: read, joined and sent again every turn, it would outgrow the object's 128 MB", async () => {
		const outcome = await inObject("chunks-nine-mb", (sql) => {
			try {
				appendMessage(sql, "job-n", { role: "assistant", content: [{ type: "text", text: "z".repeat(9 * 1024 * 1024) }] });
				return { stored: true, rows: pieces(sql, "job-n").length };
			} catch (err) {
				return { stored: !(err instanceof MessageTooLargeError), rows: pieces(sql, "job-n").length };
			}
		});
		expect(outcome).toEqual({ stored: false, rows: 0 });
	});

	it("is the only message a turn under the tool results' budget reads in JS: the others are summed in SQLite", async () => {
		const parsed = await inObject("chunks-budget", (sql) => {
			// A prompt stored in pieces, then 30 turns of small tool results.
			appendMessage(sql, "job-b", { role: "user", content: [{ type: "text", text: "p".repeat(MESSAGE_CHUNK_BYTES + 10) }] });
			for (let i = 0; i < 30; i++) {
				appendMessage(sql, "job-b", { role: "assistant", content: [{ type: "tool_use", id: `t${i}`, name: "http_fetch", input: {} }] });
				appendMessage(sql, "job-b", { role: "user", content: [{ type: "tool_result", tool_use_id: `t${i}`, content: "ok" }] });
			}
			const parse = vi.spyOn(JSON, "parse");
			try {
				expect(clearOldToolResults(sql, "job-b")).toEqual({ results: 0, chars: 0 });
				return parse.mock.calls.length;
			} finally {
				parse.mockRestore();
			}
		});
		expect(parsed).toBe(1);
	});
	it("is dropped by a fork without a prompt only when it holds no tool_use block, one found across a seam between pieces too", async () => {
		const call = { type: "tool_use" as const, id: "toolu_seam", name: "http_fetch", input: {} };
		// Text long enough that the tool_use block's "type":"tool_use" starts 8 bytes before the first piece ends.
		const lead = JSON.stringify([{ type: "text", text: "" }, call]).indexOf('"type":"tool_use"') - '"},{'.length;
		const text = "a".repeat(MESSAGE_CHUNK_BYTES - 8 - lead - '"},{'.length);
		const found = await inObject("chunks-drop", (sql) => {
			const answer = (jobId: string, content: MessageParam["content"]) => {
				appendMessage(sql, jobId, { role: "user", content: "Go." });
				appendMessage(sql, jobId, { role: "assistant", content });
				return answerToDrop(sql, jobId);
			};
			const seam = answer("job-seam", [{ type: "text", text }, call]);
			const [first] = pieces(sql, "job-seam").filter((r) => r.seq === 2);
			return {
				seam,
				// The mark is split: neither piece holds it whole.
				split: !first!.content.includes('"type":"tool_use"') && first!.content.endsWith('"type":"'),
				plain: answer("job-plain", [{ type: "text", text: "b".repeat(2 * MESSAGE_CHUNK_BYTES) }]),
				quoted: answer("job-quoted", [{ type: "text", text: 'a block is {"type":"tool_use"}' }]),
				called: answer("job-called", [{ type: "text", text: "Fetching." }, call]),
				user: (appendMessage(sql, "job-user", { role: "user", content: "Go." }), answerToDrop(sql, "job-user")),
			};
		});
		expect(found).toEqual({ seam: null, split: true, plain: 2, quoted: 2, called: null, user: null });
	});
});
