import { fstatSync } from "node:fs";
import { InvalidArgumentError, Option, type Command } from "commander";
import { DURATION_FORM, parseDuration } from "../../src/config/duration.ts";
import { ApiError, CliError, EXIT_INTERRUPTED, EXIT_LOST, EXIT_TIMED_OUT, NoAnswerError, outcomeCode } from "../client.ts";
import { act, onePrompt, pathSegment, type Context } from "../context.ts";
import { cancelReason, columnsOf, duration, printable, printableDeep, shellWord, statusStyle, truncate } from "../format.ts";
import { followJob } from "../sse.ts";
import type { JobRecord, OutputLine } from "../types.ts";
import { shapes } from "../shapes.ts";

interface TriggerOptions {
	prompt?: string;
	wait?: boolean;
	waitTimeout?: WaitTimeout;
	idempotencyKey?: string;
	json?: boolean;
}

export function registerTrigger(program: Command): void {
	program
		.command("trigger")
		.description("run an agent now; prints the new job's id")
		.argument("<agent>", "agent name", pathSegment)
		.argument("[prompt]", "instead of the agent's default prompt (or --prompt; - reads it from stdin)")
		.option("-p, --prompt <prompt>", "instead of the agent's default prompt (- reads it from stdin)")
		.option("-w, --wait", "follow the job to its end, with live progress on stderr, then print its final answer; exits 0 completed, 1 failed or indeterminate, 2 cancelled, 3 its stream or its final record lost (the server away ~2 min), 124 --wait-timeout passed")
		.addOption(waitTimeoutOption())
		.option("--idempotency-key <key>", "the same key within 24 h returns the same job instead of starting another")
		.option("--json", "print the API's JSON (with --wait: the finished job's record)")
		.action(act(trigger));
}

/** How long a `--wait` waits at most: as given (said back), and in milliseconds. */
export interface WaitTimeout {
	given: string;
	ms: number;
}

/**
 * `--wait-timeout 30m`: gives up waiting, not the job, which goes on (exit 124). It implies --wait.
 * Not `--timeout`, which would read as the job's own (a definition's `timeout`, which it does not set).
 */
export function waitTimeoutOption(): Option {
	return new Option("--wait-timeout <duration>", "--wait, giving up after this long (90s, 30m, 1h30m) with exit 124, as timeout(1) does; the job goes on")
		.argParser((value: string): WaitTimeout => {
			const seconds = parseDuration(value.trim());
			if (seconds === undefined || seconds === 0) throw new InvalidArgumentError(`not a duration of at least 1s: ${DURATION_FORM}`);
			return { given: value.trim(), ms: seconds * 1000 };
		})
		.implies({ wait: true });
}

async function trigger(ctx: Context, agent: string, given: string | undefined, opts: TriggerOptions): Promise<number> {
	// `echo "…" | drover trigger a` ran the agent's own prompt with nothing said: stdin is read only
	// for `-` (a cron's or CI's pipe left open must not be waited on), so a pipe there is pointed at it.
	if (given === undefined && opts.prompt === undefined && stdinIsPipe()) ctx.err(ctx.ep.dim("drover: stdin is not read without -: the agent's own prompt runs (drover trigger <agent> - sends stdin as the prompt)"));
	opts = { ...opts, prompt: await onePrompt(given, opts.prompt) };
	const job = await startJob(ctx, `/v1/agents/${encodeURIComponent(agent)}/jobs`, opts.prompt === undefined ? {} : { prompt: opts.prompt }, opts.idempotencyKey, `drover jobs --agent ${shellWord(agent)} --limit 5`).catch((err: unknown) => {
		// The API says which body field to send ("send {"prompt": …}"); on the command line it is --prompt.
		if (err instanceof ApiError && err.status === 400 && opts.prompt === undefined && /has no default prompt/.test(err.message)) {
			throw new CliError(`${err.message.replace(/;\s*send \{.*$/s, "")}; pass one with --prompt "…"`);
		}
		throw err;
	});
	return reportJob(ctx, job, opts);
}

/**
 * POSTs a request that starts a job (a trigger, a continue, a fork), under `key` if given, and gives
 * the job. A 200 is the job the key already started, and stderr says so: the same id printed
 * silently read as a new run. `list` is the command that lists where a new job would show.
 */
export async function startJob(ctx: Context, path: string, body: Record<string, unknown>, key: string | undefined, list: string, keyable = true): Promise<JobRecord> {
	const retry = (how: string) =>
		key !== undefined
			? "run it again with the same --idempotency-key: that gives the job this request started, if it did, and starts one if it did not"
			: `the request may have reached drover and started a job ${how}: ${list} lists the newest; ${keyable ? "a retry that cannot start a second job passes --idempotency-key, the same key at each try" : "look there before trying again, which could start a second job"}`;
	const { status, value: job } = await ctx.client.answer(path, shapes.job, { method: "POST", body, headers: key === undefined ? {} : { "idempotency-key": key } }).catch((err: unknown) => {
		// No answer, though the request may have been sent and carried out (a timeout, a connection
		// broken before the answer), not one refused before it left (no server there, no such host):
		// exit 5 asks for a retry, which must not start the job twice.
		if (err instanceof NoAnswerError && err.sent) throw new CliError(err.message, err.exitCode, retry("before its answer was lost"));
		// Nor is a 500 `internal` one that changed nothing: the agent's object may have written the
		// job before the request failed, and then runs it (its alarm is written with it).
		if (err instanceof ApiError && err.status === 500 && err.code === "internal") {
			const said = new ApiError(err.status, err.code, err.message, retry("before it failed"), err.requestId);
			said.issues = err.issues;
			throw said;
		}
		throw err;
	});
	if (status === 200 && key !== undefined) {
		ctx.err(`drover: ${printable(job.id)} is the job idempotency key ${printable(key)} already started (${printable(job.status)}); no new job was started`);
	}
	return job;
}

/**
 * Prints a job just created (its id, or its JSON); with `wait`, follows it to its end and returns
 * the outcome's exit code. Shared by trigger, fork and continue.
 */
export async function reportJob(ctx: Context, job: JobRecord, opts: { wait?: boolean; waitTimeout?: WaitTimeout; json?: boolean }): Promise<number> {
	if (!opts.wait) {
		if (opts.json) ctx.json(job);
		else ctx.out(printable(job.id));
		return 0;
	}
	// The id goes out first, so a script (or a person) can cancel or inspect the job while it runs.
	if (!opts.json) ctx.out(printable(job.id));
	const { final, answer } = await waitFor(ctx, job, opts.waitTimeout);
	if (opts.json) ctx.json(final);
	// What the model said: otherwise a second command (drover job, drover logs) to read it.
	else if (answer !== null) ctx.out(printable(answer));
	return outcomeCode(final.status);
}

/** Live progress of a running job on stderr: one rewritten line on a terminal, a line per change otherwise. */
class Progress {
	readonly #ctx: Context;
	readonly #jobId: string;
	readonly #started = Date.now();
	status: string;
	/**
	 * Whether the stream has told the job's status yet. A stream opens with a replay of the lines the
	 * job already wrote and only then says where it is: lines before that are counted, not shown,
	 * or the progress would claim "pending · 1 turn" for a job that is well under way. Later lines
	 * are shown a batch at a time (see `batch`), for the same reason: the server sends a job's new
	 * lines first and then the status they led to.
	 */
	#live = false;
	#lines = 0;
	turns = 0;
	inputTokens = 0;
	outputTokens = 0;
	toolCalls = 0;
	lastTool: string | null = null;
	/** The text of the last assistant line, whole (the record's summary is cut at 2,000 characters); null when storage cut the line itself. */
	lastAnswer: string | null = null;
	#shown = "";

	/** `status`: the job's as last known (the trigger's answer), until the stream tells a newer one. */
	constructor(ctx: Context, jobId: string, status: string) {
		this.#ctx = ctx;
		this.#jobId = printable(jobId);
		this.status = printable(status);
	}

	setStatus(status: string): void {
		this.status = printable(status);
		this.#live = true;
		this.render();
	}

	line(body: string): void {
		let line: OutputLine;
		try {
			line = JSON.parse(body) as OutputLine;
		} catch {
			return;
		}
		this.#lines++;
		// An assistant line carries its turn's usage; a refused answer's retry line, or an aborted call's call_aborted line, its own.
		if (line.usage) {
			const u = line.usage;
			// Cache reads and writes are input too; a person asking "how many tokens" means all of them.
			for (const k of ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"] as const) this.inputTokens += num(u[k]);
			this.outputTokens += num(u.output_tokens);
		}
		if (line.type === "assistant") {
			this.turns++;
			this.lastAnswer = typeof line.content === "string" && line.truncated === undefined ? line.content.trim() : null;
		} else if (line.type === "tool_use") {
			this.toolCalls++;
			// Named by the model: printable (as the error's message below) before any styling.
			this.lastTool = typeof line.tool_name === "string" ? printable(line.tool_name) : null;
		} else if (line.type === "error" && line.message) {
			this.#note(this.#ctx.ep.red(`error: ${printable(String(line.message))}`));
		}
	}

	/**
	 * The end of what the stream delivered together: show where it leaves the job. A pending job has
	 * written nothing, so lines under "pending" mean its new status is still on the way (a network
	 * can split what the server wrote at once): that waits for it.
	 */
	batch(): void {
		if (this.#live && !(this.status === "pending" && this.#lines > 0)) this.render();
	}

	render(): void {
		const { ep } = this.#ctx;
		const rest = [
			plural(this.turns, "turn"),
			`${this.inputTokens} in / ${this.outputTokens} out tokens`,
			`${plural(this.toolCalls, "tool call")}${this.lastTool ? ` (last: ${this.lastTool})` : ""}`,
		];
		if (this.status === "approval_pending") rest.push(`waiting: drover approve|deny ${this.#jobId}`);
		const plain = `${this.#jobId} ${[this.status, ...rest].join(" · ")}`;
		if (plain === this.#shown) return;
		this.#shown = plain;
		if (!this.#ctx.stderrIsTTY) {
			this.#ctx.err(plain);
			return;
		}
		// One line rewritten in place: it must never wrap, and a cut must not land inside a colour code.
		const columns = (process.stderr.columns || 120) - 1;
		const line = columnsOf(plain) > columns ? truncate(plain, columns) : `${this.#jobId} ${[statusStyle(ep, this.status)(this.status), ...rest].join(" · ")}`;
		process.stderr.write(`\r\x1b[K${line}`);
	}

	/** Ctrl-C, or the wait's timeout (`after`, as given), while the job runs. */
	interrupted(after?: string): void {
		const id = this.#jobId;
		this.#note(this.#ctx.ep.yellow(`drover: stopped waiting for ${id}${after === undefined ? "" : ` after ${after}`}, which goes on (${this.status})`));
		// A job waiting on a person goes nowhere until one decides: that comes first.
		const decide = this.status === "approval_pending" ? `drover approve|deny ${id} decides the call it waits on; ` : "";
		this.#ctx.err(this.#ctx.ep.dim(`drover: hint: ${decide}drover logs --job ${id} --follow follows it again; drover cancel ${id} stops it`));
	}

	/** Ctrl-C or the timeout once the stream said the job ended (`ended`, its status), while its record was read. */
	interruptedAfterEnd(ended: string, after?: string): void {
		const id = this.#jobId;
		this.#note(this.#ctx.ep.yellow(`drover: stopped waiting for ${id}'s outcome${after === undefined ? "" : ` after ${after}`}; its stream said it ended (${printable(ended)})`));
		this.#ctx.err(this.#ctx.ep.dim(`drover: hint: drover job ${id} says how it ended`));
	}

	#note(text: string): void {
		if (this.#ctx.stderrIsTTY) process.stderr.write("\r\x1b[K");
		this.#ctx.err(text);
		this.#shown = "";
	}

	finish(record: JobRecord): void {
		const { ep } = this.#ctx;
		// Its error and cancel reason are text from outside.
		const job = printableDeep(record);
		const took = job.duration_seconds ?? (Date.now() - this.#started) / 1000;
		const mark = job.status === "completed" ? ep.green("✓") : job.status === "cancelled" ? ep.yellow("■") : ep.red("✗");
		const why = cancelReason(job) ?? (job.exit_reason && job.exit_reason !== "success" && job.exit_reason !== "cancelled" ? job.exit_reason : null);
		const reason = why ? ` (${why})` : "";
		const text = `${mark} ${job.id} ${statusStyle(ep, job.status)(job.status)}${reason} in ${duration(took)} · ${plural(job.usage.num_turns, "turn")} · ${this.inputTokens} in / ${this.outputTokens} out tokens · ${plural(this.toolCalls, "tool call")}`;
		this.#note(text);
		if (job.error) this.#ctx.err(ep.red(`  ${job.error.type}: ${job.error.message}${job.error.request_id ? ` (request ${job.error.request_id})` : ""}`));
	}
}

function plural(n: number, noun: string): string {
	return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function num(v: unknown): number {
	return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

/**
 * Follows a job's stream to its end with progress on stderr; returns the final record and its final
 * answer: null when it ended without one (no summary), else its last assistant line's text whole,
 * or the summary when that line was cut to fit storage.
 */
export async function waitFor(ctx: Context, job: JobRecord, timeout?: WaitTimeout): Promise<{ final: JobRecord; answer: string | null }> {
	const jobId = job.id;
	const progress = new Progress(ctx, jobId, job.status);
	// A pending job has done nothing, so its zero counts are true; a job an idempotency key had
	// started already (running, or ended) is shown once the stream has replayed what it did.
	if (job.status === "pending") progress.render();
	// Ctrl-C stops the waiting, not the job, which runs on in its agent's object: said, as an
	// interrupted wait looked like a job stopped (a --wait is often begun to see a job through). So
	// for the whole wait: the record's read after the stream ended too, which Node's default ended
	// silently. The answer is printed right after, with no wait between (reportJob).
	let ended: string | null = null;
	const interrupted = () => {
		if (ended === null) progress.interrupted();
		else progress.interruptedAfterEnd(ended);
		process.exit(EXIT_INTERRUPTED);
	};
	process.once("SIGINT", interrupted);
	// Timed from the job's answer: the request that started it is the only wait before, and bounded.
	const timer = timeout === undefined ? undefined : giveUpAt(Date.now() + timeout.ms, () => {
		// The same as a Ctrl-C, said as the timeout, and timeout(1)'s exit code.
		if (ended === null) progress.interrupted(timeout.given);
		else progress.interruptedAfterEnd(ended, timeout.given);
		process.exit(EXIT_TIMED_OUT);
	});
	try {
		({ status: ended } = await followJob(ctx.client, jobId, {
			onLine: (_n, body) => progress.line(body),
			onStatus: (status) => progress.setStatus(status),
			onBatch: () => progress.batch(),
			onReconnect: ({ after, attempt, reason }) => ctx.err(ctx.ep.dim(printable(`drover: ${reason}; resuming after line ${after} (attempt ${attempt})`))),
			// The job was just created there: a refused stream now is a restart, not a wrong URL.
			serverAnswered: true,
			created: true,
		}));
		const said = ended;
		const final = await ctx.client.json(`/v1/jobs/${encodeURIComponent(jobId)}`, shapes.job).catch((err: unknown) => {
			// The stream ended, but the record (its outcome, error and answer) was not had: the same unknown
			// outcome as a lost stream, not a failed job's 1.
			if (!(err instanceof CliError)) throw err;
			throw new CliError(
				`job ${jobId} ended (its stream said: ${printable(said)}), but its record could not be read: ${err.message}`,
				EXIT_LOST,
				err.hint ?? `drover job ${jobId} says how it ended`,
			);
		});
		return answerOf(progress, final);
	} finally {
		process.off("SIGINT", interrupted);
		timer?.cancel();
	}
}

/** Calls `then` at `at` (ms since the epoch), past setTimeout's 24.8-day ceiling too (a wait on an approval may be 30 days). */
export function giveUpAt(at: number, then: () => void): { cancel: () => void } {
	let handle: ReturnType<typeof setTimeout>;
	const arm = () => {
		const left = at - Date.now();
		handle = left <= 0 ? setTimeout(then, 0) : setTimeout(left > MAX_TIMER_MS ? arm : then, Math.min(left, MAX_TIMER_MS));
	};
	arm();
	return { cancel: () => clearTimeout(handle) };
}

/** The longest delay setTimeout takes: a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The record's outcome shown; the final answer: the last assistant line whole, else the summary, null without one. */
function answerOf(progress: Progress, final: JobRecord): { final: JobRecord; answer: string | null } {
	progress.finish(final);
	// Not a string: a record without the field (an older Worker, or a stand-in that reads as one).
	if (typeof final.summary !== "string" || final.summary.trim() === "") return { final, answer: null };
	return { final, answer: progress.lastAnswer || final.summary };
}

/**
 * A shell's pipe (`echo … |`), a FIFO. Not a socket: a program that runs the CLI (Node's spawn, Python's
 * subprocess with a pipe) often hands it one with nothing meant in it, and would be told so at every run.
 */
function stdinIsPipe(): boolean {
	try {
		return fstatSync(0).isFIFO();
	} catch {
		return false;
	}
}
