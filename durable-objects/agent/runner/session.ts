import type { TextBlockParam, ToolParam } from "../../../src/agent/contracts.ts";
import type { AgentDefinition } from "../../../src/config/schema.ts";
import type { ToolCallTally } from "../../../src/jobs/schema.ts";
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
	/** Billed model requests that were not turns (see {@link noteExtraRequests}). */
	extraRequests: number;
	/**
	 * A persistent run's view of its agent's persistent session at its start: the last completed run
	 * it found ("" for none); null for a run not in persistent mode (see persistent.ts).
	 */
	persistentFrom: string | null;
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
	extra_requests: number;
	persistent_from: string | null;
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
		extraRequests: row.extra_requests,
		persistentFrom: row.persistent_from,
	};
}

export const NEVER = Number.MAX_SAFE_INTEGER;

/**
 * Whether a request would begin as `setup`'s did: the same system prompt and tools, which a
 * persistent session resumes only under, and every thinking block of its conversation was signed over.
 */
export function sameInstructions(setup: Pick<JobSetup, "system" | "tools">, request: { system: unknown; tools: unknown }): boolean {
	return JSON.stringify(setup.system) === JSON.stringify(request.system) && JSON.stringify(setup.tools) === JSON.stringify(request.tools);
}

export function getSetup(sql: SqlStorage, jobId: string): JobSetup | null {
	const row = sql.exec<SetupRow>("SELECT * FROM job_setup WHERE job_id = ?", jobId).toArray()[0];
	return row ? toSetup(row) : null;
}

/** A job's setup as it starts: no requests made yet. */
export function putSetup(sql: SqlStorage, s: Omit<JobSetup, "extraRequests">): void {
	sql.exec(
		`INSERT OR REPLACE INTO job_setup (job_id, session_id, definition, system, tools, models, max_tokens, deadline, next_step_at, cancel_requested, approval_expires_at, persistent_from)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
		s.persistentFrom,
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

/**
 * Counts billed model requests that num_turns does not: a paused turn's continuation (the same turn)
 * and a fallback model's refused answer. max_requests limits all requests, not turns. And, apart,
 * requests sent that were not billed (`unbilled`: job.finished's model_tries), in the same write.
 */
export function noteExtraRequests(sql: SqlStorage, jobId: string, n: number, unbilled = 0): void {
	if (n > 0 || unbilled > 0) sql.exec("UPDATE job_setup SET extra_requests = extra_requests + ?, unbilled_tries = unbilled_tries + ? WHERE job_id = ?", n, unbilled, jobId);
}

/** Asks a running job's loop to end it cancelled; `by`, who asked (kept when a later reason adds to the first). */
export function requestCancel(sql: SqlStorage, jobId: string, reason: string, by?: string): void {
	sql.exec("UPDATE job_setup SET cancel_requested = ?, cancel_by = coalesce(?, cancel_by), next_step_at = 0 WHERE job_id = ?", reason, by ?? null, jobId);
}

/** Jobs with a step due at or before `now`. */
export function dueJobIds(sql: SqlStorage, now: number): string[] {
	return sql.exec<{ job_id: string }>("SELECT job_id FROM job_setup WHERE next_step_at <= ? ORDER BY next_step_at", now).toArray().map((r) => r.job_id);
}

/** Jobs whose next step is set for later than `now` (a rate limit's wait, an approval's expiry). */
export function waitingJobIds(sql: SqlStorage, now: number): string[] {
	return sql.exec<{ job_id: string }>("SELECT job_id FROM job_setup WHERE next_step_at > ? AND next_step_at < ?", now, NEVER).toArray().map((r) => r.job_id);
}

export function nextStepTime(sql: SqlStorage): number | null {
	const n = sql.exec<{ n: number | null }>("SELECT min(next_step_at) AS n FROM job_setup WHERE next_step_at < ?", NEVER).one().n;
	return n;
}

// ── Tool calls ─────────────────────────────────────────────────────────────────────────────────
/**
 * `interrupted`: cut off mid-run by a forced cancel, its effect unknown (a continue or fork says so,
 * as for a call left `executing` by a crash); never re-run.
 */
export type ToolCallStatus = "pending" | "executing" | "completed" | "failed" | "denied" | "interrupted";

export interface ToolCall {
	toolUseId: string;
	seq: number;
	name: string;
	input: Record<string, unknown>;
	status: ToolCallStatus;
	decision: "approve" | "deny" | null;
	decidedBy: string | null;
	/** A deny's reason, as its decider gave it; null without one. */
	decisionReason: string | null;
	/** The result's first MODEL_TOOL_RESULT_CHARS + 1 characters: all the model is ever sent of it. */
	result: string | null;
	/** The whole result's length, in characters. */
	resultLength: number;
	isError: boolean;
	/** When it began executing and when it ended (epoch ms); null until then. */
	startedAt: number | null;
	finishedAt: number | null;
}

interface ToolCallRow {
	tool_use_id: string;
	seq: number;
	name: string;
	input: string;
	status: string;
	decision: string | null;
	decided_by: string | null;
	decision_reason: string | null;
	result: string | null;
	result_length: number | null;
	is_error: number | null;
	started_at: number | null;
	finished_at: number | null;
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
		decisionReason: r.decision_reason,
		result: r.result,
		resultLength: r.result_length ?? 0,
		isError: r.is_error === 1,
		startedAt: r.started_at,
		finishedAt: r.finished_at,
	};
}

// The result's head only (its first ? characters, bound first): a result can be a megabyte.
const TOOL_CALL_COLUMNS =
	"tool_use_id, seq, name, input, status, decision, decided_by, decision_reason, substr(result, 1, ?) AS result, coalesce(result_chars, length(result)) AS result_length, is_error, started_at, finished_at";

/**
 * The tool calls of the job's latest assistant turn (seq = that message's seq). A result can be a
 * megabyte and the model sees its head only, so only the head leaves SQLite.
 */
export function turnToolCalls(sql: SqlStorage, jobId: string): ToolCall[] {
	return sql
		.exec<ToolCallRow>(
			`SELECT ${TOOL_CALL_COLUMNS} FROM tool_calls WHERE job_id = +? AND seq = (SELECT max(seq) FROM tool_calls WHERE job_id = +?) ORDER BY rowid`,
			MODEL_TOOL_RESULT_CHARS + 1,
			jobId,
			jobId,
		)
		.toArray()
		.map(toToolCall);
}

/**
 * A page of the job's tool calls in the order the model made them (deputy's `runtime`: the calls a
 * job executed), after the call at rowid `after`; `next` is where the next page starts, null at the
 * end. Each result is its head, up to `resultChars`: the JSONL's tool_result line has it whole.
 */
export function toolCallPage(sql: SqlStorage, jobId: string, limit: number, after: number, resultChars: number): { calls: ToolCall[]; next: number | null } {
	const rows = sql
		.exec<ToolCallRow & { position: number }>(
			`SELECT rowid AS position, ${TOOL_CALL_COLUMNS} FROM tool_calls WHERE job_id = ? AND rowid > ? ORDER BY rowid LIMIT ?`,
			resultChars,
			jobId,
			after,
			limit + 1,
		)
		.toArray();
	const page = rows.slice(0, limit);
	return { calls: page.map(toToolCall), next: rows.length > limit ? page.at(-1)!.position : null };
}

/** One of the job's tool calls by its id (its result's head only, as the turn's calls), or null. */
export function findToolCall(sql: SqlStorage, jobId: string, toolUseId: string): ToolCall | null {
	const row = sql
		.exec<ToolCallRow>(`SELECT ${TOOL_CALL_COLUMNS} FROM tool_calls WHERE job_id = ? AND tool_use_id = ?`, MODEL_TOOL_RESULT_CHARS + 1, jobId, toolUseId)
		.toArray()[0];
	return row ? toToolCall(row) : null;
}

/** The job's tool call an operator decided last (an expired approval records no decision), if any. */
export function lastDecidedCall(sql: SqlStorage, jobId: string): ToolCall | null {
	const row = sql
		.exec<ToolCallRow>(`SELECT ${TOOL_CALL_COLUMNS} FROM tool_calls WHERE job_id = ? AND decision IS NOT NULL ORDER BY seq DESC, rowid DESC LIMIT 1`, MODEL_TOOL_RESULT_CHARS + 1, jobId)
		.toArray()[0];
	return row ? toToolCall(row) : null;
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
	// Only the head the model is ever sent (see migration 20); the JSONL keeps the whole result.
	const result = patch.result ?? null;
	sql.exec(
		"UPDATE tool_calls SET status = ?, result = ?, result_chars = ?, is_error = ?, finished_at = ? WHERE job_id = ? AND tool_use_id = ?",
		patch.status,
		result === null ? null : result.slice(0, MODEL_TOOL_RESULT_CHARS + 1),
		result === null ? null : result.length,
		patch.isError ? 1 : 0,
		patch.at,
		jobId,
		toolUseId,
	);
}

export function decideToolCall(
	sql: SqlStorage,
	jobId: string,
	toolUseId: string,
	decision: "approve" | "deny",
	by: string,
	input?: Record<string, unknown>,
	reason?: string,
): void {
	if (input) sql.exec("UPDATE tool_calls SET input = ? WHERE job_id = ? AND tool_use_id = ?", JSON.stringify(input), jobId, toolUseId);
	sql.exec("UPDATE tool_calls SET decision = ?, decided_by = ?, decision_reason = ? WHERE job_id = ? AND tool_use_id = ?", decision, by, reason ?? null, jobId, toolUseId);
}

/** The calls that ran (or began to): what max_tool_calls counts, and a job's tally. */
const RAN = "status IN ('executing', 'completed', 'failed', 'interrupted')";

/**
 * The calls a job ran, and how many of them failed: its result said so, or it was cut off, by a forced
 * cancel (interrupted) or by the run's end (executing still, as the job ends indeterminate).
 */
export function toolCallTally(sql: SqlStorage, jobId: string): ToolCallTally {
	return sql
		.exec<{ made: number; failed: number }>(
			`SELECT count(*) AS made, coalesce(sum(status IN ('interrupted', 'executing') OR (is_error = 1 AND status IN ('completed', 'failed'))), 0) AS failed
			 FROM tool_calls WHERE job_id = ? AND ${RAN}`,
			jobId,
		)
		.one();
}

export function toolCallCount(sql: SqlStorage, jobId: string): number {
	return sql.exec<{ n: number }>(`SELECT count(*) AS n FROM tool_calls WHERE job_id = ? AND ${RAN}`, jobId).one().n;
}
