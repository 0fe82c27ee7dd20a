import type { AgentDefinition } from "../../../src/config/schema.ts";
import { createJob, isFinal, type JobRecord } from "../../../src/jobs/model.ts";
import { redact } from "../../../src/security/redact.ts";
import { isRefusal, refuse, type Refusal } from "../../../src/shared/refusal.ts";
import { freshJobId, getJob, putJob } from "../jobs.ts";
import { insertOccurrence } from "../ledger.ts";
import type { AgentState } from "../state.ts";
import { admissionRefusal, keyedJob, keyJob, type Idempotency } from "../triggers.ts";
import type { ToolResultBlockParam } from "../../../src/agent/contracts.ts";
import { turnResultsForModel } from "./context.ts";
import { answerToDrop, appendUserText, copyMessages, dropRefusedAnswer, reopenConversation, type AnswerToolUse } from "./messages.ts";
import { getSetup, turnToolCalls } from "./session.ts";
import { REFUSED_AT_LIMIT } from "./step-common.ts";

export interface FollowUpRequest {
	kind: "continue" | "fork";
	sourceId: string;
	prompt?: string | undefined;
	owner: string;
	allowDefinitionChange: boolean;
	/** An Idempotency-Key: a retry under it gets the job it made (`created` false), not a second. */
	idempotency?: Idempotency | undefined;
}

/**
 * A new pending job from a finished job's conversation: `continue` keeps its session, `fork` starts
 * a new one (forked_from). Refused when the agent's definition changed since, unless allowed, so a
 * session never silently resumes under different instructions. Synchronous: run it in one
 * transaction so the job, its copied conversation and its ledger row commit together.
 */
export function createFollowUp(
	sql: SqlStorage,
	state: AgentState | null,
	agent: AgentDefinition | null,
	revision: string | null,
	req: FollowUpRequest,
	now: number,
	drawJobId: (now: number) => string,
): { job: JobRecord; created: boolean } | Refusal {
	if (req.idempotency !== undefined) {
		const prior = keyedJob(sql, req.idempotency, now);
		if (isRefusal(prior)) return prior;
		if (prior !== null) return { job: prior, created: false };
	}
	const source = getJob(sql, req.sourceId);
	if (!source) return refuse(404, `no job ${req.sourceId}`);
	if (!isFinal(source.status)) return refuse(409, `job ${req.sourceId} is still ${source.status}; wait for it to finish`);
	if (!state || !agent || revision === null) return refuse(404, `agent ${source.agent} no longer exists`);
	const closed = admissionRefusal(sql, agent, state);
	if (closed) return closed;
	if (revision !== source.definition_revision && !req.allowDefinitionChange) {
		return refuse(
			409,
			`agent ${agent.name}'s definition changed since job ${req.sourceId} ran (${source.definition_revision} → ${revision}); send "allow_definition_change": true to ${req.kind} anyway`,
		);
	}
	if (req.kind === "continue" && !req.prompt) return refuse(400, "continue needs a prompt", [{ path: "prompt", message: "required" }]);
	const setup = getSetup(sql, req.sourceId);
	if (!setup) return refuse(409, `job ${req.sourceId} never started, so it has no conversation to ${req.kind}`);
	const prompt = req.prompt === undefined ? undefined : redact(req.prompt);
	const job = createJob(
		{
			id: freshJobId(sql, now, drawJobId),
			agent: agent.name,
			trigger_type: req.kind,
			prompt: prompt ?? source.prompt,
			definition_revision: revision,
			session_id: req.kind === "continue" ? setup.sessionId : null,
			forked_from: req.kind === "fork" ? req.sourceId : null,
			continued_from: req.kind === "continue" ? req.sourceId : null,
			usage_limits: agent.usage_limits ?? null,
			owner: req.owner,
		},
		new Date(now),
	);
	// A fork without a prompt re-runs the source's last answer from the same conversation: an answer it
	// would only drop again (up to MAX_MESSAGE_BYTES, in pieces) is neither read nor copied.
	const dropped = req.kind === "fork" && !prompt ? answerToDrop(sql, req.sourceId) : null;
	copyMessages(sql, req.sourceId, job.id, dropped);
	if (endedRefused(source) && dropped === null) dropRefusedAnswer(sql, job.id);
	const answer = recordedResults(sql, req.sourceId);
	if (prompt) appendUserText(sql, job.id, prompt, answer);
	else reopenConversation(sql, job.id, answer);
	if (req.allowDefinitionChange) sql.exec("INSERT OR IGNORE INTO follow_up_consent (job_id) VALUES (?)", job.id);
	insertOccurrence(sql, { schedule: null, source: "manual", scheduledInstant: null, dispatch: "manual", claimedAt: now, status: "claimed", jobId: job.id });
	putJob(sql, job, now);
	if (req.idempotency !== undefined) keyJob(sql, req.idempotency, job.id, now);
	return { job, created: true };
}

/**
 * The results of the tool calls the source job stopped at (its last turn's), as its record holds
 * them: a call that ran, even one the job was cancelled or timed out during, is given its result,
 * because a model told it had none may make it again (deputy's rule: a call that ran is never
 * repeated). A call interrupted mid-run (the object died, or a forced cancel cut it off) says its
 * effect is unknown; one never made says so.
 */
export function recordedResults(sql: SqlStorage, sourceId: string): AnswerToolUse {
	const turn = turnToolCalls(sql, sourceId);
	const calls = new Map(turn.map((c) => [c.toolUseId, c]));
	// Cut as the source job's own turn would give them to the model (see turnResultsForModel).
	const contents = turnResultsForModel(turn);
	const forModel = new Map(turn.map((c, i) => [c.toolUseId, contents[i] ?? ""]));
	return (toolUseId): ToolResultBlockParam => {
		const call = calls.get(toolUseId);
		const result = (content: string, isError: boolean): ToolResultBlockParam => ({ type: "tool_result", tool_use_id: toolUseId, content, ...(isError ? { is_error: true } : {}) });
		switch (call?.status) {
			case "completed":
			case "failed":
			case "denied":
				return result(forModel.get(toolUseId) ?? "", call.isError);
			case "executing":
				return result("interrupted: the job stopped while this call ran, so whether it took effect is unknown; check before making it again", true);
			case "interrupted":
				return result("interrupted: a forced cancel cut this call off while it ran, so whether it took effect is unknown; check before making it again", true);
			default:
				return result("not run: the job ended before this call was made", true);
		}
	};
}

/**
 * A job whose last answer is not to be sent back: a refusal (failed as one, or stopped by max_requests
 * before a fallback could answer it), or an answer that reused a tool_use id (the API refuses it).
 */
function endedRefused(source: JobRecord): boolean {
	if (source.error?.type === "refusal" || source.error?.type === "tool_use_id_reused") return true;
	return source.error?.type === "usage_limit" && (source.transitions.at(-1)?.reason ?? "").endsWith(REFUSED_AT_LIMIT);
}
