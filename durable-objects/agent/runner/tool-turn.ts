// A step that settles a turn's tool calls: run, gated for approval, or cut off.
import type { MessageParam, ToolOutcome } from "../../../src/agent/contracts.ts";
import { executeTool } from "../../../src/agent/tools/index.ts";
import { requiresApproval } from "../../../src/agent/tools/definitions.ts";
import { durationSeconds } from "../../../src/config/duration.ts";
import { transition, type JobRecord } from "../../../src/jobs/model.ts";
import { log } from "../../../src/log.ts";
import { redact } from "../../../src/security/redact.ts";
import { getJob } from "../jobs.ts";
import { clearOldToolResults, turnResultsForModel } from "./context.ts";
import { editNote, resumeFromApproval } from "./approval.ts";
import { appendMessage } from "./messages.ts";
import { getSetup, markToolCall, requestCancel, setNextStep, turnToolCalls, type JobSetup } from "./session.ts";
import { limitReached } from "./usage.ts";
import { finish, limitFailure, out, save, used, type StepDeps, type StepResult } from "./step-common.ts";

/** The result recorded for a call a forced cancel cut off, in the JSONL and in its tool_calls row. */
const FORCED_CUT_OFF = "cut off by a forced cancel while it ran: whether it took effect is unknown";

/** Whether an assistant turn asked for the client tools the job's latest tool calls are (and so is not a paused turn). */
export function awaitsToolResults(sql: SqlStorage, jobId: string, content: MessageParam["content"]): boolean {
	if (typeof content === "string") return false;
	const asked = new Set(content.flatMap((b) => (b.type === "tool_use" ? [b.id] : [])));
	if (asked.size === 0) return false;
	const calls = turnToolCalls(sql, jobId);
	return calls.length > 0 && calls.every((c) => asked.has(c.toolUseId));
}

export async function settleTools(deps: StepDeps, job: JobRecord, setup: JobSetup): Promise<StepResult> {
	const agent = setup.definition;
	for (const call of turnToolCalls(deps.sql, job.id)) {
		if (call.status === "executing") {
			// It was started and never recorded as finished: its side effect is unaccounted for.
			const since = setup.cancelRequested !== null ? `; ${setup.cancelRequested} since` : deps.now() >= setup.deadline ? "; the job timed out since" : "";
			finish(deps, job, "indeterminate", {
				reason: `tool call ${call.name} (${call.toolUseId}) was interrupted; it is not re-run${since}`,
				error: { type: "indeterminate", message: `the run stopped while tool ${call.name} was executing; its effect is unknown` },
			});
			log.error("job.indeterminate", { agent: job.agent, job_id: job.id, tool: call.name, tool_use_id: call.toolUseId });
			return "done";
		}
		if (call.status !== "pending") continue;
		// Before asking anyone: an approval the usage limit would overrule pages a person for nothing.
		// (A denied call is not made, so the limit does not stop it.)
		const limit = call.decision === "deny" ? null : limitReached(job, job.usage_limits, used(deps, job, setup), "before_tool");
		if (limit) {
			finish(deps, job, "failed", limitFailure(limit));
			return "done";
		}
		if (call.decision === null && requiresApproval(agent, call.name)) {
			// One reading of the clock: the request's time, its transition's and its expiry's base agree
			// to the millisecond (read thrice, expires_at could be requested_at plus the wait less 1 ms).
			const requestedAt = deps.now();
			const expires = requestedAt + durationSeconds(agent.approval_timeout) * 1000;
			const waiting = transition(job, "approval_pending", {
				reason: `tool ${call.name} needs approval`,
				at: new Date(requestedAt),
				pending_approval: {
					tool_use_id: call.toolUseId,
					tool_name: call.name,
					input: call.input,
					requested_at: new Date(requestedAt).toISOString(),
					expires_at: new Date(Math.min(expires, setup.deadline)).toISOString(),
				},
			});
			// Woken at the approval's expiry or the job's deadline, whichever comes first.
			deps.sql.exec("UPDATE job_setup SET approval_expires_at = ?, next_step_at = ? WHERE job_id = ?", expires, Math.min(expires, setup.deadline), job.id);
			// The job's own timeout may come first: the wait said is the one the job will see.
			const until = expires <= setup.deadline ? `${new Date(expires).toISOString()}` : `${new Date(setup.deadline).toISOString()}, the job's timeout (before its approval_timeout)`;
			out(deps, job.id, { type: "system", subtype: "approval_requested", content: `tool ${call.name} is waiting for approval until ${until}`, tool_use_id: call.toolUseId });
			log.info("job.waiting", { agent: job.agent, job_id: job.id, reason: "approval", tool: call.name, tool_use_id: call.toolUseId, until: new Date(Math.min(expires, setup.deadline)).toISOString() });
			save(deps, waiting);
			return "wait";
		}
		if (call.decision === "deny") {
			const reason = `denied by ${call.decidedBy ?? "an operator"}: the tool call was not executed${call.decisionReason ? `; the reason given: ${call.decisionReason}` : ""}`;
			markToolCall(deps.sql, job.id, call.toolUseId, { status: "denied", result: reason, isError: true, at: deps.now() });
			out(deps, job.id, { type: "tool_result", tool_use_id: call.toolUseId, success: false, error: reason });
			continue;
		}
		// The pass's budget spent (by this turn's calls before, up to 30 s each, or other jobs'): the
		// rest wait, pending, for the next alarm run, whose first step takes them up where this one
		// stopped. Run on, the pass would outlast the platform's 15 minutes of wall time for an alarm,
		// which ends it with every call then in flight, this job's and others', indeterminate.
		if (deps.handOver()) return "continue";
		// Recorded (and durable: the output gate holds the request until it is) before the call leaves.
		markToolCall(deps.sql, job.id, call.toolUseId, { status: "executing", at: deps.now() });
		// Neither a plain cancel nor the job's timeout aborts a tool call in flight (its own 30 s cap
		// bounds it): a request cut off after it left may have had its effect, which would then be
		// unknown, and a continued job's model, told it failed, could make it again under a new
		// idempotency key. Let finish, its outcome is recorded, and the job stops right after. Only an
		// operator's forced cancel cuts it off, and the record then says its effect is unknown.
		const startedAt = Date.now();
		// `job`, read before this await, is still the record after it: only the job's own loop writes a
		// running job's record (a cancel writes job_setup, see cancel.ts), and one loop steps it at a time.
		let outcome = await runTool(deps, job, call, agent);
		// One line a call that ran, whatever the tool (a failing http_fetch said nothing): its kind of
		// failure, never its content or input, which can quote a URL with a credential in its query.
		const toolLine = { agent: job.agent, job_id: job.id, tool: call.name, tool_use_id: call.toolUseId, ok: outcome?.ok ?? false, ms: Date.now() - startedAt };
		if (outcome === null) log.warn("tool.call", { ...toolLine, failure: "cut_off" });
		else if (outcome.ok) log.info("tool.call", toolLine);
		else log.warn("tool.call", { ...toolLine, failure: outcome.failure ?? "error_result" });
		if (outcome === null) {
			markToolCall(deps.sql, job.id, call.toolUseId, { status: "interrupted", result: FORCED_CUT_OFF, isError: true, at: deps.now() });
			out(deps, job.id, { type: "tool_result", tool_use_id: call.toolUseId, success: false, error: FORCED_CUT_OFF });
			log.warn("tool.cut_off", { agent: job.agent, job_id: job.id, tool: call.name, tool_use_id: call.toolUseId });
			// The cancel that cut it off is recorded (cancel_requested): the next step ends the job with
			// its reason, which now names the call cut off.
			const forced = getSetup(deps.sql, job.id)?.cancelRequested ?? "force-cancelled";
			requestCancel(deps.sql, job.id, `${forced}; tool call ${call.name} (${call.toolUseId}) was cut off, its effect unknown`);
			return "continue";
		}
		const edited = editNote(deps.sql, job.id, call);
		outcome = { ok: outcome.ok, content: redact(edited ? `${edited}\n${outcome.content}` : outcome.content) };
		markToolCall(deps.sql, job.id, call.toolUseId, { status: outcome.ok ? "completed" : "failed", result: outcome.content, isError: !outcome.ok, at: deps.now() });
		out(deps, job.id, { type: "tool_result", tool_use_id: call.toolUseId, success: outcome.ok, ...(outcome.ok ? { result: outcome.content } : { error: outcome.content }) });
		const current = getJob(deps.sql, job.id);
		// Cancelled, or past its timeout, while the call ran: the turn's other calls are not made.
		const after = getSetup(deps.sql, job.id);
		if (!current || current.status !== "running" || !after || after.cancelRequested || deps.now() >= after.deadline) return "continue";
	}
	// Every call of the turn has its result: hand them to the model in the order it asked, within
	// the turn's share of the budget (see turnShares).
	const calls = turnToolCalls(deps.sql, job.id);
	const contents = turnResultsForModel(calls);
	const results = calls.map((c, i) => ({
		type: "tool_result" as const,
		tool_use_id: c.toolUseId,
		content: contents[i] ?? "",
		...(c.isError ? { is_error: true } : {}),
	}));
	// One transaction: the results' message may take several rows (see messages.ts).
	const cleared = deps.transact(() => {
		appendMessage(deps.sql, job.id, { role: "user", content: results });
		return clearOldToolResults(deps.sql, job.id);
	});
	if (cleared.results > 0) {
		out(deps, job.id, {
			type: "system",
			subtype: "context_cleared",
			content: `${cleared.results} earlier tool result(s), ${cleared.chars} characters, cleared from the conversation sent to the model to keep it within the context window; this output keeps them whole`,
			results: cleared.results,
			chars: cleared.chars,
		});
	}
	setNextStep(deps.sql, job.id, deps.now(), deps.now());
	return "continue";
}

/**
 * Runs a tool call, registered so a forced cancel can cut it off: the tool's outcome, or null when
 * the cut came first. The race holds even where a request in flight does not observe the abort.
 */
function runTool(deps: StepDeps, job: JobRecord, call: { name: string; input: Record<string, unknown>; toolUseId: string }, agent: JobSetup["definition"]): Promise<ToolOutcome | null> {
	const controller = new AbortController();
	// Listened to before the tool starts, so a cut wins the race over the tool's own abort error.
	const cut = new Promise<null>((resolve) => controller.signal.addEventListener("abort", () => resolve(null), { once: true }));
	deps.toolCalls.set(job.id, { controller, name: call.name, toolUseId: call.toolUseId });
	const run = executeTool(agent, call.name, call.input, call.toolUseId, { agent, env: deps.env, jobId: job.id, signal: controller.signal }).catch((err: unknown) => ({
		ok: false,
		content: `tool failed: ${err instanceof Error ? err.message : String(err)}`,
		failure: "threw",
	}));
	return Promise.race([run, cut]).finally(() => deps.toolCalls.delete(job.id));
}

export function expireApproval(deps: StepDeps, job: JobRecord, setup: JobSetup): StepResult {
	const pending = job.pending_approval;
	const by = `expiry after ${setup.definition.approval_timeout}`;
	if (pending) {
		deps.sql.exec(
			"UPDATE tool_calls SET decision = 'deny', decided_by = ? WHERE job_id = ? AND tool_use_id = ? AND decision IS NULL",
			by,
			job.id,
			pending.tool_use_id,
		);
	}
	// Decided by the clock, but decided: the output records it as it records a person's decision.
	const decided = pending && { toolUseId: pending.tool_use_id, decision: "deny" as const, by, verdict: `${pending.tool_name} denied by ${by}` };
	resumeFromApproval(deps.sql, job, decided, "approval expired: treated as denied", deps.now());
	// The decision nobody made, logged as one: without it the job, denied its call, reads as an
	// ordinary success. A warning: someone was asked and did not answer in time.
	log.warn("job.approval_decided", {
		agent: job.agent,
		job_id: job.id,
		decision: "deny",
		by,
		expired: true,
		...(pending ? { tool: pending.tool_name, tool_use_id: pending.tool_use_id } : {}),
	});
	deps.notify(job.id);
	return "continue";
}
