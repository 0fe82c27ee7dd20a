import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { putJob } from "../../durable-objects/agent/jobs.ts";
import { flushChunks, outputState } from "../../durable-objects/agent/output-store.ts";
import { appendLines } from "../../durable-objects/agent/runner/output.ts";
import { chunkKey } from "../../src/store/output-r2.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { lifecycleRecords, runToRest } from "../helpers/jobs.ts";
import { ticketTool } from "../helpers/tools.ts";

// output-store.ts flushChunks: a running job's lines go to R2 once 500 lines or 1 MiB have gathered,
// whichever comes first, so R2 holds them before the job ends.
describe("a running job's output chunks", () => {
	it("are put to R2 once 500 lines have gathered, however small, and once 1 MiB has, however few the lines", async () => {
		const agent = "chunk-either";
		await runInDurableObject(env.AGENT.getByName(agent), async (_i, state) => {
			const sql = state.storage.sql;
			const note = (content: string) => ({ type: "system" as const, subtype: "note", content });
			const [many, big] = [0, 1].map((m) => lifecycleRecords(agent, new Date(Date.UTC(2026, 10, 1) + m * 60_000)).running);
			putJob(sql, many!, Date.now());
			putJob(sql, big!, Date.now());
			// 500 lines of a few bytes each: far from 1 MiB.
			appendLines(sql, many!.id, Array.from({ length: 500 }, (_, i) => note(`line ${i}`)), Date.now());
			await flushChunks(sql, env.OUTPUT, many!);
			expect(outputState(sql, many!.id).flushedLine).toBe(500);
			expect(await env.OUTPUT.head(chunkKey(agent, many!.id, 1, 500))).not.toBeNull();
			// 5 lines of 250 KB: over 1 MiB in a handful of lines.
			appendLines(sql, big!.id, Array.from({ length: 5 }, (_, i) => note(`${i} ${"b".repeat(250_000)}`)), Date.now());
			await flushChunks(sql, env.OUTPUT, big!);
			expect(outputState(sql, big!.id).flushedLine).toBe(5);
			expect(await env.OUTPUT.head(chunkKey(agent, big!.id, 1, 5))).not.toBeNull();
			// Fewer than either: they wait.
			appendLines(sql, many!.id, [note("one more")], Date.now());
			await flushChunks(sql, env.OUTPUT, many!);
			expect(outputState(sql, many!.id).flushedLine).toBe(500);
		});
	});
});

const listed = async (prefix: string) => (await env.OUTPUT.list({ prefix })).objects.map((o) => o.key);

// output-store.ts consolidateJob: once a job ends, R2 holds its one consolidated object; the chunks it
// was put in while it ran are deleted with the consolidation (README: consolidated when it ends).
describe("a long job's chunks", () => {
	it("are gone from R2 once the job has ended and its output is consolidated", async () => {
		const name = "chunks-consolidated";
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } }, { text: "Done." });
		await createAgent({ name, tools: [ticketTool] });
		const job = await runToRest(name);
		expect(job.status).toBe("approval_pending");
		await runInDurableObject(env.AGENT.getByName(name), (instance: AgentDO) => {
			for (let i = 0; i < 1200; i++) AgentDO.appendOutput(instance, job.id, [{ type: "system", subtype: "note", content: `note ${i}` }]);
		});
		await settle(name);
		const prefix = `jobs/${name}/${job.id}/`;
		// While it runs (waiting for its approval), its lines are in R2 as chunks.
		expect((await listed(prefix)).length).toBeGreaterThan(0);
		expect((await call(`/v1/jobs/${job.id}/approval`, { method: "POST", as: "operate", body: { decision: "deny" } })).status).toBe(200);
		await settle(name);
		expect(await env.OUTPUT.head(`jobs/${name}/${job.id}.jsonl`)).not.toBeNull();
		expect(await listed(prefix)).toEqual([]);
	});
});

// output-store.ts consolidateJob: only a job that put chunks has a prefix to list at consolidation
// (a listing is a class A request: README's cost row counts one R2 class A request, the put, a job).
describe("a job too short to have put chunks", () => {
	it("is consolidated with its put alone: R2 is not listed for chunks it never had", async () => {
		const name = "no-chunks-no-list";
		useEmulator().enqueue({ text: "Short." });
		await createAgent({ name });
		const calls: string[] = [];
		await runInDurableObject(env.AGENT.getByName(name), (instance: AgentDO) => {
			const self = instance as unknown as { env: Env };
			const real = self.env.OUTPUT;
			const counted = new Proxy(real, {
				get: (target, prop) => {
					const value = Reflect.get(target, prop) as unknown;
					if (typeof value !== "function") return value;
					return (...args: unknown[]) => {
						calls.push(String(prop));
						return (value as (...a: unknown[]) => unknown).apply(target, args);
					};
				},
			});
			self.env = { ...self.env, OUTPUT: counted };
		});
		const job = await runToRest(name);
		expect(job).toMatchObject({ status: "completed", summary: "Short." });
		expect(await env.OUTPUT.head(`jobs/${name}/${job.id}.jsonl`)).not.toBeNull();
		expect(calls).toEqual(["put"]);
	});
});
