import { ApiError, CliError, JSONL, NoAnswerError, worthRetrying } from "./client.ts";
import { agentExists, type Context } from "./context.ts";
import { printable, statusStyle } from "./format.ts";
import { followJob } from "./sse.ts";
import { shapes } from "./shapes.ts";
import type { JobSummary } from "./types.ts";

/** A job's statuses before it ends. */
export const ACTIVE: readonly string[] = ["pending", "running", "approval_pending"];

/** How many of an agent's newest jobs `logs <agent>` reads its lines from. */
const RECENT_JOBS = 20;
/** A page of an agent's live jobs of one status (the API's largest). */
const ACTIVE_PAGE = 200;
/** A page of the agent's jobs when asking for new ones, and how many pages a poll reads at most. */
const NEW_PAGE = 50;
const NEW_PAGES = 40;
/** Polls between two checks that the agent still exists (its jobs stay listed after it is deleted). */
const EXISTS_EVERY = 5;
/**
 * How often `logs <agent> --follow` asks for new jobs while none of those it follows ends (an end
 * asks at once: a queued run often starts as the one before it ends). A list read is one D1 query.
 */
const POLL_MS = 2_000;
/**
 * The longest wait between tries while the server cannot be had: the list's polls and each job's
 * reconnects double up to it, so an outage of hours costs a request or two a minute, not one every 2 s.
 */
const MAX_WAIT_MS = 30_000;

/** Where a job's lines go, and the `==> job … <==` marks between jobs. */
export interface AgentLogSink {
	line(job: JobSummary, raw: string): void;
	ended(job: JobSummary, status: string): void;
}

/** One job's part of what `logs <agent>` shows: its last lines, and for a live job the line they end at. */
interface Part {
	job: JobSummary;
	lines: string[];
	/** The job's line count when read (line numbers are 1..total with no gaps); null when not counted. */
	total: number | null;
}

/** The agent's newest jobs, newest first: a 404 (`no agent named …`) for a name that never was an agent. */
export async function recentJobs(ctx: Context, agent: string): Promise<JobSummary[]> {
	const page = await ctx.client.json(`/v1/agents/${encodeURIComponent(agent)}/jobs`, shapes.jobPage, { query: { limit: RECENT_JOBS } });
	return page.jobs;
}

/**
 * Further pages `recentJobsWithOutput` reads past a queue: with the first, 140 jobs, a queue's 100 at
 * most (a trigger past MAX_QUEUED is refused) and the 20 newest with output, with a page to spare.
 */
const PAST_QUEUE_PAGES = 6;

/**
 * The agent's newest 20 jobs that may have written output (not `pending`), newest first. The newest
 * 20 of all may be a queue, whose runs have written nothing: `logs <agent>` then showed nothing,
 * though older jobs had output. One request unless the newest jobs include queued runs.
 */
export async function recentJobsWithOutput(ctx: Context, agent: string): Promise<JobSummary[]> {
	const path = `/v1/agents/${encodeURIComponent(agent)}/jobs`;
	let page = await ctx.client.json(path, shapes.jobPage, { query: { limit: RECENT_JOBS } });
	const jobs = page.jobs.filter((j) => j.status !== "pending");
	for (let pages = 0; jobs.length < RECENT_JOBS && page.next_cursor !== null && pages < PAST_QUEUE_PAGES; pages++) {
		page = await ctx.client.json(path, shapes.jobPage, { query: { limit: RECENT_JOBS, cursor: page.next_cursor } });
		jobs.push(...page.jobs.filter((j) => j.status !== "pending"));
	}
	return jobs.slice(0, RECENT_JOBS);
}

/**
 * The agent's newest jobs together with every one not ended yet, newest first. The newest 20 need not
 * hold them all: a queue of 25 keeps its oldest, which run first, beyond them.
 */
export async function recentAndActiveJobs(ctx: Context, agent: string): Promise<JobSummary[]> {
	const byId = new Map((await recentJobs(ctx, agent)).map((j) => [j.id, j]));
	for (const status of ACTIVE) {
		let cursor: string | null = null;
		do {
			const query: Record<string, string | number> = { status, limit: ACTIVE_PAGE, ...(cursor ? { cursor } : {}) };
			const page = await ctx.client.json(`/v1/agents/${encodeURIComponent(agent)}/jobs`, shapes.jobPage, { query });
			for (const job of page.jobs) if (!byId.has(job.id)) byId.set(job.id, job);
			cursor = page.next_cursor;
		} while (cursor !== null);
	}
	// Ids are not in creation order: the lists' own order (created_at, then id) is kept.
	return [...byId.values()].sort((a, b) => (b.created_at ?? "").localeCompare(a.created_at ?? "") || b.id.localeCompare(a.id));
}

/** The X-Drover-First-Line of a tail's answer: the number of its first line. */
const FIRST_LINE = "x-drover-first-line";

const outputPath = (id: string) => `/v1/jobs/${encodeURIComponent(id)}/output`;

/**
 * A job's last `n` lines and the number of the last line it has, for a stream to follow on from.
 * A server that does not name the tail's first line (a release before X-Drover-First-Line) is read
 * whole, to count the lines.
 */
export async function jobTail(ctx: Context, id: string, n: number): Promise<{ lines: string[]; last: number }> {
	const path = outputPath(id);
	const tail = await ctx.client.textAnswer(path, JSONL, { query: { lines: n } });
	const lines = splitLines(tail.text);
	const first = Number(tail.headers.get(FIRST_LINE) ?? Number.NaN);
	if (Number.isSafeInteger(first) && first >= 1) return { lines, last: first - 1 + lines.length };
	const all = splitLines(await ctx.client.text(path, JSONL));
	return { lines: all.slice(-n), last: all.length };
}

function splitLines(text: string): string[] {
	return text.split("\n").filter((raw) => raw.trim() !== "");
}

/**
 * The last `want` lines across the agent's recent jobs, oldest job first. A live job is counted
 * when following (a tail of one line when no more are wanted), so that its stream can resume
 * right after its last line.
 */
export async function lastLines(ctx: Context, recent: readonly JobSummary[], want: number, following: boolean): Promise<Part[]> {
	const parts: Part[] = [];
	let remaining = want;
	for (const job of recent) {
		const live = following && ACTIVE.includes(job.status);
		if (remaining === 0 && !live) continue;
		// An ended job's lines need no count (nothing follows them): a server without the header is not read whole for it.
		const tail = live ? await jobTail(ctx, job.id, Math.max(remaining, 1)) : { lines: splitLines(await ctx.client.text(outputPath(job.id), JSONL, { query: { lines: remaining } })), last: null };
		const lines = remaining === 0 ? [] : tail.lines;
		remaining -= lines.length;
		if (lines.length > 0 || live) parts.unshift({ job, lines, total: tail.last });
	}
	return parts;
}

/** What `followAgent` waits, and how (tests shorten the waits, or sit none of them out). */
export interface AgentFollowOptions {
	/** How often the agent's jobs are asked for (default 2 s). */
	pollMs?: number;
	/** The longest wait between tries while the server cannot be had (default 30 s). */
	maxWaitMs?: number;
	/** Every wait (default: a timer); one whose signal aborts may end early. */
	sleep?(ms: number, signal?: AbortSignal): Promise<void>;
}

const timer = (ms: number, signal?: AbortSignal) =>
	new Promise<void>((resolve) => {
		const t = setTimeout(resolve, ms);
		signal?.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
	});

/**
 * The requests of an agent's follow that fail (each followed job's stream, the jobs list): said once
 * on stderr when the first fails, and once more when every one of them has answered again, however
 * many tries there were between. One that answers again cuts the others' waits short: the server is back.
 */
class Outage {
	readonly #failing = new Set<string>();
	readonly #waits = new Set<AbortController>();
	#said = false;

	readonly ctx: Context;
	readonly maxWaitMs: number;
	readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

	constructor(ctx: Context, maxWaitMs: number, sleep: (ms: number, signal?: AbortSignal) => Promise<void>) {
		this.ctx = ctx;
		this.maxWaitMs = maxWaitMs;
		this.sleep = sleep;
	}

	failed(what: string, reason: string): void {
		this.#failing.add(what);
		if (this.#said) return;
		this.#said = true;
		this.ctx.err(this.ctx.ep.dim(printable(`drover: ${what}: ${reason}; trying again until the server answers, at most ${this.maxWaitMs / 1000}s apart (Ctrl-C to stop)`)));
	}

	answered(what: string): void {
		if (!this.#failing.delete(what)) return;
		for (const wait of this.#waits) wait.abort();
		if (this.#failing.size > 0 || !this.#said) return;
		this.#said = false;
		this.ctx.err(this.ctx.ep.dim("drover: the server answers again; following on"));
	}

	/** A wait that ends early when `signal` aborts, or when a request that failed answers again. */
	async wait(ms: number, signal?: AbortSignal): Promise<void> {
		const done = new AbortController();
		const abort = () => done.abort();
		signal?.addEventListener("abort", abort, { once: true });
		this.#waits.add(done);
		try {
			await this.sleep(ms, done.signal).catch(() => {});
		} finally {
			this.#waits.delete(done);
			signal?.removeEventListener("abort", abort);
		}
	}
}

/**
 * Follows an agent: the live jobs among `recent` from where `parts` left them, then every job the
 * agent starts, each from its first line, until interrupted. Several jobs at once (max_concurrent)
 * are followed side by side, the sink marking each change of job. A job that ends before it was
 * seen is still followed: its stream gives every line and then its end, so none is missed. A server
 * that stops answering (a restart, a deploy, an outage) is tried again until it answers, the waits
 * doubling up to `maxWaitMs`, each stream resuming after its last line seen.
 */
export async function followAgent(ctx: Context, agent: string, recent: readonly JobSummary[], parts: readonly Part[], sink: AgentLogSink, options: AgentFollowOptions = {}): Promise<never> {
	const pollMs = options.pollMs ?? POLL_MS;
	const maxWaitMs = options.maxWaitMs ?? MAX_WAIT_MS;
	const outage = new Outage(ctx, maxWaitMs, options.sleep ?? timer);
	const seen = new Set(recent.map((j) => j.id));
	// A job that ends while no wait is under way (before the first, or during a listing) leaves its
	// wake-up pending, so the next wait does not sit out a whole poll interval.
	let woken = false;
	let waiting: AbortController | null = null;
	const wake = () => ((woken = true), waiting?.abort());
	let failure: unknown = null;
	let live = 0;
	let polls = 0;
	let listFailures = 0;
	let deleted = false;
	const listing = `listing agent ${agent}'s jobs`;
	const follow = (job: JobSummary, after: number) => {
		live++;
		const what = `job ${job.id}`;
		followJob(ctx.client, job.id, {
			after,
			serverAnswered: true,
			// Until interrupted: a job's lines are had once the server is back, however long that takes.
			retries: Number.POSITIVE_INFINITY,
			backoffMs: (attempt) => Math.min(maxWaitMs, 250 * 2 ** (attempt - 1)),
			sleep: (ms, signal) => outage.wait(ms, signal),
			onLine: (_n, raw) => sink.line(job, raw),
			onOpen: () => outage.answered(what),
			onReconnect: ({ reason }) => outage.failed(what, reason),
		})
			.then(
				(result) => sink.ended(job, result.status),
				// A job's lines that cannot be had are not skipped quietly: the command fails, saying which.
				(err: unknown) => void (failure ??= err),
			)
			.finally(() => (live--, wake()));
	};
	const totals = new Map(parts.map((p) => [p.job.id, p.total ?? 0]));
	for (const job of recent) if (ACTIVE.includes(job.status)) follow(job, totals.get(job.id) ?? 0);
	if (recent.length === 0 && ctx.stderrIsTTY) ctx.err(ctx.ep.dim(printable(`waiting for agent ${agent}'s first job`)));
	for (;;) {
		// A deleted agent's jobs stay listed, so only asking for the agent says it is gone: its live
		// jobs are followed to their end, and then nothing more can come.
		if (!deleted && polls++ % EXISTS_EVERY === 0) deleted = await isGone(ctx, agent);
		if (deleted && live === 0) throw new CliError(`agent ${agent} was deleted: none of its jobs will start any more`, 1, `its jobs stay readable: drover jobs --agent ${agent}`);
		if (!woken) {
			waiting = new AbortController();
			// While the list cannot be had, each wait twice the last, up to maxWaitMs.
			await outage.wait(listFailures === 0 ? pollMs : Math.min(maxWaitMs, pollMs * 2 ** listFailures), waiting.signal);
			waiting = null;
		}
		woken = false;
		if (failure !== null) throw failure;
		if (deleted) continue;
		let fresh: JobSummary[];
		try {
			fresh = await newJobs(ctx, agent, seen);
		} catch (err) {
			// A restart or a deploy is ridden out; a deleted agent or a revoked token is not.
			if (err instanceof ApiError && !worthRetrying(err)) throw err;
			if (err instanceof CliError && !(err instanceof ApiError) && !(err instanceof NoAnswerError)) throw err;
			listFailures++;
			outage.failed(listing, err instanceof Error ? err.message : String(err));
			continue;
		}
		listFailures = 0;
		outage.answered(listing);
		// Oldest first, so jobs started together show in the order they were made.
		for (const job of fresh.reverse()) {
			seen.add(job.id);
			follow(job, 0);
		}
	}
}

/** Whether the agent is gone; a failure a restart explains is left to the next check. */
async function isGone(ctx: Context, agent: string): Promise<boolean> {
	try {
		return !(await agentExists(ctx, agent));
	} catch (err) {
		if (err instanceof ApiError && !worthRetrying(err)) throw err;
		return false;
	}
}

/**
 * Jobs not seen before, newest first. The first page is read whole rather than up to the newest seen
 * job, since a job's index row can land after a newer one's; further pages only while a whole page is new.
 */
async function newJobs(ctx: Context, agent: string, seen: ReadonlySet<string>): Promise<JobSummary[]> {
	const fresh: JobSummary[] = [];
	let cursor: string | null = null;
	for (let page = 0; page < NEW_PAGES; page++) {
		const query: Record<string, string | number> = { limit: NEW_PAGE, ...(cursor ? { cursor } : {}) };
		const answer = await ctx.client.json(`/v1/agents/${encodeURIComponent(agent)}/jobs`, shapes.jobPage, { query });
		const unseen = answer.jobs.filter((j) => !seen.has(j.id));
		fresh.push(...unseen);
		if (unseen.length < answer.jobs.length || answer.next_cursor === null) break;
		cursor = answer.next_cursor;
	}
	return fresh;
}

/**
 * Marks between jobs: `==> job … (trigger, status) <==` before a job's lines whenever the job changes,
 * and `==> job … status <==` at its end. Human output carries them on stdout, as `tail` does between
 * files; --json keeps stdout to JSONL and shows them on a terminal's stderr only.
 */
export function agentSink(ctx: Context, json: boolean, print: (raw: string) => void): AgentLogSink & { header(job: JobSummary): void } {
	let current: string | null = null;
	const mark = (text: string) => {
		if (!json) ctx.out(ctx.p.dim(printable(text)));
		else if (ctx.stderrIsTTY) ctx.err(ctx.ep.dim(printable(text)));
	};
	// A live job's status at listing time would be stale by its next line: only an ended one's is said.
	const header = (job: JobSummary) => {
		current = job.id;
		mark(`==> ${job.id} (${job.trigger_type}${ACTIVE.includes(job.status) ? "" : `, ${job.status}`}) <==`);
	};
	return {
		header,
		line(job, raw) {
			if (current !== job.id) header(job);
			print(raw);
		},
		ended(job, status) {
			current = null;
			if (!json) ctx.out(ctx.p.dim(`==> ${printable(job.id)} `) + statusStyle(ctx.p, status)(printable(status)) + ctx.p.dim(" <=="));
			else if (ctx.stderrIsTTY) ctx.err(ctx.ep.dim(printable(`==> ${job.id} ${status} <==`)));
		},
	};
}
