import type { Command } from "commander";
import { ApiError, CliError } from "../client.ts";
import { SESSION_PREFIX } from "../../src/jobs/session-id-format.ts";
import { act, agentExists, agentNameError, nextPageCommand, onePrompt, pathSegment, positiveInt, sessionIdError, type Context } from "../context.ts";
import { fields, printable, printableDeep, relTime, shellWord, statusStyle, table, when } from "../format.ts";
import { shapes } from "../shapes.ts";
import { confirm, readStdin, withoutFinalNewline } from "../stdin.ts";
import type { Session, SessionSummary } from "../types.ts";
import { reportJob, startJob, waitTimeoutOption, type WaitTimeout } from "./trigger.ts";

interface ListOptions {
	limit: number;
	cursor?: string;
	json?: boolean;
}

interface ResumeOptions {
	prompt?: string;
	agent?: string;
	allowDefinitionChange?: boolean;
	wait?: boolean;
	waitTimeout?: WaitTimeout;
	json?: boolean;
}

// A session id starts with SESSION_PREFIX on the command line; a job id names its session; anything else names an agent.
const JOB_ID = /^job-\d{4}-\d{2}-\d{2}-[a-z0-9]{6}$/i;
/** Pages of GET /v1/jobs looked through for the newest job with a session, at most. */
const MAX_JOB_PAGES = 10;
/** The fleet's newest jobs whose agents a fleet-wide list asks for their sessions. */
const RECENT_JOBS = 200;
/** Agents asked for their sessions at once when listing the whole fleet's. */
const FLEET_CONCURRENCY = 8;

export function registerSessions(program: Command): void {
	const sessions = program
		.command("sessions")
		.description("list sessions, newest first: an agent's, or (without one) the fleet's newest, from the agents of its 200 newest jobs")
		.argument("[agent]", "agent name", pathSegment)
		.option("-n, --limit <n>", "how many (1-100)", positiveInt(100), 20)
		.option("--cursor <cursor>", "the next page of an agent's sessions (printed after a full page)")
		.option("--json", "print the API's JSON")
		.action(act(listSessions));

	sessions
		.command("current")
		.description("the agent's persistent session (session.mode: persistent): what its next run continues, and when it expires")
		.argument("<agent>", "agent name", pathSegment)
		.option("--json", "print the API's JSON")
		.action(act(currentSession));

	sessions
		.command("reset")
		.description("forget the agent's persistent session: its next run starts a new one (the session's jobs stay, and can still be resumed)")
		.argument("<agent>", "agent name", pathSegment)
		.option("-y, --yes", "do not ask for confirmation")
		.option("--json", "print the API's JSON")
		.action(act(resetSession));

	sessions
		.command("resume")
		.description("continue a session's newest job with a new prompt: a session by id (or a unique prefix of one), an agent's newest session, or with neither the fleet's newest")
		.argument("[session-or-agent]", "a session id or prefix (ses-…), a job id (its session), or an agent name", pathSegment)
		.argument("[prompt]", "what to say next (or --prompt, or on stdin)")
		.option("-p, --prompt <prompt>", "what to say next")
		.option("-a, --agent <agent>", "the session's agent: needed for a ses-<uuid> id from before ids named their first job")
		.option("--allow-definition-change", "run even if the agent's definition changed since the session's newest job")
		.option("-w, --wait", "follow the new job to its end and print its final answer (exit code as for trigger --wait)")
		.addOption(waitTimeoutOption())
		.option("--json", "print the API's JSON")
		.action(act(resume));
}

async function listSessions(ctx: Context, agent: string | undefined, opts: ListOptions): Promise<number> {
	if (agent === undefined && opts.cursor !== undefined) throw new CliError("--cursor pages one agent's sessions: name the agent", 2);
	let sessions: SessionSummary[];
	let next: string | null = null;
	if (agent !== undefined) {
		const page = await ctx.client.json(`/v1/agents/${encodeURIComponent(agent)}/sessions`, shapes.sessionPage, { query: { limit: opts.limit, cursor: opts.cursor } });
		if (opts.json) {
			ctx.json(page);
			return 0;
		}
		sessions = page.sessions;
		next = page.next_cursor ?? null;
	} else {
		// No fleet-wide list of sessions exists (the API keeps each agent's with the agent). The newest
		// sessions end in the newest jobs (every job that started is its session's newest or was
		// continued since), so the agents of the fleet's newest jobs are the ones asked, not every agent.
		const recent = await ctx.client.json("/v1/jobs", shapes.jobPage, { query: { limit: RECENT_JOBS } });
		// Each agent with the creation time of its newest job listed (the list is newest first).
		const newestJob = new Map<string, number>();
		for (const j of recent.jobs) if (!newestJob.has(j.agent)) newestJob.set(j.agent, Date.parse(j.created_at));
		const agents = [...newestJob.keys()];
		const byNewest = (a: SessionSummary, b: SessionSummary) => Date.parse(b.last_job.created_at) - Date.parse(a.last_job.created_at);
		let found: SessionSummary[] = [];
		// A few at a time, not a request per agent all at once; and only until no agent left can have a
		// session among the newest: an agent's sessions end in its jobs, none newer than its newest one
		// listed, and agents are asked newest job first. Asking all of them made 201 requests for a
		// fleet whose newest 200 jobs were of 200 agents (test/e2e/cli-scale.test.ts), where 25 tell.
		for (let i = 0; i < agents.length; i += FLEET_CONCURRENCY) {
			const last = found[opts.limit - 1];
			// Ties: the agents asked first stay first, as the stable sort below kept them when all were asked.
			if (last !== undefined && Date.parse(last.last_job.created_at) >= newestJob.get(agents[i]!)!) break;
			const pages = await Promise.all(
				agents.slice(i, i + FLEET_CONCURRENCY).map((a) => ctx.client.json(`/v1/agents/${encodeURIComponent(a)}/sessions`, shapes.sessionPage, { query: { limit: opts.limit } })),
			);
			found = [...found, ...pages.flatMap((page) => page.sessions)].sort(byNewest).slice(0, opts.limit);
		}
		sessions = found;
		if (opts.json) {
			ctx.json({ sessions });
			return 0;
		}
	}
	if (sessions.length === 0) {
		ctx.out(ctx.p.dim("no sessions"));
		return 0;
	}
	const now = Date.now();
	ctx.out(
		table<SessionSummary>(
			printableDeep(sessions),
			[
				{ header: "SESSION", value: (s) => `${s.session_id}${s.persistent ? " *" : ""}` },
				{ header: "AGENT", value: (s) => s.agent, shrink: "name" },
				{ header: "JOBS", value: (s) => String(s.job_count), optional: 1 },
				{ header: "LAST JOB", value: (s) => s.last_job.id, optional: 2 },
				{ header: "STATUS", value: (s) => s.last_job.status, style: (s) => statusStyle(ctx.p, s.last_job.status) },
				// The last job's creation, the time the list is in order of (the API's, and the fleet's merge
				// above): its updated_at, the job's latest change, put a session whose job ended late above
				// a newer one still running, out of the order shown.
				{ header: "CREATED", value: (s) => relTime(s.last_job.created_at, now) },
			],
			ctx.p,
			ctx.width,
		),
	);
	if (sessions.some((s) => s.persistent)) ctx.out(ctx.p.dim("* persistent: whether its next run continues it: drover sessions current <agent>"));
	if (next && agent !== undefined) ctx.err(ctx.ep.dim(printable(`more: ${nextPageCommand(ctx, ["sessions", agent], [["--limit", opts.limit]], next)}`)));
	return 0;
}

async function currentSession(ctx: Context, agent: string, opts: { json?: boolean }): Promise<number> {
	const current = await ctx.client.json(`/v1/agents/${encodeURIComponent(agent)}/sessions/current`, shapes.currentSession);
	if (opts.json) {
		ctx.json(current);
		return 0;
	}
	const s = printableDeep(current);
	const now = Date.now();
	const overrides = Object.entries(s.schedule_modes ?? {});
	const persistentSomewhere = s.mode === "persistent" || overrides.some(([, mode]) => mode === "persistent");
	const rows: [string, string][] = [["mode", s.mode]];
	if (overrides.length > 0) rows.push(["schedules", overrides.map(([name, mode]) => `${name}: ${mode}`).join(", ")]);
	if (s.session_id === null) {
		rows.push(["session", persistentSomewhere ? "none yet: the next persistent run starts one" : "none (each run starts its own; set session.mode: persistent to carry runs on)"]);
	} else {
		rows.push(["session", s.session_id], ["last run", `${s.last_job}, completed ${when(s.active_at, now)}`], ["started", when(s.started_at, now)]);
		rows.push(["expires", s.expires_at === null ? "never (no timeout or idle_timeout)" : when(s.expires_at, now)]);
		if (persistentSomewhere) {
			rows.push(["next run", s.continues ? `continues ${s.last_job}` : ctx.p.yellow(`starts a new session: ${s.not_continued_because ?? "not continued"}`)]);
			rows.push(["context", `up to ${s.max_context_tokens} tokens carried`]);
		} else {
			// Kept from when its runs were persistent: no run carries it on now, a continue of its last
			// completed run does (and moves it on), which is what resume does with it.
			rows.push(["next run", "starts its own session (session.mode fresh_per_job)"]);
			rows.push(["note", `kept from when the agent's runs were persistent; a continue of ${s.last_job} carries it on: drover sessions resume ${s.session_id} "…"`]);
		}
	}
	ctx.out(fields(rows, ctx.p));
	return 0;
}

async function resetSession(ctx: Context, agent: string, opts: { yes?: boolean; json?: boolean }): Promise<number> {
	if (!opts.yes) {
		if (!ctx.stdinIsTTY) throw new CliError(`not resetting agent ${printable(agent)}'s session without confirmation`, 2, "stdin is not a terminal to ask on: pass --yes");
		if (!(await confirm(`Forget agent ${printable(agent)}'s persistent session? Its next run starts a new one; the session's jobs stay. [y/N] `))) {
			ctx.err("not reset");
			return 1;
		}
	}
	const answer = await ctx.client.json(`/v1/agents/${encodeURIComponent(agent)}/sessions/current`, shapes.sessionReset, { method: "DELETE" });
	if (opts.json) ctx.json(answer);
	else ctx.out(answer.forgotten === null ? `agent ${printable(agent)} had no persistent session` : `forgot ${printable(answer.forgotten)}: agent ${printable(agent)}'s next run starts a new session`);
	return 0;
}

async function resume(ctx: Context, target: string | undefined, promptArg: string | undefined, opts: ResumeOptions): Promise<number> {
	// Session and job ids are lower case: one typed or pasted in capitals is the same id.
	const given = target !== undefined && (/^ses-/i.test(target) || JOB_ID.test(target)) ? target.toLowerCase() : target;
	const isSession = given?.startsWith(SESSION_PREFIX) ?? false;
	const isJob = given !== undefined && JOB_ID.test(given);
	if (opts.agent !== undefined && given !== undefined && !isSession) throw new CliError(`--agent goes with a session id; ${given} is taken as ${isJob ? "a job id" : "an agent's name"}`, 2);
	// What the API would refuse as a malformed parameter ("invalid param: id"), said in terms of what
	// was given, before any request (or a prompt read from stdin).
	if (given !== undefined && !isJob) {
		const problem = isSession ? sessionIdError(given) : agentNameError(given);
		if (problem !== null) throw new CliError(printable(`${given} is not ${isSession ? `a session id: ${problem}` : `an agent name (nor a session or job id): ${problem}`}`), 2);
	}
	const prompt = await promptOf(ctx, promptArg, opts);
	const session =
		given === undefined ? await newestSession(ctx) : isSession ? await sessionById(ctx, given, opts.agent) : isJob ? await sessionOfJob(ctx, given) : await newestOfAgent(ctx, given);
	// The agent's persistent session goes on from its last completed run, which is what its next run
	// carries: continuing that run moves the session on, where its newest job may be a failed run.
	const head = session.persistent ? await persistentHead(ctx, session) : null;
	const from = head ?? session.last_job.id;
	const why = head && head !== session.last_job.id ? ", its last completed run: the agent's persistent session goes on from there" : "";
	// On stderr: stdout carries the new job's id (or JSON) alone, as for continue.
	ctx.err(ctx.ep.dim(printable(`resuming ${session.session_id} (agent ${session.agent}, ${session.job_count} job${session.job_count === 1 ? "" : "s"}) from ${from}${why}`)));
	const body: Record<string, unknown> = { prompt };
	if (opts.allowDefinitionChange) body.allow_definition_change = true;
	// Takes no key: a retry resolves the session's newest job again, which the first try may have made.
	const job = await startJob(ctx, `/v1/jobs/${encodeURIComponent(from)}/continue`, body, undefined, `drover jobs --agent ${shellWord(session.agent)} --limit 5`, false);
	return reportJob(ctx, job, opts);
}

/** The last completed run of the agent's persistent session, if `session` is still it. */
async function persistentHead(ctx: Context, session: SessionSummary): Promise<string | null> {
	const current = await ctx.client.json(`/v1/agents/${encodeURIComponent(session.agent)}/sessions/current`, shapes.currentSession);
	return current.session_id === session.session_id ? current.last_job : null;
}

/** The prompt from the argument, --prompt, or stdin (when it is not a terminal); a usage error without one. */
async function promptOf(ctx: Context, promptArg: string | undefined, opts: ResumeOptions): Promise<string> {
	const given = (await onePrompt(promptArg, opts.prompt)) ?? (ctx.stdinIsTTY ? "" : withoutFinalNewline(await readStdin()));
	if (given.trim() === "") throw new CliError("sessions resume needs a prompt: what to say next", 2, 'drover sessions resume <session-or-agent> "…" (or --prompt "…", or on stdin)');
	return given;
}

async function sessionById(ctx: Context, id: string, agent: string | undefined): Promise<Session> {
	try {
		return await ctx.client.json(`/v1/sessions/${encodeURIComponent(id)}`, shapes.session, { query: { agent } });
	} catch (err) {
		// An id of the old form is found only through its agent: say how to name it.
		if (err instanceof ApiError && err.status === 404 && agent === undefined && !id.startsWith(`${SESSION_PREFIX}job-`)) {
			throw new CliError(err.message, err.exitCode, `name its agent: drover sessions resume ${id} --agent <agent> …`);
		}
		throw err;
	}
}

async function newestOfAgent(ctx: Context, agent: string): Promise<SessionSummary> {
	const page = await ctx.client
		.json(`/v1/agents/${encodeURIComponent(agent)}/sessions`, shapes.sessionPage, { query: { limit: 1 } })
		.catch((err: unknown) => {
			// Not an agent: perhaps a session named as another tool names its own (herdctl's short ids).
			if (err instanceof ApiError && err.status === 404) {
				throw new CliError(err.message, err.exitCode, `${agent} was taken as an agent's name: a session is named by its id, ses-job-… or a prefix of one (drover sessions lists them), or by one of its jobs' ids`);
			}
			throw err;
		});
	const newest = page.sessions[0];
	if (!newest) throw new CliError(`agent ${agent} has no session yet: no job of it has started`);
	return newest;
}

/** The session a job ran in, through its agent (so a session of either id form is found). */
async function sessionOfJob(ctx: Context, id: string): Promise<Session> {
	const job = await ctx.client.json(`/v1/jobs/${encodeURIComponent(id)}`, shapes.job);
	if (!job.session_id) throw new CliError(`job ${job.id} has no session: it has not started`, 1, "a job's session begins when it starts");
	return ctx.client.json(`/v1/sessions/${encodeURIComponent(job.session_id)}`, shapes.session, { query: { agent: job.agent } });
}

/**
 * The fleet's most recent session: that of the newest job that started (every job that starts has
 * a session; one still queued has none yet, but for a continue), looked up through its agent, so a session of either id
 * form is found.
 */
async function newestSession(ctx: Context): Promise<Session> {
	const gone = new Set<string>();
	let cursor: string | undefined;
	for (let pages = 0; pages < MAX_JOB_PAGES; pages++) {
		const page = await ctx.client.json("/v1/jobs", shapes.jobPage, { query: { limit: 50, cursor } });
		// A deleted agent's jobs stay listed, but its sessions cannot be continued: the next one is taken.
		for (const job of page.jobs) {
			if (job.started_at === null || gone.has(job.agent)) continue;
			if (!(await agentExists(ctx, job.agent))) {
				gone.add(job.agent);
				continue;
			}
			return sessionOfJob(ctx, job.id);
		}
		if (!page.next_cursor) break;
		cursor = page.next_cursor;
	}
	throw new CliError("no session to resume: no job has started yet", 1, "drover sessions resume <session-or-agent> to name one");
}
