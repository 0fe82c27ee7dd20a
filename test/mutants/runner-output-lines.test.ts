// A JSONL line too large for its row (durable-objects/agent/runner/output.ts fitRow), where a mutation
// walk found the suite blind: the test checked that the line fits and keeps a head, not how much. The
// first cut leaves room for the note it adds, so it fits at once and keeps as much as a line holds,
// instead of missing and being cut again by a tenth; and a cut that still misses (a head heavier than
// the text's average, as a result that begins in three-byte characters) is cut again until it fits.
// And lines are read back (for a live job's output
// and its stream) in batches that stop at their byte budget, so a few huge lines never fill the
// isolate's memory at once.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { appendLines, MAX_LINE_BYTES, readLines } from "../../durable-objects/agent/runner/output.ts";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { outputOf, runToRest } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";

describe("a tool result of 3 MB of plain text", () => {
	it("keeps a head in its JSONL line within a kilobyte of what a line holds", async () => {
		const big = "x".repeat(3_000_000);
		fake("https://status.example.test", () => new Response(big, { headers: { "content-type": "text/plain" } }));
		useEmulator().enqueue({ tool_use: { name: "http_fetch", input: { url: "https://status.example.test/" } } }, { text: "Read it." });
		await createAgent({ name: "huge-plain-result", tools: [{ type: "http_fetch", allow_hosts: ["status.example.test"], max_response_bytes: 10_000_000 }] });
		const job = await runToRest("huge-plain-result");
		expect(job.status).toBe("completed");
		const line = (await outputOf("huge-plain-result", job.id)).find((l) => l.type === "tool_result")!;
		expect(line.truncated).toMatchObject({ field: "result" });
		const bytes = new TextEncoder().encode(JSON.stringify(line)).length;
		expect(bytes).toBeLessThanOrEqual(MAX_LINE_BYTES);
		expect(bytes).toBeGreaterThan(MAX_LINE_BYTES - 1000);
	});
});

describe("a tool result whose first third is three-byte characters, the rest plain", () => {
	it("keeps a head that still fits the line", async () => {
		const big = "€".repeat(1_000_000) + "x".repeat(2_000_000);
		fake("https://status.example.test", () => new Response(big, { headers: { "content-type": "text/plain; charset=utf-8" } }));
		useEmulator().enqueue({ tool_use: { name: "http_fetch", input: { url: "https://status.example.test/" } } }, { text: "Read it." });
		await createAgent({ name: "heavy-head-result", tools: [{ type: "http_fetch", allow_hosts: ["status.example.test"], max_response_bytes: 10_000_000 }] });
		const job = await runToRest("heavy-head-result");
		expect(job.status).toBe("completed");
		const line = (await outputOf("heavy-head-result", job.id)).find((l) => l.type === "tool_result")!;
		expect(line.truncated).toMatchObject({ field: "result" });
		expect(String(line.result)).toContain("€€€");
		expect(new TextEncoder().encode(JSON.stringify(line)).length).toBeLessThanOrEqual(MAX_LINE_BYTES);
	});
});

describe("a batch of a job's lines read back", () => {
	it("stops at the line that reaches its byte budget, however many lines it may hold", async () => {
		const read = await runInDurableObject(env.AGENT.getByName("read-in-batches"), (_i: AgentDO, state) => {
			const sql = state.storage.sql;
			const lines = [1, 2, 3].map((n) => ({ type: "tool_result" as const, tool_use_id: `toolu_${n}`, success: true, result: "y".repeat(1_000_000) }));
			appendLines(sql, "job-b", lines, Date.now());
			return { capped: readLines(sql, "job-b", 0, 1000, 1_500_000).map((r) => r.line), rest: readLines(sql, "job-b", 2, 1000, 1_500_000).map((r) => r.line) };
		});
		expect(read).toEqual({ capped: [1, 2], rest: [3] });
	});
});
