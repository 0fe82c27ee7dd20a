import { z } from "@hono/zod-openapi";
import { UsageDaySchema, UsageDayTotalSchema } from "../jobs/usage-day.ts";
import { BadRequestError } from "../errors.ts";
import { DAY_MS, isoDay, listUsage, listUsageByDay, utcDay } from "../store/usage.ts";
import { createApi, withRole } from "./factory.ts";
import { AgentNameParam, CursorParam, pageLimit } from "./params.ts";

const Day = z.iso.date({ message: "must be a date, YYYY-MM-DD" });
const DEFAULT_DAYS = 7;

const UsageQuery = z
	.strictObject({
		since: Day.optional().openapi({ description: `First UTC day, inclusive (default: ${DEFAULT_DAYS - 1} days before until)`, example: "2026-11-24" }),
		until: Day.optional().openapi({ description: "Last UTC day, inclusive (default: today)", example: "2026-11-30" }),
		agent: AgentNameParam.optional(),
		limit: pageLimit(1000, 500),
		cursor: CursorParam,
		group: z.enum(["day"]).optional().openapi({
			description: "day: one row a UTC day, its agents' rows summed (UsageDayTotalPage; with agent, that agent's alone), newest first, limit and cursor counting days",
		}),
	})
	.refine((q) => !q.since || !q.until || q.since <= q.until, { message: "since must not be after until", path: ["since"] });

const UsagePage = z
	.object({
		since: z.string(),
		until: z.string(),
		days: z.array(UsageDaySchema),
		next_cursor: z.string().nullable(),
	})
	.openapi("UsagePage");

const UsageDayTotalPage = z
	.object({
		since: z.string(),
		until: z.string(),
		days: z.array(UsageDayTotalSchema),
		next_cursor: z.string().nullable(),
	})
	.openapi("UsageDayTotalPage");

export const usageApi = createApi().openapi(
	withRole("read", {
		method: "get",
		path: "/",
		summary: "Tokens and cost of ended jobs by agent and UTC day of their creation, newest day first",
		request: { query: UsageQuery },
		responses: {
			200: { description: "A page of agents' days (UsagePage), or with group=day of the fleet's days (UsageDayTotalPage)", content: { "application/json": { schema: z.union([UsagePage, UsageDayTotalPage]) } } },
		},
	}),
	async (c) => {
		const q = c.req.valid("query");
		const toDay = q.until ? Date.parse(q.until) : utcDay(Date.now());
		const fromDay = q.since ? Date.parse(q.since) : toDay - (DEFAULT_DAYS - 1) * DAY_MS;
		// The schema compares the two when both are given; a since alone is checked against today.
		if (fromDay > toDay) {
			const message = `${q.since} is after until (${isoDay(toDay)}, today by default)`;
			// Worded and detailed as the schema's own 400s are (validationError).
			throw new BadRequestError(`invalid query: since: ${message}`, { issues: [{ path: "since", message }] });
		}
		const range = { fromDay, toDay, agent: q.agent };
		const page = q.group === "day" ? await listUsageByDay(c.env.DB, range, q.limit, q.cursor) : await listUsage(c.env.DB, range, q.limit, q.cursor);
		return c.json({ since: isoDay(fromDay), until: isoDay(toDay), ...page }, 200);
	},
);
