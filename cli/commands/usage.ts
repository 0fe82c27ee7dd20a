import { InvalidArgumentError, Option, type Command } from "commander";
import { CliError } from "../client.ts";
import { act, nextPageCommand, positiveInt, requireKnownAgent, type Context } from "../context.ts";
import { printable, printableDeep, table } from "../format.ts";
import type { UsageDay } from "../types.ts";
import { shapes } from "../shapes.ts";
import { csvOf } from "../../src/shared/csv.ts";
import { DAY_MS } from "../../src/shared/time.ts";
import { usd } from "../../src/shared/usd.ts";

interface UsageOptions {
	since?: string;
	until?: string;
	days?: number;
	agent?: string;
	limit: number;
	cursor?: string;
	byDay?: boolean;
	json?: boolean;
	csv?: boolean;
}

/** A row of either table: an agent's day, a day of the fleet (--by-day), or their total. */
type Row = Omit<UsageDay, "agent"> & { agent?: string; agents?: number; total?: string };


function isoDay(value: string): string {
	// Date.parse rolls 2026-02-30 over into March: the day must read back as given.
	const ms = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(value) : Number.NaN;
	if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value) throw new InvalidArgumentError("must be a date, YYYY-MM-DD");
	return value;
}

export function registerUsage(program: Command): void {
	program
		.command("usage")
		.description("tokens and cost of ended jobs by agent and UTC day of their creation, newest day first")
		.option("--since <day>", "first day, YYYY-MM-DD (default: 6 days before --until)", isoDay)
		.option("--until <day>", "last day, YYYY-MM-DD (default: today, UTC)", isoDay)
		.addOption(new Option("-d, --days <n>", "the last n days up to --until (1-366), instead of --since").argParser(positiveInt(366)).conflicts("since"))
		.option("-a, --agent <agent>", "only this agent, or these, separated by commas (up to 20)")
		.option("-n, --limit <n>", "rows a page (1-1000)", positiveInt(1000), 500)
		.option("--cursor <cursor>", "the next page (printed after a full page)")
		.option("--by-day", "one row a day, its agents' rows summed (GET /v1/usage?group=day; --limit counts days)")
		.addOption(new Option("--json", "print the API's JSON").conflicts("csv"))
		.addOption(new Option("--csv", "every row of the days as CSV, every page read (the API's fields; a cost no job was priced for empty), as the dashboard downloads it").conflicts(["cursor", "limit"]))
		.action(act(usage));
}

async function usage(ctx: Context, opts: UsageOptions): Promise<number> {
	if (opts.since !== undefined && opts.until !== undefined && opts.since > opts.until) {
		throw new CliError("--since must not be after --until", 2);
	}
	let since = opts.since;
	let until = opts.until;
	if (opts.days !== undefined) {
		const last = opts.until ? Date.parse(opts.until) : Math.floor(Date.now() / DAY_MS) * DAY_MS;
		// No earlier than the API's first day (1970-01-01, which it refuses to go before), as its own
		// default since is: a `since` the user never typed would be the 400's subject.
		since = new Date(Math.max(0, last - (opts.days - 1) * DAY_MS)).toISOString().slice(0, 10);
		// Both ends from this clock: the server's default end is its own today, a day off from ours
		// around midnight, which would show N-1 or N+1 days.
		until = new Date(last).toISOString().slice(0, 10);
	}
	const query = { since, until, agent: opts.agent, limit: opts.limit, cursor: opts.cursor };
	if (opts.csv) return usageCsv(ctx, { since, until, agent: opts.agent }, opts.byDay === true);
	const answer = opts.byDay
		? await ctx.client.json("/v1/usage", shapes.usageDayTotalPage, { query: { ...query, group: "day" } })
		: await ctx.client.json("/v1/usage", shapes.usagePage, { query });
	await requireListedAgents(ctx, opts.agent, answer.days, opts.cursor === undefined && !answer.next_cursor);
	if (opts.json) {
		ctx.json(answer);
		return 0;
	}
	const page = printableDeep(answer);
	const { p } = ctx;
	const span = page.since === page.until ? page.since : `${page.since} to ${page.until}`;
	if (page.days.length === 0) {
		ctx.out(p.dim(`no ended jobs ${span} (UTC)`));
		return 0;
	}
	const n = (v: number) => v.toLocaleString("en-US");
	const cost = (d: Pick<UsageDay, "cost_usd" | "priced_jobs" | "jobs">) =>
		d.cost_usd === null ? "-" : `${usd(d.cost_usd)}${d.priced_jobs < d.jobs ? ` (${d.priced_jobs} of ${d.jobs} priced)` : ""}`;
	const days: Row[] = page.days;
	// Of the rows shown: on any page but a lone one (pages before it, or more to come), of this page only, and said so.
	const total: Row = { day: "", total: page.next_cursor || opts.cursor ? "total (this page)" : "total", jobs: 0, input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cost_usd: null, priced_jobs: 0 };
	for (const d of days) {
		total.jobs += d.jobs;
		total.input_tokens += d.input_tokens;
		total.output_tokens += d.output_tokens;
		total.cache_creation_input_tokens += d.cache_creation_input_tokens;
		total.cache_read_input_tokens += d.cache_read_input_tokens;
		total.priced_jobs += d.priced_jobs;
		if (d.cost_usd !== null) total.cost_usd = (total.cost_usd ?? 0) + d.cost_usd;
	}
	const rows = days.length > 1 ? [...days, total] : days;
	const bold = (d: Row) => (d === total ? p.bold : (s: string) => s);
	// By day, the total is named in the day's column: the days' agents added up would count an agent once a day.
	const who = opts.byDay
		? [{ header: "DAY", value: (d: Row) => d.total ?? d.day, style: bold }, { header: "AGENTS", value: (d: Row) => (d.agents === undefined ? "" : n(d.agents)) }]
		: [{ header: "DAY", value: (d: Row) => d.day }, { header: "AGENT", value: (d: Row) => d.total ?? d.agent ?? "", style: bold, shrink: "name" as const }];
	ctx.out(
		table<Row>(
			rows,
			[
				...who,
				{ header: "JOBS", value: (d) => n(d.jobs) },
				{ header: "INPUT", value: (d) => n(d.input_tokens) },
				{ header: "OUTPUT", value: (d) => n(d.output_tokens) },
				{ header: "CACHE WRITE", value: (d) => n(d.cache_creation_input_tokens), optional: 1 },
				{ header: "CACHE READ", value: (d) => n(d.cache_read_input_tokens), optional: 2 },
				{ header: "COST", value: cost, shrink: "note", keep: (d) => (d.cost_usd === null ? "-" : usd(d.cost_usd)) },
			],
			p,
			ctx.width,
		),
	);
	// The span the page answered for (--days resolved), so the next page is of the same days even after midnight.
	const more =
		page.next_cursor &&
		nextPageCommand(ctx, opts.byDay ? ["usage", "--by-day"] : ["usage"], [["--since", page.since], ["--until", page.until], ["--agent", opts.agent], ["--limit", opts.limit]], page.next_cursor);
	ctx.err(ctx.ep.dim(printable(`${span} (UTC)${more ? `; more: ${more}` : ""}`)));
	return 0;
}

/** The CSV's columns: the API's fields, as the dashboard's usage download has them (by day: the day's agents in the agent's place). */
const CSV_FIELDS = ["day", "agent", "jobs", "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "cost_usd", "priced_jobs"];
const CSV_DAY_FIELDS = CSV_FIELDS.map((f) => (f === "agent" ? "agents" : f));

/** Every row of the days, all pages (1,000 rows each), as CSV on stdout; an unknown agent is an error, as for the table. */
async function usageCsv(ctx: Context, query: { since?: string; until?: string; agent?: string }, byDay: boolean): Promise<number> {
	const rows: Record<string, unknown>[] = [];
	let cursor: string | undefined;
	do {
		const page = byDay
			? await ctx.client.json("/v1/usage", shapes.usageDayTotalPage, { query: { ...query, group: "day", limit: 1000, cursor } })
			: await ctx.client.json("/v1/usage", shapes.usagePage, { query: { ...query, limit: 1000, cursor } });
		rows.push(...page.days);
		cursor = page.next_cursor ?? undefined;
	} while (cursor);
	await requireListedAgents(ctx, query.agent, rows, true);
	process.stdout.write(csvOf(byDay ? CSV_DAY_FIELDS : CSV_FIELDS, rows));
	return 0;
}

/**
 * A mistyped agent has no usage, as an agent with no ended jobs has none: an unknown one is an
 * error (exit 4), for a script reading --json or --csv as for a person. The API takes several names
 * separated by commas and answers for those it has: each name no row of the whole answer names is
 * asked for alone (`--agent ops,typo` dropped the typo unsaid while ops had rows). A page of several
 * is not the whole answer (a name may be on another); by day, rows name no agent, so a lone name
 * with rows is known and several are each asked for.
 */
async function requireListedAgents(ctx: Context, agent: string | undefined, rows: readonly object[], whole: boolean): Promise<void> {
	if (agent === undefined || (rows.length > 0 && !whole)) return;
	const names = new Set(agent.split(","));
	const listed = new Set(rows.map((r) => ("agent" in r && typeof r.agent === "string" ? r.agent : undefined)));
	if (rows.length > 0 && names.size === 1 && listed.has(undefined)) return;
	for (const name of names) if (!listed.has(name)) await requireKnownAgent(ctx, name);
}
