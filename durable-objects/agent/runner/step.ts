import type Anthropic from "@anthropic-ai/sdk";
import { ModelCallError, type MessageParam, type ModelClient, type ToolOutcome } from "../../../src/agent/contracts.ts";
import { DEFAULT_RETRY_AFTER_MS as MIN_RATE_LIMIT_WAIT_MS, ModelCallFailure, type ModelAttempt } from "../../../src/agent/model-client.ts";
import { hasInvalidInput } from "../../../src/agent/streamed-message.ts";
import { executeTool } from "../../../src/agent/tools/index.ts";
import { requiresApproval } from "../../../src/agent/tools/definitions.ts";
import { loadFleet } from "../../../src/config/bundled.ts";
import { durationSeconds } from "../../../src/config/duration.ts";
import type { ModelPrice } from "../../../src/config/schema.ts";
import { transition, type ExitReason, type JobRecord } from "../../../src/jobs/model.ts";
import { log } from "../../../src/log.ts";
import { redact, redactDeep } from "../../../src/security/redact.ts";
import { clip } from "../../../src/shared/clip.ts";
import { deadline } from "../../../src/shared/deadline.ts";
import { getJob, putJob } from "../jobs.ts";
import { clearOldToolResults, turnResultsForModel, withCacheBreakpoint } from "./context.ts";
import { editNote, resumeFromApproval } from "./approval.ts";
import { appendLines, type OutputLine } from "./output.ts";
import { answerText, appendMessage, extendLastMessage, MessageTooLargeError, readMessages } from "./messages.ts";
import { dropAllThinking, storedAnswer, UNBOUND_THINKING } from "./thinking.ts";
import { noteCompletedRun, noteFailedRun } from "./persistent.ts";
import { NEVER, getSetup, insertToolCalls, markToolCall, noteExtraRequests, requestCancel, setNextStep, toolCallCount, toolCallTally, turnToolCalls, type JobSetup } from "./session.ts";
import { addUsage, limitReached, turnCallsOverLimit, type LimitHit, type UsedCounts } from "./usage.ts";

/** The final transition's reason of a completed job whose answer stopped at max_tokens (its delivery says so too). */
export const CUT_AT_MAX_TOKENS = "final answer, cut short at max_tokens";

/** The fleet's price table (fleet.yaml `pricing`); an invalid bundled fleet prices nothing. */
function pricing(): Readonly<Record<string, ModelPrice>> {
	try {
		return loadFleet().pricing;
	} catch {
		return {};
	}
}

/** A job's summary is its final answer up to this many characters, marked "…" where cut (the output has it whole). */
export const SUMMARY_CHARS = 2000;

/** While a model call is in flight an alarm waits this far ahead: if the object dies, it wakes and resumes. */
export const HEARTBEAT_MS = 30_000;

export interface StepDeps {
	sql: SqlStorage;
	/** Runs `write` as one transaction (the object's transactionSync): if it throws, none of it is kept. */
	transact: <T>(write: () => T) => T;
	env: Env;
	model: ModelClient;
	now: () => number;
	/** Keeps an alarm set ahead while a call is in flight. */
	heartbeat: (at: number) => Promise<void>;
	/** In-flight calls by job, so a cancel in this instance can abort them. */
	inflight: Map<string, AbortController>;
	/** Tool calls in flight by job, so a forced cancel in this instance can cut them off (a plain one lets them finish). */
	toolCalls: Map<string, InflightTool>;
	/** Tells live subscribers that a job has new lines or a new status. */
	notify: (jobId: string) => void;
	/**
	 * Whether the alarm run's budget is spent (see PassBudget): a step then makes no further tool
	 * call, and leaves the turn's others pending for the next alarm run.
	 */
	handOver: () => boolean;
}

/** A tool call in flight in this instance: what a forced cancel aborts, and names in its reason. */
export interface InflightTool {
	controller: AbortController;
	name: string;
	toolUseId: string;
}

/** The result recorded for a call a forced cancel cut off, in the JSONL and in its tool_calls row. */
const FORCED_CUT_OFF = "cut off by a forced cancel while it ran: whether it took effect is unknown";

/** What the loop should do after a step. */
export type StepResult = "continue" | "wait" | "done";

function save(deps: StepDeps, job: JobRecord): JobRecord {
	putJob(deps.sql, job, deps.now());
	deps.notify(job.id);
	return job;
}

function bump(job: JobRecord, patch: Partial<JobRecord>): JobRecord {
	return { ...job, ...patch, revision: job.revision + 1 };
}

function out(deps: StepDeps, jobId: string, ...lines: OutputLine[]): void {
	appendLines(deps.sql, jobId, lines, deps.now());
	deps.notify(jobId);
}

/** How a job ends when its turns are spent: another turn (or one whose tools' results need it) is past max_turns. */
function maxTurnsFailure(maxTurns: number): { reason: string; exit_reason: ExitReason; error: { type: string; message: string } } {
	const reason = `max_turns ${maxTurns} reached`;
	return { reason, exit_reason: "max_turns", error: { type: "max_turns", message: reason } };
}

/**
 * A usage limit's failure. The error names the limit alone, so each run that hits it files the same
 * incident (its signature is the error's text) instead of a new one for every amount used.
 */
function limitFailure(hit: LimitHit): { reason: string; exit_reason: ExitReason; error: { type: string; message: string } } {
	return { reason: hit.reason, exit_reason: "usage_limit", error: { type: "usage_limit", message: `usage limit reached: ${hit.limit}` } };
}

/** The requests and tool calls a job has made, for its usage limits (read when a limit asks). */
function used(deps: StepDeps, job: JobRecord, setup: JobSetup): () => UsedCounts {
	return () => ({ requests: (job.usage.num_turns ?? 0) + setup.extraRequests, toolCalls: toolCallCount(deps.sql, job.id) });
}

/**
 * How a job ends whose model answer could not be stored. Asking again would be billed again for the
 * same answer, pass after pass. The error's text is fixed, so repeats count on one incident; the
 * reason names the size.
 */
function answerNotStored(err: MessageTooLargeError): { reason: string; exit_reason: ExitReason; error: { type: string; message: string } } {
	return {
		reason: `the model's answer (${err.bytes} bytes as JSON) could not be stored: ${err.message}`,
		exit_reason: "error",
		error: { type: "message_too_large", message: "the model's answer was too large to store, so the conversation cannot go on" },
	};
}

/**
 * Billed requests among a call's tries that are not its answer: the refusals a fallback followed, and
 * a try aborted (a cancel, the deadline) after the API reported its tokens.
 */
const billedTries = (attempts: readonly ModelAttempt[]): number => attempts.filter((a) => a.status === "refusal" || (a.status === "aborted" && a.usage !== undefined)).length;

/** A model call slower than this is logged at info (model.call is otherwise a debug line). */
const SLOW_MODEL_CALL_MS = 60_000;

/** What a job's model calls came to, for its job.finished line: requests made (refused and continued ones too) and tokens, counted as model.call counts them. */
function modelTotals(job: JobRecord, extraRequests: number): { model_calls: number; input_tokens: number; output_tokens: number } {
	const models = Object.values(job.usage.per_model);
	return {
		model_calls: (job.usage.num_turns ?? 0) + extraRequests,
		input_tokens: models.reduce((n, u) => n + u.input_tokens, 0),
		output_tokens: models.reduce((n, u) => n + u.output_tokens, 0),
	};
}

/** Ends a job with a final status, its exit reason and a closing JSONL line. */
export function finish(
	deps: StepDeps,
	job: JobRecord,
	to: "completed" | "failed" | "cancelled" | "indeterminate",
	opts: { reason: string; exit_reason?: ExitReason; error?: { type: string; message: string; request_id?: string }; summary?: string | null },
): JobRecord {
	const done = transition(job, to, {
		reason: opts.reason,
		at: new Date(deps.now()),
		...(opts.exit_reason ? { exit_reason: opts.exit_reason } : {}),
		...(opts.error ? { error: { type: opts.error.type, message: redact(opts.error.message), ...(opts.error.request_id ? { request_id: opts.error.request_id } : {}) } } : {}),
		...(opts.summary !== undefined && opts.summary !== null ? { summary: opts.summary } : {}),
		tool_calls: toolCallTally(deps.sql, job.id),
	});
	// The setup's count of extra requests comes back with the write it already takes (job.finished's
	// model_calls), not from a read of the whole setup row, definition and all, at every job's end.
	const extraRequests = deps.sql.exec<{ extra_requests: number }>("UPDATE job_setup SET next_step_at = ?, approval_expires_at = NULL WHERE job_id = ? RETURNING extra_requests", NEVER, job.id).toArray()[0]?.extra_requests ?? 0;
	if (opts.error) out(deps, job.id, { type: "error", message: redact(opts.error.message), code: opts.error.type, ...(opts.error.request_id ? { request_id: opts.error.request_id } : {}) });
	out(deps, job.id, { type: "system", subtype: "result", status: to, exit_reason: done.exit_reason, content: opts.reason });
	// A job that failed or ended indeterminate is something to look at: warn, where a level filter finds it.
	(to === "failed" || to === "indeterminate" ? log.warn : log.info)("job.finished", {
		agent: job.agent,
		job_id: job.id,
		status: to,
		exit_reason: done.exit_reason,
		reason: opts.reason,
		...(opts.error ? { error_type: opts.error.type, error_message: redact(opts.error.message) } : {}),
		turns: done.usage.num_turns,
		...modelTotals(done, extraRequests),
		tool_calls: done.tool_calls,
		cost_usd: done.usage.total_cost_usd,
	});
	if (to === "failed" && opts.error) noteFailedRun(deps.sql, done, { type: opts.error.type, message: redact(opts.error.message) });
	return save(deps, done);
}

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

async function callModel(deps: StepDeps, job: JobRecord, setup: JobSetup): Promise<StepResult> {
	const agent = setup.definition;
	const messages = readMessages(deps.sql, job.id);
	// A turn a long server tool paused (pause_turn) is continued by sending it back as it is: the
	// request ends on it, the answer joins it, and it is still the same turn. A turn that asked for
	// client tools is not paused: if it is last, its calls are all done and their results are still
	// to be added (a step that failed before storing them), which settleTools does.
	const last = messages.at(-1);
	if (last?.role === "assistant" && awaitsToolResults(deps.sql, job.id, last.content)) return settleTools(deps, job, setup);
	const continuing = last?.role === "assistant";
	// A paused answer that had nothing but blank text is stored empty: the API takes no empty message,
	// so the request is sent without it (the same request, answered afresh), and the answer joins it.
	const sent = continuing && Array.isArray(last.content) && last.content.length === 0 ? messages.slice(0, -1) : messages;
	if (!continuing && (job.usage.num_turns ?? 0) >= agent.max_turns) {
		finish(deps, job, "failed", maxTurnsFailure(agent.max_turns));
		return "done";
	}
	const before = limitReached(job, job.usage_limits, used(deps, job, setup), "before_call", pricing());
	if (before) {
		finish(deps, job, "failed", limitFailure(before));
		return "done";
	}

	const controller = new AbortController();
	deps.inflight.set(job.id, controller);
	const timeoutMs = Math.max(1, setup.deadline - deps.now());
	const limit = deadline(timeoutMs, controller.signal);
	await deps.heartbeat(deps.now() + HEARTBEAT_MS);
	const calledAt = Date.now();
	let response: Awaited<ReturnType<ModelClient["call"]>>;
	try {
		response = await deps.model.call({
			models: setup.models,
			system: setup.system,
			messages: withCacheBreakpoint(sent, setup.tools.length > 0),
			tools: setup.tools,
			max_tokens: setup.maxTokens,
			signal: limit.signal,
		});
	} catch (err) {
		return modelFailed(deps, job.id, err);
	} finally {
		limit.clear();
		deps.inflight.delete(job.id);
	}

	// Cancelled, or past its deadline, while the answer was on its way: the answer is not acted on.
	// Its tries (a refused answer's billed tokens among them) are still the record, and so are its
	// own tokens, billed all the same.
	if (controller.signal.aborted) {
		const tries = response.attempts.map((a, i) => (i === response.attempts.length - 1 ? { ...a, status: "aborted" as const, usage: response.message.usage, whole: true } : a));
		return modelFailed(deps, job.id, new ModelCallFailure("aborted", "the model call was aborted", tries));
	}
	// One a turn at debug: 30 jobs of 40 turns in an alarm run made more than Workers Logs keeps an
	// invocation (256 KB), and the job.finished and delivery lines, written last, were the ones lost.
	// A call retried or slow is worth a line at info; job.finished has the totals.
	const callMs = Date.now() - calledAt;
	(response.attempts.length > 1 || callMs >= SLOW_MODEL_CALL_MS ? log.info : log.debug)("model.call", {
		agent: job.agent,
		job_id: job.id,
		model: response.model,
		stop_reason: response.message.stop_reason,
		tries: response.attempts.length,
		...failedTryIds(response.attempts),
		ms: callMs,
		input_tokens: response.message.usage.input_tokens,
		output_tokens: response.message.usage.output_tokens,
	});
	// The job may have been cancelled while the call was in flight.
	const stored = getJob(deps.sql, job.id);
	if (!stored || stored.status !== "running") return "done";
	const { message, model, attempts } = response;
	const current = withBilledUsage(stored, attempts);
	const now = deps.now();
	const lines: OutputLine[] = [];
	lines.push(...retryLines(attempts));
	if (model !== setup.models[0]) lines.push({ type: "system", subtype: "fallback", content: `answered by fallback model ${model}`, model });
	const usage = { ...message.usage } as unknown as Record<string, number>;
	const answer = answerText(message.content);
	const toolUses = message.content.filter((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
	// One assistant line per turn carries the turn's usage, even when the turn is only tool calls.
	lines.push({ type: "assistant", content: answer, model, usage });
	// A tool_use line for each call the answer asks to run (each is then run, refused or decided on):
	// not for a call in an answer that does not ask for tools, as one cut at max_tokens inside it.
	const asksForTools = message.stop_reason === "tool_use" && toolUses.length > 0;
	if (asksForTools) for (const t of toolUses) lines.push({ type: "tool_use", tool_name: t.name, tool_use_id: t.id, input: t.input });

	// Stored redacted: the conversation is replayed to the model and kept in storage, never a credential
	// (thinking blocks, which reach no output line, as they came: see storedAnswer).
	const content = storedAnswer(message.content as Anthropic.ContentBlockParam[]);
	const added = addUsage(current.usage, model, message.usage, pricing());
	const updated = bump(current, { usage: continuing ? { ...added, num_turns: current.usage.num_turns } : added });
	// A continuation is a request but not a turn; a refused answer is a billed request too.
	noteExtraRequests(deps.sql, job.id, billedTries(attempts) + (continuing ? 1 : 0));
	// The answer, its calls and its output lines in one transaction: a message stored in pieces is
	// never half-kept, and an answer that could not be stored leaves no lines (no tool_use line for a
	// call never recorded); the step asked again writes its own lines once. An answer that needs
	// another request has its turn's usage saved with it; a final one, with its final status below
	// (one write of the job's record, not two).
	const needsAnother = asksForTools || message.stop_reason === "pause_turn";
	let kept: number | MessageTooLargeError;
	try {
		kept = deps.transact(() => {
			const seq = continuing ? extendLastMessage(deps.sql, job.id, content) : appendMessage(deps.sql, job.id, { role: "assistant", content });
			if (asksForTools) insertToolCalls(deps.sql, job.id, seq, toolUses.map((t) => ({ id: t.id, name: t.name, input: redactDeep(t.input) })));
			appendLines(deps.sql, job.id, lines, now);
			if (needsAnother) putJob(deps.sql, updated, now);
			return seq;
		});
	} catch (err) {
		// The answer is paid for: its usage is saved though storing it failed, so the job's limits
		// count it when it is asked for (and billed) again.
		if (!(err instanceof MessageTooLargeError)) {
			save(deps, updated);
			throw err;
		}
		kept = err;
	}
	if (kept instanceof MessageTooLargeError) {
		log.warn("job.answer_not_stored", { agent: job.agent, job_id: job.id, bytes: kept.bytes, error_message: kept.message });
		// The job ends here: the answer's usage is still shown, its calls (never recorded) are not.
		out(deps, job.id, ...lines.filter((l) => l.type !== "tool_use"));
		finish(deps, updated, "failed", answerNotStored(kept));
		return "done";
	}
	deps.notify(job.id);

	if (asksForTools) {
		// A call whose input was not valid JSON is not run (what it would act on is a guess): the model
		// is told so in its result, and can call again. Recorded as a call refused, never made.
		for (const t of toolUses.filter(hasInvalidInput)) {
			const error = `input was not valid JSON, so the call was not run: call ${t.name} again with its input as one JSON object`;
			markToolCall(deps.sql, job.id, t.id, { status: "denied", result: error, isError: true, at: now });
			out(deps, job.id, { type: "tool_result", tool_use_id: t.id, success: false, error });
		}
	}
	const text = redact(answer.trim());
	// A limit this answer crossed ends the run, whatever the answer: a final answer over its budget is
	// not a success (the limits are checked after every response, the last one included). Its text
	// stays the job's summary.
	// Only the tokens and cost are checked after a response, so the counts are never read here.
	const after = limitReached(updated, updated.usage_limits, () => ({ requests: 0, toolCalls: 0 }), "after_response", pricing());
	if (after) {
		const final = !asksForTools && message.stop_reason !== "pause_turn" && text !== "";
		finish(deps, updated, "failed", { ...limitFailure(after), summary: final ? clip(text, SUMMARY_CHARS) : null });
		return "done";
	}
	if (needsAnother) {
		// The answer needs another request (its tools' results, or the paused turn's rest): a limit
		// that forbids that request is reached now, before the tools act for a model that would never
		// read what they return. First the turns: tools asked for on the last turn allowed would have
		// their results read by a turn that never comes (a paused turn's rest is the same turn).
		if (asksForTools && (updated.usage.num_turns ?? 0) >= agent.max_turns) {
			finish(deps, updated, "failed", maxTurnsFailure(agent.max_turns));
			return "done";
		}
		// Then the requests, tokens and cost. The setup read again only if a count limit asks: this
		// answer's requests were just noted in it.
		const next = limitReached(updated, updated.usage_limits, () => used(deps, updated, getSetup(deps.sql, job.id) ?? setup)(), "before_call", pricing());
		if (next) {
			finish(deps, updated, "failed", limitFailure(next));
			return "done";
		}
		// And for the tool calls: all of a turn's calls are run or none (a call whose input was not
		// valid JSON is never made, so it is not counted).
		const asked = toolUses.filter((t) => !hasInvalidInput(t)).length;
		const calls = asksForTools ? turnCallsOverLimit(updated.usage_limits, () => toolCallCount(deps.sql, job.id), asked) : null;
		if (calls) {
			finish(deps, updated, "failed", limitFailure(calls));
			return "done";
		}
		// Tool calls to settle next, or a long-running server tool paused the turn: send the
		// conversation back to let it continue (the turn's usage is saved with its answer).
		setNextStep(deps.sql, job.id, now, now);
		return "continue";
	}
	const cut = cutShort(message.stop_reason, toolUses, text);
	if (cut) {
		finish(deps, updated, "failed", { reason: cut.reason, exit_reason: "error", error: cut.error });
		return "done";
	}
	// Cut at max_tokens after some text, the answer is still the answer (asking again would be paid
	// for again), but it stops mid-way: said where its status is read, as deputy's result.stop_reason.
	const reason = message.stop_reason === "max_tokens" ? CUT_AT_MAX_TOKENS : "final answer";
	const done = finish(deps, updated, "completed", { reason, summary: clip(text, SUMMARY_CHARS) });
	noteCompletedRun(deps.sql, done, setup, deps.now());
	return "done";
}

/**
 * An answer that is not a final answer though it asks for no tool: the model refused, ran out of
 * context, or was cut at max_tokens before any text or inside a tool call (whose input is then
 * incomplete, so the call is not run). Each error's text is fixed, so repeats count on one incident.
 */
function cutShort(stopReason: Anthropic.Message["stop_reason"] | string, toolUses: readonly Anthropic.ToolUseBlock[], text: string): { reason: string; error: { type: string; message: string } } | null {
	switch (stopReason) {
		case "refusal":
			return { reason: "the model refused to answer", error: { type: "refusal", message: "the model refused to answer (stop_reason refusal)" } };
		case "model_context_window_exceeded":
			return {
				reason: "the conversation outgrew the model's context window",
				error: { type: "context_window_exceeded", message: "the conversation outgrew the model's context window (stop_reason model_context_window_exceeded)" },
			};
		case "max_tokens": {
			// The cut is in the answer's last call: any before it came whole, and are not run either.
			const cutCall = toolUses.at(-1);
			if (cutCall) {
				return {
					reason: `the model hit max_tokens inside a call to tool ${cutCall.name}; the call was not run`,
					error: { type: "max_tokens", message: `response truncated at max_tokens inside a call to tool ${cutCall.name}` },
				};
			}
			if (text.length === 0) return { reason: "the model hit max_tokens without an answer", error: { type: "max_tokens", message: "response truncated at max_tokens" } };
			return null;
		}
		default:
			return null;
	}
}

/**
 * A `retry` line for each try of a model call that did not answer, as the JSONL records them, each
 * dated when its try ended (the call's lines are written together, when it ends).
 */
function retryLines(attempts: readonly ModelAttempt[]): OutputLine[] {
	return attempts
		.filter((a) => a.status !== "ok" && a.status !== "aborted")
		.map((a): OutputLine => {
			const tried = { model: a.model, key: a.key, waited_ms: a.waited_ms };
			const timestamp = new Date(a.at).toISOString();
			if (a.status === "refusal") {
				return { type: "system", subtype: "retry", content: `model ${a.model} refused to answer (stop_reason refusal); the request went to the next fallback model`, ...tried, usage: { ...a.usage }, ...(a.request_id ? { request_id: a.request_id } : {}), timestamp };
			}
			const content = a.status === "network" ? `model ${a.model} did not answer: ${a.detail ?? "the connection failed"}` : `model ${a.model} answered ${a.status}`;
			return { type: "system", subtype: "retry", content, ...tried, ...(a.request_id ? { request_id: a.request_id } : {}), timestamp };
		});
}

/**
 * A `call_aborted` line for a try a cancel or the job's timeout aborted after the API had reported
 * its tokens: the answer is not acted on (nor shown as the job's), but it is billed, so the line
 * carries its usage as a refused answer's retry line does, and says whether it is the whole
 * answer's or what a stream cut short had reported.
 */
function abortedLines(attempts: readonly ModelAttempt[], why: "cancelled" | "timed out"): OutputLine[] {
	return attempts.flatMap((a): OutputLine[] => {
		if (a.status !== "aborted" || !a.usage) return [];
		const content = a.whole
			? `model ${a.model}'s answer arrived after the job was ${why}: not acted on; it is billed, so its tokens count in the job's usage`
			: `model ${a.model}'s answer was cut off when the job was ${why}: the tokens the API had reported by then count in the job's usage (output written after that report is not known)`;
		return [{ type: "system", subtype: "call_aborted", content, model: a.model, key: a.key, whole: a.whole === true, usage: { ...a.usage } }];
	});
}

/**
 * The tokens of billed answers that are not a turn of the conversation (refused ones, and what an
 * aborted try was billed) added to the job's usage.
 */
function withBilledUsage(job: JobRecord, attempts: readonly ModelAttempt[]): JobRecord {
	let usage = job.usage;
	for (const a of attempts) if (a.usage) usage = { ...addUsage(usage, a.model, a.usage, pricing()), num_turns: usage.num_turns };
	return usage === job.usage ? job : { ...job, usage };
}

/** The API's ids for a call's tries that did not answer, in order, for its log line: what its support asks for. */
function failedTryIds(attempts: readonly ModelAttempt[]): { request_ids?: string[] } {
	const ids = attempts.flatMap((a) => (a.request_id ? [a.request_id] : []));
	return ids.length > 0 ? { request_ids: ids } : {};
}

function modelFailed(deps: StepDeps, jobId: string, err: unknown): StepResult {
	const stored = getJob(deps.sql, jobId);
	const setup = getSetup(deps.sql, jobId);
	if (!stored || !setup || stored.status !== "running") return "done";
	let job = stored;
	// A failed call's tries are as much the record as a good one's, and a refused or aborted answer's
	// tokens as billed.
	if (err instanceof ModelCallFailure) {
		const lines = [...retryLines(err.attempts), ...abortedLines(err.attempts, setup.cancelRequested !== null ? "cancelled" : "timed out")];
		if (lines.length > 0) out(deps, jobId, ...lines);
		job = withBilledUsage(job, err.attempts);
		noteExtraRequests(deps.sql, jobId, billedTries(err.attempts));
	}
	const e = err instanceof ModelCallError ? err : new ModelCallError("network", err instanceof Error ? err.message : String(err));
	(e.kind === "aborted" ? log.info : log.warn)("model.call_failed", {
		agent: job.agent,
		job_id: jobId,
		kind: e.kind,
		status: e.status,
		tries: err instanceof ModelCallFailure ? err.attempts.length : null,
		...(err instanceof ModelCallFailure ? failedTryIds(err.attempts) : {}),
		request_id: e.requestId,
		error_message: redact(e.message),
	});
	// The API's id for the answer the error reports, beside its text (never in it: the text is the
	// incident's signature, and an id would make each failure an incident of its own).
	const requestId = e.requestId ? { request_id: e.requestId } : {};
	if (e.kind === "aborted" || deps.now() >= setup.deadline) {
		if (setup.cancelRequested !== null) {
			finish(deps, job, "cancelled", { reason: setup.cancelRequested });
		} else {
			finish(deps, job, "failed", { reason: "timeout", exit_reason: "timeout", error: { type: "timeout", message: `job exceeded its timeout of ${setup.definition.timeout}` } });
		}
		return "done";
	}
	if (e.kind === "rate_limit" && e.retryAfterMs !== null) {
		// At least the client's own default wait (a retry-after of 0 would call again at once, round
		// after round).
		const at = deps.now() + Math.max(e.retryAfterMs, MIN_RATE_LIMIT_WAIT_MS);
		if (at > setup.deadline) {
			// No attempt is left before the deadline: failed now, not held (taking a run's place) until
			// then to time out. The error's text is the same each time (it is the incident's signature:
			// run after run of it is one incident, paged once); the times go in the transition's reason.
			const message = `rate limited past the job's deadline: no attempt was left within its timeout of ${setup.definition.timeout}`;
			const reason = `model call failed: rate_limit until ${new Date(at).toISOString()}, past the job's deadline at ${new Date(setup.deadline).toISOString()}`;
			finish(deps, job, "failed", { reason, exit_reason: "error", error: { type: "rate_limit", message, ...requestId } });
			return "done";
		}
		out(deps, jobId, { type: "system", subtype: "rate_limited", content: `rate limited; next attempt at ${new Date(at).toISOString()}` });
		log.info("job.waiting", { agent: job.agent, job_id: jobId, reason: "rate_limited", until: new Date(at).toISOString() });
		// Saved even unchanged: its new revision tells those following the job to read it again, and
		// the record they read says until when it waits (rate_limited_until, from its next step).
		save(deps, bump(job, {}));
		setNextStep(deps.sql, jobId, at, deps.now());
		return "wait";
	}
	// A thinking block signed over something since changed (a conversation stored before drover left
	// such thinking out, or a change it does not know of): the API refuses the whole request. The job's
	// thinking is left out and the turn asked again; refused again with none left, the job fails.
	if (e.kind === "invalid_request" && UNBOUND_THINKING.test(e.message) && dropAllThinking(deps.sql, jobId)) {
		log.warn("job.thinking_dropped", { agent: job.agent, job_id: jobId, request_id: e.requestId });
		// Bumped: a refused answer the call billed before the 400 is in its usage, and a save at the
		// revision stored writes nothing.
		save(deps, bump(job, {}));
		setNextStep(deps.sql, jobId, deps.now(), deps.now());
		return "continue";
	}
	finish(deps, job, "failed", { reason: `model call failed: ${e.kind}`, exit_reason: "error", error: { type: e.kind, message: e.message, ...requestId } });
	return "done";
}

/** Whether an assistant turn asked for the client tools the job's latest tool calls are (and so is not a paused turn). */
function awaitsToolResults(sql: SqlStorage, jobId: string, content: MessageParam["content"]): boolean {
	if (typeof content === "string") return false;
	const asked = new Set(content.flatMap((b) => (b.type === "tool_use" ? [b.id] : [])));
	if (asked.size === 0) return false;
	const calls = turnToolCalls(sql, jobId);
	return calls.length > 0 && calls.every((c) => asked.has(c.toolUseId));
}

async function settleTools(deps: StepDeps, job: JobRecord, setup: JobSetup): Promise<StepResult> {
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
			const expires = deps.now() + durationSeconds(agent.approval_timeout) * 1000;
			const waiting = transition(job, "approval_pending", {
				reason: `tool ${call.name} needs approval`,
				at: new Date(deps.now()),
				pending_approval: { tool_use_id: call.toolUseId, tool_name: call.name, input: call.input, requested_at: new Date(deps.now()).toISOString() },
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
			const reason = `denied by ${call.decidedBy ?? "an operator"}: the tool call was not executed`;
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

function expireApproval(deps: StepDeps, job: JobRecord, setup: JobSetup): StepResult {
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
	deps.notify(job.id);
	return "continue";
}
