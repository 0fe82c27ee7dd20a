// src/store at the edges a mutation walk of it found unchecked: the line marks consolidate keeps
// beside a job's output (where a reader of the lines after N starts in R2), and a tail of every line
// of an object past the first window, read from the start rather than in growing windows.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { consolidate, tailOfR2, type OutputLine, type ReadBatch } from "../../src/store/output-r2.ts";
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
