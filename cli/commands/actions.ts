import type { Command } from "commander";
import { CliError } from "../client.ts";
import { act, jobIdArg, onePrompt, pathSegment, type Context } from "../context.ts";
import { pauseReason, printable, printableDeep, statusStyle } from "../format.ts";
import { reportJob, startJob, waitTimeoutOption, type WaitTimeout } from "./trigger.ts";
import { ACTIVE } from "../agent-logs.ts";
import { shapes } from "../shapes.ts";
import { confirm } from "../stdin.ts";

const jobPath = (id: string) => `/v1/jobs/${encodeURIComponent(id)}`;
const agentPath = (agent: string) => `/v1/agents/${encodeURIComponent(agent)}`;

interface CancelOptions {
	yes?: boolean;
	reason?: string;
	force?: boolean;
	json?: boolean;
}

interface ApproveOptions {
	input?: string;
	call?: string;
	allowDefinitionChange?: boolean;
	reason?: string;
	json?: boolean;
}

interface FollowUpOptions {
	prompt?: string;
	allowDefinitionChange?: boolean;
	idempotencyKey?: string;
	wait?: boolean;
	waitTimeout?: WaitTimeout;
	json?: boolean;
}

interface PauseOptions {
	reason?: string;
	json?: boolean;
}

/** --call's help, for approve (which takes --input and needs --call with it) and for deny (which takes no input). */
const callHelp = (withInput: boolean) =>
	`decide only this tool call (its tool_use_id, as \`drover job\` shows it); if another call waits by then, nothing is decided. Without it, the call waiting when the command runs${withInput ? "; needed with --input" : ""}`;

export function registerActions(program: Command): void {
	program
		.command("cancel")
		.description("cancel a job: at once, or, while a tool call is in flight, as soon as the call returns (at once with --force)")
		.argument("<id>", "job id", jobIdArg)
		.option("-y, --yes", "do not ask first (required when stdin is not a terminal)")
		.option("-r, --reason <reason>", "recorded with the cancellation")
		.option("-f, --force", "cut off a tool call in flight too (also after a plain cancel): its effect is then unknown, and recorded so")
		.option("--json", "print the API's JSON")
		.action(act(cancel));

	program
		.command("approve")
		.description("approve the tool call a job is waiting on (approval_pending)")
		.argument("<id>", "job id", jobIdArg)
		.option("-i, --input <json>", "run the tool with this input (a JSON object) instead of the model's")
		.option("--call <tool_use_id>", callHelp(true))
		.option("--allow-definition-change", "approve even if the agent's definition changed since the job started")
		.option("--json", "print the API's JSON")
		.action(act((ctx, id: string, opts: ApproveOptions) => decide(ctx, id, "approve", opts)));

	program
		.command("deny")
		.description("deny the tool call a job is waiting on; the model is told and the job goes on")
		.argument("<id>", "job id", jobIdArg)
		.option("--call <tool_use_id>", callHelp(false))
		.option("-r, --reason <reason>", "why, told the model with the refusal so it can do otherwise")
		.option("--json", "print the API's JSON")
		.action(act((ctx, id: string, opts: ApproveOptions) => decide(ctx, id, "deny", opts)));

	program
		.command("fork")
		.description("a new job in a new session starting from this job's conversation")
		.argument("<id>", "job id", jobIdArg)
		.argument("[prompt]", "the new job's prompt (or --prompt; - reads it from stdin; default: the original's)")
		.option("-p, --prompt <prompt>", "the new job's prompt (- reads it from stdin; default: the original's)")
		.option("--allow-definition-change", "run even if the agent's definition changed since the job")
		.option("-w, --wait", "follow the new job to its end and print its final answer (exit code as for trigger --wait)")
		.addOption(waitTimeoutOption())
		.option("--idempotency-key <key>", "the same key within 24 h returns the same job instead of starting another")
		.option("--json", "print the API's JSON")
		.action(act((ctx, id: string, prompt: string | undefined, opts: FollowUpOptions) => followUp(ctx, id, "fork", prompt, opts)));

	program
		.command("continue")
		.description("a new job continuing this job's session with a new prompt")
		.argument("<id>", "job id", jobIdArg)
		.argument("[prompt]", "what to say next (or --prompt; - reads it from stdin)")
		.option("-p, --prompt <prompt>", "what to say next (- reads it from stdin)")
		.option("--allow-definition-change", "run even if the agent's definition changed since the job")
		.option("-w, --wait", "follow the new job to its end and print its final answer (exit code as for trigger --wait)")
		.addOption(waitTimeoutOption())
		.option("--idempotency-key <key>", "the same key within 24 h returns the same job instead of starting another")
		.option("--json", "print the API's JSON")
		.action(act((ctx, id: string, prompt: string | undefined, opts: FollowUpOptions) => followUp(ctx, id, "continue", prompt, opts)));

	program
		.command("pause")
		.description("pause an agent: its due occurrences are recorded as skipped until resume")
		.argument("<agent>", "agent name", pathSegment)
		.option("-r, --reason <reason>", "shown in status and in the skipped runs")
		.option("--json", "print the API's JSON")
		.action(act(pause));

	program
		.command("resume")
		.description("resume a paused agent (paused by an operator or automatically)")
		.argument("<agent>", "agent name", pathSegment)
		.option("--json", "print the API's JSON")
		.action(act(resume));
}

async function cancel(ctx: Context, id: string, opts: CancelOptions): Promise<number> {
	if (!opts.yes) {
		// A usage error (exit 2): the command line lacks --yes; nothing was asked of the API.
		if (!ctx.stdinIsTTY) throw new CliError(`not cancelling job ${id} without confirmation`, 2, "stdin is not a terminal to ask on: pass --yes");
		const question = opts.force
			? `Force-cancel job ${printable(id)}? A tool call in flight is cut off, and whether it took effect is then unknown. [y/N] `
			: `Cancel job ${printable(id)}? [y/N] `;
		if (!(await confirm(question))) {
			ctx.err("not cancelled");
			return 1;
		}
	}
	const body = { ...(opts.reason === undefined ? {} : { reason: opts.reason }), ...(opts.force ? { force: true } : {}) };
	const answer = await ctx.client.json(`${jobPath(id)}/cancel`, shapes.job, { method: "POST", body });
	// --json prints the answer as it is; a person reads it printable (format.ts).
	const job = printableDeep(answer);
	if (opts.json) ctx.json(answer);
	else ctx.out(cancelOutcome(ctx, job, opts.force === true));
	return 0;
}

/** What a cancel's answer means, in a line: cancelled (forced or not), still stopping, or ended otherwise. */
function cancelOutcome(ctx: Context, job: { id: string; status: string; transitions?: { reason: string }[] }, force: boolean): string {
	// (Checked loosely by the CLI's shapes: an answer without transitions reads as no reason.)
	const reason = job.transitions?.at(-1)?.reason ?? "";
	const status = statusStyle(ctx.p, job.status)(job.status);
	if (job.status === "cancelled") {
		// The server's reason says whether a call was cut off: a force with nothing in flight is a plain cancel.
		if (reason.startsWith("force-cancelled") && reason.includes("was cut off")) return `force-cancelled ${job.id}: its tool call in flight was cut off, and whether it took effect is unknown`;
		return force ? `cancelled ${job.id} (forced, but no tool call was in flight here to cut off)` : `cancelled ${job.id}`;
	}
	if (ACTIVE.includes(job.status)) return `cancelling ${job.id}: it is ${status} and stops as soon as its tool call in flight returns`;
	// Ended otherwise before the cancel took it (its final answer or its timeout came first), or
	// indeterminate: a call left by an instance of the agent that is gone cannot be cut off. Saying
	// "cancelling" of it would have the operator wait for an end that has already come.
	return `${job.id} ended ${status}, not cancelled${reason ? `: ${reason}` : ""}`;
}

/**
 * Whose cancel ended a job, as its transition says (" (cancelled by ops: wrong host)"), as the API's
 * refusals put it: a decision crossing another operator's cancel is told whose it was, and why.
 */
function cancelledAs(job: { status: string; transitions?: { to?: string; reason?: string }[] }): string {
	if (job.status !== "cancelled") return "";
	const reason = job.transitions?.findLast((t) => t.to === "cancelled")?.reason;
	return reason ? ` (${printable(reason)})` : "";
}

async function decide(ctx: Context, id: string, decision: "approve" | "deny", opts: ApproveOptions): Promise<number> {
	let toolInput: Record<string, unknown> | undefined;
	if (opts.input !== undefined) {
		let parsed: unknown;
		try {
			parsed = JSON.parse(opts.input);
		} catch (err) {
			throw new CliError(`--input is not JSON: ${(err as Error).message}`, 2);
		}
		if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new CliError("--input must be a JSON object", 2);
		toolInput = parsed as Record<string, unknown>;
		// An edit is written for the call it was read from: run again after the model made another
		// call (a retry of a command whose answer was lost), it would land on that one, as the API's rule.
		if (opts.call === undefined) throw new CliError(`--input needs --call <tool_use_id>, the call it edits (drover job ${printable(id)} shows it)`, 2);
	}
	// The decision names its call, so that it never falls on another one the model made since (the
	// API answers 409 then): the one given, or the one waiting now.
	let call: { id: string; name: string | null };
	if (opts.call !== undefined) {
		if (opts.call.trim() === "") throw new CliError("--call needs a tool_use_id", 2);
		call = { id: opts.call, name: null };
	} else {
		const waiting = await ctx.client.json(jobPath(id), shapes.job);
		const pending = waiting.pending_approval;
		if (waiting.status !== "approval_pending" || !pending) throw new CliError(`job ${printable(waiting.id)} is ${printable(waiting.status)}${cancelledAs(waiting)}, not waiting for an approval`, 1);
		call = { id: pending.tool_use_id, name: pending.tool_name };
	}
	const body: Record<string, unknown> = { decision, tool_use_id: call.id };
	if (toolInput !== undefined) body.tool_input = toolInput;
	if (opts.allowDefinitionChange) body.allow_definition_change = true;
	if (opts.reason !== undefined) body.reason = opts.reason;
	const answer = await ctx.client.json(`${jobPath(id)}/approval`, shapes.job, { method: "POST", body });
	const job = printableDeep(answer);
	if (opts.json) ctx.json(answer);
	else {
		const what = call.name === null ? `tool call ${printable(call.id)}` : `${printable(call.name)} call ${printable(call.id)}`;
		ctx.out(`${decision === "approve" ? "approved" : "denied"} the ${what} of ${job.id}; it is ${statusStyle(ctx.p, job.status)(job.status)}`);
	}
	return 0;
}

async function followUp(ctx: Context, id: string, kind: "fork" | "continue", promptArg: string | undefined, opts: FollowUpOptions): Promise<number> {
	const prompt = await onePrompt(promptArg, opts.prompt);
	if (kind === "continue" && prompt === undefined) throw new CliError("continue needs a prompt: what to say next", 2, 'drover continue <id> "…" (or --prompt "…", or - to read it from stdin)');
	const body: Record<string, unknown> = {};
	if (prompt !== undefined) body.prompt = prompt;
	if (opts.allowDefinitionChange) body.allow_definition_change = true;
	const job = await startJob(ctx, `${jobPath(id)}/${kind}`, body, opts.idempotencyKey, "drover jobs --limit 5");
	return reportJob(ctx, job, opts);
}

async function pause(ctx: Context, agent: string, opts: PauseOptions): Promise<number> {
	const answer = await ctx.client.json(`${agentPath(agent)}/pause`, shapes.agentStatus, { method: "POST", body: opts.reason === undefined ? {} : { reason: opts.reason } });
	const status = printableDeep(answer);
	if (opts.json) ctx.json(answer);
	else ctx.out(`paused ${status.name}${status.paused?.reason ? `: ${status.paused.reason}` : ""}${heldBack(status)}`);
	return 0;
}

/**
 * What a pause leaves: runs claimed or queued before it wait for the resume (a scheduled one is
 * then run late, or skipped past its grace window where its schedule says catch_up: false), and
 * jobs under way go on. Said, as an operator pausing just after a tick would not expect them.
 */
function heldBack(status: { queued_jobs?: number; running_jobs?: unknown[] }): string {
	const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
	// Read as none where absent: the answer's shape checks its name and pause only.
	const queued = status.queued_jobs ?? 0;
	const running = status.running_jobs?.length ?? 0;
	const parts = [
		queued > 0 ? `${plural(queued, "queued run waits", "queued runs wait")} for the resume` : null,
		running > 0 ? `${plural(running, "running job goes", "running jobs go")} on` : null,
	].filter((p) => p !== null);
	return parts.length > 0 ? ` (${parts.join("; ")})` : "";
}

async function resume(ctx: Context, agent: string, opts: { json?: boolean }): Promise<number> {
	const answer = await ctx.client.json(`${agentPath(agent)}/resume`, shapes.agentStatus, { method: "POST" });
	const status = printableDeep(answer);
	if (opts.json) ctx.json(answer);
	else if (!status.paused) ctx.out(`resumed ${status.name}`);
	// drover re-pauses at once an agent that still cannot run (a secret still missing…).
	else ctx.out(`${status.name} is still paused${status.paused.by === "auto" ? " automatically" : ""}: ${pauseReason(status.paused) || "no reason given"}`);
	return 0;
}
