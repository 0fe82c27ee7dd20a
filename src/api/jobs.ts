import { createRoute, z } from "@hono/zod-openapi";
import { agentRpc } from "../../durable-objects/agent/client.ts";
import { NotFoundError } from "../errors.ts";
import { JobIdSchema, JobRecordSchema, JobStatusSchema, JobSummarySchema, TriggerTypeSchema } from "../jobs/model.ts";
import { getJobSummary, listJobs } from "../store/job-index.ts";
import { createApi, withRole } from "./factory.ts";
import { AgentNameParam } from "./params.ts";
import { notFoundResponse } from "./schemas.ts";

const Instant = z.iso.datetime({ offset: true, message: "must be an ISO 8601 date-time, e.g. 2026-11-30T09:00:00Z" });

const ListQuery = z
	.strictObject({
		agent: AgentNameParam.optional(),
		status: JobStatusSchema.optional(),
		trigger_type: TriggerTypeSchema.optional(),
		since: Instant.optional().openapi({ description: "Jobs created at or after this instant" }),
		until: Instant.optional().openapi({ description: "Jobs created before this instant" }),
		limit: z.coerce.number().int().min(1).max(200).default(20),
		cursor: z.string().max(200).optional().openapi({ description: "next_cursor of the previous page" }),
	})
	.refine((q) => !q.since || !q.until || Date.parse(q.since) < Date.parse(q.until), {
		message: "since must be before until",
		path: ["since"],
	});

const JobPage = z
	.object({ jobs: z.array(JobSummarySchema), next_cursor: z.string().nullable() })
	.openapi("JobPage");

export const jobsApi = createApi()
	.openapi(
		withRole("read", {
			method: "get",
			path: "/",
			summary: "List jobs, newest first, with keyset pagination",
			request: { query: ListQuery },
			responses: { 200: { description: "A page of jobs", content: { "application/json": { schema: JobPage } } } },
		}),
		async (c) => {
			const q = c.req.valid("query");
			const page = await listJobs(
				c.env.DB,
				{
					agent: q.agent,
					status: q.status,
					trigger_type: q.trigger_type,
					since: q.since === undefined ? undefined : Date.parse(q.since),
					until: q.until === undefined ? undefined : Date.parse(q.until),
				},
				q.limit,
				q.cursor,
			);
			return c.json(page, 200);
		},
	)
	.openapi(
		withRole("read", {
			method: "get",
			path: "/{id}",
			summary: "One job's full record",
			request: { params: z.object({ id: JobIdSchema }) },
			responses: {
				200: { description: "The job record", content: { "application/json": { schema: JobRecordSchema } } },
				...notFoundResponse,
			},
		}),
		async (c) => {
			const { id } = c.req.valid("param");
			const summary = await getJobSummary(c.env.DB, id);
			const job = summary && (await agentRpc(c.env, summary.agent).getJob(id));
			if (!job) throw new NotFoundError(`no job ${id}`);
			return c.json(job, 200);
		},
	);
