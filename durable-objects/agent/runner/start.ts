import { assemblePrompt } from "../../../src/agent/prompt.ts";
import { toolParams } from "../../../src/agent/tools/definitions.ts";
import type { AgentDefinition } from "../../../src/config/schema.ts";
import { durationSeconds } from "../../../src/config/duration.ts";
import { transition, type JobRecord } from "../../../src/jobs/model.ts";
import { log } from "../../../src/log.ts";
import { logEndedUnstarted } from "./step-common.ts";
import { redact } from "../../../src/security/redact.ts";
import { sessionIdFor } from "../../../src/jobs/session-ids.ts";
import { outputKey, outputLogKey } from "../../../src/store/output-r2.ts";
import { heldClaim, schedulerNow } from "../held-claims.ts";
import { putJob } from "../jobs.ts";
import { SLOT_PASSED } from "../ledger.ts";
import { appendLines } from "./output.ts";
import { appendMessage } from "./messages.ts";
import { planCarry, sessionModeOf, writeCarried } from "./persistent.ts";
import { getSetup, putSetup, sameInstructions } from "./session.ts";
import { dropAllThinking } from "./thinking.ts";

/** Whether a run keeps a plain-text output.log: its schedule's output_to_file, else its agent's. */
function keepsOutputLog(definition: AgentDefinition, job: Pick<JobRecord, "schedule">): boolean {
	const schedule = job.schedule === null ? undefined : definition.schedules[job.schedule];
	return schedule?.output_to_file ?? definition.output_to_file ?? false;
}

/**
 * The prompt `agent` gives `job`, when the job's came from its definition: a scheduled run's (its
 * schedule's, else the agent's), or a manual or webhook run's default (with the payload after it).
 * Null when the request gave it, or the definition has none now.
 */
function definitionPrompt(sql: SqlStorage, job: JobRecord, agent: AgentDefinition): string | null {
	if (job.trigger_type === "schedule") {
		// A schedule the definition no longer has: its run keeps the prompt it was claimed with.
		const schedule = job.schedule === null ? undefined : agent.schedules[job.schedule];
		return schedule ? (schedule.prompt ?? agent.prompt ?? null) : null;
	}
	const chars = sql.exec<{ chars: number | null }>("SELECT default_prompt_chars AS chars FROM occurrences WHERE job_id = ?", job.id).toArray()[0]?.chars ?? null;
	if (chars === null || !agent.prompt || job.prompt === null) return null;
	return redact(agent.prompt) + job.prompt.slice(chars);
}

/**
 * A continue's or fork's copied conversation keeps its thinking only where the request it goes on in
 * still begins as its source's did: under a definition changed since (allow_definition_change), the
 * system prompt or tools differ, and every thinking block was signed over the old ones.
 */
function keepThinkingIfSigned(sql: SqlStorage, job: JobRecord, system: unknown, tools: unknown): void {
	const source = job.continued_from ?? job.forked_from;
	const before = source ? getSetup(sql, source) : null;
	if (before && sameInstructions(before, { system, tools })) return;
	dropAllThinking(sql, job.id);
}

/**
 * Room for a full answer or a large tool call, and the thinking before it: the 5.5 models think
 * unasked (adaptively, at high effort by default), and thinking counts against max_tokens, so 8,192
 * left a hard turn cut short before its answer. Not more: an alarm run starts a call up to 10
 * minutes in (ALARM_BUDGET_MS) and is ended at 15, its calls in flight with it, and 16,000 tokens
 * stream in about 4–5 minutes. A model with a lower limit is asked within it (see the model client).
 * The job's usage limits bound the spend: max_tokens costs nothing unused.
 */
const MAX_TOKENS = 16_000;

/**
 * Moves a pending job to running: saves its manifest (prompt, tools, models, deadline) and its
 * first message, so every later turn rebuilds the same request whatever is deployed meanwhile.
 * `revision` is the definition's now (null if not known yet): a job records the definition it runs
 * on, not the one it was queued under. A continue or fork whose agent changed while it waited is
 * cancelled instead, unless asked for with allow_definition_change: it was admitted for the
 * definition its session ran on, and runs on no other unasked. A scheduled run held past its slot's
 * grace window (the agent paused, disabled or at capacity) is judged as a slot missed by that much:
 * see heldClaim. Not run, it ends cancelled and its ledger row skipped, saying why.
 */
export function startJob(sql: SqlStorage, queued: JobRecord, agent: AgentDefinition, revision: string | null, notepad: ReadonlyMap<string, string>, now: number): JobRecord {
	let job = queued;
	const followUp = job.trigger_type === "continue" || job.trigger_type === "fork";
	// Asked for with allow_definition_change: it runs on the definition of its start, whichever.
	const consented = followUp && sql.exec("DELETE FROM follow_up_consent WHERE job_id = ? RETURNING job_id", job.id).toArray().length > 0;
	if (revision !== null && revision !== job.definition_revision) {
		if (followUp && !consented) {
			const kind = job.trigger_type;
			const reason = `agent ${agent.name}'s definition changed while this ${kind} waited (${job.definition_revision} → ${revision}); ${kind} the job again, with allow_definition_change to run it under the new definition`;
			const cancelled = transition(job, "cancelled", { reason, at: new Date(now) });
			putJob(sql, cancelled, now);
			logEndedUnstarted(cancelled, reason);
			return cancelled;
		}
		// Its limits too: they are the definition's, and it runs on this one (its manifest says so).
		// So is its prompt, unless the request gave it: the operator who fixed a prompt while runs
		// waited (a pause, a full agent) means the fix for them too.
		job = { ...job, definition_revision: revision, usage_limits: agent.usage_limits ?? null, prompt: definitionPrompt(sql, job, agent) ?? job.prompt };
	}
	// Lateness on the clock that dated the slot and its claim; the record's own times stay the wall's.
	const held = heldClaim(job, agent, () => schedulerNow(sql, now));
	if (!held.run) {
		const cancelled = transition(job, "cancelled", { reason: held.reason, at: new Date(now), error: { type: SLOT_PASSED, message: held.reason } });
		putJob(sql, cancelled, now);
		logEndedUnstarted(cancelled, held.reason);
		return cancelled;
	}
	if (held.late) job = { ...job, dispatch: "late" };
	const parts = assemblePrompt(agent, {
		prompt: job.prompt ?? "",
		notepad,
		trigger: job.trigger_type,
	});
	const tools = toolParams(agent);
	// Continued and forked jobs arrive with their conversation already copied in.
	const copiedIn = sql.exec("SELECT 1 FROM messages WHERE job_id = ? LIMIT 1", job.id).toArray().length > 0;
	const carry = !copiedIn && sessionModeOf(agent, job) === "persistent" ? planCarry(sql, agent, { system: parts.system, tools, user: parts.user }, now) : null;
	const carried = carry?.kind === "continue" ? carry : null;
	if (copiedIn) keepThinkingIfSigned(sql, job, parts.system, tools);
	// A new session is named by its first job (see session-ids.ts): found later through the D1
	// index's primary key, with nothing more written per job.
	const sessionId = job.session_id ?? carried?.sessionId ?? sessionIdFor(job.id);
	putSetup(sql, {
		jobId: job.id,
		sessionId,
		definition: agent,
		system: parts.system,
		tools,
		models: [agent.model, ...agent.fallback_models],
		maxTokens: MAX_TOKENS,
		deadline: now + durationSeconds(agent.timeout) * 1000,
		nextStepAt: now,
		cancelRequested: null,
		approvalExpiresAt: null,
		persistentFrom: carry === null ? null : carry.kind === "continue" ? carry.from : carry.found,
	});
	if (carried) writeCarried(sql, job.id, carried, parts.user);
	else if (!copiedIn) appendMessage(sql, job.id, { role: "user", content: parts.user });
	// output_file (and output_log) name the R2 objects from the start; they are written when the job ends.
	const running = {
		...transition(job, "running", { reason: held.note ?? "started", at: new Date(now) }),
		session_id: sessionId,
		output_file: outputKey(job.agent, job.id),
		output_log: keepsOutputLog(agent, job) ? outputLogKey(job.agent, job.id) : null,
		...(carried ? { continued_from: carried.from } : {}),
	};
	appendLines(sql, job.id, [{ type: "system", subtype: "init", content: `job started with ${agent.model}`, session_id: sessionId, model: agent.model }], now);
	if (carry) appendLines(sql, job.id, [{ type: "system", subtype: "session", content: carry.note, session_id: sessionId, ...(carried ? { continued_from: carried.from } : {}) }], now);
	putJob(sql, running, now);
	log.info("job.started", {
		agent: job.agent,
		job_id: job.id,
		session_id: sessionId,
		...(held.note ? { note: held.note } : {}),
		...(carry ? { persistent_session: carry.kind, ...(carried ? { continued_from: carried.from, messages_left_out: carried.left, tool_results_left_out: carried.resultsLeft } : {}) } : {}),
	});
	return running;
}
