// The usage_daily rollup (migrations/0005): tokens and cost of ended jobs by agent and UTC day of
// their creation, written with each job's final index row and read by GET /v1/usage.
import { cursorScope, decodeCursor, encodeCursor, type CursorKey } from "../shared/cursor.ts";
import type { JobRecord } from "../jobs/model.ts";
import { FIRST_FINAL } from "./first-final.ts";
import type { UsageAgentTotal, UsageDay, UsageDayTotal } from "../jobs/usage-day.ts";
import { isoDay, utcDay } from "../shared/time.ts";

export type { UsageAgentTotal, UsageDay, UsageDayTotal };


/**
 * Adds a final record's usage to its agent's day, unless the index row already holds that final
 * status (the record was indexed before): it must run before the record's upsert, in its batch.
 */
export function usageStatement(db: D1Database, r: JobRecord): D1PreparedStatement {
	const tokens = { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
	for (const u of Object.values(r.usage.per_model)) {
		tokens.input += u.input_tokens;
		tokens.output += u.output_tokens;
		tokens.cacheWrite += u.cache_creation_input_tokens;
		tokens.cacheRead += u.cache_read_input_tokens;
	}
	// A job that never called a model cost nothing: priced at 0, not counted among the unpriced (the
	// record's cost stays null, as herdctl's is where there was no per-token spend). Counted apart too
	// (tokenless_priced_jobs, migrations/0013): priced alone, such jobs make no cost for the day, or a
	// cancelled run beside one on a model without a price made the day's cost $0.
	const cost = Object.keys(r.usage.per_model).length === 0 ? 0 : r.usage.total_cost_usd;
	const tokenless = tokens.input + tokens.output + tokens.cacheWrite + tokens.cacheRead === 0;
	return db
		.prepare(
			`INSERT INTO usage_daily (day, agent, jobs, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, cost_usd, priced_jobs, tokenless_priced_jobs)
			 SELECT ?4, ?3, 1, ?5, ?6, ?7, ?8, ?9, ?10, ?11 WHERE ${FIRST_FINAL}
			 ON CONFLICT (day, agent) DO UPDATE SET jobs = jobs + 1, input_tokens = input_tokens + excluded.input_tokens,
			   output_tokens = output_tokens + excluded.output_tokens,
			   cache_creation_input_tokens = cache_creation_input_tokens + excluded.cache_creation_input_tokens,
			   cache_read_input_tokens = cache_read_input_tokens + excluded.cache_read_input_tokens,
			   cost_usd = cost_usd + excluded.cost_usd, priced_jobs = priced_jobs + excluded.priced_jobs,
			   tokenless_priced_jobs = tokenless_priced_jobs + excluded.tokenless_priced_jobs`,
		)
		.bind(r.id, r.status, r.agent, utcDay(Date.parse(r.created_at)), tokens.input, tokens.output, tokens.cacheWrite, tokens.cacheRead, cost ?? 0, cost === null ? 0 : 1, cost !== null && tokenless ? 1 : 0);
}

/** A row of usage_daily: the day as its UTC midnight (ms), the cost summed over priced jobs only. */
type UsageRow = Omit<UsageDay, "day" | "cost_usd"> & { day: number; cost_usd: number; tokenless_priced_jobs: number };

/** A day's cost: summed in floating point, rounded to a millionth of a dollar; null without a priced job that used tokens. */
const dayCost = (row: { cost_usd: number; priced_jobs: number; tokenless_priced_jobs: number }): number | null =>
	row.priced_jobs - row.tokenless_priced_jobs === 0 ? null : Math.round(row.cost_usd * 1e6) / 1e6;

/** What a row or a group of rows sums. */
type SumRow = Omit<UsageRow, "day" | "agent">;

/** A row's sums as the API answers them, its cost rounded (dayCost). */
function sums(row: SumRow): Omit<UsageDay, "day" | "agent"> {
	return {
		jobs: row.jobs,
		input_tokens: row.input_tokens,
		output_tokens: row.output_tokens,
		cache_creation_input_tokens: row.cache_creation_input_tokens,
		cache_read_input_tokens: row.cache_read_input_tokens,
		// Summed in floating point: rounded to a millionth of a dollar, below any price's precision. No
		// priced job that used tokens: no cost, not the $0 of jobs that made no model call.
		cost_usd: dayCost(row),
		priced_jobs: row.priced_jobs,
	};
}

const toUsageDay = (row: UsageRow): UsageDay => ({ day: isoDay(row.day), agent: row.agent, ...sums(row) });

/** The days a list is over and, if any, the agents it is of (several: any of them). */
export interface UsageRange {
	fromDay: number;
	toDay: number;
	agents?: readonly string[] | undefined;
}

/** `agent IN (…)` and its parameters, or nothing for every agent. */
function agentFilter(range: UsageRange): { sql: string[]; params: string[] } {
	const agents = range.agents ?? [];
	return agents.length === 0 ? { sql: [], params: [] } : { sql: [`agent IN (${agents.map(() => "?").join(", ")})`], params: [...agents] };
}

/**
 * Where a page of `list` starts: its cursor's key, if it has one, checked against the list and its
 * filters. Bound to the days the page answered for (its since and until, defaults resolved) and the
 * agents: the same days asked explicitly are the same list; other days, or the defaults after
 * midnight, are another, refused rather than paged from an unrelated position.
 */
function pageStart(list: string, range: UsageRange, cursor: string | undefined): { scope: string; after: CursorKey | undefined } {
	const scope = cursorScope(list, { since: isoDay(range.fromDay), until: isoDay(range.toDay), agent: range.agents?.join(",") });
	return { scope, after: cursor === undefined ? undefined : decodeCursor(cursor, scope) };
}

/** The sums a grouped page reads, each keeping the per-agent rows' meaning (see dayCost). */
const SUMS = `sum(jobs) AS jobs, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
	sum(cache_creation_input_tokens) AS cache_creation_input_tokens, sum(cache_read_input_tokens) AS cache_read_input_tokens,
	sum(cost_usd) AS cost_usd, sum(priced_jobs) AS priced_jobs, sum(tokenless_priced_jobs) AS tokenless_priced_jobs`;

/**
 * A page's query. Newest day first, agents ascending within a day: the key's order, in mixed
 * directions that no row-value comparison seeks past. Past a cursor is a later agent on its day, then
 * the earlier days: two ranges, each a seek on the key (or on usage_by_agent for one agent), read one
 * after the other (SQLite's UNION ALL yields its left side, then its right; each side's ORDER BY holds,
 * having a LIMIT) and stopped at the page's end. The cursor's day used to be read from its first agent
 * and dropped up to the cursor's; an outer ORDER BY would merge the two, and reads every row of both.
 */
export function usageListQuery(range: UsageRange, limit: number, after?: CursorKey): { sql: string; params: (string | number)[] } {
	const agents = agentFilter(range);
	const select = (where: string[]) => `SELECT * FROM usage_daily WHERE ${[...where, ...agents.sql].join(" AND ")} ORDER BY day DESC, agent ASC LIMIT ?`;
	if (!after) return { sql: select(["day >= ?", "day <= ?"]), params: [range.fromDay, range.toDay, ...agents.params, limit] };
	return {
		// One upper bound on the earlier days, or the seek starts at the window's top and reads the cursor's day through.
		sql: `SELECT * FROM (${select(["day = ?", "agent > ?", "day >= ?", "day <= ?"])}) UNION ALL SELECT * FROM (${select(["day >= ?", "day < ?"])}) LIMIT ?`,
		params: [after.at, after.id, range.fromDay, range.toDay, ...agents.params, limit, range.fromDay, Math.min(after.at, range.toDay + 1), ...agents.params, limit, limit],
	};
}

/**
 * Usage by agent and day over days [fromDay, toDay] (UTC midnights, ms), newest day first and agents
 * by name (the primary key's order), with keyset pagination on (day, agent): a page seeks to the
 * cursor's day and reads its own rows, not the pages before it.
 */
export async function listUsage(db: D1Database, range: UsageRange, limit: number, cursor?: string): Promise<{ days: UsageDay[]; next_cursor: string | null }> {
	const { scope, after } = pageStart("usage", range, cursor);
	const { sql, params } = usageListQuery(range, limit + 1, after);
	const { results } = await db
		.prepare(sql)
		.bind(...params)
		.all<UsageRow>();
	const page = results.slice(0, limit);
	const last = page.at(-1);
	return {
		days: page.map(toUsageDay),
		next_cursor: results.length > limit && last ? encodeCursor({ at: last.day, id: last.agent }, scope) : null,
	};
}

/**
 * Usage by UTC day over days [fromDay, toDay], the agents' rows summed in one statement (a range of
 * the key, grouped in its order), newest day first, paged by day. Each sum keeps the per-agent rows'
 * meaning: priced_jobs less tokenless_priced_jobs is 0 for the day exactly when it is for every agent,
 * so the day's cost is null exactly when each agent's is. A client adding up a week of 1,000 agents
 * itself reads their 7,000 rows (1.3 MB).
 */
export async function listUsageByDay(db: D1Database, range: UsageRange, limit: number, cursor?: string): Promise<{ days: UsageDayTotal[]; next_cursor: string | null }> {
	const { scope, after } = pageStart("usage-by-day", range, cursor);
	const toDay = after === undefined ? range.toDay : Math.min(range.toDay, after.at - 1);
	const agents = agentFilter(range);
	const { results } = await db
		.prepare(
			`SELECT day, count(*) AS agents, ${SUMS}
			 FROM usage_daily WHERE ${["day >= ?", "day <= ?", ...agents.sql].join(" AND ")} GROUP BY day ORDER BY day DESC LIMIT ?`,
		)
		.bind(range.fromDay, toDay, ...agents.params, limit + 1)
		.all<SumRow & { day: number; agents: number }>();
	const page = results.slice(0, limit);
	const last = page.at(-1);
	return {
		days: page.map((row) => ({ day: isoDay(row.day), agents: row.agents, ...sums(row) })),
		next_cursor: results.length > limit && last ? encodeCursor({ at: last.day, id: "" }, scope) : null,
	};
}

/**
 * Usage by agent over days [fromDay, toDay], each agent's days summed in one statement, busiest
 * first: by all four classes of tokens added up (as the dashboard's chart ranks its agents), then by
 * name; paged on (tokens, agent). Every page groups the range's rows again (a week of 1,000 agents is
 * 7,000 rows read in D1, 1,000 agents' sums), as a total must; `agents` counts the list's rows over
 * all its pages (`total`), in the same statement, so a client reading the busiest few knows how
 * many others there are.
 */
export async function listUsageByAgent(
	db: D1Database,
	range: UsageRange,
	limit: number,
	cursor?: string,
): Promise<{ agents: UsageAgentTotal[]; total: number; next_cursor: string | null }> {
	const { scope, after } = pageStart("usage-by-agent", range, cursor);
	const agents = agentFilter(range);
	const past = after === undefined ? { sql: "", params: [] } : { sql: "WHERE tokens < ? OR (tokens = ? AND agent > ?)", params: [after.at, after.at, after.id] };
	const { results } = await db
		.prepare(
			// The count is a window over the groups, before the cursor drops any. For a week of 1,000
			// agents the grouping reads 15,001 rows (the range, then SQLite's sort of it into agents, as
			// the key leads with the day) and the count 2,001 more, as a subquery counting them did.
			`SELECT * FROM (
			   SELECT agent, count(*) AS days, ${SUMS},
			     sum(input_tokens + output_tokens + cache_creation_input_tokens + cache_read_input_tokens) AS tokens, count(*) OVER () AS total
			   FROM usage_daily WHERE ${["day >= ?", "day <= ?", ...agents.sql].join(" AND ")} GROUP BY agent)
			 ${past.sql} ORDER BY tokens DESC, agent ASC LIMIT ?`,
		)
		.bind(range.fromDay, range.toDay, ...agents.params, ...past.params, limit + 1)
		.all<SumRow & { agent: string; days: number; tokens: number; total: number }>();
	const page = results.slice(0, limit);
	const last = page.at(-1);
	return {
		agents: page.map((row) => ({ agent: row.agent, days: row.days, ...sums(row) })),
		total: results[0]?.total ?? 0,
		next_cursor: results.length > limit && last ? encodeCursor({ at: last.tokens, id: last.agent }, scope) : null,
	};
}
