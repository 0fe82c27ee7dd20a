import { transition, type JobRecord } from "../../../src/jobs/model.ts";
import { redactDeep } from "../../../src/security/redact.ts";
import { putJob } from "../jobs.ts";
import { lastAssistantMessage } from "./messages.ts";
import { appendLines } from "./output.ts";

/** What was decided on the tool call a job waited on, by a person or by the approval's expiry. */
export interface ApprovalDecision {
	toolUseId: string;
	decision: "approve" | "deny";
	by: string;
	/** What the output says was decided. */
	verdict: string;
	/** Approved with edited input: the input sent in place of the model's. */
	input?: Record<string, unknown> | undefined;
	/** A deny's reason, told the model with the refusal. */
	reason?: string | undefined;
}

/**
 * Resumes a job that waited on an approval, whether a person decided (AgentDO.decide) or it expired:
 * the decision goes in the output, the job runs again, and its next step is due now. The caller has
 * recorded the decision on the tool call; `decided` is null for a job with no pending call to note.
 */
export function resumeFromApproval(sql: SqlStorage, job: JobRecord, decided: ApprovalDecision | null, reason: string, now: number): JobRecord {
	// The output keeps what was decided and, when edited, the input that was sent in place of the
	// model's tool_use line above: an audit of the call reads it here, not only in the tool's logs.
	if (decided) {
		const { toolUseId, decision, by, verdict, input, reason } = decided;
		appendLines(
			sql,
			job.id,
			[{ type: "system", subtype: "approval_decided", content: verdict, tool_use_id: toolUseId, decision, by, ...(input ? { tool_input: redactDeep(input) } : {}), ...(reason ? { reason } : {}) }],
			now,
		);
	}
	const resumed = transition(job, "running", { reason, at: new Date(now) });
	sql.exec("UPDATE job_setup SET approval_expires_at = NULL, next_step_at = ? WHERE job_id = ?", now, job.id);
	putJob(sql, resumed, now);
	return resumed;
}

/**
 * What the model is told before a call's result when an operator approved it with input edited:
 * the conversation keeps the model's own tool_use, so without it the model would go on (and answer,
 * and be delivered) as if its input had been sent. Null for a call run as the model asked.
 */
export function editNote(sql: SqlStorage, jobId: string, call: { toolUseId: string; input: Record<string, unknown>; decision: "approve" | "deny" | null; decidedBy: string | null }): string | null {
	if (call.decision !== "approve") return null;
	const turn = lastAssistantMessage(sql, jobId);
	const asked = Array.isArray(turn?.content) ? turn.content.find((b) => b.type === "tool_use" && b.id === call.toolUseId) : undefined;
	if (!asked || asked.type !== "tool_use" || JSON.stringify(asked.input) === JSON.stringify(call.input)) return null;
	return `(Run with its input edited by ${call.decidedBy ?? "an operator"} before the call: ${JSON.stringify(redactDeep(call.input))})`;
}
