import { InvalidToolSchemaError, toolInputProblems } from "../../src/agent/tools/input-check.ts";
import { isFinal, type JobRecord } from "../../src/jobs/model.ts";
import { log } from "../../src/log.ts";
import { redact } from "../../src/security/redact.ts";
import { clip } from "../../src/shared/clip.ts";

/** A decision's line in the job's transitions: a cancel's reason (500 characters at most) with room for the tool's and decider's names. */
const TRANSITION_REASON_CHARS = 600;
import { refuse, type Refusal } from "../../src/shared/refusal.ts";
import { cancelledAs, type JobControl } from "./cancel.ts";
import { getJob } from "./jobs.ts";
import { computeRevision, knownRevision } from "./revisions.ts";
import { resumeFromApproval } from "./runner/approval.ts";
import { decideToolCall, findToolCall, getSetup, lastDecidedCall } from "./runner/session.ts";
import { currentDefinition, readState } from "./state.ts";

export interface Decision {
	decision: "approve" | "deny";
	toolInput: Record<string, unknown> | undefined;
	by: string;
	allowDefinitionChange: boolean;
	toolUseId: string | undefined;
	/** A deny's reason, told the model (screened and redacted at the API). */
	reason?: string | undefined;
}

/**
 * Records a human decision on the tool call a job is waiting on, and resumes the job. With
 * `toolUseId` the decision is for that call only: another call waiting by then (a retried or late
 * decision after the model made a second gated call) is refused, never decided in its place.
 */
export async function decideApproval(control: JobControl, jobId: string, given: Decision): Promise<JobRecord | Refusal> {
	const { sql, passes, hub } = control;
	const { decision, toolInput, by, allowDefinitionChange, toolUseId } = given;
	// Stored and told the model redacted, as a continue's prompt is.
	const reason = decision === "deny" && given.reason !== undefined ? redact(given.reason) : undefined;
	// The agent's revision now, digested (async) before the checks and writes below, which yield nowhere.
	const state = readState(sql);
	const agent = state && currentDefinition(state);
	const revision = state && agent ? (knownRevision(state, agent) ?? (await computeRevision(agent))) : null;
	// Read before the decision is written, for the resumed job's alarm to be set in the same turn.
	const alarm = await passes.alarm();
	const job = getJob(sql, jobId);
	if (!job) return refuse(404, `no job ${jobId}`);
	if (job.status !== "approval_pending" || !job.pending_approval) return refuse(409, notWaiting(sql, job, toolUseId));
	const pending = job.pending_approval;
	if (toolUseId !== undefined && toolUseId !== pending.tool_use_id) return refuse(409, otherCallWaiting(sql, jobId, toolUseId, pending));
	const setup = getSetup(sql, jobId);
	// Past the job's deadline it runs nothing more, even before the alarm that times it out has run.
	if (setup && setup.deadline <= Date.now()) {
		return refuse(409, `job ${jobId} timed out at ${new Date(setup.deadline).toISOString()}; it runs nothing more, so ${pending.tool_name} cannot be approved or denied`);
	}
	// Past its expiry the call counts as denied, even before the alarm that records it has run.
	if (setup?.approvalExpiresAt != null && setup.approvalExpiresAt <= Date.now()) {
		return refuse(409, `the approval of ${pending.tool_name} expired at ${new Date(setup.approvalExpiresAt).toISOString()}; it counts as denied`);
	}
	// As for a continue or a fork: a call approved hours later may be to a tool the agent no longer
	// has. (A deleted agent's job finishes on the definition it ran on, as its running jobs do.)
	if (decision === "approve" && revision !== null && revision !== job.definition_revision && !allowDefinitionChange) {
		return refuse(
			409,
			`agent ${job.agent}'s definition changed since job ${jobId} started (${job.definition_revision} → ${revision}); send "allow_definition_change": true to approve anyway, or deny`,
		);
	}
	const edited = decision === "approve" ? toolInput : undefined;
	if (edited) {
		// Held to the schema the model was given: the tool's receiver expects that shape either way.
		const definition = setup?.definition;
		let problems: ReturnType<typeof toolInputProblems>;
		try {
			problems = definition ? toolInputProblems(definition, pending.tool_name, edited) : [];
		} catch (err) {
			if (!(err instanceof InvalidToolSchemaError)) throw err;
			return refuse(409, `${err.message}, so edited input cannot be checked against it: approve without tool_input, deny, or fix the agent's definition`);
		}
		if (problems.length > 0) {
			const said = problems.map((p) => `${p.path}: ${p.message}`).join("; ");
			return refuse(400, `tool_input does not match ${pending.tool_name}'s input_schema: ${said}`, problems);
		}
	}
	decideToolCall(sql, jobId, pending.tool_use_id, decision, by, edited, reason);
	const verdict = `${pending.tool_name} ${decision === "approve" ? "approved" : "denied"} by ${by}${edited ? " with edited input" : ""}${reason ? `: ${reason}` : ""}`;
	// The transition's copy is cut (the record goes whole to every hook, and in every read of the job);
	// the output line and the model's tool result keep it whole.
	const resumed = resumeFromApproval(sql, job, { toolUseId: pending.tool_use_id, decision, by, verdict, input: edited, reason }, clip(verdict, TRANSITION_REASON_CHARS), Date.now());
	const armed = passes.alarmWithWrite(alarm);
	log.info("job.approval_decided", {
		agent: job.agent,
		job_id: jobId,
		decision,
		by,
		tool: pending.tool_name,
		tool_use_id: pending.tool_use_id,
		input_edited: edited !== undefined,
		allow_definition_change: allowDefinitionChange,
	});
	hub.publish(jobId);
	await Promise.all([armed, passes.workNow()]);
	// The list and the dashboard agree with the answer once it is given.
	await passes.closing.flushIndex();
	return resumed;
}

/**
 * A job waiting for no approval: what became of the call named, so a caller retrying a decision
 * whose answer it lost learns whether its first try took effect (and whose did).
 */
function notWaiting(sql: SqlStorage, job: JobRecord, toolUseId: string | undefined): string {
	// A cancel that crossed the decision says whose it was, and why.
	const notice = `job ${job.id} is ${job.status}${cancelledAs(job)}, not waiting for an approval`;
	if (toolUseId === undefined) {
		// A decision naming no call, crossing another one's: the call it meant was most likely the one
		// decided last, and whose decision took effect is what its sender needs to know.
		const last = lastDecidedCall(sql, job.id);
		return last ? `${notice}; ${last.name} (${last.toolUseId}), the call decided last, ${alreadyDecided(last)}` : notice;
	}
	const named = findToolCall(sql, job.id, toolUseId);
	if (!named) return `${notice}; it has no tool call ${toolUseId}`;
	if (named.decision) return `${notice}; ${named.name} (${toolUseId}) ${alreadyDecided(named)}`;
	// A call left waiting by a job that ended (cancelled, timed out) never runs: "pending" read as still to come.
	if (named.status === "pending" && isFinal(job.status)) return `${notice}; ${named.name} (${toolUseId}) was never decided, and will not run`;
	return `${notice}; ${named.name} (${toolUseId}) was not decided (it is ${named.status})`;
}

const alreadyDecided = (call: { decision: "approve" | "deny" | null; decidedBy: string | null }): string =>
	`was already ${call.decision === "approve" ? "approved" : "denied"} by ${call.decidedBy ?? "an operator"}`;

/** Why a decision for call `toolUseId` is refused while `pending` waits: which call waits, and what became of the named one. */
function otherCallWaiting(sql: SqlStorage, jobId: string, toolUseId: string, pending: NonNullable<JobRecord["pending_approval"]>): string {
	const named = findToolCall(sql, jobId, toolUseId);
	const waiting = `job ${jobId} is waiting on another tool call: ${pending.tool_name} (${pending.tool_use_id})`;
	if (!named) return `${waiting}; it has no tool call ${toolUseId}. Nothing was decided: read the job and decide the call waiting now`;
	const fate = named.decision ? alreadyDecided(named) : `was not waiting for an approval (it is ${named.status})`;
	return `${waiting}; ${named.name} (${toolUseId}) ${fate}. Nothing was decided: read the job and decide the call waiting now`;
}
