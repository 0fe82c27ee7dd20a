/**
 * A JSONL output line as the clients read it (the CLI and the dashboard): herdctl's shapes, every
 * field optional but the type, since each line type carries its own. The server writes them as
 * durable-objects/agent/runner/output.ts's OutputLine, with a timestamp, and with `truncated` when a
 * line was cut to fit a storage row. Types only: both clients erase it.
 */
export interface OutputLineView {
	type: string;
	timestamp?: string;
	subtype?: string;
	content?: string;
	model?: string;
	/** An assistant line's turn, a refused answer's retry line, or a call_aborted line's call: tokens by class. */
	usage?: Partial<Record<"input_tokens" | "output_tokens" | "cache_creation_input_tokens" | "cache_read_input_tokens", number>>;
	tool_name?: string;
	tool_use_id?: string;
	input?: unknown;
	/** An approval decided with edited input: what was sent in place of the model's. */
	tool_input?: unknown;
	success?: boolean;
	result?: string;
	error?: string;
	message?: string;
	code?: string;
	status?: string;
	exit_reason?: string;
	/** Set when the line's text was cut to fit a storage row: which field, and the whole line's size. */
	truncated?: { field?: string; bytes?: number };
	[key: string]: unknown;
}
