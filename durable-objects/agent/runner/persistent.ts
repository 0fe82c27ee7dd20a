import type { MessageParam, TextBlockParam, ToolParam } from "../../../src/agent/contracts.ts";
import { assemblePrompt } from "../../../src/agent/prompt.ts";
import { toolParams } from "../../../src/agent/tools/definitions.ts";
import { durationSeconds } from "../../../src/config/duration.ts";
import { DEFAULT_MAX_CONTEXT_TOKENS, type AgentDefinition, type SessionMode } from "../../../src/config/schema.ts";
import type { JobRecord } from "../../../src/jobs/model.ts";
import { recordedResults } from "./follow-up.ts";
import { appendMessage, appendUserText, cleanedMessages } from "./messages.ts";
import { getSetup, sameInstructions, type JobSetup } from "./session.ts";
import { messagesWithoutThinking } from "./thinking.ts";

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
	/** Why it is not to be continued though unexpired (a run failed on what it carried), or null. */
	endedBy: string | null;
}

interface PersistentRow {
	session_id: string;
	job_id: string;
	started_at: number;
	active_at: number;
	ended_by: string | null;
	[key: string]: SqlStorageValue;
}

const toSession = (r: PersistentRow): PersistentSession => ({ sessionId: r.session_id, jobId: r.job_id, startedAt: r.started_at, activeAt: r.active_at, endedBy: r.ended_by });

export function readPersistentSession(sql: SqlStorage): PersistentSession | null {
	const row = sql.exec<PersistentRow>("SELECT session_id, job_id, started_at, active_at, ended_by FROM persistent_session WHERE id = 1").toArray()[0];
	return row ? toSession(row) : null;
}

/**
 * Forgets the agent's persistent session (its jobs stay): the next run starts a fresh one. Runs
 * still under way forget where they found it, so none moves a session on when it completes: not
 * the one forgotten, and not a new one from a run that found none (which would undo the reset).
 */
export function clearPersistentSession(sql: SqlStorage): PersistentSession | null {
	const row = sql.exec<PersistentRow>("DELETE FROM persistent_session WHERE id = 1 RETURNING session_id, job_id, started_at, active_at, ended_by").toArray()[0];
	sql.exec(
		`UPDATE job_setup SET persistent_from = NULL
		 WHERE persistent_from IS NOT NULL AND job_id IN (SELECT id FROM jobs WHERE status IN ('running', 'approval_pending'))`,
	);
	return row ? toSession(row) : null;
}

/** Whether any of the agent's runs are persistent: its own mode, or a schedule's. */
function usesPersistentSessions(definition: AgentDefinition): boolean {
	return definition.session?.mode === "persistent" || Object.values(definition.schedules).some((s) => s.session?.mode === "persistent");
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

/**
 * A message's size for the context bound, erring high: 4 ASCII characters a token (the usual
 * estimate for English), 2 for the scripts of two UTF-8 bytes (Cyrillic, Greek, Hebrew, Arabic…) and
 * 1 for the rest (CJK, Indic scripts, emoji), which the tokenizer splits about that finely. At 4 for
 * everything a Japanese session carried about four times its bound and failed "prompt is too long".
 */
export function estimateTokens(content: MessageParam["content"]): number {
	const text = typeof content === "string" ? content : JSON.stringify(content);
	let quarters = 0;
	for (const ch of text) {
		const code = ch.codePointAt(0)!;
		quarters += code < 0x80 ? 1 : code < 0x800 ? 2 : 4;
	}
	return Math.ceil(quarters / 4);
}

/**
 * The message a carried conversation may begin with in place of `m`, or null where none can. A user
 * turn that answers no tool call (a run's prompt, or a continue's) begins one whole. So does a run's
 * prompt that joined the tool results its previous run ended on (that run's final answer was empty,
 * and is left out: see cleanedMessages, appendUserText), as the prompt alone: the calls those results
 * answer are left out with the runs before it. Without it such a run was no place to begin, and its
 * session was dropped as too large though the run's own part fitted.
 */
function runStart(m: MessageParam): MessageParam | null {
	if (m.role !== "user") return null;
	if (typeof m.content === "string" || !m.content.some((b) => b.type === "tool_result")) return m;
	const prompt = m.content.filter((b) => b.type !== "tool_result");
	return prompt.length > 0 ? { role: "user", content: prompt } : null;
}

/** The tool results a message carries. */
const toolResults = (m: MessageParam): number => (typeof m.content === "string" ? 0 : m.content.filter((b) => b.type === "tool_result").length);

/**
 * The conversation to carry so it, plus `reserve` tokens (the new run's prompt), fits `maxTokens`:
 * the oldest whole runs are left out first (`left` messages, the first carried one perhaps cut to
 * its run's prompt, `results` tool results left out of it: see runStart). Null when even the
 * newest run alone is over the bound.
 */
export function carryWindow(messages: readonly MessageParam[], maxTokens: number, reserve: number): { left: number; results: number; carried: MessageParam[] } | null {
	const sizes = messages.map((m) => estimateTokens(m.content));
	let total = sizes.reduce((n, size) => n + size, reserve);
	for (const [i, m] of messages.entries()) {
		const size = sizes[i] ?? 0;
		const start = runStart(m);
		if (start && total - size + estimateTokens(start.content) <= maxTokens) {
			return { left: i, results: toolResults(m) - toolResults(start), carried: [start, ...messages.slice(i + 1)] };
		}
		total -= size;
	}
	return null;
}

/** Whether the agent's next persistent run continues its session, and why not when it does not. */
export type Assessment = { continues: true; session: PersistentSession } | { continues: false; session: PersistentSession | null; why: string };

/**
 * What a persistent run would find, whatever its prompt: a session to continue, or why it starts a
 * new one (an expired session, a last run retention removed, instructions or tools that changed
 * since: a session never resumes under different instructions, as a continue never does unasked;
 * a run that failed on the conversation it carried).
 */
function assessSession(sql: SqlStorage, agent: AgentDefinition, request: { system: TextBlockParam[]; tools: ToolParam[] }, now: number): Assessment {
	const s = readPersistentSession(sql);
	if (!s) return { continues: false, session: null, why: "none yet, so this run starts one" };
	const not = (why: string): Assessment => ({ continues: false, session: s, why });
	if (s.endedBy !== null) return not(s.endedBy);
	const expiry = sessionExpiry(agent, s);
	if (expiry !== null && now >= expiry.at) return not(`it expired at ${new Date(expiry.at).toISOString()} (${expiry.by})`);
	const last: JobSetup | null = getSetup(sql, s.jobId);
	if (!last) return not(`its last completed run ${s.jobId} is no longer kept (retention)`);
	if (!sameInstructions(last, request)) {
		return not(`the agent's system prompt or tools changed since its last completed run ${s.jobId}, and a session never resumes under different instructions`);
	}
	return { continues: true, session: s };
}

/** How a persistent run starts: in the session, from its last completed run, or fresh (and why). */
export type Carry =
	| { kind: "continue"; sessionId: string; from: string; messages: MessageParam[]; left: number; resultsLeft: number; note: string }
	| { kind: "fresh"; note: string; found: string };

/**
 * Decides what a persistent run carries; a fresh start always says why, in the run's output.
 * `found` is the last completed run the session stood at (see noteCompletedRun).
 */
export function planCarry(sql: SqlStorage, agent: AgentDefinition, request: { system: TextBlockParam[]; tools: ToolParam[]; user: string }, now: number): Carry {
	const a = assessSession(sql, agent, request, now);
	const found = a.session?.jobId ?? "";
	if (!a.continues) {
		const note = a.session ? `persistent session ${a.session.sessionId} not continued: ${a.why}; this run starts a new one` : `persistent session: ${a.why}`;
		return { kind: "fresh", note, found };
	}
	const s = a.session;
	const fresh = (why: string): Carry => ({ kind: "fresh", note: `persistent session ${s.sessionId} not continued: ${why}; this run starts a new one`, found });
	const maxTokens = agent.session?.max_context_tokens ?? DEFAULT_MAX_CONTEXT_TOKENS;
	const prompt = estimateTokens(request.user);
	if (prompt > maxTokens) return fresh(`this run's prompt alone (about ${prompt} tokens) is over max_context_tokens (${maxTokens})`);
	const messages = cleanedMessages(sql, s.jobId);
	const window = carryWindow(messages, maxTokens, prompt);
	if (window === null) return fresh(`its last run's part of the conversation, with this run's prompt, is over max_context_tokens (${maxTokens})`);
	const { left: start, results } = window;
	// Cut at its start, the conversation carried holds no thinking signed over it whole (see thinking.ts).
	const carried = start > 0 || results > 0 ? messagesWithoutThinking(window.carried) : window.carried;
	// The first carried message cut to its run's prompt: the tool results it began with are left out
	// too (the calls they answer are in the messages before it), and the note counts them.
	const what = [
		...(start > 0 ? [`its ${start} oldest messages`] : []),
		...(results > 0 ? [`the ${results} tool result${results === 1 ? "" : "s"} the first carried message began with`] : []),
	];
	const left = what.length > 0 ? `; ${what.join(" and ")} left out to stay within max_context_tokens (${maxTokens})` : "";
	return {
		kind: "continue",
		sessionId: s.sessionId,
		from: s.jobId,
		messages: carried,
		left: start,
		resultsLeft: results,
		note: `persistent session ${s.sessionId} continued from ${s.jobId} (${carried.length} messages carried${left})`,
	};
}

/** Writes a continuing run's first messages: the carried conversation, then its prompt. */
export function writeCarried(sql: SqlStorage, jobId: string, carry: Extract<Carry, { kind: "continue" }>, user: string): void {
	for (const m of carry.messages) appendMessage(sql, jobId, m);
	appendUserText(sql, jobId, user, recordedResults(sql, carry.from));
}

/**
 * Moves the agent's persistent session on to a run that just completed, if the session still stands
 * where the run found it: a persistent run (in the session, or one starting it afresh) that found it
 * at `persistentFrom`, or a continue of the session's last completed run. A reset, a delete, or
 * another run completing first is never undone, and a continue of an older job of the session does
 * not wind it back. A continue moves it on whatever the agent's mode now: an agent switched to
 * fresh_per_job keeps its session, and a continue of its last completed run is what carries it on
 * (GET …/sessions/current says so, and `drover sessions resume` continues that run); a mode that
 * ignored such a continue left every later resume branching from the same old run. Runs that are
 * neither read nothing here.
 */
export function noteCompletedRun(sql: SqlStorage, job: JobRecord, setup: JobSetup, now: number): void {
	if (job.trigger_type === "fork") return;
	const persistentRun = setup.persistentFrom !== null;
	if (!persistentRun && job.trigger_type !== "continue") return;
	const current = readPersistentSession(sql);
	const standsAt = persistentRun ? setup.persistentFrom : job.continued_from;
	if ((current?.jobId ?? "") !== standsAt) return;
	const startedAt = current?.sessionId === setup.sessionId ? current.startedAt : job.started_at ? Date.parse(job.started_at) : now;
	sql.exec(
		`INSERT INTO persistent_session (id, session_id, job_id, started_at, active_at, ended_by) VALUES (1, ?, ?, ?, ?, NULL)
		 ON CONFLICT (id) DO UPDATE SET session_id = excluded.session_id, job_id = excluded.job_id, started_at = excluded.started_at, active_at = excluded.active_at, ended_by = NULL`,
		setup.sessionId,
		job.id,
		startedAt,
		now,
	);
}

/**
 * The API's refusals of a request too large for the model or malformed in its messages (the error
 * types and wording of its 400 and 413 answers), as drover's error message carries them.
 */
const REFUSED_FOR_ITS_MESSAGES = /\binvalid_request_error: (?:prompt is too long|input length and `?max_tokens`? exceed context limit|messages\.\d)|\brequest_too_large\b/i;

/**
 * Failures a carried conversation causes, so that every later run carrying it would fail the same
 * way: on the run's first model call (a later call's failure is the run's own growth), the model's
 * context window outgrown, or the API refusing the request for its size or its messages.
 */
function failedOnConversation(job: JobRecord, error: { type: string; message: string }): boolean {
	const turns = job.usage.num_turns ?? 0;
	// An answer that stopped at the context window counts as a turn; a refused request does not.
	if (error.type === "context_window_exceeded") return turns <= 1;
	return error.type === "invalid_request" && turns === 0 && REFUSED_FOR_ITS_MESSAGES.test(error.message);
}

/**
 * Ends the persistent session a run failed on: the next run starts a new one, saying why, instead
 * of carrying the same conversation into the same failure until the session expires.
 */
export function noteFailedRun(sql: SqlStorage, job: JobRecord, error: { type: string; message: string }): void {
	if (!failedOnConversation(job, error) || job.continued_from === null || job.trigger_type === "continue" || job.trigger_type === "fork") return;
	const setup = getSetup(sql, job.id);
	if (!setup?.persistentFrom || setup.persistentFrom !== job.continued_from) return;
	sql.exec(
		"UPDATE persistent_session SET ended_by = ? WHERE id = 1 AND job_id = ?",
		`run ${job.id} failed on the conversation it carried (${error.type}: ${error.message})`,
		job.continued_from,
	);
}

/**
 * The agent's persistent session as its next persistent run would find it (GET …/sessions/current),
 * all of it read from the definition this object runs on, so the answer cannot mix two of them.
 */
export interface SessionView {
	assessment: Assessment;
	expiresAt: number | null;
	mode: SessionMode;
	scheduleModes: Record<string, SessionMode>;
	maxContextTokens: number;
}

export function persistentSessionView(sql: SqlStorage, agent: AgentDefinition, now: number): SessionView {
	const settings = {
		mode: agent.session?.mode ?? "fresh_per_job",
		scheduleModes: Object.fromEntries(Object.entries(agent.schedules).flatMap(([name, s]) => (s.session ? [[name, s.session.mode]] : []))),
		maxContextTokens: agent.session?.max_context_tokens ?? DEFAULT_MAX_CONTEXT_TOKENS,
	};
	const assessment: Assessment = usesPersistentSessions(agent)
		? // The system prompt does not depend on the run's trigger or notepad: any run's request would do.
			assessSession(sql, agent, { system: assemblePrompt(agent, { prompt: "", notepad: new Map(), trigger: "manual" }).system, tools: toolParams(agent) }, now)
		: {
				continues: false,
				session: readPersistentSession(sql),
				why: "the agent's runs start fresh (session.mode fresh_per_job); a continue of the session's last completed run (last_job) carries it on",
			};
	const expiresAt = assessment.session ? (sessionExpiry(agent, assessment.session)?.at ?? null) : null;
	return { assessment, expiresAt, ...settings };
}
