// A step that asks the model: the request, its answer stored, its failures said.
import type Anthropic from "@anthropic-ai/sdk";
import { ModelCallError, type MessageParam, type ModelClient } from "../../../src/agent/contracts.ts";
import { DEFAULT_RETRY_AFTER_MS as MIN_RATE_LIMIT_WAIT_MS, ModelCallFailure, type ModelAttempt } from "../../../src/agent/model-client.ts";
import { hasInvalidInput } from "../../../src/agent/streamed-message.ts";
import { loadFleet } from "../../../src/config/bundled.ts";
import type { ModelPrice } from "../../../src/config/schema.ts";
import { type ExitReason, type JobRecord } from "../../../src/jobs/model.ts";
import { log } from "../../../src/log.ts";
import { redact, redactDeep } from "../../../src/security/redact.ts";
import { clip } from "../../../src/shared/clip.ts";
import { deadline } from "../../../src/shared/deadline.ts";
import { getJob, putJob } from "../jobs.ts";
import { withCacheBreakpoint } from "./context.ts";
import { appendLines, type OutputLine } from "./output.ts";
import { answerText, appendMessage, extendLastMessage, MessageTooLargeError, readMessages } from "./messages.ts";
import { dropAllThinking, storedAnswer, UNBOUND_THINKING } from "./thinking.ts";
import { noteCompletedRun } from "./persistent.ts";
import { getSetup, insertToolCalls, markToolCall, noteExtraRequests, setNextStep, toolCallCount, type JobSetup } from "./session.ts";
import { addUsage, limitReached, turnCallsOverLimit } from "./usage.ts";
import { awaitsToolResults, settleTools } from "./tool-turn.ts";
import { bump, CUT_AT_MAX_TOKENS, finish, HEARTBEAT_MS, limitFailure, maxTurnsFailure, out, REFUSED_AT_LIMIT, requestsMade, save, SUMMARY_CHARS, used, type StepDeps, type StepResult } from "./step-common.ts";

/** The fleet's price table (fleet.yaml `pricing`); an invalid bundled fleet prices nothing. */
function pricing(): Readonly<Record<string, ModelPrice>> {
	try {
		return loadFleet().pricing;
	} catch {
		return {};
	}
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
/** Tries that were neither the answer nor billed (a 529 retried, a call that failed unanswered): job.finished's model_tries adds them to model_calls. */
const unbilledTries = (attempts: readonly ModelAttempt[]): number => attempts.filter((a) => a.status !== "ok").length - billedTries(attempts);

/** A model call slower than this is logged at info (model.call is otherwise a debug line). */
const SLOW_MODEL_CALL_MS = 60_000;

export async function callModel(deps: StepDeps, job: JobRecord, setup: JobSetup): Promise<StepResult> {
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

	const maxRequests = job.usage_limits?.max_requests;
	const requestsLeft = maxRequests === undefined ? undefined : maxRequests - requestsMade(job, setup);

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
			// A refusal is billed: a fallback after it is a request the limit must allow too.
			...(requestsLeft !== undefined ? { maxBilled: requestsLeft } : {}),
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
	// An answer that gives two of its calls one id, or a call an id an earlier call of the conversation
	// has, asks for nothing that can be run: each call's result is matched to it by id, the job keeps
	// one record a call id, and the API refuses an answer holding an id twice sent back. Its calls are
	// not run (nor shown as tool_use lines) and the job fails below, naming the id.
	const reused = message.stop_reason === "tool_use" ? reusedToolUseId(messages, toolUses) : null;
	const asksForTools = message.stop_reason === "tool_use" && toolUses.length > 0 && reused === null;
	if (asksForTools) for (const t of toolUses) lines.push({ type: "tool_use", tool_name: t.name, tool_use_id: t.id, input: t.input });

	// Stored redacted: the conversation is replayed to the model and kept in storage, never a credential
	// (thinking blocks, which reach no output line, as they came: see storedAnswer).
	const content = storedAnswer(message.content as Anthropic.ContentBlockParam[]);
	const added = addUsage(current.usage, model, message.usage, pricing());
	const updated = bump(current, { usage: continuing ? { ...added, num_turns: current.usage.num_turns } : added });
	// A continuation is a request but not a turn; a refused answer is a billed request too.
	noteExtraRequests(deps.sql, job.id, billedTries(attempts) + (continuing ? 1 : 0), unbilledTries(attempts));
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
	// A paused turn's answer is the whole turn, the paused part's text with the rest's, as the answer
	// had been unpaused (and as its delivery reads the turn's stored message): not the rest alone.
	const text = redact((continuing ? answerText([...blocksOf(last.content), ...message.content]) : answer).trim());
	// Before the limits: an answer that crossed one too would fail usage_limit, its preamble taken for
	// the summary and the answer (its ids twice, which the API refuses) sent back by a continue, which
	// leaves it out only after this error.
	if (reused) {
		finish(deps, updated, "failed", {
			reason: `the model's answer used tool_use id ${clip(reused.id, 100)} (a call to tool ${clip(reused.name, 100)}) ${reused.twice ? "for two of its calls" : "that an earlier call had"}; none of its calls was run`,
			exit_reason: "error",
			error: { type: "tool_use_id_reused", message: "the model's answer reused a tool_use id, which each call must have to itself; none of its calls was run" },
		});
		return "done";
	}
	// A limit this answer crossed ends the run, whatever the answer: a final answer over its budget is
	// not a success (the limits are checked after every response, the last one included). Its text
	// stays the job's summary.
	// A refusal the request limit kept from its fallback: the limit stopped the job, not the model alone.
	if (message.stop_reason === "refusal" && model !== setup.models.at(-1) && maxRequests !== undefined) {
		const hit = { limit: `max_requests ${maxRequests}`, reason: `max_requests ${maxRequests} reached (${maxRequests} used): ${model} ${REFUSED_AT_LIMIT}` };
		finish(deps, updated, "failed", limitFailure(hit));
		return "done";
	}
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
 * context, was cut at max_tokens before any text or inside a tool call (whose input is then
 * incomplete, so the call is not run), or stopped for a reason drover does not know. Each error's
 * text is fixed (for a stop reason), so repeats count on one incident.
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
		case "end_turn":
		case "stop_sequence":
		case "tool_use":
		case "pause_turn":
			return null;
		default: {
			// One the API added since (its earlier additions, refusal and model_context_window_exceeded,
			// were answers that are not final): what it means is unknown, so the answer is not taken as
			// the job's, and the error names it (in words its incident is classed by: "model output").
			const named = clip(String(stopReason), 64);
			return {
				reason: `the model stopped with stop_reason ${named}, which drover does not know; its answer was not taken as final`,
				error: { type: "unknown_stop_reason", message: `the model output ended with stop_reason ${named}, which drover does not know` },
			};
		}
	}
}

/** A message's content as blocks (a stored answer's is always a list). */
const blocksOf = (content: MessageParam["content"]): readonly { type: string; text?: string }[] => (typeof content === "string" ? [{ type: "text", text: content }] : content);

/**
 * The first of an answer's tool calls whose id another of its calls has (`twice`), or a call of the
 * conversation before it: a model behind a gateway may number its calls afresh each turn.
 */
function reusedToolUseId(messages: readonly MessageParam[], toolUses: readonly Anthropic.ToolUseBlock[]): { id: string; name: string; twice: boolean } | null {
	if (toolUses.length === 0) return null;
	const earlier = new Set<string>();
	for (const m of messages) {
		if (typeof m.content === "string") continue;
		for (const b of m.content) if (b.type === "tool_use") earlier.add(b.id);
	}
	const seen = new Set<string>();
	for (const t of toolUses) {
		if (seen.has(t.id)) return { id: t.id, name: t.name, twice: true };
		if (earlier.has(t.id)) return { id: t.id, name: t.name, twice: false };
		seen.add(t.id);
	}
	return null;
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
		noteExtraRequests(deps.sql, jobId, billedTries(err.attempts), unbilledTries(err.attempts));
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
