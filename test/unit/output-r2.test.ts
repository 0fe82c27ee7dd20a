import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
	chunkKey,
	consolidate,
	deleteJobOutput,
	getOutputObject,
	outputKey,
	outputLogKey,
	putChunk,
	putOutputLog,
	readLinesFromR2,
	tailOfR2,
	type OutputLine,
	type ReadBatch,
} from "../../src/store/output-r2.ts";
import { recording } from "../helpers/r2.ts";

const MiB = 1024 * 1024;
const encoder = new TextEncoder();
const bucket = env.OUTPUT;

// R2 storage is shared by every test in this file: each test uses its own job id.
let seq = 0;
function newJobId(): string {
	seq++;
	return `job-2026-11-20-${seq.toString(36).padStart(6, "0")}`;
}

// Multi-byte characters (2 and 4 bytes in UTF-8) so part and stream boundaries fall inside them.
const FILLER = "abcdéfgh😀";

/** A deterministic body for line i, `units` × 13 bytes plus about 80 of JSON (600 on average by default). */
function bodyOf(i: number, units = 35 + (i % 11)): string {
	return JSON.stringify({ type: "assistant", n: i, content: `line ${i} ${FILLER.repeat(units)}`, model: "claude-sonnet-5-5" });
}

/** Lines 1..total generated on demand, so neither the test nor the code under test holds them all. */
function linesOf(total: number, body: (i: number) => string = bodyOf): ReadBatch {
	return (after, limit) => {
		const out: OutputLine[] = [];
		for (let i = after + 1; i <= Math.min(total, after + limit); i++) out.push({ line: i, body: body(i) });
		return out;
	};
}

function byteLength(text: string): number {
	return encoder.encode(text).byteLength;
}

async function collect(iterable: AsyncIterable<OutputLine>): Promise<OutputLine[]> {
	const out: OutputLine[] = [];
	for await (const line of iterable) out.push(line);
	return out;
}

async function keysUnder(prefix: string): Promise<string[]> {
	const keys: string[] = [];
	let cursor: string | undefined;
	do {
		const page = await bucket.list({ prefix, ...(cursor ? { cursor } : {}) });
		keys.push(...page.objects.map((o) => o.key));
		cursor = page.truncated ? page.cursor : undefined;
	} while (cursor);
	return keys;
}

/** The last n lines as a reader of tailOfR2 gets them: held from its window, or streamed from where it says. */
async function tailLinesFromR2(bucket: R2Bucket, key: string, n: number): Promise<OutputLine[]> {
	const tail = await tailOfR2(bucket, key, n);
	if ("lines" in tail) return tail.lines;
	const lines: OutputLine[] = [];
	for await (const line of readLinesFromR2(bucket, key, { afterLine: tail.after })) lines.push(line);
	return lines;
}

describe("keys", () => {
	it("names the final object and zero-padded chunks under the job", () => {
		expect(outputKey("daily-digest", "job-2026-11-20-abc123")).toBe("jobs/daily-digest/job-2026-11-20-abc123.jsonl");
		expect(chunkKey("daily-digest", "job-2026-11-20-abc123", 1, 500)).toBe(
			"jobs/daily-digest/job-2026-11-20-abc123/lines-000000001-000000500.jsonl",
		);
		expect(chunkKey("a", "j", 123456789, 999999999)).toBe("jobs/a/j/lines-123456789-999999999.jsonl");
	});

	it("refuses segments that would escape the job's prefix and line numbers past 9 digits", () => {
		expect(() => outputKey("a/b", "job")).toThrow(TypeError);
		expect(() => outputKey("agent", "..")).toThrow(TypeError);
		expect(() => outputKey("agent", "")).toThrow(TypeError);
		expect(() => chunkKey("agent", "job", 1, 1_000_000_000)).toThrow(RangeError);
		expect(() => chunkKey("agent", "job", 5, 4)).toThrow(RangeError);
	});
});

describe("consolidate", () => {
	it("writes a small output with a single put, byte for byte, with its line count", async () => {
		const jobId = newJobId();
		const rec = recording(bucket);
		const bodies = [1, 2, 3, 4, 5].map((i) => bodyOf(i, 3));
		const result = await consolidate(rec.bucket, "small", jobId, linesOf(5, (i) => bodyOf(i, 3)), { batchLines: 2 });
		const expected = `${bodies.join("\n")}\n`;
		expect(result).toEqual({ key: `jobs/small/${jobId}.jsonl`, bytes: byteLength(expected), lines: 5, parts: 1, marks: [] });
		expect(rec.puts).toEqual([result.key]);
		expect(rec.uploads).toHaveLength(0);
		const object = await bucket.get(result.key);
		expect(await object?.text()).toBe(expected);
		expect(object?.customMetadata).toEqual({ lines: "5" });
		expect(object?.httpMetadata?.contentType).toBe("application/x-ndjson");
	});

	it("writes an empty object for a job with no lines", async () => {
		const jobId = newJobId();
		const result = await consolidate(bucket, "small", jobId, () => []);
		expect(result).toEqual({ key: `jobs/small/${jobId}.jsonl`, bytes: 0, lines: 0, parts: 1, marks: [] });
		const head = await bucket.head(result.key);
		expect(head?.size).toBe(0);
		expect(head?.customMetadata).toEqual({ lines: "0" });
		expect(await collect(readLinesFromR2(bucket, result.key))).toEqual([]);
		expect(await tailLinesFromR2(bucket, result.key, 5)).toEqual([]);
	});

	// 15 MiB through the local R2 simulator takes seconds (6–7 s on a loaded 2-core machine): a size check,
	// not a speed check, so it gets room beyond the default 5 s.
	it("streams a large output through a multipart upload of 5 MiB parts, byte-exact", async () => {
		const jobId = newJobId();
		const total = 30_000;
		const partBytes = 5 * MiB;
		let expectedBytes = 0;
		for (let i = 1; i <= total; i++) expectedBytes += byteLength(bodyOf(i)) + 1;
		const expectedParts = Math.ceil(expectedBytes / partBytes);
		expect(expectedParts).toBeGreaterThanOrEqual(3);

		const rec = recording(bucket);
		const started = performance.now();
		const result = await consolidate(rec.bucket, "large", jobId, linesOf(total), { partBytes });
		const ms = performance.now() - started;
		console.log(
			`consolidate: ${total} lines, ${(expectedBytes / MiB).toFixed(1)} MiB in ${result.parts} parts: ${ms.toFixed(0)} ms, ${(expectedBytes / MiB / (ms / 1000)).toFixed(1)} MiB/s`,
		);

		expect(result).toMatchObject({ key: `jobs/large/${jobId}.jsonl`, bytes: expectedBytes, lines: total, parts: expectedParts });
		// A mark about every MiB (each at a line's start: the lines are ~600 bytes).
		expect(result.marks.length).toBe(Math.floor(expectedBytes / MiB));
		expect(rec.puts).toEqual([]);
		expect(rec.uploads).toHaveLength(1);
		const head = await bucket.head(result.key);
		expect(head?.size).toBe(expectedBytes);
		expect(head?.customMetadata).toEqual({ lines: String(total) });
		expect(head?.httpMetadata?.contentType).toBe("application/x-ndjson");
		// R2's multipart ETag ends with the part count.
		expect(head?.etag.endsWith(`-${expectedParts}`)).toBe(true);

		// Every line, in order, equal to what was produced; with the size above this is the whole object.
		let n = 0;
		let mismatches = 0;
		for await (const { line, body } of readLinesFromR2(bucket, result.key)) {
			n++;
			if (line !== n || body !== bodyOf(n)) mismatches++;
		}
		expect(n).toBe(total);
		expect(mismatches).toBe(0);

		// The bytes around the first part boundary, which falls inside a line.
		const around = await getOutputObject(bucket, result.key, { offset: partBytes - 8, length: 16 });
		const window = new Uint8Array(await new Response(around?.body).arrayBuffer());
		let offset = 0;
		let i = 1;
		for (; offset + byteLength(bodyOf(i)) + 1 <= partBytes - 8; i++) offset += byteLength(bodyOf(i)) + 1;
		const straddling = encoder.encode(`${bodyOf(i)}\n${bodyOf(i + 1)}\n`);
		expect([...window]).toEqual([...straddling.subarray(partBytes - 8 - offset, partBytes + 8 - offset)]);
	}, 60_000);

	it("gives the same object when run twice, single put and multipart alike", async () => {
		for (const [total, units] of [
			[50, 10],
			[5_000, 200], // about 12.5 MiB: three parts of 5 MiB
		] as const) {
			const jobId = newJobId();
			const readBatch = linesOf(total, (i) => bodyOf(i, units));
			const first = await consolidate(bucket, "twice", jobId, readBatch, { partBytes: 5 * MiB });
			const before = await bucket.head(first.key);
			const second = await consolidate(bucket, "twice", jobId, readBatch, { partBytes: 5 * MiB });
			const after = await bucket.head(first.key);
			expect(second).toEqual(first);
			expect(after?.etag).toBe(before?.etag);
			expect(after?.size).toBe(first.bytes);
			expect(after?.customMetadata).toEqual({ lines: String(total) });
		}
	});

	it("deletes the job's chunks once the final object is written, and only that job's", async () => {
		const jobId = newJobId();
		const other = `${jobId}x`;
		const batch = linesOf(7, (i) => bodyOf(i, 2));
		const first = await putChunk(bucket, "chunky", jobId, await batch(0, 4));
		const second = await putChunk(bucket, "chunky", jobId, await batch(4, 4));
		await putChunk(bucket, "chunky", other, await batch(0, 2));
		expect(first.key).toBe(`jobs/chunky/${jobId}/lines-000000001-000000004.jsonl`);
		expect(second.key).toBe(`jobs/chunky/${jobId}/lines-000000005-000000007.jsonl`);

		const chunk = await bucket.get(second.key);
		const chunkText = `${[5, 6, 7].map((i) => bodyOf(i, 2)).join("\n")}\n`;
		expect(await chunk?.text()).toBe(chunkText);
		expect(second.bytes).toBe(byteLength(chunkText));
		expect(chunk?.customMetadata).toEqual({ first_line: "5", last_line: "7" });
		expect(chunk?.httpMetadata?.contentType).toBe("application/x-ndjson");
		expect(await keysUnder(`jobs/chunky/${jobId}/`)).toEqual([first.key, second.key]);

		const result = await consolidate(bucket, "chunky", jobId, batch);
		expect(await keysUnder(`jobs/chunky/${jobId}/`)).toEqual([]);
		expect((await bucket.head(result.key))?.size).toBe(result.bytes);
		expect(await keysUnder(`jobs/chunky/${other}/`)).toHaveLength(1);
	});

	it("deletes more chunks than one list page or delete call takes (1,000)", async () => {
		const jobId = newJobId();
		const count = 1_005;
		for (let start = 1; start <= count; start += 100) {
			const puts: Promise<unknown>[] = [];
			for (let line = start; line < Math.min(start + 100, count + 1); line++) {
				puts.push(putChunk(bucket, "many", jobId, [{ line, body: bodyOf(line, 1) }]));
			}
			await Promise.all(puts);
		}
		expect(await keysUnder(`jobs/many/${jobId}/`)).toHaveLength(count);
		await consolidate(bucket, "many", jobId, linesOf(count, (i) => bodyOf(i, 1)));
		expect(await keysUnder(`jobs/many/${jobId}/`)).toEqual([]);
		// 1,005 puts and deletes: ~2.5 s alone, past the default 5 s on a loaded machine.
	}, 30_000);

	it("aborts the multipart upload and writes nothing when readBatch throws midway, leaving the chunks", async () => {
		const jobId = newJobId();
		const chunk = await putChunk(bucket, "failing", jobId, [{ line: 1, body: bodyOf(1) }]);
		const rec = recording(bucket);
		const source = linesOf(30_000);
		const failure = new Error("SQLite went away");
		let calls = 0;
		const readBatch: ReadBatch = async (after, limit) => {
			// Past two full parts of output (about 8,700 lines each), and only on the sequential reads.
			if (limit > 1 && after >= 20_000) throw failure;
			calls++;
			return source(after, limit);
		};
		await expect(consolidate(rec.bucket, "failing", jobId, readBatch, { partBytes: 5 * MiB })).rejects.toBe(failure);
		expect(calls).toBeGreaterThan(20);
		expect(await bucket.head(outputKey("failing", jobId))).toBeNull();
		expect(rec.uploads).toHaveLength(1);
		// An aborted upload is gone: R2 refuses more parts for it.
		const upload = rec.uploads[0]!;
		await expect(bucket.resumeMultipartUpload(upload.key, upload.uploadId).uploadPart(9, "x")).rejects.toThrow(/does not exist/);
		// The chunks remain R2's copy of the output until a consolidation succeeds.
		expect(await keysUnder(`jobs/failing/${jobId}/`)).toEqual([chunk.key]);
	});

	it("refuses an output that grows after the multipart metadata fixed its line count", async () => {
		const jobId = newJobId();
		const rec = recording(bucket);
		let total = 10_000; // about 6 MiB: two parts
		let probed = false;
		const readBatch: ReadBatch = (after, limit) => {
			if (limit === 1) probed = true;
			else if (probed) total = 10_005;
			return linesOf(total)(after, limit);
		};
		await expect(consolidate(rec.bucket, "growing", jobId, readBatch, { partBytes: 5 * MiB })).rejects.toThrow(/10000 lines, then 10005/);
		expect(await bucket.head(outputKey("growing", jobId))).toBeNull();
		const upload = rec.uploads[0]!;
		await expect(bucket.resumeMultipartUpload(upload.key, upload.uploadId).uploadPart(9, "x")).rejects.toThrow(/does not exist/);
	});

	it("writes nothing when readBatch throws before a part fills", async () => {
		const jobId = newJobId();
		const rec = recording(bucket);
		const readBatch: ReadBatch = (after, limit) => {
			if (after > 0) throw new Error("read failed");
			return linesOf(10)(after, Math.min(limit, 3));
		};
		await expect(consolidate(rec.bucket, "failing", jobId, readBatch)).rejects.toThrow("read failed");
		expect(rec.puts).toEqual([]);
		expect(rec.uploads).toEqual([]);
		expect(await bucket.head(outputKey("failing", jobId))).toBeNull();
	});

	it("refuses lines that are not contiguous from 1 or contain a newline, since readers number lines by position", async () => {
		const jobId = newJobId();
		const gap: ReadBatch = (after) => (after === 0 ? [{ line: 1, body: "{}" }, { line: 3, body: "{}" }] : []);
		await expect(consolidate(bucket, "strict", jobId, gap)).rejects.toThrow(/line 3 where line 2/);
		const late: ReadBatch = (after) => (after === 0 ? [{ line: 2, body: "{}" }] : []);
		await expect(consolidate(bucket, "strict", jobId, late)).rejects.toThrow(/line 2 where line 1/);
		const newline: ReadBatch = (after) => (after === 0 ? [{ line: 1, body: "{\n}" }] : []);
		await expect(consolidate(bucket, "strict", jobId, newline)).rejects.toThrow(/newline/);
		await expect(putChunk(bucket, "strict", jobId, [{ line: 4, body: "{}" }, { line: 6, body: "{}" }])).rejects.toThrow(/contiguous/);
		await expect(putChunk(bucket, "strict", jobId, [])).rejects.toThrow(RangeError);
		expect(await keysUnder(`jobs/strict/${jobId}`)).toEqual([]);
	});

	it("refuses part sizes R2's multipart upload would reject", async () => {
		const jobId = newJobId();
		await expect(consolidate(bucket, "strict", jobId, linesOf(1), { partBytes: 5 * MiB - 1 })).rejects.toThrow(RangeError);
		await expect(consolidate(bucket, "strict", jobId, linesOf(1), { batchLines: 0 })).rejects.toThrow(RangeError);
		expect(await bucket.head(outputKey("strict", jobId))).toBeNull();
	});
});

describe("readers", () => {
	const total = 2_000;
	const body = (i: number) => bodyOf(i, 1 + (i % 40));
	let key = "";
	async function fixture(): Promise<string> {
		if (!key) key = (await consolidate(bucket, "readers", newJobId(), linesOf(total, body))).key;
		return key;
	}
	const expectLines = (from: number, to: number) => {
		const out: OutputLine[] = [];
		for (let i = from; i <= to; i++) out.push({ line: i, body: body(i) });
		return out;
	};

	it("readLinesFromR2 pages from the start, the middle and the end", async () => {
		const k = await fixture();
		expect(await collect(readLinesFromR2(bucket, k, { limit: 3 }))).toEqual(expectLines(1, 3));
		expect(await collect(readLinesFromR2(bucket, k, { afterLine: 0, limit: 1 }))).toEqual(expectLines(1, 1));
		expect(await collect(readLinesFromR2(bucket, k, { afterLine: 1_000, limit: 5 }))).toEqual(expectLines(1_001, 1_005));
		expect(await collect(readLinesFromR2(bucket, k, { afterLine: total - 2, limit: 10 }))).toEqual(expectLines(total - 1, total));
		expect(await collect(readLinesFromR2(bucket, k, { afterLine: total }))).toEqual([]);
		expect(await collect(readLinesFromR2(bucket, k, { limit: 0 }))).toEqual([]);
		const all = await collect(readLinesFromR2(bucket, k));
		expect(all).toHaveLength(total);
		expect(all.at(-1)).toEqual({ line: total, body: body(total) });
	});

	it("readLinesFromR2 stops reading when the caller breaks out, and yields nothing for a missing object", async () => {
		const k = await fixture();
		const seen: number[] = [];
		for await (const { line } of readLinesFromR2(bucket, k, { afterLine: 10 })) {
			seen.push(line);
			if (seen.length === 2) break;
		}
		expect(seen).toEqual([11, 12]);
		expect(await collect(readLinesFromR2(bucket, "jobs/nobody/job-none.jsonl"))).toEqual([]);
	});

	it("tailLinesFromR2 returns the last 1, 10, or all lines", async () => {
		const k = await fixture();
		expect(await tailLinesFromR2(bucket, k, 1)).toEqual(expectLines(total, total));
		expect(await tailLinesFromR2(bucket, k, 10)).toEqual(expectLines(total - 9, total));
		// More than the first 64 KiB window holds.
		expect(await tailLinesFromR2(bucket, k, 1_500)).toEqual(expectLines(501, total));
		expect(await tailLinesFromR2(bucket, k, total)).toEqual(expectLines(1, total));
		expect(await tailLinesFromR2(bucket, k, total + 50)).toEqual(expectLines(1, total));
		expect(await tailLinesFromR2(bucket, k, 0)).toEqual([]);
		expect(await tailLinesFromR2(bucket, "jobs/nobody/job-none.jsonl", 3)).toEqual([]);
	});

	it("tailLinesFromR2 copes with lines longer than its windows and objects without a line count", async () => {
		// 300 KB lines: the window grows from 64 KiB to 4 MiB. 900 KB lines: 9 of them pass the 4 MiB
		// cap, so the object is streamed from the start instead.
		for (const [units, windows] of [
			[23_000, [{ suffix: 64 * 1024 }, { suffix: 256 * 1024 }, { suffix: MiB }, { suffix: 4 * MiB }]],
			[70_000, [{ suffix: 64 * 1024 }, { suffix: 256 * 1024 }, { suffix: MiB }, { suffix: 4 * MiB }, null]],
		] as const) {
			const long = (i: number) => (i % 2 === 0 ? bodyOf(i, units) : bodyOf(i, 2));
			const { key: k } = await consolidate(bucket, "tail", newJobId(), linesOf(12, long));
			const rec = recording(bucket);
			const tail = await tailLinesFromR2(rec.bucket, k, 9);
			expect(tail.map((l) => l.line)).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12]);
			expect(tail.every((l) => l.body === long(l.line))).toBe(true);
			expect(rec.gets).toEqual(windows);
		}
		// A chunk has no `lines` metadata: lines are counted from 1 within the object, in the window when
		// it holds the whole object (20 lines), else by streaming it (200 lines, about 120 KB).
		for (const count of [20, 200]) {
			const chunk = await putChunk(bucket, "tail", newJobId(), await linesOf(count)(0, count));
			expect(await tailLinesFromR2(bucket, chunk.key, 3)).toEqual(
				[count - 2, count - 1, count].map((line) => ({ line, body: bodyOf(line) })),
			);
			expect(await tailLinesFromR2(bucket, chunk.key, count + 1)).toHaveLength(count);
		}
	});

	it("tailOfR2 hands back where to stream from, not the lines, where a window cannot hold them", async () => {
		// 900 KB lines: 9 of them pass the 4 MiB window, so the caller streams from line 3.
		const long = (i: number) => (i % 2 === 0 ? bodyOf(i, 70_000) : bodyOf(i, 2));
		const { key: k } = await consolidate(bucket, "tail", newJobId(), linesOf(12, long));
		expect(await tailOfR2(bucket, k, 9)).toEqual({ after: 3 });
		// Every line, or more: from the start, never held.
		expect(await tailOfR2(bucket, k, 12)).toEqual({ after: 0 });
		expect(await tailOfR2(bucket, k, 100_000)).toEqual({ after: 0 });
		// A short tail a window holds comes back as lines.
		const tail = await tailOfR2(bucket, k, 1);
		expect(tail).toEqual({ lines: [{ line: 12, body: long(12) }] });
		// A chunk without a line count, larger than the first window: counted by streaming.
		const chunk = await putChunk(bucket, "tail", newJobId(), await linesOf(200)(0, 200));
		expect(await tailOfR2(bucket, chunk.key, 250)).toEqual({ after: 0 });
		expect(await tailOfR2(bucket, chunk.key, 150)).toEqual({ after: 50 });
	});

	it("keeps empty lines' numbering in every reader", async () => {
		const { key: k } = await consolidate(bucket, "tail", newJobId(), linesOf(4, (i) => (i % 2 === 0 ? "" : `{"n":${i}}`)));
		const expected = [
			{ line: 1, body: '{"n":1}' },
			{ line: 2, body: "" },
			{ line: 3, body: '{"n":3}' },
			{ line: 4, body: "" },
		];
		expect(await collect(readLinesFromR2(bucket, k))).toEqual(expected);
		expect(await tailLinesFromR2(bucket, k, 2)).toEqual(expected.slice(2));
		expect(await tailLinesFromR2(bucket, k, 9)).toEqual(expected);
	});

	it("getOutputObject returns the exact bytes of offset/length and suffix ranges", async () => {
		const jobId = newJobId();
		const result = await consolidate(bucket, "ranges", jobId, linesOf(3, (i) => bodyOf(i, 2)));
		const whole = encoder.encode(`${[1, 2, 3].map((i) => bodyOf(i, 2)).join("\n")}\n`);
		const read = async (range?: Parameters<typeof getOutputObject>[2]) => {
			const object = await getOutputObject(bucket, result.key, range);
			if (!object) throw new Error("missing");
			return { bytes: [...new Uint8Array(await new Response(object.body).arrayBuffer())], size: object.size, range: object.range };
		};
		expect(await read()).toEqual({ bytes: [...whole], size: whole.length, range: { offset: 0, length: whole.length } });
		expect(await read({ offset: 10, length: 25 })).toEqual({ bytes: [...whole.subarray(10, 35)], size: whole.length, range: { offset: 10, length: 25 } });
		expect(await read({ offset: 40 })).toEqual({ bytes: [...whole.subarray(40)], size: whole.length, range: { offset: 40, length: whole.length - 40 } });
		expect(await read({ offset: whole.length - 5, length: 100 })).toEqual({
			bytes: [...whole.subarray(whole.length - 5)],
			size: whole.length,
			range: { offset: whole.length - 5, length: 5 },
		});
		expect(await read({ suffix: 17 })).toEqual({
			bytes: [...whole.subarray(whole.length - 17)],
			size: whole.length,
			range: { offset: whole.length - 17, length: 17 },
		});
		expect(await read({ suffix: whole.length + 100 })).toEqual({ bytes: [...whole], size: whole.length, range: { offset: 0, length: whole.length } });
		expect(await getOutputObject(bucket, "jobs/nobody/job-none.jsonl", { suffix: 3 })).toBeNull();
		expect((await getOutputObject(bucket, result.key))?.httpEtag).toBe((await bucket.head(result.key))?.httpEtag);
	});
});

describe("line marks", () => {
	/** Where each line starts in the object consolidate writes of `body`'s lines 1..total. */
	function starts(total: number, body: (i: number) => string): number[] {
		const out = [0, 0];
		for (let i = 1; i <= total; i++) out.push(out[i]! + byteLength(body(i)) + 1);
		return out;
	}

	it("mark a line's start at least every markBytes, none for an object within the first", async () => {
		const total = 2_000;
		const body = (i: number) => bodyOf(i, 1 + (i % 40));
		const at = starts(total, body);
		const { marks, bytes } = await consolidate(bucket, "marks", newJobId(), linesOf(total, body), { markBytes: 16 * 1024 });
		expect(marks.length).toBeGreaterThan(30);
		let previous = 0;
		for (const mark of marks) {
			expect(mark.offset, `line ${mark.line}`).toBe(at[mark.line]);
			// The first line starting once markBytes have passed since the mark before.
			expect(mark.offset - previous).toBeGreaterThanOrEqual(16 * 1024);
			expect(at[mark.line - 1]! - previous).toBeLessThan(16 * 1024);
			previous = mark.offset;
		}
		expect(bytes - previous).toBeLessThan(16 * 1024 + 700);
		// The default spacing, 1 MiB: an object within it has none, one of 1.5 MiB one.
		expect(bytes).toBeLessThan(MiB);
		expect((await consolidate(bucket, "marks", newJobId(), linesOf(total, body))).marks).toEqual([]);
		const larger = starts(4_400, body).at(-1)!;
		expect(larger).toBeGreaterThan(1.3 * MiB);
		expect(larger).toBeLessThan(2 * MiB);
		const { marks: one } = await consolidate(bucket, "marks", newJobId(), linesOf(4_400, body));
		expect(one).toHaveLength(1);
		expect(one[0]!.offset).toBe(starts(4_400, body).find((o) => o >= MiB));
	});

	it("stay at most 4,096, their spacing doubling, each still a line's start", async () => {
		const total = 10_000;
		const body = (i: number) => `{"n":${i}}`;
		const at = starts(total, body);
		const { marks } = await consolidate(bucket, "marks", newJobId(), linesOf(total, body), { markBytes: 1 });
		expect(marks.length).toBeLessThanOrEqual(4096);
		expect(marks.length).toBeGreaterThan(2048);
		expect(marks.every((m) => m.offset === at[m.line])).toBe(true);
		expect(marks.map((m) => m.line)).toEqual([...marks.map((m) => m.line)].sort((a, b) => a - b));
		// Spread over the whole object, not bunched at its start or end.
		expect(marks[0]!.line).toBeLessThan(10);
		expect(marks.at(-1)!.line).toBeGreaterThan(total - 10);
	});

	it("let readLinesFromR2 start at the last mark before the lines asked for, with the same lines", async () => {
		const total = 2_000;
		const body = (i: number) => bodyOf(i, 1 + (i % 40));
		const { key, marks } = await consolidate(bucket, "marks", newJobId(), linesOf(total, body), { markBytes: 64 * 1024 });
		const m = marks[5]!;
		for (const after of [0, 1, marks[0]!.line - 2, marks[0]!.line - 1, m.line - 2, m.line - 1, m.line, 1_000, total - 1, total]) {
			const rec = recording(bucket);
			const got = await collect(readLinesFromR2(rec.bucket, key, { afterLine: after, limit: 3, marks }));
			const want = Array.from({ length: Math.min(3, total - after) }, (_, i) => ({ line: after + 1 + i, body: body(after + 1 + i) }));
			expect(got, `after ${after}`).toEqual(want);
			// From the newline before the last mark at or before line after + 1; from byte 0 before the first.
			const mark = marks.filter((k) => k.line <= after + 1).at(-1);
			expect(rec.gets, `after ${after}`).toEqual([mark ? { offset: mark.offset - 1 } : null]);
		}
		// Every line once, whichever mark a read starts from.
		expect(await collect(readLinesFromR2(bucket, key, { marks }))).toHaveLength(total);
		expect((await collect(readLinesFromR2(bucket, key, { afterLine: m.line - 1, marks }))).map((l) => l.line)).toEqual(
			Array.from({ length: total - m.line + 1 }, (_, i) => m.line + i),
		);
	});

	it("that do not fit the object are not trusted: it is read from its start", async () => {
		const total = 2_000;
		const body = (i: number) => bodyOf(i, 1 + (i % 40));
		const { key, marks, bytes } = await consolidate(bucket, "marks", newJobId(), linesOf(total, body), { markBytes: 64 * 1024 });
		const m = marks[3]!;
		const want = [m.line, m.line + 1].map((line) => ({ line, body: body(line) }));
		// A byte off (inside a line), past the object's end, or no mark at all (an older release's).
		for (const bad of [{ line: m.line, offset: m.offset + 1 }, { line: m.line, offset: m.offset - 1 }, { line: m.line, offset: bytes + 10 }]) {
			const rec = recording(bucket);
			expect(await collect(readLinesFromR2(rec.bucket, key, { afterLine: m.line - 1, limit: 2, marks: [bad] })), JSON.stringify(bad)).toEqual(want);
			expect(rec.gets).toEqual([{ offset: bad.offset - 1 }, null]);
		}
		expect(await collect(readLinesFromR2(bucket, key, { afterLine: m.line - 1, limit: 2, marks: [] }))).toEqual(want);
		// A mark of a missing object: nothing, or the same error as without marks.
		expect(await collect(readLinesFromR2(bucket, "jobs/nobody/job-none.jsonl", { afterLine: 5, marks }))).toEqual([]);
		await expect(collect(readLinesFromR2(bucket, "jobs/nobody/job-none.jsonl", { afterLine: 5, marks, required: true }))).rejects.toThrow(/missing from R2/);
	});
});

describe("putOutputLog", () => {
	it("writes each line as rendered, leaving out those rendered as null, as plain text under the job's prefix", async () => {
		const jobId = newJobId();
		const render = (body: string): string | null => {
			const n = (JSON.parse(body) as { n: number }).n;
			return n % 2 === 0 ? null : `entry ${n}`;
		};
		const result = await putOutputLog(bucket, "logged", jobId, linesOf(5, (i) => bodyOf(i, 1)), render, { batchLines: 2 });
		expect(result).toEqual({ key: `jobs/logged/${jobId}/output.log`, bytes: 24, lines: 5 });
		expect(outputLogKey("logged", jobId)).toBe(result.key);
		const object = await bucket.get(result.key);
		expect(await object?.text()).toBe("entry 1\nentry 3\nentry 5\n");
		expect(object?.httpMetadata?.contentType).toBe("text/plain; charset=utf-8");
	});

	it("streams a log larger than a part through a multipart upload, every entry in order", async () => {
		const jobId = newJobId();
		const total = 6_000;
		// About 1 KiB an entry: 6 MiB, two parts of 5 MiB.
		const render = (body: string): string => `entry ${(JSON.parse(body) as { n: number }).n} ${"x".repeat(1000)}`;
		const rec = recording(bucket);
		const result = await putOutputLog(rec.bucket, "logged", jobId, linesOf(total, (i) => bodyOf(i, 1)), render);
		expect(rec.uploads).toHaveLength(1);
		const text = await (await bucket.get(result.key))!.text();
		const entries = text.trimEnd().split("\n");
		expect(entries).toHaveLength(total);
		expect(entries.every((e, i) => e === `entry ${i + 1} ${"x".repeat(1000)}`)).toBe(true);
		expect(result.bytes).toBe(byteLength(text));
	});

	it("survives the job's consolidation, which deletes the chunks it sits among, and goes with the job's retention", async () => {
		const jobId = newJobId();
		const batch = linesOf(4, (i) => bodyOf(i, 1));
		await putChunk(bucket, "logged", jobId, await batch(0, 2));
		await consolidate(bucket, "logged", jobId, batch);
		await putOutputLog(bucket, "logged", jobId, batch, (b) => b.slice(0, 20));
		expect((await keysUnder(`jobs/logged/${jobId}`)).sort()).toEqual([outputKey("logged", jobId), outputLogKey("logged", jobId)].sort());
		// Consolidated, its chunks gone: the final object and the log are deleted by key, nothing listed.
		const listed: string[] = [];
		const counted = new Proxy(bucket, {
			get: (target, name) => (name === "list" ? (options: R2ListOptions) => (listed.push(options.prefix ?? ""), target.list(options)) : Reflect.get(target, name).bind(target)),
		});
		await deleteJobOutput(counted, "logged", jobId, { chunks: false });
		expect(await keysUnder(`jobs/logged/${jobId}`)).toEqual([]);
		expect(listed).toEqual([]);
	});
});

describe("deleteJobOutput", () => {
	it("removes the final object and every chunk of the job, and nothing of another job", async () => {
		const jobId = newJobId();
		const sibling = `${jobId}0`;
		const batch = linesOf(6, (i) => bodyOf(i, 1));
		await consolidate(bucket, "retention", jobId, batch);
		// Chunks a crashed consolidation left behind, next to the final object.
		await putChunk(bucket, "retention", jobId, await batch(0, 3));
		await putChunk(bucket, "retention", jobId, await batch(3, 3));
		await consolidate(bucket, "retention", sibling, batch);
		await putChunk(bucket, "retention", sibling, await batch(0, 2));
		expect(await keysUnder(`jobs/retention/${jobId}`)).toHaveLength(5);

		await deleteJobOutput(bucket, "retention", jobId, { chunks: true });
		expect(await bucket.head(outputKey("retention", jobId))).toBeNull();
		expect(await keysUnder(`jobs/retention/${jobId}/`)).toEqual([]);
		expect((await keysUnder(`jobs/retention/${jobId}`)).sort()).toEqual(
			[outputKey("retention", sibling), chunkKey("retention", sibling, 1, 2)].sort(),
		);
		// Deleting what is already gone is fine (retention may run twice).
		await deleteJobOutput(bucket, "retention", jobId, { chunks: true });
	});
});
