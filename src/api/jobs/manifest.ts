import { z } from "@hono/zod-openapi";
import { agentRpc } from "../../../durable-objects/agent/client.ts";
import { AgentSchema } from "../../config/schema.ts";
import { ConflictError, NotFoundError } from "../../errors.ts";
import { JobIdSchema, JobStatusSchema } from "../../jobs/model.ts";
import { getJobSummary } from "../../store/job-index.ts";
import { shownDefinition } from "../../security/definition-secrets.ts";
import { createApi, withRole } from "../factory.ts";
import { conflictResponse, DateTimeString, notFoundResponse } from "../schemas.ts";
import { noJob } from "./not-found.ts";

const JobManifestSchema = z
	.object({
		job_id: JobIdSchema,
		agent: z.string(),
		status: JobStatusSchema,
		session_id: z.string(),
		definition_revision: z.string().openapi({ description: "The revision of the definition below: the one the job started on" }),
		definition: AgentSchema.openapi({ description: "The agent's definition when the job started: its tools, limits and timeout are these, whatever was deployed since. A value of one of the Worker's secrets it holds is shown as [REDACTED] (in system and tools too), as GET /v1/agents/{agent} shows it" }),
		models: z.array(z.string()).openapi({ description: "The model, then its fallbacks, in the order they are tried" }),
		max_tokens: z.number().int(),
		system: z.array(z.object({ type: z.literal("text"), text: z.string() }).passthrough()).openapi({ description: "The system prompt sent with every turn: the agent's, then drover's fixed rules" }),
		tools: z.array(z.record(z.string(), z.unknown())).openapi({ description: "The tool definitions sent with every turn, as the Messages API takes them" }),
		deadline: DateTimeString.openapi({ description: "When the job times out (its start plus the definition's timeout)" }),
		persistent_from: z
			.string()
			.nullable()
			.openapi({
				description:
					"For a run in persistent mode: the last completed run it found the agent's persistent session at ('' for none; null for a run not in persistent mode, or one a reset or delete made forget it). It carried that run's conversation when continued_from names the same run; else it started a new session",
			}),
		continued_from: JobIdSchema.nullable().openapi({ description: "The run whose conversation this one carries on (a continue's source, or a persistent run's last completed run)" }),
	})
	.openapi("JobManifest");

export type JobManifestShape = z.infer<typeof JobManifestSchema>;

/** GET /v1/jobs/:id/manifest, mounted beside the job routes. */
export const jobManifestApi = createApi().openapi(
	withRole("read", {
		method: "get",
		operationId: "getJobManifest",
		path: "/{id}/manifest",
		summary: "What a job runs with (deputy's manifest): the definition, system prompt, tools, models and deadline saved when it started",
		description: "Saved once, as the job starts, and reused by every turn, so a deploy while it runs changes nothing under it. A pending job has none yet (409); one cancelled before it started never will (404).",
		request: { params: z.object({ id: JobIdSchema }) },
		responses: {
			200: { description: "The job's manifest", content: { "application/json": { schema: JobManifestSchema } } },
			...notFoundResponse,
			...conflictResponse,
		},
	}),
	async (c) => {
		const { id } = c.req.valid("param");
		const summary = await getJobSummary(c.env.DB, id);
		const found = summary && (await agentRpc(c.env, summary.agent).manifest(id));
		if (!found) throw noJob(c.env, id);
		const { job, setup } = found;
		if (!setup) {
			if (job.status === "pending") throw new ConflictError(`job ${id} is pending: its manifest is saved when it starts`);
			throw new NotFoundError(`job ${id} never started (it ended ${job.status}), so it has no manifest`);
		}
		return c.json(
			{
				job_id: job.id,
				agent: job.agent,
				status: job.status,
				session_id: setup.sessionId,
				definition_revision: job.definition_revision,
				// Built from the definition when the job started: a secret's value it held is shown as the marker, as the agent's own reads show it.
				definition: shownDefinition(setup.definition),
				models: setup.models,
				max_tokens: setup.maxTokens,
				system: shownDefinition(setup.system),
				tools: shownDefinition(setup.tools) as unknown as Record<string, unknown>[],
				deadline: new Date(setup.deadline).toISOString(),
				persistent_from: setup.persistentFrom,
				continued_from: job.continued_from,
			},
			200,
		);
	},
);
