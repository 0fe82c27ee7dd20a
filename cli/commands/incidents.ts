import { Option, type Command } from "commander";
import { act, incidentIdArg, nextPageCommand, positiveInt, requireKnownAgent, type Context } from "../context.ts";
import { fields, printable, printableDeep, relTime, statusStyle, table, when } from "../format.ts";
import type { Incident } from "../types.ts";
import { shapes } from "../shapes.ts";

/** The states a listing filters by, `open` being detected and alerted together (src/incidents/schema.ts's INCIDENT_STATE_FILTERS). */
const INCIDENT_STATES = ["open", "detected", "alerted", "resolved", "closed"];
/** The pseudo-agent of the scheduler's own incidents (src/config/schema.ts's SCHEDULER_AGENT, reserved). */
const SCHEDULER = "scheduler";

interface ListOptions {
	state?: string;
	agent?: string;
	limit: number;
	cursor?: string;
	json?: boolean;
}

export function registerIncidents(program: Command): void {
	const incidents = program
		.command("incidents")
		.description("failure incidents, deduplicated by error signature, most recently seen first")
		.addOption(new Option("-s, --state <state>", "only incidents in this state (open: detected or alerted)").choices(INCIDENT_STATES))
		.option("-a, --agent <agent>", "only this agent's incidents")
		.option("-n, --limit <n>", "how many (1-200)", positiveInt(200), 50)
		.option("--cursor <cursor>", "the next page (printed after a full page)")
		.option("--json", "print the API's JSON")
		.action(act(list));

	program
		.command("incident")
		.description("one incident: its error whole, how often and since when, what it waits on, its last job, whether it was paged")
		.argument("<id>", "incident id (<agent prefix>_<12 hex>), as drover incidents and an alert name it", incidentIdArg)
		.option("--json", "print the API's JSON")
		.action(act(show));

	incidents
		.command("close")
		.description("close an incident: terminal for its signature (the same error again stays quiet)")
		.argument("<id>", "incident id (<agent prefix>_<12 hex>)", incidentIdArg)
		.option("--json", "print the API's JSON")
		.action(act((ctx: Context, id: string, opts: { json?: boolean }) => settle(ctx, id, "close", opts)));

	incidents
		.command("resolve")
		.description("resolve an open incident, as a clean run would: the same error again re-opens it and pages")
		.argument("<id>", "incident id (<agent prefix>_<12 hex>)", incidentIdArg)
		.option("--count <n>", "only if its COUNT is still the N you saw in drover incidents: one that failed again since stays open", positiveInt(Number.MAX_SAFE_INTEGER))
		.option("--json", "print the API's JSON")
		.action(act((ctx: Context, id: string, opts: { json?: boolean; count?: number }) => settle(ctx, id, "resolve", opts)));
}

/** One incident whole: what an alert's line names (`drover incident <id> on <agent>, …`). */
async function show(ctx: Context, id: string, opts: { json?: boolean }): Promise<number> {
	const answer = await ctx.client.json(`/v1/incidents/${encodeURIComponent(id)}`, shapes.incident);
	if (opts.json) {
		ctx.json(answer);
		return 0;
	}
	// Its error is a job's, whatever the model or a tool made of it.
	const incident = printableDeep(answer);
	const open = incident.state === "detected" || incident.state === "alerted";
	ctx.out(
		fields(
			[
				[incident.state, ctx.p.bold(incident.id)],
				["agent", incident.agent],
				["class", incident.class],
				["error", incident.error],
				["seen", incident.count === 1 ? `once, ${when(incident.first_seen_at)}` : `${incident.count} times, first ${when(incident.first_seen_at)}, last ${when(incident.last_seen_at)}`],
				// What it waits on to run clean (src/incidents/schema.ts's `failing`).
				["failing", open && incident.failing?.length ? `${incident.failing.join(", ")} (it resolves once each has run clean)` : null],
				["last job", incident.last_job_id ? `${incident.last_job_id} (drover job ${incident.last_job_id} --logs)` : null],
				["alerted", paged(incident, when(incident.alerted_at))],
				["resolved", incident.state === "resolved" ? when(incident.resolved_at) : null],
				["closed", incident.state === "closed" ? `${when(incident.closed_at)}${incident.closed_by ? ` by ${incident.closed_by}` : ""}` : null],
				[
					"next",
					open
						? `drover incidents resolve ${incident.id} --count ${incident.count} once it is mended (a failure after it re-opens it); drover incidents close ${incident.id} quiets it for good`
						: incident.state === "resolved"
							? "the same error again re-opens it and pages"
							: "closed: the same error again is counted, never paged",
				],
			],
			ctx.p,
			ctx.width,
		),
	);
	return 0;
}

async function list(ctx: Context, opts: ListOptions): Promise<number> {
	const page = await ctx.client.json("/v1/incidents", shapes.incidentPage, { query: { state: opts.state, agent: opts.agent, limit: opts.limit, cursor: opts.cursor } });
	// A mistyped agent has no incidents, as an agent that never failed has none: an unknown one is an
	// error, --json or not. Not "scheduler": the scheduler files its own incidents under that name.
	if (page.incidents.length === 0 && opts.agent !== undefined && opts.agent !== SCHEDULER && opts.cursor === undefined) await requireKnownAgent(ctx, opts.agent);
	if (opts.json) {
		ctx.json(page);
		return 0;
	}
	if (page.incidents.length === 0) {
		ctx.out(ctx.p.dim("no incidents"));
		return 0;
	}
	const now = Date.now();
	ctx.out(
		table<Incident>(
			page.incidents,
			[
				{ header: "ID", value: (i) => i.id },
				{ header: "AGENT", value: (i) => i.agent, shrink: "name" },
				{ header: "CLASS", value: (i) => i.class, optional: 3 },
				{ header: "STATE", value: (i) => i.state, style: (i) => statusStyle(ctx.p, i.state) },
				// Kept at any width: resolve --count names it.
				{ header: "COUNT", value: (i) => String(i.count) },
				// What an open incident waits on to run clean before it resolves.
				{ header: "FAILING", value: (i) => ((i.state === "detected" || i.state === "alerted") && i.failing?.length ? i.failing.join(",") : "-"), shrink: "name", optional: 2 },
				// Whether its opening was paged (the alert webhook took it), and when.
				{ header: "ALERTED", value: (i) => paged(i, relTime(i.alerted_at, now)) },
				{ header: "LAST SEEN", value: (i) => relTime(i.last_seen_at, now) },
				{ header: "LAST JOB", value: (i) => i.last_job_id ?? "-", optional: 1 },
				{ header: "ERROR", value: (i) => i.error, shrink: "text", max: 80 },
			],
			ctx.p,
			ctx.width,
		),
	);
	if (page.next_cursor) {
		const filters = [["--state", opts.state], ["--agent", opts.agent], ["--limit", opts.limit]] as const;
		ctx.err(ctx.ep.dim(printable(`more: ${nextPageCommand(ctx, ["incidents"], filters, page.next_cursor)}`)));
	}
	return 0;
}

/** Closes or resolves an incident, and says what it is now. */
async function settle(ctx: Context, id: string, action: "close" | "resolve", opts: { json?: boolean; count?: number }): Promise<number> {
	const body = opts.count === undefined ? {} : { body: { count: opts.count } };
	const answer = await ctx.client.json(`/v1/incidents/${encodeURIComponent(id)}/${action}`, shapes.incident, { method: "POST", ...body });
	if (opts.json) {
		ctx.json(answer);
		return 0;
	}
	// Its error is a job's, whatever the model or a tool made of it.
	const incident = printableDeep(answer);
	ctx.out(
		fields(
			[
				// As the answer has it: a failure may have re-opened it just before a resolve.
				[incident.state, ctx.p.bold(incident.id)],
				["agent", incident.agent],
				["error", incident.error],
				["seen", `${incident.count} time${incident.count === 1 ? "" : "s"}, first ${when(incident.first_seen_at)}`],
				// Whether anyone was paged for this opening: closed, it pages no more; resolved, it will at its next failure.
				["alerted", incident.alerted_at ? when(incident.alerted_at) : "not paged"],
				...(action === "close"
					? [["by", incident.closed_by] as const]
					: incident.state === "resolved"
						? [["next", "the same error again re-opens it and pages"] as const]
						: // Open: the server resolves over no failure seen after the request arrived, nor past --count.
							[
									[
										"next",
										opts.count === undefined
											? `still open: it failed again ${when(incident.last_seen_at)}, after the resolve was asked; resolve it again to resolve it`
											: `still open: it failed ${incident.count - opts.count} more time${incident.count - opts.count === 1 ? "" : "s"} since the ${opts.count} you saw, last ${when(incident.last_seen_at)}; resolve it again with --count ${incident.count} to resolve it`,
									] as const,
								]),
			],
			ctx.p,
		),
	);
	return 0;
}

/**
 * When the incident's opening was paged, as `at` says it; else "not paged" while it is open and its
 * alert has not gone out (GET /v1/status warns of one still so 3 minutes after it opened), "-" once
 * it resolved or was closed without one.
 */
function paged(i: Incident, at: string): string {
	if (i.alerted_at) return at;
	return i.state === "detected" ? "not paged" : "-";
}
