import { z } from "@hono/zod-openapi";
import { AGENT_NAME_PATTERN, AGENT_NAME_RULE, agentNameProblem } from "../config/agent-name.ts";
import { UsageAgentTotalSchema, UsageDaySchema, UsageDayTotalSchema } from "../jobs/usage-day.ts";
import { BadRequestError } from "../errors.ts";
import { listUsage, listUsageByAgent, listUsageByDay } from "../store/usage.ts";
import { DAY_MS, isoDay, utcDay } from "../shared/time.ts";
import { createApi, withRole } from "./factory.ts";
import { DateString } from "./schemas.ts";
import { CursorParam, pageLimit } from "./params.ts";

// From 1970 on: no job is older, and a day of year 0 made a default since of year -1, answered as "-000001-12".
const Day = z.iso.date({ message: "must be a date, YYYY-MM-DD" }).refine((day) => day >= "1970-01-01", { message: "must be 1970-01-01 or later: no job is older" });
const DEFAULT_DAYS = 7;
/** Names an `agent` filter may list: a chart's few series (the dashboard asks for 8), not a fleet. */
const MAX_AGENTS = 20;

/** `agent`: one name, or several separated by commas (any of them), each as AgentNameParam takes it. */
const AgentsParam = z
	.string()
	.transform((value, ctx) => {
		const names = value.split(",");
		for (const name of names) {
			if (AGENT_NAME_PATTERN.test(name)) continue;
			const which = names.length > 1 ? `${JSON.stringify(name)} ` : "it ";
			ctx.addIssue({ code: "custom", message: `must be an agent name, or several separated by commas, each ${AGENT_NAME_RULE}; ${which}${agentNameProblem(name)}` });
			return z.NEVER;
		}
		const unique = [...new Set(names)];
		if (unique.length > MAX_AGENTS) {
			ctx.addIssue({ code: "custom", message: `names ${unique.length} agents; at most ${MAX_AGENTS}` });
			return z.NEVER;
		}
		return unique;
	})
	.openapi({ type: "string", description: `An agent's name, or up to ${MAX_AGENTS} separated by commas: their rows alone`, example: "daily-digest,triage" });

const UsageQuery = z
	.strictObject({
		since: Day.optional().openapi({ description: `First UTC day, inclusive (default: ${DEFAULT_DAYS - 1} days before until)`, example: "2026-11-24" }),
		until: Day.optional().openapi({ description: "Last UTC day, inclusive (default: today)", example: "2026-11-30" }),
		agent: AgentsParam.optional(),
		limit: pageLimit(1000, 500),
		cursor: CursorParam,
		group: z.enum(["day", "agent"]).optional().openapi({
			description:
				"day: one row a UTC day, its agents' rows summed (UsageDayTotalPage; with agent, those agents' alone), newest first, limit and cursor counting days. " +
				"agent: one row an agent, its days summed (UsageAgentTotalPage), busiest first (the four classes of tokens added up, then by name), limit and cursor counting agents, total the agents of every page",
		}),
	})
	.refine((q) => !q.since || !q.until || q.since <= q.until, { message: "since must not be after until", path: ["since"] });

const UsagePage = z
	.object({
		since: DateString,
		until: DateString,
		days: z.array(UsageDaySchema),
		next_cursor: z.string().nullable(),
	})
	.openapi("UsagePage");

const UsageDayTotalPage = z
	.object({
		since: DateString,
		until: DateString,
		days: z.array(UsageDayTotalSchema),
		next_cursor: z.string().nullable(),
	})
	.openapi("UsageDayTotalPage");

const UsageAgentTotalPage = z
	.object({
		since: DateString,
		until: DateString,
		agents: z.array(UsageAgentTotalSchema),
		total: z.number().int().openapi({ description: "Agents in the list, over all its pages" }),
		next_cursor: z.string().nullable(),
	})
	.openapi("UsageAgentTotalPage");

export const usageApi = createApi().openapi(
	withRole("read", {
		method: "get",
		operationId: "getUsage",
		path: "/",
		summary: "Tokens and cost of ended jobs by agent and UTC day of their creation, newest day first",
		request: { query: UsageQuery },
		responses: {
			200: { description: "A page of agents' days (UsagePage), with group=day of the fleet's days (UsageDayTotalPage), with group=agent of its agents' totals (UsageAgentTotalPage)",
				content: { "application/json": { schema: z.union([UsagePage, UsageDayTotalPage, UsageAgentTotalPage]) } },
			},
		},
	}),
	async (c) => {
		const q = c.req.valid("query");
		const toDay = q.until ? Date.parse(q.until) : utcDay(Date.now());
		// (Not before 1970, which the query refuses as a since given.)
		const fromDay = q.since ? Date.parse(q.since) : Math.max(0, toDay - (DEFAULT_DAYS - 1) * DAY_MS);
		// The schema compares the two when both are given; a since alone is checked against today.
		if (fromDay > toDay) {
			const message = `${q.since} is after until (${isoDay(toDay)}, today by default)`;
			// Worded and detailed as the schema's own 400s are (validationError).
			throw new BadRequestError(`invalid query: since: ${message}`, { issues: [{ path: "since", message }] });
		}
		const range = { fromDay, toDay, agents: q.agent };
		const list = q.group === "day" ? listUsageByDay : q.group === "agent" ? listUsageByAgent : listUsage;
		const page = await list(c.env.DB, range, q.limit, q.cursor);
		return c.json({ since: isoDay(fromDay), until: isoDay(toDay), ...page }, 200);
	},
);
