import { redactDeep } from "../../../src/security/redact.ts";

/**
 * A job's JSONL output, one row per line as produced (herdctl's line shapes). Live streaming and
 * crash recovery read the same rows; the R2 copy is made from them.
 */
export type OutputLine =
	| { type: "system"; subtype: string; content?: string; [key: string]: unknown }
	| { type: "assistant"; content: string; model: string; usage?: Record<string, number> }
	| { type: "tool_use"; tool_name: string; tool_use_id: string; input: unknown }
	| { type: "tool_result"; tool_use_id: string; success: boolean; result?: string; error?: string }
	| { type: "error"; message: string; code?: string };

/** Appends lines, redacted: a credential that reached a model reply or a tool result is never stored. */
export function appendLines(sql: SqlStorage, jobId: string, lines: OutputLine[], at: number): number {
	let last = sql.exec<{ n: number | null }>("SELECT max(line) AS n FROM output_lines WHERE job_id = ?", jobId).one().n ?? 0;
	const timestamp = new Date(at).toISOString();
	for (const line of lines) {
		last++;
		sql.exec("INSERT INTO output_lines (job_id, line, body) VALUES (?, ?, ?)", jobId, last, JSON.stringify(redactDeep({ ...line, timestamp })));
	}
	return last;
}

export function readLines(sql: SqlStorage, jobId: string, afterLine = 0, limit = 1000): { line: number; body: string }[] {
	return sql
		.exec<{ line: number; body: string }>(
			"SELECT line, body FROM output_lines WHERE job_id = ? AND line > ? ORDER BY line LIMIT ?",
			jobId,
			afterLine,
			limit,
		)
		.toArray();
}
