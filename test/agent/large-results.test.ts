import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { MODEL_TOOL_RESULT_CHARS, TOOL_RESULTS_BUDGET_CHARS } from "../../durable-objects/agent/runner/context.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, outputOf, runToRest, trigger } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { refuseOver2MB } from "../helpers/sql.ts";
import { ticketTool } from "../helpers/tools.ts";

const fetchTool = { type: "http_fetch", allow_hosts: ["status.example.test"] };
type Block = { type: string; content?: unknown };
const lastResults = (request: { messages: { role: string; content: unknown }[] | null } | undefined) => (request?.messages?.at(-1)?.content ?? []) as Block[];

describe("tool results past what one stored value holds", () => {
	it("a megabyte of Latin-1 (three of UTF-8 once decoded) is stored as the head the model is sent: the job completes", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", () => new Response(new Uint8Array(1_000_000).fill(0xe9), { headers: { "content-type": "text/plain" } }));
		emulator.enqueue({ tool_use: { name: "http_fetch", input: { url: "https://status.example.test/" } } }, { text: "Read it." });
		await createAgent({ name: "latin1-result", tools: [fetchTool] });
		await refuseOver2MB("latin1-result");
		const job = await runToRest("latin1-result");
		expect(job.status, JSON.stringify(job.error)).toBe("completed");
		const [result] = lastResults(emulator.requests[1]);
		expect(String(result?.content)).toMatch(/\n\[drover: result cut from 1000\d{3} to 100000 characters; the whole result is in the job's output\]$/);
		// The output keeps what a row holds of it, saying it was cut.
		const line = (await outputOf("latin1-result", job.id)).find((l) => l.type === "tool_result");
		expect(line?.truncated).toMatchObject({ field: "result" });
	});

	it("a turn's results share the conversation's budget, so their one message fits: 21 fetches of 120,000 characters", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", (req) => new Response(`${new URL(req.url).pathname} ${"z".repeat(120_000)}`, { headers: { "content-type": "text/plain" } }));
		const calls = Array.from({ length: 21 }, (_, i) => ({ name: "http_fetch", input: { url: `https://status.example.test/${i}` } }));
		emulator.enqueue({ tool_use: calls }, { text: "Read them." });
		await createAgent({ name: "wide-turn", tools: [fetchTool] });
		await refuseOver2MB("wide-turn");
		const job = await runToRest("wide-turn");
		expect(job.status, JSON.stringify(job.error)).toBe("completed");
		const results = lastResults(emulator.requests[1]);
		expect(results).toHaveLength(21);
		const kept = results.map((r, i) => {
			const text = String(r.content);
			expect(text, `result ${i}`).toContain(`\n/${i} zzz`);
			const cut = /\n\[drover: result cut from (\d+) to (\d+) characters; the whole result is in the job's output\]$/.exec(text);
			expect(cut, `result ${i}`).not.toBeNull();
			return Number(cut![2]);
		});
		// An even share each (to a character), together within the budget, where each alone would keep 100,000.
		const share = TOOL_RESULTS_BUDGET_CHARS / 21;
		for (const n of kept) expect(Math.abs(n - share)).toBeLessThan(2);
		expect(kept.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(TOOL_RESULTS_BUDGET_CHARS);
		expect(share).toBeLessThan(MODEL_TOOL_RESULT_CHARS);
	});

	it("a turn's results within the budget but over 2 MB as JSON (control characters, 6 bytes each) are stored in pieces: the job completes, the model sent them whole", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", () => new Response("\x01".repeat(120_000), { headers: { "content-type": "text/plain" } }));
		const calls = Array.from({ length: 4 }, (_, i) => ({ name: "http_fetch", input: { url: `https://status.example.test/${i}` } }));
		emulator.enqueue({ tool_use: calls }, { text: "Read them." });
		await createAgent({ name: "control-chars", tools: [fetchTool] });
		await refuseOver2MB("control-chars");
		const job = await trigger("control-chars");
		for (let i = 0; i < 3; i++) await settle("control-chars").catch(() => undefined);
		const done = await jobOf("control-chars", job.id);
		expect(done.status, JSON.stringify(done.error)).toBe("completed");
		expect(done.tool_calls).toEqual({ made: 4, failed: 0 });
		expect(emulator.requests).toHaveLength(2);
		const results = lastResults(emulator.requests[1]);
		expect(results).toHaveLength(4);
		for (const r of results) expect(String(r.content)).toMatch(/^HTTP 200[^\n]*\ncontent-type: text\/plain[^\n]*\n\n\x01{99000,}\n\[drover: result cut from 12\d{4} to 100000 characters; the whole result is in the job's output\]$/);
		// Each result at its full share: nothing was cut to make the row fit.
		expect(results.map((r) => String(r.content).split("\n[drover:")[0]!.length)).toEqual([100_000, 100_000, 100_000, 100_000]);
		expect(new TextEncoder().encode(JSON.stringify(results)).length).toBeGreaterThan(2_000_000);
	});

	it("a step that failed after its tool calls, before their results were stored, sends them next time: not taken for a paused turn", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", () => new Response("green"));
		emulator.enqueue({ tool_use: { name: "http_fetch", input: { url: "https://status.example.test/" } } }, { text: "All green." });
		await createAgent({ name: "results-lost", tools: [fetchTool] });
		// The results' message is refused once, as a full disk or an oversized row would refuse it.
		await runInDurableObject(env.AGENT.getByName("results-lost"), (_i: AgentDO, state) => {
			const sql = state.storage.sql as unknown as { exec: (query: string, ...args: unknown[]) => unknown };
			const exec = sql.exec.bind(sql);
			let refused = false;
			sql.exec = (query: string, ...args: unknown[]) => {
				if (!refused && query.startsWith("INSERT INTO messages") && args.some((a) => typeof a === "string" && a.includes('"tool_result"'))) {
					refused = true;
					throw new Error("SQLITE_FULL");
				}
				return exec(query, ...args);
			};
		});
		const job = await trigger("results-lost");
		await settle("results-lost").catch(() => undefined);
		await settle("results-lost");
		const done = await jobOf("results-lost", job.id);
		expect(done.status, JSON.stringify(done.error)).toBe("completed");
		expect(emulator.requests).toHaveLength(2);
		expect(emulator.requests[1]?.messages?.at(-1)?.role).toBe("user");
		expect(lastResults(emulator.requests[1]).map((b) => b.type)).toEqual(["tool_result"]);
		expect(done.usage.num_turns).toBe(2);
	});
});

describe("a usage limit reached with gated calls left in the turn", () => {
	it("ends the job before asking anyone to approve a call the limit forbids", async () => {
		const emulator = useEmulator();
		let made = 0;
		fake("https://tickets.example.test", () => {
			made++;
			return Response.json({ id: made });
		});
		// One call a turn: a turn asking for more calls than the limit leaves is refused whole, at once.
		emulator.enqueue({ tool_use: { name: "create_ticket", input: { title: "a" } } }, { tool_use: { name: "create_ticket", input: { title: "b" } } }, { text: "Done." });
		await createAgent({ name: "limit-before-approval", tools: [ticketTool], usage_limits: { max_tool_calls: 1 } });
		const job = await runToRest("limit-before-approval");
		expect(job.pending_approval?.input).toEqual({ title: "a" });
		expect((await call(`/v1/jobs/${job.id}/approval`, { method: "POST", as: "operate", body: { decision: "approve" } })).status).toBe(200);
		await settle("limit-before-approval");
		const after = await jobOf("limit-before-approval", job.id);
		expect(after.status).toBe("failed");
		expect(after.exit_reason).toBe("usage_limit");
		expect(after.error?.message).toContain("max_tool_calls 1");
		expect(after.transitions.filter((t) => t.to === "approval_pending")).toHaveLength(1);
		expect(made).toBe(1);
	});
});
