import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { putJob } from "../../durable-objects/agent/jobs.ts";
import { serveOutput } from "../../durable-objects/agent/output-http.ts";
import { consolidateJob, outputMarks, recordConsolidated } from "../../durable-objects/agent/output-store.ts";
import { appendLines } from "../../durable-objects/agent/runner/output.ts";
import type { LineMark } from "../../src/store/output-r2.ts";
import { lifecycleRecords } from "../helpers/jobs.ts";
import { recording } from "../helpers/r2.ts";

const MiB = 1024 * 1024;
const WINDOW = { suffix: 64 * 1024 };

/**
 * An ended job of 4 KB lines, just over 5 MiB, consolidated: its last mark (the first line starting
 * past 5 MiB) lies within the last 64 KiB, the window a tail reads first.
 */
async function markedJob(sql: SqlStorage, agent: string): Promise<{ id: string; stored: string[]; marks: LineMark[]; bytes: number }> {
	const job = lifecycleRecords(agent, new Date()).ended;
	putJob(sql, job, Date.now());
	const lastBytes = () => sql.exec<{ bytes: number }>("SELECT length(CAST(body AS BLOB)) + 1 AS bytes FROM output_lines WHERE job_id = ? ORDER BY line DESC LIMIT 1", job.id).one().bytes;
	for (let i = 0, size = 0; size < 5 * MiB + 20_000; i++) {
		appendLines(sql, job.id, [{ type: "system", subtype: "note", content: `${i} ${"y".repeat(4000)}` }], Date.now());
		size += lastBytes();
	}
	const done = await consolidateJob(sql, env.OUTPUT, job.id);
	recordConsolidated(sql, done!);
	const text = await (await env.OUTPUT.get(done!.key))!.text();
	return { id: job.id, stored: text.trimEnd().split("\n"), marks: outputMarks(sql, job.id), bytes: done!.bytes };
}

/** What serveOutput answers to `query`, and the R2 reads it made for it. */
async function served(sql: SqlStorage, jobId: string, query: string) {
	const rec = recording(env.OUTPUT);
	const res = await serveOutput(sql, rec.bucket, jobId, new Request(`https://drover.test/v1/jobs/${jobId}/output?${query}`));
	expect(res.status).toBe(200);
	const lines = (await res.text()).split("\n").filter(Boolean);
	return { first: Number(res.headers.get("x-drover-first-line")), lines, gets: rec.gets };
}

describe("reading a consolidated output by line number, with its line marks", () => {
	it("reads from the last mark before the lines, or a window from the end where they lie in it, not from byte 0", async () => {
		await runInDurableObject(env.AGENT.getByName("marked-reads"), async (_i, state) => {
			const sql = state.storage.sql;
			const { id, stored, marks, bytes } = await markedJob(sql, "marked-reads");
			const total = stored.length;
			expect(marks).toHaveLength(5);
			const last = marks.at(-1)!;
			expect(bytes - last.offset).toBeLessThan(WINDOW.suffix);

			// From the middle: from the newline before the mark, nothing else.
			const mid = marks[2]!.line + 40;
			expect(await served(sql, id, `after=${mid}&lines=3`)).toEqual({ first: mid + 1, lines: stored.slice(mid, mid + 3), gets: [{ offset: marks[2]!.offset - 1 }] });
			// Just before a mark that lies in the last window: that window, as before there were marks.
			const before = last.line - 4;
			expect(await served(sql, id, `after=${before}&lines=3`)).toEqual({ first: before + 1, lines: stored.slice(before, before + 3), gets: [WINDOW] });
			// After the last mark, held in the window.
			expect(await served(sql, id, `after=${total - 3}&lines=3`)).toEqual({ first: total - 2, lines: stored.slice(-3), gets: [WINDOW] });
			// Lines starting before a mark further back: its mark, not the window.
			const farther = marks[3]!.line - 2;
			expect(await served(sql, id, `after=${farther}&lines=3`)).toEqual({
				first: farther + 1,
				lines: stored.slice(farther, farther + 3),
				gets: [{ offset: marks[2]!.offset - 1 }],
			});

			// A tail past the first window: the window, then from the mark before its first line (the
			// windows grew to 4 MiB before, reading up to 5.3 MB).
			const tail = await served(sql, id, "lines=400");
			expect(tail.first).toBe(total - 399);
			expect(tail.lines).toEqual(stored.slice(-400));
			const mark = marks.filter((m) => m.line <= total - 399).at(-1)!;
			expect(tail.gets).toEqual([WINDOW, { offset: mark.offset - 1 }]);
			// A short tail: the window alone.
			expect(await served(sql, id, "lines=5")).toEqual({ first: total - 4, lines: stored.slice(-5), gets: [WINDOW] });
		});
	});

	it("reads a job consolidated without marks (small, or by an earlier release) as before: windows from the end, then from byte 0", async () => {
		await runInDurableObject(env.AGENT.getByName("unmarked-reads"), async (_i, state) => {
			const sql = state.storage.sql;
			const { id, stored } = await markedJob(sql, "unmarked-reads");
			sql.exec("UPDATE output_state SET marks = NULL WHERE job_id = ?", id);
			// Line 101 starts about 5 MB from the end, past the largest window (4 MiB).
			const mid = 100;
			const got = await served(sql, id, `after=${mid}&lines=3`);
			expect(got.lines).toEqual(stored.slice(mid, mid + 3));
			expect(got.gets).toEqual([WINDOW, { suffix: 256 * 1024 }, { suffix: MiB }, { suffix: 4 * MiB }, null]);
		});
	});
});
