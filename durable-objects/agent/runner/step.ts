import { getJob } from "../jobs.ts";
import { getSetup, turnToolCalls } from "./session.ts";
import { finish, type StepDeps, type StepResult } from "./step-common.ts";
import { callModel } from "./model-turn.ts";
import { expireApproval, settleTools } from "./tool-turn.ts";

/**
 * One step of a running job: settle the latest turn's tool calls, or make the next model call.
 * Every outcome is committed before the step returns, so a step repeated after a crash either
 * finds its work done or repeats only a model call — never a tool call.
 */
export async function step(deps: StepDeps, jobId: string): Promise<StepResult> {
	const job = getJob(deps.sql, jobId);
	const setup = getSetup(deps.sql, jobId);
	if (!job || !setup || !["running", "approval_pending"].includes(job.status)) return "done";
	const now = deps.now();
	const calls = turnToolCalls(deps.sql, jobId);
	// A call still executing when a step begins was cut off by the object's end (a live one is awaited
	// within its own step, and a job is stepped by one loop at a time): its effect is unknown, and a
	// cancel or timeout since must not hide that.
	if (calls.some((c) => c.status === "executing")) return settleTools(deps, job, setup);

	if (setup.cancelRequested !== null) {
		finish(deps, job, "cancelled", { reason: setup.cancelRequested });
		return "done";
	}
	// The wall-clock timeout holds while the job waits too (for a human, for a rate limit).
	if (now >= setup.deadline) {
		finish(deps, job, "failed", { reason: "timeout", exit_reason: "timeout", error: { type: "timeout", message: `job exceeded its timeout of ${setup.definition.timeout}` } });
		return "done";
	}
	if (job.status === "approval_pending") {
		if (setup.approvalExpiresAt === null || setup.approvalExpiresAt > now) return "wait";
		return expireApproval(deps, job, setup);
	}
	if (calls.some((c) => c.status === "pending")) return settleTools(deps, job, setup);
	return callModel(deps, job, setup);
}
