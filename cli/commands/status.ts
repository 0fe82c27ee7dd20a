import type { Command } from "commander";
import { CliError } from "../client.ts";
import { act, nextPageCommand, pathSegment, positiveInt, type Context } from "../context.ts";
import { exitNote, fields, pausedText, printable, printableDeep, relTime, stamp, statusStyle, table } from "../format.ts";
import type { AgentView, CurrentSession, Occurrence, Status } from "../types.ts";
import { shapes } from "../shapes.ts";
import { agentColumns, allAgents, undelivered } from "./agents.ts";
import { shardsUnanswered } from "./tick.ts";

export function registerStatus(program: Command): void {
	program
		.command("status")
		.description("the fleet's status (scheduler heartbeat, jobs by status, every agent's state, next run and last job), or one agent's")
		.argument("[agent]", "show this agent: its state, capacity, running jobs, last job, session, open incidents, schedules and next runs", pathSegment)
		.option("--json", "print the API's JSON (the fleet's with agent_list: the agents as `drover agents --json` prints them)")
		.action(act(status));

	program
		.command("runs")
		.description("an agent's occurrence ledger, newest first: on time, late, catch-up, skipped (with reason)")
		.argument("<agent>", "agent name", pathSegment)
		.option("-n, --limit <n>", "how many (1-200)", positiveInt(200), 20)
		.option("--cursor <cursor>", "the next page (printed after a full page)")
		.option("--json", "print the API's JSON")
		.action(act(runs));
}

function plural(n: number, noun: string): string {
	return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/**
 * Agents past which the fleet's status does not read every agent (to list them and name the paused
 * ones): a pause lives in each agent's own object, so reading them all would take a minute.
 */
const AGENT_LOOKUP_LIMIT = 1000;

/** Every agent, or why they are not listed: over the limit, or the list failed (the summary stands). */
async function fleetAgents(ctx: Context, total: number): Promise<{ agents: AgentView[]; omitted: null } | { agents: null; omitted: string }> {
	if (total > AGENT_LOOKUP_LIMIT) {
		return { agents: null, omitted: `not looked up for ${total} agents: \`drover agents\` lists each one's state` };
	}
	try {
		return { agents: await allAgents(ctx), omitted: null };
	} catch (err) {
		if (err instanceof CliError) return { agents: null, omitted: `could not be listed: ${err.message}` };
		throw err;
	}
}

async function status(ctx: Context, agent: string | undefined, opts: { json?: boolean }): Promise<number> {
	if (agent !== undefined) return agentStatus(ctx, agent, opts);
	const answer = await ctx.client.json("/v1/status", shapes.status);
	const listed = await fleetAgents(ctx, answer.agents.file + answer.agents.api);
	if (opts.json) {
		// The API's answer as it was, plus the agents (the objects `drover agents --json` prints).
		ctx.json({ ...answer, agent_list: listed.agents, agent_list_omitted: listed.omitted });
		return 0;
	}
	// A tick's error, a pause's reason: text from outside, printable before it is styled.
	const s = printableDeep(answer);
	const { p } = ctx;
	const hb = s.scheduler;
	const outcome = hb.outcome === "ok" ? p.green("ok") : p.yellow(hb.outcome ?? "unknown");
	const tick =
		hb.last_tick_at === null
			? p.red("no tick yet: is the cron trigger running?")
			: `${hb.stalled ? p.red("STALLED") : outcome}, last tick ${relTime(hb.last_tick_at)} (${plural(hb.agents_called ?? 0, "agent")} called, ${hb.claimed ?? 0} claimed, ${hb.skipped ?? 0} skipped${hb.shards_failed ? `; ${p.yellow(shardsUnanswered(hb.shards_failed))}` : ""})`;
	const order = ["pending", "running", "approval_pending", "completed", "failed", "cancelled", "indeterminate"];
	const jobs = Object.entries(s.jobs)
		// A status this CLI does not know yet (indexOf -1, as unsigned: the largest) goes last.
		.sort(([a], [b]) => (order.indexOf(a) >>> 0) - (order.indexOf(b) >>> 0))
		.map(([k, n]) => `${statusStyle(p, k)(k)} ${n}`)
		.join(" · ");
	// The agents an operator (or drover itself) paused, by name, with why: the counts alone hide them.
	const paused = listed.agents === null ? null : printableDeep(listed.agents.filter((a) => a.paused !== null));
	const pausedRows =
		paused === null
			? [["paused", p.dim(printable(listed.omitted ?? ""))] as const]
			: paused.length === 0
				? [["paused", p.dim("none")] as const]
				: paused.map((a, i) => [i === 0 ? "paused" : "", `${a.name}: ${p.yellow(pausedText(a.paused!))}`] as const);
	ctx.out(
		fields(
			[
				["scheduler", tick],
				["last good", hb.last_ok_at && hb.last_ok_at !== hb.last_tick_at ? `${stamp(hb.last_ok_at)} (${relTime(hb.last_ok_at)})` : null],
				["tick error", hb.error ? p.red(hb.error) : null],
				["deferred", deferredText(p, hb)],
				// Absent from an older server's answer.
				...(s.warnings ?? []).map((w, i) => [i === 0 ? "warnings" : "", p.yellow(w)] as const),
				["d1", d1Text(p, s.d1 as Status["d1"] | undefined)],
				["incidents", incidentsText(p, s.incidents)],
				["jobs", jobs || p.dim("none yet")],
				["agents", `${s.agents.file + s.agents.api} (${s.agents.file} from fleet.yaml, ${s.agents.api} from the API)`],
				...pausedRows,
			],
			p,
		),
	);
	// herdctl's `status`: every agent and its state, briefly (`drover agents` has the rest). A list
	// that failed is said in the paused row; one cut by the limit is said here too, where it would be.
	if (listed.agents === null) {
		if (s.agents.file + s.agents.api > AGENT_LOOKUP_LIMIT) ctx.out(`\n${p.dim(`agents not listed: more than ${AGENT_LOOKUP_LIMIT}; \`drover agents\` lists them all`)}`);
	} else if (listed.agents.length > 0) {
		const c = agentColumns(p, Date.now());
		ctx.out(`\n${table<AgentView>(listed.agents, [c.name, c.next, c.last, c.state], p, ctx.width)}`);
	}
	return 0;
}

/** Open incidents, paged or not (absent from an older server's answer: no row). */
function incidentsText(p: Context["p"], incidents: Status["incidents"] | undefined): string | null {
	if (incidents === undefined) return null;
	if (incidents === null) return p.red("could not be read (the Worker's logs say why)");
	if (incidents.open === 0) return p.dim("none open");
	const count = incidents.more ? `more than ${incidents.open}` : String(incidents.open);
	return `${p.yellow(`${count} open`)} ${p.dim("(drover incidents --state open lists them)")}`;
}

/**
 * D1's migrations, said only when some are missing or D1 could not be read (absent, from an older
 * server, or ok with none missing: no row). Red when the code needs one, else only indexes are missing.
 */
function d1Text(p: Context["p"], d1: Status["d1"] | undefined): string | null {
	if (!d1) return null;
	const missing = d1.missing ?? [];
	if (missing.length === 0) return d1.ok ? null : p.red("D1 could not be read (the Worker's logs say why)");
	const text = `D1 migrations missing: ${missing.join(", ")}; run ${d1.fix ?? "npx wrangler d1 migrations apply DB --remote"}`;
	return d1.ok ? p.yellow(`${text} (they only add indexes: nothing fails meanwhile)`) : p.red(text);
}

/**
 * Due agents the last tick left to its shards' follow-ups, and the minute they are owed: said only
 * when there are some (null, as from an older server, or 0 is no row).
 */
function deferredText(p: Context["p"], hb: Status["scheduler"]): string | null {
	if (!hb.deferred) return null;
	const owed = hb.oldest_deferred_minute ? `, owed since ${stamp(hb.oldest_deferred_minute)}` : "";
	const text = `${plural(hb.deferred, "agent")} left to follow-ups by the last tick${owed}`;
	return hb.shards_behind ? p.yellow(text) : text;
}

async function agentStatus(ctx: Context, name: string, opts: { json?: boolean }): Promise<number> {
	const answer = await ctx.client.json(`/v1/agents/${encodeURIComponent(name)}`, shapes.agent);
	if (opts.json) {
		ctx.json(answer);
		return 0;
	}
	const a = printableDeep(answer);
	const { p } = ctx;
	const state = !a.enabled
		? p.yellow("disabled")
		: a.paused
			? p.yellow(pausedText(a.paused))
			: p.green("active");
	const running = a.running_jobs.map((j) => `${j.id} ${statusStyle(p, j.status)(j.status)}${j.started_at ? ` since ${relTime(j.started_at)}` : ""}`).join(", ");
	const last = a.last_job
		? `${a.last_job.id} ${statusStyle(p, a.last_job.status)(a.last_job.status)}${exitNote(a.last_job)}${a.last_job.finished_at ? ` ${relTime(a.last_job.finished_at)}` : ""}${
				// Absent from an older server's agents.
				a.last_job.delivery ? `, delivery ${statusStyle(p, a.last_job.delivery)(a.last_job.delivery)}` : ""
			}`
		: p.dim("none");
	ctx.out(
		fields(
			[
				["agent", `${p.bold(a.name)} (${a.source === "file" ? "fleet.yaml" : "API"})`],
				["state", state],
				["model", a.fallback_models.length ? `${a.model} (fallback: ${a.fallback_models.join(", ")})` : a.model],
				["capacity", `${a.max_concurrent} at once, overlap ${a.overlap}`],
				["running", running || p.dim("none")],
				["queued", a.queued_jobs > 0 ? String(a.queued_jobs) : null],
				["last job", last],
				["session", await sessionText(ctx, name)],
				["incidents", await agentIncidentsText(ctx, name)],
			],
			p,
		),
	);
	ctx.out("");
	if (a.schedules.length === 0) {
		ctx.out(p.dim("no schedules: runs when triggered"));
		return 0;
	}
	ctx.out(
		table(
			a.schedules,
			[
				{ header: "SCHEDULE", value: (s) => s.name, shrink: "name" },
				{ header: "WHEN", value: (s) => (s.kind === "interval" ? `every ${s.expression}` : s.expression) },
				{ header: "TIMEZONE", value: (s) => s.timezone ?? "-" },
				{ header: "CATCH-UP", value: (s) => (s.catch_up ? "yes" : "no") },
				{ header: "NEXT RUN", value: (s) => (s.enabled ? (s.next_run ? `${stamp(s.next_run)} (${relTime(s.next_run)})` : "-") : "disabled") },
				// Absent from an older server's agents.
				{ header: "LAST RUN", value: (s) => lastRunText(s.last_run ?? null), style: (s) => statusStyle(p, undelivered(s.last_run?.delivery_outcome) ?? s.last_run?.status ?? ""), shrink: "note", keep: (s) => (s.last_run ? `${stamp(s.last_run.scheduled_instant)} ${s.last_run.status}` : "-") },
			],
			p,
			ctx.width,
		),
	);
	return 0;
}

/**
 * A schedule's newest slot and what became of it, as Hermes' `cron list` gives a job's last status:
 * a skip with its reason, a completed run whose answer did not get through with its delivery's outcome.
 */
function lastRunText(l: AgentView["schedules"][number]["last_run"]): string {
	if (!l) return "-";
	const head = `${stamp(l.scheduled_instant)} ${l.status}`;
	if (l.status === "skipped") return l.skip_reason ? `${head}: ${l.skip_reason}` : head;
	const delivery = undelivered(l.delivery_outcome);
	return delivery ? `${head}, delivery ${delivery}` : head;
}

/** Open incidents an agent's page of them counts at most; past it, "more than". */
const AGENT_INCIDENTS_COUNTED = 20;

/**
 * The agent's open incidents, paged or not, and where they are listed. Null (no row) when they cannot
 * be had (a server before `state=open` refuses it): the status above stands without them.
 */
async function agentIncidentsText(ctx: Context, name: string): Promise<string | null> {
	const { p } = ctx;
	let page;
	try {
		page = await ctx.client.json("/v1/incidents", shapes.incidentPage, { query: { agent: name, state: "open", limit: AGENT_INCIDENTS_COUNTED } });
	} catch (err) {
		if (err instanceof CliError) return null;
		throw err;
	}
	if (page.incidents.length === 0) return p.dim("none open");
	const count = page.next_cursor ? `more than ${page.incidents.length}` : String(page.incidents.length);
	return `${p.yellow(`${count} open`)} ${p.dim(`(drover incidents --agent ${name} --state open lists them)`)}`;
}

/**
 * How the agent's runs share conversations: fresh per job, or the persistent session its next run
 * continues. Null (no row) when it cannot be had: the status above stands without it.
 */
async function sessionText(ctx: Context, name: string): Promise<string | null> {
	const { p } = ctx;
	let s: CurrentSession;
	try {
		s = printableDeep(await ctx.client.json(`/v1/agents/${encodeURIComponent(name)}/sessions/current`, shapes.currentSession));
	} catch (err) {
		if (err instanceof CliError) return null;
		throw err;
	}
	const schedules = Object.entries(s.schedule_modes ?? {}).flatMap(([name, mode]) => (mode === "persistent" ? [name] : []));
	const mode = s.mode === "persistent" ? "persistent" : schedules.length > 0 ? `fresh per job; persistent for ${schedules.join(", ")}` : "fresh per job";
	if (s.session_id === null || s.last_job === null) return s.mode === "persistent" || schedules.length > 0 ? `${mode}, none yet: the next persistent run starts one` : p.dim(mode);
	const state = s.continues
		? `continuing ${s.last_job}${s.expires_at === null ? "" : `, expires ${relTime(s.expires_at)}`}`
		: `last run ${s.last_job}; ${p.yellow("the next run starts a new one")}: ${s.not_continued_because ?? "not continued"}`;
	return `${mode}: ${s.session_id}, ${state}`;
}

async function runs(ctx: Context, agent: string, opts: { limit: number; cursor?: string; json?: boolean }): Promise<number> {
	const page = await ctx.client.json(`/v1/agents/${encodeURIComponent(agent)}/runs`, shapes.runPage, { query: { limit: opts.limit, cursor: opts.cursor } });
	if (opts.json) {
		ctx.json(page);
		return 0;
	}
	if (page.runs.length === 0) {
		ctx.out(ctx.p.dim("no runs"));
		return 0;
	}
	const now = Date.now();
	ctx.out(
		table<Occurrence>(
			page.runs,
			[
				{ header: "INSTANT", value: (r) => `${stamp(r.scheduled_instant ?? r.claimed_at)} (${relTime(r.scheduled_instant ?? r.claimed_at, now)})`, shrink: "note", keep: (r) => stamp(r.scheduled_instant ?? r.claimed_at) },
				{ header: "SCHEDULE", value: (r) => r.schedule ?? r.source, shrink: "name" },
				{ header: "DISPATCH", value: (r) => r.dispatch, optional: 1 },
				{ header: "STATUS", value: (r) => r.status, style: (r) => statusStyle(ctx.p, r.status) },
				// Hermes' ok is "ran and delivered": a completed run whose answer did not get through shows here.
				{ header: "DELIVERY", value: (r) => r.delivery_outcome ?? "-", style: (r) => statusStyle(ctx.p, r.delivery_outcome ?? ""), optional: 2 },
				{ header: "JOB", value: (r) => r.job_id ?? "-" },
				{ header: "REASON", value: reason, shrink: "text", max: 80 },
			],
			ctx.p,
			ctx.width,
		),
	);
	if (page.next_cursor) ctx.err(ctx.ep.dim(printable(`more: ${nextPageCommand(ctx, ["runs", agent], [["--limit", opts.limit]], page.next_cursor)}`)));
	return 0;
}

function reason(r: Occurrence): string {
	if (r.status === "skipped") {
		const many = r.skipped_count !== null && r.skipped_count > 1 ? ` (${r.skipped_count} slots${r.skipped_from ? ` from ${stamp(r.skipped_from)}` : ""})` : "";
		return `${r.skip_reason ?? "skipped"}${many}`;
	}
	return r.error ?? "";
}
