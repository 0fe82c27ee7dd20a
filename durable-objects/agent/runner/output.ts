import { redactDeep } from "../../../src/security/redact.ts";
import { safeSlice, utf8Length } from "../../../src/shared/clip.ts";

/**
 * A job's JSONL output, one row per line as produced (herdctl's line shapes). Live streaming and
 * crash recovery read the same rows; the R2 copy is made from them.
 */
export type OutputLine =
	| { type: "system"; subtype: string; content?: string; [key: string]: unknown }
	| { type: "assistant"; content: string; model: string; usage?: Record<string, number> }
	| { type: "tool_use"; tool_name: string; tool_use_id: string; input: unknown }
	| { type: "tool_result"; tool_use_id: string; success: boolean; result?: string; error?: string }
	| { type: "error"; message: string; code?: string; request_id?: string };

/** Appends lines, redacted: a credential that reached a model reply or a tool result is never stored. */
export function appendLines(sql: SqlStorage, jobId: string, lines: OutputLine[], at: number): void {
	const timestamp = new Date(at).toISOString();
	for (const line of lines) {
		// Numbered in the insert itself: one statement per line, not a max() query per call. (`+?`
		// keeps the cached plan: see schema.ts.)
		sql.exec(
			"INSERT INTO output_lines (job_id, line, body) SELECT ?1, coalesce(max(line), 0) + 1, ?2 FROM output_lines WHERE job_id = +?1",
			jobId,
			// A line may carry its own time (a model call's tries, written when the call ends).
			fitRow(redactDeep("timestamp" in line ? line : { ...line, timestamp }) as Record<string, unknown>),
		);
	}
}

/**
 * A Durable Object's SQLite refuses a value over 2 MB (locally nothing does), and a tool's result may
 * be up to 10 MB: a line that would not fit keeps the head of its longest text, saying how much was
 * cut, so the line is written rather than the job failing on it.
 */
export const MAX_LINE_BYTES = 1_900_000;

function fitRow(line: Record<string, unknown>): string {
	const body = JSON.stringify(line);
	// A UTF-16 unit is at most 3 bytes of UTF-8: most lines are measured without encoding them.
	if (body.length * 3 <= MAX_LINE_BYTES) return body;
	const bytes = utf8Length(body);
	if (bytes <= MAX_LINE_BYTES) return body;
	const field = (["result", "error", "content", "message"] as const).find((key) => typeof line[key] === "string");
	if (!field) return JSON.stringify({ type: "error", message: `an output line of ${bytes} bytes was too large to keep`, timestamp: line.timestamp });
	const text = line[field] as string;
	// Cut at the text's own bytes per unit (escapes included), then a tenth less until it fits; never
	// inside an emoji's surrogate pair, whose lone half JSON would keep as a "\ud83d" escape.
	const textBytes = utf8Length(JSON.stringify(text));
	const room = MAX_LINE_BYTES - (bytes - textBytes) - 200;
	let keep = Math.max(0, Math.floor((room / textBytes) * text.length));
	for (;;) {
		const fitted = JSON.stringify({ ...line, [field]: safeSlice(text, keep), truncated: { field, bytes } });
		if (keep === 0 || utf8Length(fitted) <= MAX_LINE_BYTES) return fitted;
		keep = Math.floor(keep * 0.9);
	}
}

/** Batches stop at this many bytes too: a few huge tool results must not fill the isolate's memory. */
const BATCH_BYTES = 4 * 1024 * 1024;

/**
 * Reads lines after `afterLine`, at most `limit` of them and about `maxBytes` (always at least one).
 * The cursor is lazy, so rows past the byte budget are never materialized.
 */
export function readLines(sql: SqlStorage, jobId: string, afterLine = 0, limit = 1000, maxBytes = BATCH_BYTES): { line: number; body: string }[] {
	const out: { line: number; body: string }[] = [];
	let bytes = 0;
	const cursor = sql.exec<{ line: number; body: string }>(
		"SELECT line, body FROM output_lines WHERE job_id = +? AND line > +? ORDER BY line LIMIT +?",
		jobId,
		afterLine,
		limit,
	);
	for (const row of cursor) {
		out.push(row);
		bytes += row.body.length;
		if (bytes >= maxBytes) break;
	}
	return out;
}
