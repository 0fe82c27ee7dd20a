import { AppError, BadRequestError, NotFoundError, RangeNotSatisfiableError, RateLimitedError } from "../../src/errors.ts";
import { contentRange, readLinesAfter, readLinesFromR2, readRange, tailOfR2, type OutputLine } from "../../src/store/output-r2.ts";
import { resolveRange } from "../../src/shared/range.ts";
import { getJob } from "./jobs.ts";
import { outputMarks, outputState } from "./output-store.ts";
import { readLines } from "./runner/output.ts";
import { STREAM_RETRY_AFTER_SECONDS, type ArchivedLines, type StreamHub } from "./streams.ts";

const NDJSON = "application/x-ndjson";
const encoder = new TextEncoder();

/**
 * An error class's code, message and headers (a 429's Retry-After, a 416's Content-Range) as the
 * Worker's onError answers them; the Worker's route adds the request id (forward, src/api/jobs/job.ts).
 */
export function errorResponse(err: AppError): Response {
	return Response.json({ error: { code: err.code, message: err.message } }, { status: err.status, headers: err.headers });
}

const rangeNotSatisfiable = (jobId: string, header: string, size: number) =>
	errorResponse(new RangeNotSatisfiableError(header, size, `job ${jobId}'s output`));

/** The next `n` lines of an R2 object's. */
async function nextLines(lines: AsyncIterator<OutputLine>, n: number): Promise<OutputLine[]> {
	const batch: OutputLine[] = [];
	while (batch.length < n) {
		const next = await lines.next();
		if (next.done) break;
		batch.push(next.value);
	}
	return batch;
}

/**
 * Streams a live job's lines from SQLite in batches, sliced to a byte range if asked. The job may
 * end and its output move to R2 while the body is read (consolidation drops the SQLite rows): the
 * body then carries on from R2 after the last line it sent, where ending would look, to the client,
 * like the output's end.
 */
function sqliteBody(
	sql: SqlStorage,
	bucket: R2Bucket,
	jobId: string,
	range: { offset: number; length: number } | null,
	tail: { after: number; lines: number } | null = null,
): ReadableStream<Uint8Array> {
	let after = tail?.after ?? 0;
	let skip = range?.offset ?? 0;
	let left = range ? range.length : Number.POSITIVE_INFINITY;
	// A tail's lines: those there were when it was asked for, not those the job writes meanwhile.
	let linesLeft = tail?.lines ?? Number.POSITIVE_INFINITY;
	let archived: AsyncIterator<OutputLine> | null = null;
	return new ReadableStream<Uint8Array>({
		async pull(controller) {
			if (left <= 0 || linesLeft <= 0) {
				controller.close();
				return;
			}
			const want = Math.min(500, linesLeft);
			let batch = archived ? await nextLines(archived, want) : readLines(sql, jobId, after, want);
			if (batch.length === 0 && archived === null) {
				// Pruned by retention while it was read: cut short, which must not look like the end.
				if (!getJob(sql, jobId)) {
					controller.error(new Error(`job ${jobId} was deleted (its retention passed) while its output was read`));
					return;
				}
				const state = outputState(sql, jobId);
				if (state.outputKey !== null && (state.lines ?? 0) > after) {
					// Gone from R2 too (retention deleted the job meanwhile), it throws: a broken transfer, not a clean end.
					const marks = outputMarks(sql, jobId);
					archived = readLinesFromR2(bucket, state.outputKey, { afterLine: after, required: true, marks })[Symbol.asyncIterator]();
					batch = await nextLines(archived, want);
				}
			}
			if (batch.length === 0) {
				controller.close();
				return;
			}
			after = batch.at(-1)!.line;
			linesLeft -= batch.length;
			let bytes = encoder.encode(batch.map((l) => `${l.body}\n`).join(""));
			if (skip > 0) {
				const cut = Math.min(skip, bytes.length);
				bytes = bytes.subarray(cut);
				skip -= cut;
			}
			if (bytes.length > left) bytes = bytes.subarray(0, left);
			left -= bytes.length;
			if (bytes.length > 0) controller.enqueue(bytes);
		},
		async cancel() {
			await archived?.return?.();
		},
	});
}

/** NDJSON of an R2 object's lines, read a batch at a time as the client takes them. */
function linesBody(lines: AsyncGenerator<OutputLine>): ReadableStream<Uint8Array> {
	return new ReadableStream<Uint8Array>({
		async pull(controller) {
			const batch = await nextLines(lines, 500);
			if (batch.length === 0) controller.close();
			else controller.enqueue(encoder.encode(batch.map((l) => `${l.body}\n`).join("")));
		},
		async cancel() {
			await lines.return(undefined);
		},
	});
}

/**
 * A tail's answer names its first line's number, so a client can follow on from its last (that
 * plus the lines it got, less one: line numbers have no gaps) without reading the whole output to
 * count them. An empty tail names the number the job's next line will have.
 */
export const FIRST_LINE_HEADER = "X-Drover-First-Line";

function tailResponse(body: BodyInit, firstLine: number): Response {
	return new Response(body, { headers: { "content-type": NDJSON, [FIRST_LINE_HEADER]: String(firstLine) } });
}

/**
 * GET …/output: a finished job's JSONL from R2, a live one's from SQLite. Honours `Range` or
 * `?lines=N` (the last N lines); the Worker's route refuses a request with both.
 */
export async function serveOutput(sql: SqlStorage, bucket: R2Bucket, jobId: string, request: Request): Promise<Response> {
	const job = getJob(sql, jobId);
	if (!job) return errorResponse(new NotFoundError(`no job ${jobId}`));
	const url = new URL(request.url);
	const linesParam = url.searchParams.get("lines");
	const state = outputState(sql, jobId);
	if (linesParam !== null) {
		const n = Number(linesParam);
		if (!Number.isInteger(n) || n < 1 || n > 100_000) return errorResponse(new BadRequestError("lines must be an integer from 1 to 100000"));
		const afterParam = url.searchParams.get("after");
		if (afterParam !== null) return linesAfter(sql, bucket, jobId, Number(afterParam), n);
		// Streamed, a batch at a time, as the whole output is: n lines can be most of a large output.
		if (state.outputKey) {
			// With line marks, a tail past the first window is read from the mark before it: less than
			// the growing windows would read, and streamed rather than held.
			const marks = outputMarks(sql, jobId);
			const tail = await tailOfR2(bucket, state.outputKey, n, { firstWindowOnly: marks.length > 0 });
			if ("lines" in tail) return tailResponse(tail.lines.map((l) => `${l.body}\n`).join(""), tail.lines[0]?.line ?? (state.lines ?? 0) + 1);
			return tailResponse(linesBody(readLinesFromR2(bucket, state.outputKey, { afterLine: tail.after, limit: n, required: true, marks })), tail.after + 1);
		}
		// The lines there are now, not those the job writes while the body is read: the first line's
		// number in the header and the lines sent must agree.
		const last = lastLine(sql, jobId);
		const after = Math.max(0, last - n);
		return tailResponse(sqliteBody(sql, bucket, jobId, null, { after, lines: last - after }), after + 1);
	}
	// If-Range asks for the part only if the output still matches a validator, and drover sends
	// none (no ETag, no Last-Modified): no If-Range can match, so its Range is ignored (RFC 9110 §13.1.5).
	const header = request.headers.has("if-range") ? null : request.headers.get("range");
	if (state.outputKey) {
		const read = await readRange(bucket, state.outputKey, header);
		if (!read) return errorResponse(new NotFoundError(`job ${jobId}'s output is missing from R2`));
		if ("unsatisfiable" in read) return rangeNotSatisfiable(jobId, header!, read.unsatisfiable);
		const { object, partial } = read;
		const headers: Record<string, string> = { "content-type": NDJSON, "accept-ranges": "bytes", "content-length": String(object.range.length) };
		if (partial) headers["content-range"] = contentRange(object);
		return new Response(object.body, { status: partial ? 206 : 200, headers });
	}
	const total = sql
		.exec<{ bytes: number | null }>("SELECT sum(length(CAST(body AS BLOB)) + 1) AS bytes FROM output_lines WHERE job_id = ?", jobId)
		.one().bytes ?? 0;
	const range = resolveRange(header, total);
	if (range === "unsatisfiable") return rangeNotSatisfiable(jobId, header!, total);
	const headers: Record<string, string> = { "content-type": NDJSON, "accept-ranges": "bytes" };
	if (!range) return new Response(sqliteBody(sql, bucket, jobId, null), { headers });
	return new Response(sqliteBody(sql, bucket, jobId, range), {
		status: 206,
		headers: { ...headers, "content-range": `bytes ${range.offset}-${range.offset + range.length - 1}/${total}` },
	});
}

/**
 * `?after=A&lines=N`: the N lines after line A, the header naming A + 1 (as a tail's names its first).
 * Line A past the job's last is a 400, as the stream's Last-Event-ID is: no line of this job's follows it.
 */
async function linesAfter(sql: SqlStorage, bucket: R2Bucket, jobId: string, after: number, n: number): Promise<Response> {
	if (!Number.isSafeInteger(after) || after < 0) return errorResponse(new BadRequestError("after must be a line number"));
	const last = lastLine(sql, jobId);
	if (after > last) return errorResponse(new BadRequestError(`after ${after} is past job ${jobId}'s last line (${last})`));
	const state = outputState(sql, jobId);
	if (state.outputKey) {
		const lines = await readLinesAfter(bucket, state.outputKey, { after, limit: n, total: last, bytes: state.bytes, marks: outputMarks(sql, jobId) });
		return tailResponse(Array.isArray(lines) ? lines.map((l) => `${l.body}\n`).join("") : linesBody(lines), after + 1);
	}
	return tailResponse(sqliteBody(sql, bucket, jobId, null, { after, lines: Math.min(n, last - after) }), after + 1);
}

/**
 * A job's lines after `afterLine` from R2, once its output is consolidated there (SQLite no longer
 * has them); else null. An object gone (retention deleting the job) throws, so a stream is cut, not
 * ended as if the output were empty.
 */
export function archivedLines(sql: SqlStorage, bucket: R2Bucket, jobId: string, afterLine: number): ArchivedLines | null {
	const key = outputState(sql, jobId).outputKey;
	return key ? readLinesFromR2(bucket, key, { afterLine, required: true, marks: outputMarks(sql, jobId) }) : null;
}

/** The number of a job's last line so far (0 before its first): in R2's object once consolidated, else in SQLite. */
function lastLine(sql: SqlStorage, jobId: string): number {
	const state = outputState(sql, jobId);
	if (state.outputKey !== null) return state.lines ?? 0;
	return sql.exec<{ line: number | null }>("SELECT max(line) AS line FROM output_lines WHERE job_id = +?", jobId).one().line ?? 0;
}

/**
 * GET …/stream: Server-Sent Events, one per line (id = line number), resuming after Last-Event-ID.
 * A 429 with Retry-After when the job, or the agent's jobs together, have as many streams as allowed.
 */
export function serveStream(sql: SqlStorage, hub: StreamHub, jobId: string, request: Request): Response {
	if (!getJob(sql, jobId)) return errorResponse(new NotFoundError(`no job ${jobId}`));
	const lastEventId = request.headers.get("last-event-id") ?? new URL(request.url).searchParams.get("after") ?? "0";
	const after = Number(lastEventId);
	if (!Number.isInteger(after) || after < 0) return errorResponse(new BadRequestError("Last-Event-ID must be a line number"));
	// A line the job never wrote (another job's id, a made-up one): the stream would wait past lines
	// that never come and end with none of them shown. A client only ever sees lines already stored.
	const last = lastLine(sql, jobId);
	if (after > last) {
		return errorResponse(new BadRequestError(`Last-Event-ID ${after} is past job ${jobId}'s last line (${last}): it is not a line of this job's stream`));
	}
	const refused = hub.refusal(jobId);
	if (refused) return errorResponse(new RateLimitedError(refused, STREAM_RETRY_AFTER_SECONDS));
	const body = hub.subscribe(jobId, after);
	return new Response(body, {
		headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" },
	});
}
