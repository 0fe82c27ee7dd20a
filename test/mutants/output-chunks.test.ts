import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { putJob } from "../../durable-objects/agent/jobs.ts";
import { flushChunks, outputState } from "../../durable-objects/agent/output-store.ts";
import { appendLines } from "../../durable-objects/agent/runner/output.ts";
import { chunkKey } from "../../src/store/output-r2.ts";
import { lifecycleRecords } from "../helpers/jobs.ts";

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
