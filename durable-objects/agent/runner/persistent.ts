import type { MessageParam, TextBlockParam, ToolParam } from "../../../src/agent/contracts.ts";
import { DEFAULT_MAX_CONTEXT_TOKENS, durationSeconds, type AgentDefinition, type SessionMode } from "../../../src/config/schema.ts";
import type { JobRecord } from "../../../src/jobs/model.ts";
import { recordedResults } from "./follow-up.ts";
import { appendMessage, appendUserText, cleanedMessages } from "./messages.ts";
import { getSetup, type JobSetup } from "./session.ts";

/**
 * herdctl's persistent sessions: with `session.mode: persistent`, a run continues the conversation
 * of the agent's last completed run of the session, as a continue would, instead of starting anew.
 * A run that fails or is cancelled leaves the session where it was (herdctl updates a session on
 * success only), so the next run continues from the last good answer.
 */

/** The `persistent_session` row: the session and its last completed run. */
export interface PersistentSession {
	sessionId: string;
	jobId: string;
	/** When the session's first run started: its `timeout` counts from here. */
	startedAt: number;
	/** When `jobId` completed: its `idle_timeout` counts from here. */
	activeAt: number;
}

interface PersistentRow {
	session_id: string;
	job_id: string;
	started_at: number;
	active_at: number;
	[key: string]: SqlStorageValue;
}

const toSession = (r: PersistentRow): PersistentSession => ({ sessionId: r.session_id, jobId: r.job_id, startedAt: r.started_at, activeAt: r.active_at });

export function readPersistentSession(sql: SqlStorage): PersistentSession | null {
	const row = sql.exec<PersistentRow>("SELECT session_id, job_id, started_at, active_at FROM persistent_session WHERE id = 1").toArray()[0];
	return row ? toSession(row) : null;
}

/** Forgets the agent's persistent session (its jobs stay): the next run starts a fresh one. */
export function clearPersistentSession(sql: SqlStorage): PersistentSession | null {
	const row = sql.exec<PersistentRow>("DELETE FROM persistent_session WHERE id = 1 RETURNING session_id, job_id, started_at, active_at").toArray()[0];
	return row ? toSession(row) : null;
}

/**
 * The session mode a run starts in: its schedule's `session.mode`, else its agent's. Null for a
 * continue or fork, which name the conversation they carry on from.
 */
export function sessionModeOf(definition: AgentDefinition, job: Pick<JobRecord, "trigger_type" | "schedule">): SessionMode | null {
	if (job.trigger_type === "continue" || job.trigger_type === "fork") return null;
	const schedule = job.schedule === null || job.schedule === undefined ? undefined : definition.schedules[job.schedule];
	return schedule?.session?.mode ?? definition.session?.mode ?? "fresh_per_job";
}

/** When the session ends, and the setting that ends it then; null when none is set. */
export function sessionExpiry(definition: AgentDefinition, s: PersistentSession): { at: number; by: string } | null {
	const ends: { at: number; by: string }[] = [];
	const { timeout, idle_timeout } = definition.session ?? {};
	if (timeout !== undefined) ends.push({ at: s.startedAt + durationSeconds(timeout) * 1000, by: `timeout ${timeout}, from its first run's start` });
	if (idle_timeout !== undefined) ends.push({ at: s.activeAt + durationSeconds(idle_timeout) * 1000, by: `idle_timeout ${idle_timeout}, from its last completed run` });
	return ends.reduce<{ at: number; by: string } | null>((first, e) => (first === null || e.at < first.at ? e : first), null);
}

/** A message's size for the context bound: 4 characters a token, the usual estimate for English. */
export const estimateTokens = (content: MessageParam["content"]): number => Math.ceil((typeof content === "string" ? content.length : JSON.stringify(content).length) / 4);

/**
 * Where a run may begin a carried conversation: a user turn that answers no tool call (a run's
 * prompt, or a continue's), so the messages from it on are a whole conversation the API takes.
 */
function startsRun(m: MessageParam): boolean {
	return m.role === "user" && (typeof m.content === "string" || !m.content.some((b) => b.type === "tool_result"));
}

/**
 * The first message to carry so the conversation from it, plus `reserve` tokens (the new run's
 * prompt), fits `maxTokens`: the oldest whole runs are left out first. Null when even the newest
 * run alone is over the bound.
 */
export function carryWindow(messages: readonly MessageParam[], maxTokens: number, reserve: number): number | null {
	let total = reserve + messages.reduce((n, m) => n + estimateTokens(m.content), 0);
	for (const [i, m] of messages.entries()) {
		if (startsRun(m) && total <= maxTokens) return i;
		total -= estimateTokens(m.content);
	}
	return null;
}

/** How a persistent run starts: in the session, from its last completed run, or fresh (and why). */
export type Carry =
	| { kind: "continue"; sessionId: string; from: string; messages: MessageParam[]; left: number; note: string }
	| { kind: "fresh"; note: string };

/**
 * Decides what a persistent run carries. A fresh start always says why, in the run's output: an
 * expired session, a last run retention removed, instructions or tools that changed since (a
 * session never resumes under different instructions, as a continue never does unasked), or a
 * last conversation already over max_context_tokens.
 */
export function planCarry(sql: SqlStorage, agent: AgentDefinition, request: { system: TextBlockParam[]; tools: ToolParam[]; user: string }, now: number): Carry {
	const s = readPersistentSession(sql);
	if (!s) return { kind: "fresh", note: "persistent session: none yet, so this run starts one" };
	const fresh = (why: string): Carry => ({ kind: "fresh", note: `persistent session ${s.sessionId} not continued: ${why}; this run starts a new one` });
	const expiry = sessionExpiry(agent, s);
	if (expiry !== null && now >= expiry.at) return fresh(`it expired at ${new Date(expiry.at).toISOString()} (${expiry.by})`);
	const last: JobSetup | null = getSetup(sql, s.jobId);
	if (!last) return fresh(`its last completed run ${s.jobId} is no longer kept (retention)`);
	if (JSON.stringify(last.system) !== JSON.stringify(request.system) || JSON.stringify(last.tools) !== JSON.stringify(request.tools)) {
		return fresh(`the agent's system prompt or tools changed since its last completed run ${s.jobId}, and a session never resumes under different instructions`);
	}
	const maxTokens = agent.session?.max_context_tokens ?? DEFAULT_MAX_CONTEXT_TOKENS;
	const messages = cleanedMessages(sql, s.jobId);
	const start = carryWindow(messages, maxTokens, estimateTokens(request.user));
	if (start === null) return fresh(`its last run's conversation alone is over max_context_tokens (${maxTokens})`);
	const carried = messages.slice(start);
	const left = start > 0 ? `; its ${start} oldest messages left out to stay within max_context_tokens (${maxTokens})` : "";
	return {
		kind: "continue",
		sessionId: s.sessionId,
		from: s.jobId,
		messages: carried,
		left: start,
		note: `persistent session ${s.sessionId} continued from ${s.jobId} (${carried.length} messages carried${left})`,
	};
}

/** Writes a continuing run's first messages: the carried conversation, then its prompt. */
export function writeCarried(sql: SqlStorage, jobId: string, carry: Extract<Carry, { kind: "continue" }>, user: string): void {
	for (const m of carry.messages) appendMessage(sql, jobId, m);
	appendUserText(sql, jobId, user, recordedResults(sql, carry.from));
}

/**
 * Moves the agent's persistent session on to a run that just completed: one that ran in persistent
 * mode (in the session, or starting it afresh), or a continue of the session's own runs. Other runs
 * leave it as it is; fresh-mode runs read nothing here.
 */
export function noteCompletedRun(sql: SqlStorage, job: JobRecord, setup: JobSetup, now: number): void {
	if (job.trigger_type === "fork") return;
	const mode = sessionModeOf(setup.definition, job);
	if (mode === "fresh_per_job") return;
	const current = readPersistentSession(sql);
	if (mode === null && current?.sessionId !== setup.sessionId) return;
	const startedAt = current?.sessionId === setup.sessionId ? current.startedAt : job.started_at ? Date.parse(job.started_at) : now;
	sql.exec(
		`INSERT INTO persistent_session (id, session_id, job_id, started_at, active_at) VALUES (1, ?, ?, ?, ?)
		 ON CONFLICT (id) DO UPDATE SET session_id = excluded.session_id, job_id = excluded.job_id, started_at = excluded.started_at, active_at = excluded.active_at`,
		setup.sessionId,
		job.id,
		startedAt,
		now,
	);
}
