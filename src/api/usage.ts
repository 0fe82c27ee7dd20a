import { z } from "@hono/zod-openapi";
import { UsageDaySchema } from "../jobs/usage-day.ts";
import { BadRequestError } from "../errors.ts";
import { DAY_MS, isoDay, listUsage, utcDay } from "../store/usage.ts";
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

export const usageApi = createApi().openapi(
	withRole("read", {
		method: "get",
		path: "/",
		summary: "Tokens and cost of ended jobs by agent and UTC day of their creation, newest day first",
		request: { query: UsageQuery },
		responses: { 200: { description: "A page of days", content: { "application/json": { schema: UsagePage } } } },
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
		const page = await listUsage(c.env.DB, { fromDay, toDay, agent: q.agent }, q.limit, q.cursor);
		return c.json({ since: isoDay(fromDay), until: isoDay(toDay), ...page }, 200);
	},
);
