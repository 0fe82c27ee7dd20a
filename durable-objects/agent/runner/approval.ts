import { transition, type JobRecord } from "../../../src/jobs/model.ts";
import { redactDeep } from "../../../src/security/redact.ts";
import { putJob } from "../jobs.ts";
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
		const { toolUseId, decision, by, verdict, input } = decided;
		appendLines(sql, job.id, [{ type: "system", subtype: "approval_decided", content: verdict, tool_use_id: toolUseId, decision, by, ...(input ? { tool_input: redactDeep(input) } : {}) }], now);
	}
	const resumed = transition(job, "running", { reason, at: new Date(now) });
	sql.exec("UPDATE job_setup SET approval_expires_at = NULL, next_step_at = ? WHERE job_id = ?", now, job.id);
	putJob(sql, resumed, now);
	return resumed;
}
