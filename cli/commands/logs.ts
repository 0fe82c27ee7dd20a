import type { Command } from "commander";
import { CliError, JSONL, outcomeCode } from "../client.ts";
import { act, pathSegment, positiveInt, type Context } from "../context.ts";
import { printable, renderLine, statusStyle } from "../format.ts";
import { followJob } from "../sse.ts";
import type { JobSummary } from "../types.ts";
import { shapes } from "../shapes.ts";

interface LogsOptions {
	job?: string;
	follow?: boolean;
	lines?: number;
	json?: boolean;
}

const DEFAULT_LINES = 50;

export function registerLogs(program: Command): void {
	program
		.command("logs")
		.description("a job's output: the agent's newest job, or --job; --follow streams it live to its end")
		.argument("[agent]", "the agent whose newest job to show", pathSegment)
		.option("-j, --job <id>", "this job instead of an agent's newest", pathSegment)
		.option("-f, --follow", "stream new lines until the job ends (resumes after dropped connections); exits 0 completed, 1 failed or indeterminate, 2 cancelled")
		.option("-n, --lines <n>", `the last N lines (default ${DEFAULT_LINES}; with --follow: start N lines back, default from the start)`, positiveInt(100_000))
		.option("--json", "print the raw JSONL lines as the API gives them")
		.action(act(logs));
}

async function logs(ctx: Context, agent: string | undefined, opts: LogsOptions): Promise<number> {
	if ((agent === undefined) === (opts.job === undefined)) {
		throw new CliError("give an agent or --job <id>, not both or neither", 2, "drover logs <agent> | drover logs --job <id>");
	}
	const job: { id: string; label: string; status?: string } = opts.job !== undefined ? { id: opts.job, label: opts.job } : await newestJob(ctx, agent!);
	if (ctx.stderrIsTTY) ctx.err(ctx.ep.dim(`==> ${printable(job.label)} <==`));
	const print = lineWriter(ctx, opts.json === true);
	const path = `/v1/jobs/${encodeURIComponent(job.id)}/output`;
	if (!opts.follow) {
		const text = await ctx.client.text(path, JSONL, { query: { lines: opts.lines ?? DEFAULT_LINES } });
		const lines = text.split("\n").filter((raw) => raw.trim() !== "");
		for (const raw of lines) print(raw);
		// Nothing at all would look like a command that did nothing: a job yet to start has written nothing.
		if (lines.length === 0) ctx.err(ctx.ep.dim(printable(noOutput(job.id, job.status))));
		return 0;
	}
	let after = 0;
	if (opts.lines !== undefined) {
		// Line numbers are 1..total with no gaps, so starting N back means resuming after total - N.
		const text = await ctx.client.text(path, JSONL);
		const total = text.split("\n").filter((l) => l.trim() !== "").length;
		after = Math.max(0, total - opts.lines);
	}
	// Resuming a stream that never opened is for a server that has answered (the newest job's lookup, the line count).
	return followAndPrint(ctx, job.id, after, print, agent !== undefined || opts.lines !== undefined);
}

/** Why a job shows no lines: "no output yet (job … is pending)". */
function noOutput(id: string, status: string | undefined): string {
	if (status === undefined) return `no output (job ${id})`;
	return ACTIVE.includes(status) ? `no output yet (job ${id} is ${status})` : `no output (job ${id} ended ${status})`;
}

/** A job's statuses before it ends. */
const ACTIVE = ["pending", "running", "approval_pending"];

async function newestJob(ctx: Context, agent: string): Promise<{ id: string; label: string; status: string }> {
	const page = await ctx.client.json(`/v1/agents/${encodeURIComponent(agent)}/jobs`, shapes.jobPage, { query: { limit: 1 } });
	const newest: JobSummary | undefined = page.jobs[0];
	if (!newest) throw new CliError(`agent ${agent} has no jobs (yet)`, 1, `drover trigger ${agent} starts one`);
	return { id: newest.id, label: `${newest.id} (${agent}, ${newest.status})`, status: newest.status };
}

function lineWriter(ctx: Context, json: boolean): (raw: string) => void {
	const width = Math.max(40, (ctx.width ?? 160) - 20);
	return (raw) => {
		if (json) {
			ctx.out(raw);
			return;
		}
		const shown = renderLine(raw, ctx.p, width);
		if (shown !== null) ctx.out(shown);
	};
}

/** Streams a job's lines to stdout until it ends; the exit code reflects its final status. */
export async function followAndPrint(ctx: Context, jobId: string, after: number, print: (raw: string) => void, serverAnswered = false): Promise<number> {
	const result = await followJob(ctx.client, jobId, {
		after,
		serverAnswered,
		onLine: (_n, body) => print(body),
		onReconnect: ({ after: last, attempt, reason, delayMs }) =>
			ctx.err(ctx.ep.dim(printable(`drover: ${reason}; resuming after line ${last} in ${(delayMs / 1000).toFixed(1)}s (attempt ${attempt})`))),
	});
	const status = printable(result.status);
	if (ctx.stderrIsTTY) ctx.err(ctx.ep.dim(`==> ${printable(jobId)} ${statusStyle(ctx.ep, status)(status)} <==`));
	return outcomeCode(result.status);
}
