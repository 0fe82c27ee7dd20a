import type { Command } from "commander";
import { CliError } from "../client.ts";
import { act, type Context } from "../context.ts";
import { exitNote, pausedText, printable, relTime, stamp, statusStyle, table, type Column, type Paint } from "../format.ts";
import { shapes } from "../shapes.ts";
import type { AgentView } from "../types.ts";

export function registerAgents(program: Command): void {
	program
		.command("agents")
		.description("every agent: source (fleet.yaml or API), state (active, paused with by whom and why, disabled), model, next run")
		.option("--prefix <start>", "only the agents whose name starts with this")
		.option("--json", "print the API's JSON (every page's agents in one {agents, next_cursor: null})")
		.action(act(agents));
}

/** Every agent, all pages of GET /v1/agents (by name, fleet.yaml's and the API's merged). */
export async function allAgents(ctx: Context, prefix?: string): Promise<AgentView[]> {
	const all: AgentView[] = [];
	let cursor: string | undefined;
	// A bound, so a server that always answers a cursor cannot loop this forever; a fleet past it is
	// an error, not a list silently cut short.
	for (let pages = 0; pages < MAX_PAGES; pages++) {
		const page = await ctx.client.json("/v1/agents", shapes.agentPage, { query: { limit: 200, cursor, prefix } });
		all.push(...page.agents);
		if (!page.next_cursor) return all;
		cursor = page.next_cursor;
	}
	throw new CliError(`${ctx.client.url} listed more than ${MAX_PAGES * 200} agents and had more: is it drover?`);
}

const MAX_PAGES = 1000;

/** "active", "disabled", or "paused 2m ago by root: maintenance". */
function agentState(a: AgentView, now = Date.now()): string {
	if (!a.enabled) return "disabled";
	return a.paused ? pausedText(a.paused, now) : "active";
}

/** The soonest next run of the agent's enabled schedules; null when none is due (no schedules, all disabled). */
function nextRun(a: AgentView): { at: string; schedule: string } | null {
	let soonest: { at: string; schedule: string } | null = null;
	for (const s of a.schedules) {
		if (!s.enabled || !s.next_run) continue;
		if (soonest === null || Date.parse(s.next_run) < Date.parse(soonest.at)) soonest = { at: s.next_run, schedule: s.name };
	}
	return soonest;
}

/** The columns of `drover agents`; `drover status` shows some of them, so both say a state alike. */
export function agentColumns(p: Paint, now: number) {
	return {
		name: { header: "NAME", value: (a) => a.name, shrink: "name" },
		source: { header: "SOURCE", value: (a) => (a.source === "file" ? "fleet.yaml" : "API"), optional: 1 },
		model: { header: "MODEL", value: (a) => a.model, shrink: "name", optional: 2 },
		next: {
			header: "NEXT RUN",
			value: (a) => {
				const next = nextRun(a);
				if (next) return `${stamp(next.at)} (${relTime(next.at, now)}, ${next.schedule})`;
				return a.schedules.length === 0 ? "on trigger only" : "-";
			},
			// Cut after the time, never in it: the schedule's name, then the relative time, give way.
			shrink: "note",
			keep: (a) => {
				const next = nextRun(a);
				return next ? stamp(next.at) : "";
			},
		},
		jobs: { header: "JOBS", value: (a) => [a.running_jobs.length ? `${a.running_jobs.length} running` : "", a.queued_jobs ? `${a.queued_jobs} queued` : ""].filter(Boolean).join(", ") || "-" },
		last: { header: "LAST", value: (a) => lastRun(a.last_job), style: (a) => (a.last_job ? statusStyle(p, undelivered(a.last_job.delivery) ?? a.last_job.status) : p.dim), shrink: "note", keep: (a) => a.last_job?.status ?? "" },
		state: { header: "STATE", value: (a) => agentState(a, now), style: (a) => (a.enabled && !a.paused ? p.green : p.yellow), shrink: "text", max: 120 },
	} satisfies Record<string, Column<AgentView>>;
}

async function agents(ctx: Context, opts: { json?: boolean; prefix?: string }): Promise<number> {
	const list = await allAgents(ctx, opts.prefix);
	if (opts.json) {
		ctx.json({ agents: list, next_cursor: null });
		return 0;
	}
	if (list.length === 0) {
		ctx.out(ctx.p.dim(opts.prefix === undefined ? "no agents" : printable(`no agents whose name starts with ${opts.prefix}`)));
		return 0;
	}
	const c = agentColumns(ctx.p, Date.now());
	ctx.out(table<AgentView>(list, [c.name, c.source, c.model, c.next, c.jobs, c.last, c.state], ctx.p, ctx.width));
	return 0;
}

/**
 * A completed run whose answer did not get through is not ok (Hermes' last_status): its delivery's
 * outcome then. Undefined: absent from an older server's answer.
 */
export function undelivered(delivery: string | null | undefined): "failed" | "unknown" | null {
	return delivery === "failed" || delivery === "unknown" ? delivery : null;
}

/** The newest job that ended: its status, why if it did not succeed, and a delivery that did not get through. */
function lastRun(last: AgentView["last_job"]): string {
	if (!last) return "-";
	const why = exitNote(last);
	const delivery = undelivered(last.delivery);
	return `${last.status}${why}${delivery ? `, delivery ${delivery}` : ""}`;
}
