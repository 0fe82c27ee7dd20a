// src/store at the edges a mutation walk of it found unchecked: the line marks consolidate keeps
// beside a job's output (where a reader of the lines after N starts in R2), and a tail of every line
// of an object past the first window, read from the start rather than in growing windows.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createJob, JOB_STATUSES, type JobRecord, type JobSummary } from "../../src/jobs/model.ts";
import { upsertJobIndex } from "../../src/store/job-index.ts";
import { consolidate, tailOfR2, type OutputLine, type ReadBatch } from "../../src/store/output-r2.ts";
import { call } from "../helpers/http.ts";
import { lifecycleRecords } from "../helpers/jobs.ts";
import { recording } from "../helpers/r2.ts";

const bucket = env.OUTPUT;

/** Lines 1..total, each `body` (so line k starts at (k - 1) × (its length + 1)). */
function sameLines(total: number, body: string): ReadBatch {
	return (after, limit) => {
		const out: OutputLine[] = [];
		for (let i = after + 1; i <= Math.min(total, after + limit); i++) out.push({ line: i, body });
		return out;
	};
}

describe("consolidate's line marks", () => {
	it("mark the line that starts exactly markBytes after the mark before", async () => {
		// 5-byte lines and marks every 10 bytes: lines 3, 5 and 7 start at 10, 20 and 30.
		const { marks, bytes } = await consolidate(bucket, "store-edges", "job-2026-12-01-mark10", sameLines(8, "abcd"), { markBytes: 10 });
		expect(bytes).toBe(40);
		expect(marks).toEqual([
			{ line: 3, offset: 10 },
			{ line: 5, offset: 20 },
			{ line: 7, offset: 30 },
		]);
	});

	it("keep 4,096 of them, their spacing doubling only past that", async () => {
		// 2-byte lines and marks every 2 bytes: lines 2..4097 are each marked, 4,096 marks.
		const { marks } = await consolidate(bucket, "store-edges", "job-2026-12-01-mark4k", sameLines(4097, "x"), { markBytes: 2 });
		expect(marks).toHaveLength(4096);
		expect(marks[0]).toEqual({ line: 2, offset: 2 });
		expect(marks.at(-1)).toEqual({ line: 4097, offset: 8192 });
	});
});

describe("a tail of every line of an object larger than the first 64 KiB window", () => {
	it("is handed back to be streamed from the start after the window's one read, not held from windows grown to the whole", async () => {
		// 200 lines of 1,000 bytes: 200 KB, past the 64 KiB window, within the 4 MiB it may grow to.
		const { key, lines } = await consolidate(bucket, "store-edges", "job-2026-12-01-tail00", sameLines(200, "t".repeat(999)));
		expect(lines).toBe(200);
		const rec = recording(bucket);
		expect(await tailOfR2(rec.bucket, key, 200)).toEqual({ after: 0 });
		expect(rec.gets).toEqual([{ suffix: 64 * 1024 }]);
	});
});

const T0 = Date.parse("2026-10-01T00:00:00Z");

function job(agent: string, minute: number, fields: Partial<JobRecord> = {}): JobRecord {
	return { ...createJob({ agent, trigger_type: "manual", definition_revision: "rev1", schedule: null }, new Date(T0 + minute * 60_000)), ...fields };
}

async function listed(query: string): Promise<{ jobs: JobSummary[]; next_cursor: string | null }> {
	const res = await call(`/v1/jobs${query}`);
	expect(res.status).toBe(200);
	return res.json();
}

describe("GET /v1/jobs", () => {
	it("lists a job's tool calls as its record counts them, made and failed each its own", async () => {
		await upsertJobIndex(env.DB, [job("store-tools", 1, { tool_calls: { made: 3, failed: 1 } })]);
		const { jobs } = await listed("?agent=store-tools");
		expect(jobs.map((j) => j.tool_calls)).toEqual([{ made: 3, failed: 1 }]);
	});
});

describe("GET /v1/status", () => {
	it("says the jobs by status in the lifecycle's order, a live status before a final one", async () => {
		const done = lifecycleRecords("store-order", new Date(T0 + 10 * 60_000)).ended;
		const live = lifecycleRecords("store-order", new Date(T0 + 11 * 60_000)).running;
		await upsertJobIndex(env.DB, [done, live]);
		const res = await call("/v1/status");
		expect(res.status).toBe(200);
		const { jobs } = (await res.json()) as { jobs: Record<string, number> };
		expect(jobs).toMatchObject({ running: expect.any(Number), completed: expect.any(Number) });
		expect(Object.keys(jobs)).toEqual(JOB_STATUSES.filter((s) => s in jobs));
	});
});
