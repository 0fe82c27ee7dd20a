import type { JobRecord } from "../../src/jobs/model.ts";
import { isFinal, transition } from "../../src/jobs/model.ts";
import { log } from "../../src/log.ts";
import { redact } from "../../src/security/redact.ts";
import { refuse, type Refusal } from "../../src/shared/refusal.ts";
import { getJob, putJob } from "./jobs.ts";
import type { Passes } from "./pass.ts";
import { getSetup, NEVER, requestCancel } from "./runner/session.ts";
import { finish, logEndedUnstarted, type InflightTool } from "./runner/step-common.ts";
import type { StreamHub } from "./streams.ts";

/** How long a cancel waits for an aborted model call's job to end before answering with it as it is. */
const CANCEL_WAIT_MS = 5_000;

/** What an operator's action on a job (a cancel, an approval decision) works with inside the agent's object. */
export interface JobControl {
	sql: SqlStorage;
	passes: Passes;
	hub: StreamHub;
}

/**
 * The record as the API shows it: a cancel waiting for a tool call in flight, and a rate limit's
 * wait, are kept beside the record (job_setup), not in it, since the job's loop is the record's only
 * writer while it runs; a reader is shown them all the same (deputy keeps a cancel in the record's
 * control). A running job's next step is set in the future only by a rate limit's wait (a step under
 * way holds its due time, passed; an ended job NEVER; an approval's wait is its own status).
 */
export function asShown(sql: SqlStorage, job: JobRecord | null): JobRecord | null {
	if (!job || isFinal(job.status)) return job;
	const now = Date.now();
	const setup = getSetup(sql, job.id);
	const requested = setup?.cancelRequested ?? null;
	const waiting = job.status === "running" && setup !== null && setup.nextStepAt > now && setup.nextStepAt !== NEVER ? new Date(setup.nextStepAt).toISOString() : null;
	return requested === null && waiting === null ? job : { ...job, cancel_requested: requested ?? job.cancel_requested, rate_limited_until: waiting };
}

/**
 * How a cancelled job was cancelled, as its transition says (" (cancelled by operator: wrong host)"),
 * for a refusal of what crossed the cancel (a second cancel, a decision): without it, the one refused
 * cannot tell whose cancel won, or why. Empty for a job not cancelled.
 */
export function cancelledAs(job: JobRecord): string {
	if (job.status !== "cancelled") return "";
	const reason = job.transitions.findLast((t) => t.to === "cancelled")?.reason;
	return reason ? ` (${reason})` : "";
}

/**
 * Cancels a job: a pending or waiting one at once; a running one at its next checkpoint, with
 * any in-flight model call in this instance aborted now (a tool call in flight is let finish, so
 * its effect is recorded: see settleTools). `force` cuts off a tool call in flight in this
 * instance too (its effect then unknown, and recorded so), also after a plain cancel that waits
 * for it; anywhere else it is a plain cancel.
 */
export async function cancelJob(control: JobControl, jobId: string, reason: string | null, by: string, force: boolean): Promise<JobRecord | Refusal> {
	const { sql, passes, hub } = control;
	// Read first, for a queued or waiting job's cancel to set its alarm in the turn that writes it.
	const alarm = await passes.alarm();
	const job = getJob(sql, jobId);
	if (!job) return refuse(404, `no job ${jobId}`);
	if (isFinal(job.status)) return refuse(409, `job ${jobId} is already ${job.status}${cancelledAs(job)}`);
	// Shown to every read token (the job's transitions, cancel_requested): stored redacted, as every
	// record is. A blank reason is none.
	const said = reason === null ? null : redact(reason.trim()) || null;
	const why = `cancelled by ${by}${said ? `: ${said}` : ""}`;
	const tool = force && job.status === "running" ? passes.toolCalls.get(jobId) : undefined;
	if (tool) return forceCancel(control, job, tool, said, by);
	if (job.status === "pending" || job.status === "approval_pending") {
		// One job.finished either way, as every job's lines end (finish logs a waiting one's).
		let done: JobRecord;
		if (job.status === "pending") {
			done = transition(job, "cancelled", { reason: why, at: new Date() });
			putJob(sql, done, Date.now());
			logEndedUnstarted(done, why, by);
		} else done = finish(passes.stepDeps(), job, "cancelled", { reason: why, by });
		// Its closing work (the index row, its hooks) is due from this write on: a queued job of a
		// paused agent has no alarm of its own, a waiting one only its approval's expiry.
		const armed = passes.alarmWithWrite(alarm);
		hub.publish(jobId);
		await armed;
		// Now, not at the pass's end: a pass under way ends when its longest model call does.
		await passes.closing.flushIndex();
		await passes.scheduleNext(false);
		return done;
	}
	// The first cancel's reason stands: a second one (a double click) would rewrite it. A forced one
	// with no tool call here to cut off (its call just returned, or the call was left by an
	// instance that is gone, which the job's next step records as indeterminate) has nothing to
	// add: the job is answered as it stands.
	const requested = getSetup(sql, jobId)?.cancelRequested;
	if (requested && force) {
		log.info("job.force_cancel_nothing_to_cut", { agent: job.agent, job_id: jobId, by });
		await passes.workNow();
		await passes.loopEnded(jobId, CANCEL_WAIT_MS);
		return answerCancel(control, jobId);
	}
	if (requested) return refuse(409, `job ${jobId} is already being cancelled (${requested})`);
	requestCancel(sql, jobId, why, by);
	const modelCall = passes.inflight.get(jobId);
	modelCall?.abort(new Error(why));
	// The job's own loop ends it, and its job.finished says so (with this reason and by).
	log.info("job.cancel_requested", { agent: job.agent, job_id: jobId, by, reason: said, force });
	await passes.workNow();
	// A model call in flight ends at the abort, and its job with it: the answer shows the job
	// cancelled. A tool call in flight is let finish (its effect would be unknown if cut off), so
	// that job answers still running and ends cancelled as soon as the call returns. A forced cancel
	// that found no call to cut off here waits for the job's loop too: a call left executing by an
	// instance that is gone ends the job indeterminate at its next step, and the answer says so.
	if (modelCall || force) await passes.loopEnded(jobId, CANCEL_WAIT_MS);
	return answerCancel(control, jobId);
}

/**
 * `cancel --force` on a job whose tool call is in flight in this instance: the call is cut off
 * now, recorded as interrupted with its effect unknown (so a continue never tells the model it
 * can safely repeat it), and the job ends cancelled, its reason saying it was forced. Also an
 * escalation of a plain cancel that waits for the call.
 */
async function forceCancel(control: JobControl, job: JobRecord, tool: InflightTool, said: string | null, by: string): Promise<JobRecord> {
	const earlier = getSetup(control.sql, job.id)?.cancelRequested ?? null;
	// The step that records the cut adds the call to the reason: the call may yet return first.
	const why = `force-cancelled by ${by}${said ? `: ${said}` : ""}` + (earlier ? ` (after "${earlier}")` : "");
	requestCancel(control.sql, job.id, why, by);
	tool.controller.abort(new Error(why));
	log.info("job.force_cancelled", { agent: job.agent, job_id: job.id, by, tool: tool.name, tool_use_id: tool.toolUseId, escalated: earlier !== null });
	await control.passes.workNow();
	// The cut ends the call at once, whether or not its request notices: the job's loop records it
	// and ends the job within the wait, so the answer shows it cancelled.
	await control.passes.loopEnded(job.id, CANCEL_WAIT_MS);
	return answerCancel(control, job.id);
}

/** A cancel's answer: the job as it is now, indexed first if it ended. */
async function answerCancel(control: JobControl, jobId: string): Promise<JobRecord> {
	const after = asShown(control.sql, getJob(control.sql, jobId))!;
	// Indexed before the answer, as a pending job's cancel is: the pass's own flush waits for its
	// closing work (the output's put, deliveries), and a list read after the answer would say running.
	if (isFinal(after.status)) await control.passes.closing.flushIndex();
	return after;
}
