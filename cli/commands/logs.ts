import { InvalidArgumentError, type Command } from "commander";
import { ApiError, CliError, JSONL, outcomeCode } from "../client.ts";
import { act, agentExists, jobIdArg, pathSegment, positiveInt, type Context } from "../context.ts";
import { printable, renderLine, statusStyle } from "../format.ts";
import { followJob } from "../sse.ts";
import { ACTIVE, agentSink, followAgent, jobTail, lastLines, recentAndActiveJobs, recentJobs, recentJobsWithOutput } from "../agent-logs.ts";

interface LogsOptions {
	job?: string;
	follow?: boolean;
	lines?: number;
	from?: number;
	json?: boolean;
}

const DEFAULT_LINES = 50;

export function registerLogs(program: Command): void {
	program
		.command("logs")
		.description("output: an agent's recent jobs (--follow: and every job it starts, until interrupted), or one job's with --job")
		.argument("[agent]", "the agent whose recent jobs to show", pathSegment)
		.option("-j, --job <id>", "this job instead of an agent's recent ones", jobIdArg)
		.option(
			"-f, --follow",
			"stream new lines live: an agent's current and next jobs until interrupted; a --job to its end, resuming after dropped connections; exits 0 completed, 1 failed or indeterminate, 2 cancelled, 3 its stream lost (the server away ~2 min)",
		)
		.option("-n, --lines <n>", `the last N lines of output, across an agent's recent jobs (lines the view leaves out, as an empty answer, count; default ${DEFAULT_LINES}; with --follow --job: start N lines back, default from the start)`, positiveInt(100_000))
		.option("--from <line>", `with --job: from this line number on (--lines of them, default ${DEFAULT_LINES}; with --follow, every line from it to the job's end)`, lineNumber)
		.option("--json", "print the raw JSONL lines as the API gives them (the marks between jobs go to a terminal's stderr)")
		.action(act(logs));
}

/**
 * --from's parser: a line number, 1 for a job's first line. (The largest one JavaScript counts
 * exactly is its bound, a number no reader needs to be told.)
 */
function lineNumber(value: string): number {
	const n = Number(value);
	if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError("must be a line number, from 1 (a job's first line)");
	return n;
}

async function logs(ctx: Context, agent: string | undefined, opts: LogsOptions): Promise<number> {
	if ((agent === undefined) === (opts.job === undefined)) {
		throw new CliError("give an agent or --job <id>, not both or neither", 2, "drover logs <agent> | drover logs --job <id>");
	}
	if (opts.from !== undefined && opts.job === undefined) throw new CliError("--from is a line of one job's output: give --job <id>", 2, "drover logs --job <id> --from <line> [--lines N]");
	if (opts.from !== undefined && opts.follow && opts.lines !== undefined) throw new CliError("--follow starts at --from or --lines back, not both", 2, "drover logs --job <id> --follow [--from <line> | --lines N]");
	const print = lineWriter(ctx, opts.json === true);
	return opts.job !== undefined ? jobLogs(ctx, opts.job, opts, print) : agentLogs(ctx, agent!, opts, print);
}

/** herdctl's `logs <agent>`: the last lines of its recent jobs, each under a mark naming the job; --follow goes on with every job it starts. */
async function agentLogs(ctx: Context, agent: string, opts: LogsOptions, print: (raw: string) => void): Promise<number> {
	// Without --follow, only jobs that may have output: an agent's newest jobs may be a queue.
	const recent = opts.follow ? await recentAndActiveJobs(ctx, agent) : await recentJobsWithOutput(ctx, agent);
	if (recent.length === 0 && !opts.follow) {
		const queued = await recentJobs(ctx, agent);
		// Every agent starts with none: said like a job with no output yet, not failed on. (A name that
		// never was an agent is already the API's 404.) --follow waits for the first instead.
		if (queued.length === 0) {
			const none = (await agentExists(ctx, agent))
				? `no jobs yet for agent ${agent}: drover trigger ${agent} starts one, drover logs ${agent} --follow waits for it`
				: `no jobs for agent ${agent}, which was deleted`;
			ctx.err(ctx.ep.dim(printable(none)));
			return 0;
		}
		ctx.err(ctx.ep.dim(printable(noOutput(queued[0]!.id, queued[0]!.status))));
		return 0;
	}
	const parts = await lastLines(ctx, recent, opts.lines ?? DEFAULT_LINES, opts.follow === true);
	const sink = agentSink(ctx, opts.json === true, print);
	for (const part of parts) {
		if (part.lines.length === 0) continue;
		sink.header(part.job);
		for (const raw of part.lines) print(raw);
	}
	// Nothing at all would look like a command that did nothing: a job yet to start has written nothing.
	if (!parts.some((p) => p.lines.length > 0) && recent[0]) ctx.err(ctx.ep.dim(printable(noOutput(recent[0].id, recent[0].status))));
	if (!opts.follow) return 0;
	return followAgent(ctx, agent, recent, parts, sink);
}

async function jobLogs(ctx: Context, id: string, opts: LogsOptions, print: (raw: string) => void): Promise<number> {
	if (ctx.stderrIsTTY) ctx.err(ctx.ep.dim(`==> ${printable(id)} <==`));
	const path = `/v1/jobs/${encodeURIComponent(id)}/output`;
	if (!opts.follow) {
		// --from: lines by their numbers (?after=), any part of a long output without reading what comes before it here.
		const query = { lines: opts.lines ?? DEFAULT_LINES, ...(opts.from !== undefined ? { after: opts.from - 1 } : {}) };
		const text = await pastEndSaid(ctx, id, opts.from, () => ctx.client.text(path, JSONL, { query }));
		const lines = text.split("\n").filter((raw) => raw.trim() !== "");
		for (const raw of lines) print(raw);
		if (lines.length > 0) return 0;
		const last = opts.from === undefined ? 0 : (await jobTail(ctx, id, 1)).last;
		ctx.err(ctx.ep.dim(printable(last === 0 ? noOutput(id, undefined) : `no lines from line ${opts.from}: job ${id}'s last line is ${last} so far`)));
		return 0;
	}
	let after = opts.from !== undefined ? opts.from - 1 : 0;
	if (opts.lines !== undefined) {
		// Line numbers are 1..last with no gaps, so starting N back means resuming after last - N.
		after = Math.max(0, (await jobTail(ctx, id, 1)).last - opts.lines);
	}
	// Resuming a stream that never opened is for a server that has answered (the line count).
	return pastEndSaid(ctx, id, opts.from, () => followAndPrint(ctx, id, after, print, opts.lines !== undefined));
}

/**
 * A --from past the job's last line is refused by the API in its own terms, `after` being one less
 * than the line given ("after 41 is past …'s last line (40)" for --from 42): said here in the
 * option's, the job's last line read again to be sure that is what the 400 was about.
 */
async function pastEndSaid<T>(ctx: Context, id: string, from: number | undefined, read: () => Promise<T>): Promise<T> {
	try {
		return await read();
	} catch (err) {
		if (from === undefined || !(err instanceof ApiError) || err.status !== 400) throw err;
		const { last } = await jobTail(ctx, id, 1);
		if (from - 1 <= last) throw err;
		throw new CliError(`--from ${from} is past job ${id}'s last line so far (${last}): give a line up to ${last + 1}`, 1);
	}
}

/** Why a job shows no lines: "no output yet (job … is pending)". */
function noOutput(id: string, status: string | undefined): string {
	if (status === undefined) return `no output (job ${id})`;
	return ACTIVE.includes(status) ? `no output yet (job ${id} is ${status})` : `no output (job ${id} ended ${status})`;
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
async function followAndPrint(ctx: Context, jobId: string, after: number, print: (raw: string) => void, serverAnswered = false): Promise<number> {
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
