// How a conversation's message is stored (durable-objects/agent/runner/messages.ts), where a mutation
// walk found the suite blind: the tests' large messages were long in characters too. One of fewer
// characters than a piece holds bytes, but of more bytes (three a character, as most of CJK), is still
// stored in pieces of at most MESSAGE_CHUNK_BYTES: whole, its row would be over the 2 MB the platform
// refuses (locally nothing does).
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { appendMessage, MESSAGE_CHUNK_BYTES, readMessages } from "../../durable-objects/agent/runner/messages.ts";
import type { MessageParam } from "../../src/agent/contracts.ts";

const encoder = new TextEncoder();

describe("a message of 700,000 characters of three bytes each", () => {
	it("is stored in pieces of at most MESSAGE_CHUNK_BYTES, and reads back whole", async () => {
		const answer: MessageParam = { role: "assistant", content: [{ type: "text", text: "日".repeat(700_000) }] };
		const { rows, read } = await runInDurableObject(env.AGENT.getByName("pieces-three-bytes"), (_i: AgentDO, state) =>
			state.storage.transactionSync(() => {
				const sql = state.storage.sql;
				appendMessage(sql, "job-k", { role: "user", content: "Go." });
				appendMessage(sql, "job-k", answer);
				const rows = sql
					.exec<{ content: string }>("SELECT content FROM messages WHERE job_id = ?1 AND seq = 2 UNION ALL SELECT content FROM message_chunks WHERE job_id = ?1", "job-k")
					.toArray();
				return { rows, read: readMessages(sql, "job-k") };
			}),
		);
		expect(read).toEqual([{ role: "user", content: "Go." }, answer]);
		expect(rows.length).toBe(Math.ceil(encoder.encode(JSON.stringify(answer.content)).length / MESSAGE_CHUNK_BYTES));
		for (const r of rows) expect(encoder.encode(r.content).length).toBeLessThanOrEqual(MESSAGE_CHUNK_BYTES);
	});
});
