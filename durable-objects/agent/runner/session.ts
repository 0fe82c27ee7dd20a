import type { MessageParam, TextBlockParam, ToolParam, ToolResultBlockParam } from "../../../src/agent/contracts.ts";
import type { AgentDefinition } from "../../../src/config/schema.ts";
import { jsonMemo } from "../../../src/shared/json-memo.ts";
import { MODEL_TOOL_RESULT_CHARS } from "./context.ts";

/** What a job was started with; later turns reuse it, so a deploy mid-run changes nothing under it. */
export interface JobSetup {
	jobId: string;
	sessionId: string;
	/** The agent's definition when the job started: its tools run with this configuration. */
	definition: AgentDefinition;
	system: TextBlockParam[];
	tools: ToolParam[];
	models: string[];
	maxTokens: number;
	deadline: number;
	nextStepAt: number;
	cancelRequested: string | null;
	approvalExpiresAt: number | null;
}

interface SetupRow {
	job_id: string;
	session_id: string;
	definition: string;
	system: string;
	tools: string;
	models: string;
	max_tokens: number;
	deadline: number;
	next_step_at: number;
	cancel_requested: string | null;
	approval_expires_at: number | null;
	[key: string]: SqlStorageValue;
}

const parseDefinition = jsonMemo<AgentDefinition>();
const parseSystem = jsonMemo<TextBlockParam[]>();
const parseTools = jsonMemo<ToolParam[]>();
const parseModels = jsonMemo<string[]>();

function toSetup(row: SetupRow): JobSetup {
	return {
		jobId: row.job_id,
		sessionId: row.session_id,
		definition: parseDefinition(row.definition),
		system: parseSystem(row.system),
		tools: parseTools(row.tools),
		models: parseModels(row.models),
		maxTokens: row.max_tokens,
		deadline: row.deadline,
		nextStepAt: row.next_step_at,
		cancelRequested: row.cancel_requested,
		approvalExpiresAt: row.approval_expires_at,
	};
}

export const NEVER = Number.MAX_SAFE_INTEGER;

export function getSetup(sql: SqlStorage, jobId: string): JobSetup | null {
	const row = sql.exec<SetupRow>("SELECT * FROM job_setup WHERE job_id = ?", jobId).toArray()[0];
	return row ? toSetup(row) : null;
}

export function putSetup(sql: SqlStorage, s: JobSetup): void {
	sql.exec(
		`INSERT OR REPLACE INTO job_setup (job_id, session_id, definition, system, tools, models, max_tokens, deadline, next_step_at, cancel_requested, approval_expires_at)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.jobId,
		s.sessionId,
		JSON.stringify(s.definition),
		JSON.stringify(s.system),
		JSON.stringify(s.tools),
		JSON.stringify(s.models),
		s.maxTokens,
		s.deadline,
		s.nextStepAt,
		s.cancelRequested,
		s.approvalExpiresAt,
	);
}

/**
 * Sets when a job's next step is due. A job already due at `now` that stays due keeps the time it
 * has: the value only orders due jobs, and rewriting it is two billed rows (the row and its index
 * entry), twice a turn.
 */
export function setNextStep(sql: SqlStorage, jobId: string, at: number, now: number): void {
	sql.exec("UPDATE job_setup SET next_step_at = ?1 WHERE job_id = ?2 AND (?1 > ?3 OR next_step_at > ?3)", at, jobId, now);
}

export function requestCancel(sql: SqlStorage, jobId: string, reason: string): void {
	sql.exec("UPDATE job_setup SET cancel_requested = ?, next_step_at = 0 WHERE job_id = ?", reason, jobId);
}

/** Jobs with a step due at or before `now`. */
export function dueJobIds(sql: SqlStorage, now: number): string[] {
	return sql.exec<{ job_id: string }>("SELECT job_id FROM job_setup WHERE next_step_at <= ? ORDER BY next_step_at", now).toArray().map((r) => r.job_id);
}

export function nextStepTime(sql: SqlStorage): number | null {
	const n = sql.exec<{ n: number | null }>("SELECT min(next_step_at) AS n FROM job_setup WHERE next_step_at < ?", NEVER).one().n;
	return n;
}

export function readMessages(sql: SqlStorage, jobId: string): MessageParam[] {
	return sql
		// `+?` keeps the cached plan: see schema.ts.
		.exec<{ role: string; content: string }>("SELECT role, content FROM messages WHERE job_id = +? ORDER BY seq", jobId)
		.toArray()
		.map((r) => ({ role: r.role as "user" | "assistant", content: JSON.parse(r.content) as MessageParam["content"] }));
}

/** Appends a message to the job's conversation; returns its sequence number. */
export function appendMessage(sql: SqlStorage, jobId: string, message: MessageParam): number {
	return sql
		.exec<{ seq: number }>(
			"INSERT INTO messages (job_id, seq, role, content) SELECT ?1, coalesce(max(seq), 0) + 1, ?2, ?3 FROM messages WHERE job_id = +?1 RETURNING seq",
			jobId,
			message.role,
			JSON.stringify(message.content),
		)
		.one().seq;
}

/** Adds `blocks` to the conversation's last message (a paused turn's continuation); its seq. */
export function extendLastMessage(sql: SqlStorage, jobId: string, blocks: readonly unknown[]): number {
	const last = lastMessage(sql, jobId);
	if (!last) throw new Error(`job ${jobId} has no message to extend`);
	const content = JSON.parse(last.content) as MessageParam["content"];
	const before = typeof content === "string" ? [{ type: "text", text: content }] : content;
	sql.exec("UPDATE messages SET content = ? WHERE job_id = ? AND seq = ?", JSON.stringify([...before, ...blocks]), jobId, last.seq);
	return last.seq;
}

/**
 * Adds the user's `text` as the conversation's next user turn, keeping the roles alternating and
 * every tool_use answered, as the Messages API requires: a copied conversation may end on a user
 * turn (its job stopped before the model answered) or on tool calls that never ran (cancelled while
 * they waited); the text joins that user turn, or follows results saying the calls did not run.
 */
export function appendUserText(sql: SqlStorage, jobId: string, text: string): void {
	const last = lastMessage(sql, jobId);
	const prompt: TextBlockParam = { type: "text", text };
	if (!last) {
		appendMessage(sql, jobId, { role: "user", content: text });
		return;
	}
	const content = JSON.parse(last.content) as MessageParam["content"];
	if (last.role === "user") {
		const blocks = typeof content === "string" ? [{ type: "text" as const, text: content }] : content;
		sql.exec("UPDATE messages SET content = ? WHERE job_id = ? AND seq = ?", JSON.stringify([...blocks, prompt]), jobId, last.seq);
		return;
	}
	const results = unansweredResults(content);
	appendMessage(sql, jobId, { role: "user", content: results.length > 0 ? [...results, prompt] : text });
}

/**
 * Readies a copied conversation to be answered again (a fork without a prompt): its final answer is
 * dropped; tool calls that never ran get results saying so; a last user turn (the job stopped
 * before the model answered it) is kept as it is. The API takes no conversation that ends on an
 * assistant turn.
 */
export function reopenConversation(sql: SqlStorage, jobId: string): void {
	const last = lastMessage(sql, jobId);
	if (!last || last.role === "user") return;
	const results = unansweredResults(JSON.parse(last.content) as MessageParam["content"]);
	if (results.length > 0) appendMessage(sql, jobId, { role: "user", content: results });
	else sql.exec("DELETE FROM messages WHERE job_id = ? AND seq = ?", jobId, last.seq);
}

/**
 * Drops a copied conversation's refused last answer: the API asks for the refused turn to be taken
 * out before going on, or the same classifier refuses again. The continue's prompt then joins the
 * turn that was refused, as a rephrasing of it.
 */
export function dropRefusedAnswer(sql: SqlStorage, jobId: string): void {
	const last = lastMessage(sql, jobId);
	if (last?.role === "assistant") sql.exec("DELETE FROM messages WHERE job_id = ? AND seq = ?", jobId, last.seq);
}

function lastMessage(sql: SqlStorage, jobId: string): { seq: number; role: string; content: string } | undefined {
	return sql
		.exec<{ seq: number; role: string; content: string }>("SELECT seq, role, content FROM messages WHERE job_id = +? ORDER BY seq DESC LIMIT 1", jobId)
		.toArray()[0];
}

function unansweredResults(content: MessageParam["content"]): ToolResultBlockParam[] {
	const unanswered = typeof content === "string" ? [] : content.filter((b) => b.type === "tool_use");
	return unanswered.map((b) => ({ type: "tool_result" as const, tool_use_id: (b as { id: string }).id, content: "no result: the job ended before this call's result was recorded", is_error: true }));
}

/**
 * Copies another job's conversation (continue, fork). Empty text blocks (answers stored before they
 * were left out) and an empty answer (a final turn with nothing in it) are left out: the API refuses
 * both once a turn follows them.
 */
export function copyMessages(sql: SqlStorage, fromJob: string, toJob: string): number {
	let kept = 0;
	for (const m of readMessages(sql, fromJob)) {
		const content = typeof m.content === "string" ? m.content : m.content.filter((b) => b.type !== "text" || b.text !== "");
		if (content.length === 0) continue;
		appendMessage(sql, toJob, { ...m, content } as MessageParam);
		kept++;
	}
	return kept;
}

// ── Tool calls ─────────────────────────────────────────────────────────────────────────────────
export type ToolCallStatus = "pending" | "executing" | "completed" | "failed" | "denied";

export interface ToolCall {
	toolUseId: string;
	seq: number;
	name: string;
	input: Record<string, unknown>;
	status: ToolCallStatus;
	decision: "approve" | "deny" | null;
	decidedBy: string | null;
	/** The result's first MODEL_TOOL_RESULT_CHARS + 1 characters: all the model is ever sent of it. */
	result: string | null;
	/** The whole result's length, in characters. */
	resultLength: number;
	isError: boolean;
}

interface ToolCallRow {
	tool_use_id: string;
	seq: number;
	name: string;
	input: string;
	status: string;
	decision: string | null;
	decided_by: string | null;
	result: string | null;
	result_length: number | null;
	is_error: number | null;
	[key: string]: SqlStorageValue;
}

function toToolCall(r: ToolCallRow): ToolCall {
	return {
		toolUseId: r.tool_use_id,
		seq: r.seq,
		name: r.name,
		input: JSON.parse(r.input) as Record<string, unknown>,
		status: r.status as ToolCallStatus,
		decision: r.decision as ToolCall["decision"],
		decidedBy: r.decided_by,
		result: r.result,
		resultLength: r.result_length ?? 0,
		isError: r.is_error === 1,
	};
}

/**
 * The tool calls of the job's latest assistant turn (seq = that message's seq). A result can be a
 * megabyte and the model sees its head only, so only the head leaves SQLite.
 */
export function turnToolCalls(sql: SqlStorage, jobId: string): ToolCall[] {
	return sql
		.exec<ToolCallRow>(
			`SELECT tool_use_id, seq, name, input, status, decision, decided_by, substr(result, 1, ?) AS result, length(result) AS result_length, is_error
			 FROM tool_calls WHERE job_id = +? AND seq = (SELECT max(seq) FROM tool_calls WHERE job_id = +?) ORDER BY rowid`,
			MODEL_TOOL_RESULT_CHARS + 1,
			jobId,
			jobId,
		)
		.toArray()
		.map(toToolCall);
}

export function insertToolCalls(sql: SqlStorage, jobId: string, seq: number, calls: { id: string; name: string; input: unknown }[]): void {
	for (const c of calls) {
		sql.exec(
			"INSERT INTO tool_calls (job_id, tool_use_id, seq, name, input, status) VALUES (?, ?, ?, ?, ?, 'pending')",
			jobId,
			c.id,
			seq,
			c.name,
			JSON.stringify(c.input ?? {}),
		);
	}
}

export function markToolCall(
	sql: SqlStorage,
	jobId: string,
	toolUseId: string,
	patch: { status: ToolCallStatus; result?: string; isError?: boolean; at: number },
): void {
	if (patch.status === "executing") {
		sql.exec("UPDATE tool_calls SET status = 'executing', started_at = ? WHERE job_id = ? AND tool_use_id = ?", patch.at, jobId, toolUseId);
		return;
	}
	sql.exec(
		"UPDATE tool_calls SET status = ?, result = ?, is_error = ?, finished_at = ? WHERE job_id = ? AND tool_use_id = ?",
		patch.status,
		patch.result ?? null,
		patch.isError ? 1 : 0,
		patch.at,
		jobId,
		toolUseId,
	);
}

export function decideToolCall(sql: SqlStorage, jobId: string, toolUseId: string, decision: "approve" | "deny", by: string, input?: Record<string, unknown>): void {
	if (input) sql.exec("UPDATE tool_calls SET input = ? WHERE job_id = ? AND tool_use_id = ?", JSON.stringify(input), jobId, toolUseId);
	sql.exec("UPDATE tool_calls SET decision = ?, decided_by = ? WHERE job_id = ? AND tool_use_id = ?", decision, by, jobId, toolUseId);
}

export function toolCallCount(sql: SqlStorage, jobId: string): number {
	return sql.exec<{ n: number }>("SELECT count(*) AS n FROM tool_calls WHERE job_id = ? AND status IN ('executing', 'completed', 'failed')", jobId).one().n;
}
