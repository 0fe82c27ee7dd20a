import { resolveRange } from "../shared/range.ts";

/**
 * A job's JSONL output in R2: chunks while the job runs, one consolidated object once it ends, and
 * the readers the HTTP API serves from it. Memory stays bounded whatever the output's size: writers
 * hold at most one multipart part, readers at most the current line (or the n lines asked for).
 */

export interface OutputLine {
	line: number;
	body: string;
}

export type ReadBatch = (afterLine: number, limit: number) => Promise<OutputLine[]> | OutputLine[];

export interface ConsolidateOptions {
	/** Bytes per multipart part (every part but the last is exactly this size). Default 5 MiB. */
	partBytes?: number;
	/** Lines asked of `readBatch` at a time. Default 1000. */
	batchLines?: number;
	/** Whether chunks may exist under the job's prefix (default true); false skips listing them. */
	chunks?: boolean;
	/** Bytes between the line marks of the result (default 1 MiB); see LineMark. */
	markBytes?: number;
}

/**
 * Where line `line` starts in a consolidated object. R2 keeps no index of lines, so a reader asked
 * for the lines after N would read the object from its start; a mark lets it start within a mark's
 * spacing of them (a 100 MB object read from its middle: half of it, otherwise).
 */
export interface LineMark {
	line: number;
	offset: number;
}

export interface ConsolidateResult {
	key: string;
	bytes: number;
	lines: number;
	/** 1 for a single put; otherwise the multipart upload's part count (always at least 2). */
	parts: number;
	/**
	 * A line start at least every markBytes (doubled while there would be more than MAX_MARKS), in
	 * line order; none for an object within the first markBytes, which a reader takes whole.
	 */
	marks: LineMark[];
}

export type OutputRange = { offset: number; length?: number } | { suffix: number };

export interface OutputObject {
	body: ReadableStream<Uint8Array>;
	/** The whole object's size, whatever range was asked for. */
	size: number;
	/** The bytes `body` holds, resolved against `size` (for `Content-Range`). */
	range: { offset: number; length: number };
	/** Quoted, for an `ETag` header. */
	httpEtag: string;
}

const MiB = 1024 * 1024;
// R2 multipart: parts are 5 MiB to 5 GiB, all but the last the same size, at most 10,000 of them.
const MIN_PART_BYTES = 5 * MiB;
const MAX_PART_BYTES = 5 * 1024 * MiB;
const MAX_PARTS = 10_000;
// The smallest part R2 takes: the one buffer held while consolidating is the main cost in memory.
const DEFAULT_PART_BYTES = 5 * MiB;
const DEFAULT_BATCH_LINES = 1000;
const INITIAL_BUFFER_BYTES = 64 * 1024;
const DEFAULT_MARK_BYTES = MiB;
// The marks are kept in one SQLite value beside the job: 4,096 pairs are ~80 KB, far within its
// 2 MB; past them the spacing doubles (every 2 MiB from 4 GiB on).
const MAX_MARKS = 4096;
// R2 deletes at most 1,000 keys per call, and list pages hold at most 1,000.
const DELETE_BATCH = 1000;
// Chunk keys carry zero-padded line numbers so R2's lexicographic listing returns them in line order.
const LINE_DIGITS = 9;
const MAX_LINE = 10 ** LINE_DIGITS - 1;
// A tail is first looked for in this many bytes at the end of the object, growing up to the cap;
// past it (very long lines, or a huge n) the object is streamed through a ring buffer instead.
const TAIL_FIRST_WINDOW = 64 * 1024;
const TAIL_MAX_WINDOW = 4 * MiB;

const NDJSON = "application/x-ndjson";
const PLAIN_TEXT = "text/plain; charset=utf-8";
const NEWLINE = 0x0a;
const encoder = new TextEncoder();

// Agent names and job ids become key segments: a "/" (or "..") would let one job's chunk prefix
// reach into another's, and deletions go by prefix.
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

function segment(kind: string, value: string): string {
	if (!SEGMENT.test(value) || value.includes("..")) throw new TypeError(`${kind} ${JSON.stringify(value)} cannot be part of an R2 key`);
	return value;
}

function lineNumber(value: number): string {
	if (!Number.isInteger(value) || value < 0 || value > MAX_LINE) throw new RangeError(`line number ${value} is not an integer from 0 to ${MAX_LINE}`);
	return String(value).padStart(LINE_DIGITS, "0");
}

export function outputKey(agent: string, jobId: string): string {
	return `jobs/${segment("agent", agent)}/${segment("job id", jobId)}.jsonl`;
}

function chunkPrefix(agent: string, jobId: string): string {
	return `jobs/${segment("agent", agent)}/${segment("job id", jobId)}/`;
}

/** herdctl's layout: `<job-id>/output.log` beside `<job-id>.jsonl`. */
export function outputLogKey(agent: string, jobId: string): string {
	return `${chunkPrefix(agent, jobId)}output.log`;
}

export function chunkKey(agent: string, jobId: string, firstLine: number, lastLine: number): string {
	if (lastLine < firstLine) throw new RangeError(`chunk lines ${firstLine}-${lastLine} are reversed`);
	return `${chunkPrefix(agent, jobId)}lines-${lineNumber(firstLine)}-${lineNumber(lastLine)}.jsonl`;
}

// Readers number lines by position, and SSE ids and `afterLine` are SQLite line numbers: a gap or a
// body with a raw newline would shift every line after it.
function checkLine(line: OutputLine, expected: number): void {
	if (line.line !== expected) throw new Error(`output line ${line.line} where line ${expected} was expected: lines must be contiguous`);
	if (line.body.includes("\n")) throw new Error(`output line ${line.line} contains a newline`);
}

/**
 * Puts a running job's lines as one known-length object (R2 has no append, and put() needs a
 * length), so R2 holds the output before the job ends. Each chunk has its own key, named by its
 * lines, so chunks never contend for R2's one write per second per key.
 */
export async function putChunk(bucket: R2Bucket, agent: string, jobId: string, lines: OutputLine[]): Promise<{ key: string; bytes: number }> {
	const first = lines[0];
	const last = lines.at(-1);
	if (!first || !last) throw new RangeError("putChunk needs at least one line");
	lines.forEach((line, i) => checkLine(line, first.line + i));
	const key = chunkKey(agent, jobId, first.line, last.line);
	const bytes = encoder.encode(`${lines.map((l) => l.body).join("\n")}\n`);
	await bucket.put(key, bytes, {
		httpMetadata: { contentType: NDJSON },
		customMetadata: { first_line: String(first.line), last_line: String(last.line) },
	});
	return { key, bytes: bytes.byteLength };
}

/**
 * The last line number, found with O(log n) one-line reads. Multipart metadata is fixed when the
 * upload is created, before the rest of the output has been read; lines are contiguous from 1 (checked
 * as they are written), so line k exists iff the line after k - 1 does.
 */
async function findLastLine(readBatch: ReadBatch, known: number): Promise<number> {
	const exists = async (k: number): Promise<boolean> => (await readBatch(k - 1, 1)).length > 0;
	let lo = known;
	let step = 1024;
	let hi = lo + step;
	while (await exists(hi)) {
		lo = hi;
		step *= 2;
		hi = lo + step;
	}
	while (hi - lo > 1) {
		const mid = Math.floor((lo + hi) / 2);
		if (await exists(mid)) lo = mid;
		else hi = mid;
	}
	return lo;
}

/**
 * Writes a finished job's output as `jobs/<agent>/<job-id>.jsonl` from its lines in order, then
 * deletes the job's chunks. One put() when the output fits in a part, else a multipart upload that
 * is aborted on any error. Running it again writes the same object (though R2 takes about one write
 * per second to a key, so an immediate rerun may be refused and need a retry).
 */
export async function consolidate(
	bucket: R2Bucket,
	agent: string,
	jobId: string,
	readBatch: ReadBatch,
	opts: ConsolidateOptions = {},
): Promise<ConsolidateResult> {
	const key = outputKey(agent, jobId);
	const written = await putLines(bucket, key, jobId, readBatch, opts, {
		contentType: NDJSON,
		render: (body) => body,
		metadata: (lines) => ({ lines: String(lines) }),
	});
	// Only once the final object exists: until then the chunks are R2's only copy of the output.
	if (opts.chunks ?? true) await deleteChunks(bucket, agent, jobId);
	return { key, ...written };
}

/**
 * Writes a finished job's plain-text log (herdctl's `output.log`, kept when its schedule or agent
 * sets output_to_file) from its JSONL lines, rendered by `render`, in as little memory as
 * consolidate. Under the job's prefix, beside where its chunks were, so retention deletes it with
 * them; written after consolidate, which deletes the chunks.
 */
export async function putOutputLog(
	bucket: R2Bucket,
	agent: string,
	jobId: string,
	readBatch: ReadBatch,
	render: (body: string) => string | null,
	opts: Omit<ConsolidateOptions, "chunks" | "markBytes"> = {},
): Promise<{ key: string; bytes: number; lines: number }> {
	const key = outputLogKey(agent, jobId);
	const written = await putLines(bucket, key, jobId, readBatch, opts, { contentType: PLAIN_TEXT, render, metadata: () => ({}) });
	return { key, bytes: written.bytes, lines: written.lines };
}

interface LinesObject {
	contentType: string;
	/** A line's text in the object, without its newline; null leaves the line out. */
	render: (body: string) => string | null;
	/** Custom metadata, given the line count (a multipart upload's is fixed before it is written). */
	metadata: (lines: number) => Record<string, string>;
}

/** One object of a job's lines, each rendered and ended by a newline; see consolidate. */
async function putLines(
	bucket: R2Bucket,
	key: string,
	jobId: string,
	readBatch: ReadBatch,
	opts: Omit<ConsolidateOptions, "chunks">,
	object: LinesObject,
): Promise<Omit<ConsolidateResult, "key">> {
	const partBytes = opts.partBytes ?? DEFAULT_PART_BYTES;
	const batchLines = opts.batchLines ?? DEFAULT_BATCH_LINES;
	if (!Number.isInteger(partBytes) || partBytes < MIN_PART_BYTES || partBytes > MAX_PART_BYTES) {
		throw new RangeError(`partBytes must be an integer from ${MIN_PART_BYTES} to ${MAX_PART_BYTES} (R2's multipart part sizes)`);
	}
	if (!Number.isInteger(batchLines) || batchLines < 1) throw new RangeError("batchLines must be a positive integer");
	let markBytes = opts.markBytes ?? DEFAULT_MARK_BYTES;
	if (!Number.isInteger(markBytes) || markBytes < 1) throw new RangeError("markBytes must be a positive integer");
	let marks: LineMark[] = [];
	let lastMark = 0;
	// The one part being filled. Parts must all be exactly partBytes but the last, so a line that does
	// not fit is split across parts (R2 concatenates them); a full part is only uploaded once more bytes
	// arrive, so the last part is never empty and an output of exactly one part is a single put().
	// It starts small and doubles up to a part: most outputs are a few KiB, and zeroing a whole part
	// for each would cost more than the job's own writes.
	let buffer = new Uint8Array(Math.min(partBytes, INITIAL_BUFFER_BYTES));
	let filled = 0;
	/** Grows the buffer (doubling, up to a part) until `wanted` more bytes fit or it is a whole part. */
	const reserve = (wanted: number): void => {
		let size = buffer.length;
		while (size < partBytes && size - filled < wanted) size = Math.min(partBytes, size * 2);
		if (size === buffer.length) return;
		const grown = new Uint8Array(size);
		grown.set(buffer.subarray(0, filled));
		buffer = grown;
	};
	let bytes = 0;
	let next = 1;
	let highestRead = 0;
	let expectedLines = -1;
	// In an object: the closures below assign it, which TypeScript's narrowing of a `let` would miss.
	const multipart: { upload: R2MultipartUpload | null; parts: R2UploadedPart[] } = { upload: null, parts: [] };
	const { parts } = multipart;

	const flushPart = async (): Promise<void> => {
		if (!multipart.upload) {
			expectedLines = await findLastLine(readBatch, highestRead);
			multipart.upload = await bucket.createMultipartUpload(key, {
				httpMetadata: { contentType: object.contentType },
				customMetadata: object.metadata(expectedLines),
			});
		}
		if (parts.length + 1 >= MAX_PARTS) throw new RangeError(`job ${jobId}'s output needs more than ${MAX_PARTS} parts of ${partBytes} bytes`);
		// The buffer is reused once uploadPart resolves: by then R2 has the whole part.
		parts.push(await multipart.upload.uploadPart(parts.length + 1, buffer));
		filled = 0;
	};

	const write = async (text: string): Promise<void> => {
		if (text === "") return;
		if (filled === partBytes) await flushPart();
		// At most 3 bytes a UTF-16 unit: room for that, so a line is usually encoded in one go.
		reserve(text.length * 3);
		const { read, written } = encoder.encodeInto(text, buffer.subarray(filled));
		filled += written;
		bytes += written;
		if (read === text.length) return;
		// encodeInto never splits a character, so up to 3 bytes can be left unfilled; encoding the rest
		// separately lets the part end exactly at partBytes. Bounded by one line (a SQLite value ≤ 2 MB).
		const rest = encoder.encode(text.slice(read));
		for (let at = 0; at < rest.length; ) {
			if (filled === partBytes) await flushPart();
			reserve(rest.length - at);
			const n = Math.min(rest.length - at, buffer.length - filled);
			buffer.set(rest.subarray(at, at + n), filled);
			filled += n;
			bytes += n;
			at += n;
		}
	};

	const writeNewline = async (): Promise<void> => {
		if (filled === partBytes) await flushPart();
		reserve(1);
		buffer[filled++] = NEWLINE;
		bytes++;
	};

	try {
		for (let after = 0; ; ) {
			const batch = await readBatch(after, batchLines);
			const last = batch.at(-1);
			if (!last) break;
			highestRead = last.line;
			for (const line of batch) {
				checkLine(line, next);
				const text = object.render(line.body);
				if (text !== null) {
					if (bytes - lastMark >= markBytes) {
						marks.push({ line: next, offset: bytes });
						lastMark = bytes;
						if (marks.length > MAX_MARKS) {
							markBytes *= 2;
							marks = marks.filter((_, i) => i % 2 === 1);
							lastMark = marks.at(-1)!.offset;
						}
					}
					await write(text);
					await writeNewline();
				}
				next++;
			}
			after = last.line;
		}
		const lines = next - 1;
		const { upload } = multipart;
		if (!upload) {
			await bucket.put(key, buffer.subarray(0, filled), {
				httpMetadata: { contentType: object.contentType },
				customMetadata: object.metadata(lines),
			});
		} else {
			if (lines !== expectedLines) throw new Error(`job ${jobId}'s output changed while it was consolidated (${expectedLines} lines, then ${lines})`);
			parts.push(await upload.uploadPart(parts.length + 1, buffer.subarray(0, filled)));
			await upload.complete(parts);
		}
	} catch (error) {
		if (multipart.upload) {
			// The caller needs the original error; an upload that fails to abort is still removed by R2's
			// lifecycle rule for incomplete multipart uploads (7 days by default).
			await multipart.upload.abort().catch(() => undefined);
		}
		throw error;
	}
	return { bytes, lines: next - 1, parts: multipart.upload ? parts.length : 1, marks };
}

/** Deletes a job's chunks (and its plain-text log, which lives among them; see putOutputLog). */
async function deleteChunks(bucket: R2Bucket, agent: string, jobId: string): Promise<void> {
	await deletePrefix(bucket, chunkPrefix(agent, jobId));
}

async function deletePrefix(bucket: R2Bucket, prefix: string): Promise<void> {
	let cursor: string | undefined;
	do {
		const page = await bucket.list({ prefix, limit: DELETE_BATCH, ...(cursor ? { cursor } : {}) });
		const keys = page.objects.map((o) => o.key);
		if (keys.length > 0) await bucket.delete(keys);
		cursor = page.truncated ? page.cursor : undefined;
	} while (cursor);
}

/**
 * Streams an object's lines, numbered from 1, skipping those up to `afterLine` and stopping after
 * `limit`. Only the current partial line is held. Yields nothing if the object is missing, or, with
 * `required`, throws: a reader that would take no lines for all the lines there are. With the
 * object's `marks` (consolidate's), it reads from the last mark at or before the first line wanted.
 */
export async function* readLinesFromR2(
	bucket: R2Bucket,
	key: string,
	opts: { afterLine?: number; limit?: number; required?: boolean; marks?: readonly LineMark[] } = {},
): AsyncGenerator<OutputLine> {
	const afterLine = opts.afterLine ?? 0;
	const limit = opts.limit ?? Number.POSITIVE_INFINITY;
	if (!(limit > 0)) return;
	const opened = (await openAtMark(bucket, key, markBefore(opts.marks, afterLine + 1))) ?? (await openWhole(bucket, key));
	if (!opened) {
		if (opts.required) throw new Error(`output ${key} is missing from R2`);
		return;
	}
	const { reader } = opened;
	let { line, text } = opened;
	let pending = "";
	let yielded = 0;
	try {
		for (;;) {
			if (text === null) {
				const { done, value } = await reader.read();
				if (done) break;
				text = value;
			}
			let start = 0;
			// Search only the new text, so a long line arriving in many pieces stays linear.
			for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
				line++;
				if (line > afterLine) {
					yield { line, body: pending + text.slice(start, nl) };
					if (++yielded >= limit) return;
				}
				pending = "";
				start = nl + 1;
			}
			// The partial line is line + 1; lines being skipped are not kept at all.
			if (line + 1 > afterLine) pending += text.slice(start);
			text = null;
		}
		// Objects written here end with "\n"; anything after the last one is still a line.
		if (pending !== "") yield { line: line + 1, body: pending };
	} finally {
		// Stops the R2 read when the caller stops early (limit reached, or it broke out of the loop).
		await reader.cancel().catch(() => undefined);
	}
}

/** An object's text being read: `line` lines before `text` (the first piece, or null to read one). */
interface OpenedLines {
	reader: ReadableStreamDefaultReader<string>;
	line: number;
	text: string | null;
}

/** The last mark at or before line `line` (marks are in line order); null for none or bad marks. */
function markBefore(marks: readonly LineMark[] | undefined, line: number): LineMark | null {
	if (!marks) return null;
	let lo = 0;
	let hi = marks.length - 1;
	let found: LineMark | null = null;
	while (lo <= hi) {
		const mid = (lo + hi) >> 1;
		const mark = marks[mid]!;
		if (mark.line <= line) {
			found = mark;
			lo = mid + 1;
		} else hi = mid - 1;
	}
	return found && Number.isSafeInteger(found.line) && found.line > 1 && Number.isSafeInteger(found.offset) && found.offset > 0 ? found : null;
}

async function openWhole(bucket: R2Bucket, key: string): Promise<OpenedLines | null> {
	const object = await bucket.get(key);
	if (!object) return null;
	return { reader: object.body.pipeThrough(new TextDecoderStream()).getReader(), line: 0, text: null };
}

/**
 * The object read from the byte before `mark`, which must be the newline ending the line before
 * it: a mark that does not fit the object (which only a bug could make) is not trusted, and the
 * caller reads the object whole. Null for that, and for no mark or no object.
 */
async function openAtMark(bucket: R2Bucket, key: string, mark: LineMark | null): Promise<OpenedLines | null> {
	if (!mark) return null;
	let object: R2ObjectBody | null;
	try {
		object = await bucket.get(key, { range: { offset: mark.offset - 1 } });
	} catch {
		// R2 refuses a range starting past the object's end (10039): the mark is not this object's.
		return null;
	}
	if (!object) return null;
	const reader = object.body.pipeThrough(new TextDecoderStream()).getReader();
	for (;;) {
		const { done, value } = await reader.read();
		if (!done && value === "") continue;
		if (!done && value.startsWith("\n")) return { reader, line: mark.line - 1, text: value.slice(1) };
		await reader.cancel().catch(() => undefined);
		return null;
	}
}

/** How many lines an object holds, counted by streaming it (one line held at a time). */
async function countLinesInR2(bucket: R2Bucket, key: string): Promise<number> {
	let count = 0;
	for await (const _ of readLinesFromR2(bucket, key)) count++;
	return count;
}

/**
 * The last n complete lines within `text`, the last `text`-many bytes of an object whose lines
 * number `total`; null when the window holds fewer than n complete lines. `whole` says the window
 * starts at byte 0, so its first line is complete too and the lines can be counted outright.
 */
function tailOfWindow(text: string, whole: boolean, total: number, n: number): OutputLine[] | null {
	const out: OutputLine[] = [];
	let end = text.endsWith("\n") ? text.length - 1 : text.length;
	if (whole) total = countLines(text);
	if (total === 0) return [];
	while (out.length < n) {
		// lastIndexOf clamps a negative start to 0, which would find a newline at 0 again.
		const nl = end > 0 ? text.lastIndexOf("\n", end - 1) : -1;
		if (nl === -1 && !whole) return null;
		out.push({ line: total - out.length, body: text.slice(nl + 1, end) });
		if (nl === -1) break;
		end = nl;
	}
	return out.reverse();
}

function countLines(text: string): number {
	let count = 0;
	for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", nl + 1)) count++;
	return text === "" || text.endsWith("\n") ? count : count + 1;
}

/**
 * The last n lines: the lines themselves where a window from the end of the object holds them,
 * numbered from the `lines` count consolidate() stores; else the line after which they start, for
 * the caller to stream (readLinesFromR2) rather than hold n lines of any length (the count missing,
 * a tail of every line, or a window past a few MiB: very long lines). `firstWindowOnly` stops at the
 * first window, for a caller that has line marks to read from instead.
 */
export async function tailOfR2(
	bucket: R2Bucket,
	key: string,
	n: number,
	opts: { firstWindowOnly?: boolean } = {},
): Promise<{ lines: OutputLine[] } | { after: number }> {
	const want = Math.floor(n);
	if (!(want >= 1)) return { lines: [] };
	const from = async (total: number | null) => ({ after: Math.max(0, (total ?? (await countLinesInR2(bucket, key))) - want) });
	let window = TAIL_FIRST_WINDOW;
	let object: R2ObjectBody | R2Object | null;
	try {
		object = await bucket.get(key, { range: { suffix: window } });
	} catch {
		// R2 refuses any range of an empty object (10039, not satisfiable); a plain read has no such case.
		return from(null);
	}
	if (!object) return { lines: [] };
	const { size, etag } = object;
	const total = Number(object.customMetadata?.lines);
	const counted = Number.isSafeInteger(total) && total >= 0;
	// A window holding the whole object needs no count; otherwise numbering from the end needs one,
	// and a tail of every line is cheaper read from the start than in growing windows.
	if (size > window && (!counted || want >= total)) {
		if ("body" in object) await object.body.cancel();
		return from(counted ? total : null);
	}
	for (;;) {
		if (!("body" in object)) break;
		const covered = Math.min(window, size);
		const found = tailOfWindow(await object.text(), covered === size, total, want);
		if (found) return { lines: found };
		if (covered === size || window >= TAIL_MAX_WINDOW || opts.firstWindowOnly) break;
		window = Math.min(window * 4, TAIL_MAX_WINDOW);
		// The same version of the object, or the line numbers from its metadata would not hold.
		object = await bucket.get(key, { range: { suffix: window }, onlyIf: { etagMatches: etag } });
		if (!object) break;
	}
	return from(counted ? total : null);
}

/**
 * The `limit` lines after line `after` of an object of `total` lines and `bytes` bytes (the counts
 * consolidate() stores). Lines near the end (the dashboard's first page of earlier lines) are found
 * in a window read from the end, as a tail is, and held; others are streamed (`limit` lines can be
 * most of a large object) from the last line mark before them, or from the object's start where it
 * has none (a small object, or one consolidated before marks). With marks, only the first window is
 * tried, and only where the lines may lie in it: the first mark at or after their start bounds how
 * far from the end they begin.
 */
export async function readLinesAfter(
	bucket: R2Bucket,
	key: string,
	{ after, limit, total, bytes, marks }: { after: number; limit: number; total: number; bytes: number | null; marks: readonly LineMark[] },
): Promise<OutputLine[] | AsyncGenerator<OutputLine>> {
	if (after >= total) return [];
	// A mark on their first line says exactly where they start; a later one, a bound.
	const next = marks.find((m) => m.line >= after + 1);
	const fromEnd = next && bytes !== null ? bytes - next.offset : 0;
	if (fromEnd < TAIL_FIRST_WINDOW) {
		const tail = await tailOfR2(bucket, key, total - after, { firstWindowOnly: marks.length > 0 });
		if ("lines" in tail) return tail.lines.slice(0, limit);
	}
	return readLinesFromR2(bucket, key, { afterLine: after, limit, required: true, marks });
}

/**
 * bucket.get with an optional range, for the HTTP `Range` path; null when the object is missing. A
 * range starting at or past the end (or any range of an empty object) rejects with R2's 10039 "not
 * satisfiable": resolve the `Range` header against head().size first.
 */
export async function getOutputObject(bucket: R2Bucket, key: string, range?: OutputRange): Promise<OutputObject | null> {
	const object = range ? await bucket.get(key, { range }) : await bucket.get(key);
	if (!object) return null;
	const size = object.size;
	let offset = 0;
	let length = size;
	if (range && "suffix" in range) {
		length = Math.min(range.suffix, size);
		offset = size - length;
	} else if (range) {
		offset = Math.min(range.offset, size);
		length = Math.min(range.length ?? size - offset, size - offset);
	}
	return { body: object.body, size, range: { offset, length }, httpEtag: object.httpEtag };
}

/** An object as one bytes `Range` asks for it: the part (or the whole), or past its end the size, for a 416. */
export type RangedRead = { object: OutputObject; partial: boolean } | { unsatisfiable: number };

/**
 * An object read whole, or by one bytes `Range` header as resolveRange takes it (several ranges or
 * an invalid one: the whole). `ifRange`, the request's If-Range, keeps the range only where it is
 * the object's ETag (a strong comparison, RFC 9110 §13.1.5); any other value gets the whole. Null
 * for a missing object. A range costs a head first, for the size; the whole is one get.
 */
export async function readRange(bucket: R2Bucket, key: string, header: string | null | undefined, ifRange?: string | null): Promise<RangedRead | null> {
	if (!header?.trim()) {
		const object = await getOutputObject(bucket, key);
		return object && { object, partial: false };
	}
	const head = await bucket.head(key);
	if (!head) return null;
	const range = resolveRange(ifRange === undefined || ifRange === null || ifRange.trim() === head.httpEtag ? header : null, head.size);
	if (range === "unsatisfiable") return { unsatisfiable: head.size };
	const object = await getOutputObject(bucket, key, range ?? undefined);
	return object && { object, partial: range !== null };
}

/** A part's Content-Range header value. */
export function contentRange({ range, size }: OutputObject): string {
	return `bytes ${range.offset}-${range.offset + range.length - 1}/${size}`;
}

/** Deletes a job's consolidated output, its plain-text log, and any chunks left from while it ran (retention). */
export async function deleteJobOutput(bucket: R2Bucket, agent: string, jobId: string, { chunks }: { chunks: boolean }): Promise<void> {
	// Deletes are not billed; a listing is (class A): the prefix is listed only where chunks may remain.
	await bucket.delete([outputKey(agent, jobId), outputLogKey(agent, jobId)]);
	if (chunks) await deleteChunks(bucket, agent, jobId);
}

/**
 * Deletes the output object and plain-text log of each of `jobIds` (consolidated jobs, whose chunks
 * are gone), up to 1,000 keys a call: a prune's batch is one call, not one a job, against the
 * invocation's subrequests.
 */
export async function deleteJobOutputs(bucket: R2Bucket, agent: string, jobIds: readonly string[]): Promise<void> {
	const keys = jobIds.flatMap((id) => [outputKey(agent, id), outputLogKey(agent, id)]);
	for (let i = 0; i < keys.length; i += DELETE_BATCH) await bucket.delete(keys.slice(i, i + DELETE_BATCH));
}
