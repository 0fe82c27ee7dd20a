import { describe, expect, it } from "vitest";
import type { ToolCallPageShape } from "../../src/api/jobs/tool-calls.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { runToRest, trigger } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { ticketTool } from "../helpers/tools.ts";

type Page = ToolCallPageShape;

async function pageOf(id: string, query = ""): Promise<Page> {
	const res = await call(`/v1/jobs/${id}/tool-calls${query}`, { as: "read" });
	expect(res.status, await res.clone().text()).toBe(200);
	return res.json();
}

const fetchTool = { type: "http_fetch", allow_hosts: ["status.example.test"] };

describe("GET /v1/jobs/:id/tool-calls", () => {
	it("lists each call in the order made, with the input it ran with, its status, approval, result and timing", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", (req) => new Response(new URL(req.url).pathname === "/big" ? "x".repeat(10_000) : "all green"));
		fake("https://tickets.example.test", () => new Response(JSON.stringify({ error: "no such queue" }), { status: 404 }));
		emulator.enqueue(
			{ tool_use: [{ name: "http_fetch", input: { url: "https://status.example.test/ok" } }, { name: "http_fetch", input: { url: "https://status.example.test/big" } }] },
			{ tool_use: { name: "create_ticket", input: { title: "Disk full" } } },
			{ text: "Ticket filed." },
		);
		await createAgent({ name: "audited", tools: [fetchTool, ticketTool] });
		const waiting = await runToRest("audited");
		expect(waiting.status).toBe("approval_pending");

		// While the gated call waits, it is listed as pending: recorded before anything runs.
		const before = await pageOf(waiting.id);
		expect(before).toMatchObject({ job_id: waiting.id, agent: "audited", status: "approval_pending", next_cursor: null });
		expect(before.tool_calls.map((t) => [t.name, t.status])).toEqual([
			["http_fetch", "completed"],
			["http_fetch", "completed"],
			["create_ticket", "pending"],
		]);
		expect(before.tool_calls[2]).toMatchObject({ decision: null, result: null, result_chars: null, started_at: null, finished_at: null });

		const approved = await call(`/v1/jobs/${waiting.id}/approval`, { method: "POST", as: "operate", body: { decision: "approve", tool_use_id: waiting.pending_approval!.tool_use_id, tool_input: { title: "Disk full on db-1" } } });
		expect(approved.status, await approved.clone().text()).toBe(200);
		await settle("audited");

		const page = await pageOf(waiting.id);
		expect(page.status).toBe("completed");
		const [ok, big, ticket] = page.tool_calls;
		expect(ok).toMatchObject({ name: "http_fetch", input: { url: "https://status.example.test/ok" }, status: "completed", is_error: false, decision: null });
		expect(ok!.result).toContain("all green");
		expect(ok!.result_chars).toBe(ok!.result!.length);
		// A long result is shown by its head, marked cut, with its whole length: README's first 4,000
		// characters (the constant itself would pass whatever it were).
		expect(big!.result).toHaveLength(4000);
		expect(big!.result!.endsWith("…")).toBe(true);
		expect(big!.result_chars).toBeGreaterThan(10_000);
		// The approved call ran with the operator's edited input, and failed: the model was told so.
		expect(ticket).toMatchObject({ name: "create_ticket", input: { title: "Disk full on db-1" }, status: "failed", is_error: true, decision: "approve", decided_by: "operator" });
		expect(ticket!.result).toContain("404");
		for (const t of page.tool_calls) {
			expect(Date.parse(t.started_at!)).toBeLessThanOrEqual(Date.parse(t.finished_at!));
			expect(t.tool_use_id).toMatch(/^toolu_/);
		}
		expect(new Set(page.tool_calls.map((t) => t.tool_use_id)).size).toBe(3);

		// Counted as it ended, where its status is read: completed, with one call failed.
		const record = await (await call(`/v1/jobs/${waiting.id}`)).json<{ status: string; tool_calls: unknown }>();
		expect(record).toMatchObject({ status: "completed", tool_calls: { made: 3, failed: 1 } });
		const listed = await (await call("/v1/jobs?agent=audited")).json<{ jobs: { id: string; tool_calls: unknown }[] }>();
		expect(listed.jobs).toEqual([expect.objectContaining({ id: waiting.id, tool_calls: { made: 3, failed: 1 } })]);
		const agent = await (await call("/v1/agents/audited")).json<{ last_job: unknown }>();
		expect(agent.last_job).toMatchObject({ id: waiting.id, tool_calls: { made: 3, failed: 1 } });
	});

	it("shows an operator's edited input with its credentials redacted, as the output does", async () => {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "Disk full" } } }, { text: "Filed." });
		fake("https://tickets.example.test", () => Response.json({ ok: true }));
		await createAgent({ name: "audited-secret", tools: [ticketTool] });
		const job = await runToRest("audited-secret");
		const secret = "9f8e7d6c5b4a39281706abcdef";
		const approved = await call(`/v1/jobs/${job.id}/approval`, { method: "POST", as: "operate", body: { decision: "approve", tool_use_id: job.pending_approval!.tool_use_id, tool_input: { title: `Disk full; use Authorization: Bearer ${secret}` } } });
		expect(approved.status).toBe(200);
		await settle("audited-secret");
		const text = await (await call(`/v1/jobs/${job.id}/tool-calls`)).text();
		expect(text).not.toContain(secret);
		expect(JSON.parse(text).tool_calls[0]).toMatchObject({ status: "completed", input: { title: "Disk full; use Authorization: Bearer [REDACTED]" } });
	});

	it("pages by cursor, each call once, and refuses a cursor from another job", async () => {
		const emulator = useEmulator();
		fake("https://status.example.test", (req) => new Response(`page ${new URL(req.url).pathname}`));
		const calls = Array.from({ length: 5 }, (_, i) => ({ name: "http_fetch", input: { url: `https://status.example.test/${i}` } }));
		emulator.enqueue({ tool_use: calls }, { text: "Read them." }, { text: "Nothing to do." });
		await createAgent({ name: "audited-pages", tools: [fetchTool] });
		const job = await runToRest("audited-pages");
		expect(job.status).toBe("completed");

		const seen: string[] = [];
		let cursor: string | null = null;
		let pages = 0;
		do {
			const page: Page = await pageOf(job.id, `?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
			expect(page.tool_calls.length).toBeLessThanOrEqual(2);
			seen.push(...page.tool_calls.map((t) => String(t.input.url)));
			cursor = page.next_cursor;
			pages++;
		} while (cursor !== null);
		expect(pages).toBe(3);
		expect(seen).toEqual(calls.map((c) => c.input.url));

		const other = await runToRest("audited-pages");
		expect(await pageOf(other.id)).toMatchObject({ status: "completed", tool_calls: [], next_cursor: null });
		const first = await pageOf(job.id, "?limit=2");
		const crossed = await call(`/v1/jobs/${other.id}/tool-calls?cursor=${first.next_cursor}`);
		expect(crossed.status).toBe(400);
		expect((await errorOf(crossed)).message).toMatch(/cursor/);
	});

	it("is an empty list for a job not started, a 404 for an unknown job, a 400 for a bad id or query", async () => {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
		await createAgent({ name: "audited-queue", tools: [ticketTool] });
		expect((await runToRest("audited-queue")).status).toBe("approval_pending");
		const queued = await trigger("audited-queue");
		await settle("audited-queue");
		expect(await pageOf(queued.id)).toMatchObject({ status: "pending", tool_calls: [], next_cursor: null });
		// Not counted while it waits; a job cancelled before it started ran none.
		expect(await (await call(`/v1/jobs/${queued.id}`)).json()).toMatchObject({ tool_calls: null });
		expect((await call(`/v1/jobs/${queued.id}/cancel`, { method: "POST", as: "operate", body: {} })).status).toBe(200);
		await settle("audited-queue");
		expect(await (await call(`/v1/jobs/${queued.id}`)).json()).toMatchObject({ status: "cancelled", tool_calls: { made: 0, failed: 0 } });

		const unknown = await call("/v1/jobs/job-2026-01-01-zzzzzz/tool-calls");
		expect(unknown.status).toBe(404);
		expect((await errorOf(unknown)).message).toBe("no job job-2026-01-01-zzzzzz: its id is from 2026-01-01, and a job is kept 30 days after it ends (RETENTION_DAYS; less where its agent sets retention_days), so retention may have removed it");
		expect((await call("/v1/jobs/nope/tool-calls")).status).toBe(400);
		const badLimit = await call(`/v1/jobs/${queued.id}/tool-calls?limit=0`);
		expect(badLimit.status).toBe(400);
		expect((await errorOf(badLimit)).message).toMatch(/limit/);
		expect((await call(`/v1/jobs/${queued.id}/tool-calls?status=failed`)).status).toBe(400);
		expect((await call(`/v1/jobs/${queued.id}/tool-calls`, { as: null })).status).toBe(401);
	});
});
