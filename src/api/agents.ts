import { z } from "@hono/zod-openapi";
import { findAgent, loadFleet } from "../config/bundled.ts";
import type { AgentDefinition } from "../config/schema.ts";
import { NotFoundError } from "../errors.ts";
import { nextRun } from "../scheduler/next-run.ts";
import { createApi, withRole } from "./factory.ts";
import { AgentNameParam } from "./params.ts";
import { notFoundResponse } from "./schemas.ts";

const ScheduleView = z
	.object({
		name: z.string(),
		kind: z.enum(["cron", "interval"]),
		expression: z.string().openapi({ description: "The cron expression or the interval" }),
		timezone: z.string().nullable(),
		catch_up: z.boolean(),
		enabled: z.boolean(),
		next_run: z.string().nullable().openapi({ description: "Next slot (ISO 8601, UTC); null when disabled" }),
	})
	.openapi("ScheduleView");

const AgentView = z
	.object({
		name: z.string(),
		source: z.enum(["file", "api"]),
		enabled: z.boolean(),
		model: z.string(),
		fallback_models: z.array(z.string()),
		max_concurrent: z.number().int(),
		schedules: z.array(ScheduleView),
	})
	.openapi("AgentView");

function agentView(agent: AgentDefinition, now: Date): z.infer<typeof AgentView> {
	return {
		name: agent.name,
		source: "file",
		enabled: agent.enabled,
		model: agent.model,
		fallback_models: agent.fallback_models,
		max_concurrent: agent.max_concurrent,
		schedules: Object.entries(agent.schedules).map(([name, s]) => {
			const active = agent.enabled && s.enabled;
			return {
				name,
				kind: "cron" in s ? ("cron" as const) : ("interval" as const),
				expression: "cron" in s ? s.cron : s.interval,
				timezone: "cron" in s ? s.timezone : null,
				catch_up: s.catch_up,
				enabled: s.enabled,
				next_run: active ? (nextRun(s, now)?.toISOString() ?? null) : null,
			};
		}),
	};
}

export const agentsApi = createApi()
	.openapi(
		withRole("read", {
			method: "get",
			path: "/",
			summary: "The fleet's agents and their schedules",
			responses: {
				200: { description: "Every agent", content: { "application/json": { schema: z.object({ agents: z.array(AgentView) }) } } },
			},
		}),
		(c) => {
			const now = new Date();
			return c.json({ agents: loadFleet().agents.map((a) => agentView(a, now)) }, 200);
		},
	)
	.openapi(
		withRole("read", {
			method: "get",
			path: "/{agent}",
			summary: "One agent and its schedules",
			request: { params: z.object({ agent: AgentNameParam }) },
			responses: {
				200: { description: "The agent", content: { "application/json": { schema: AgentView } } },
				...notFoundResponse,
			},
		}),
		(c) => {
			const { agent: name } = c.req.valid("param");
			const agent = findAgent(name);
			if (!agent) throw new NotFoundError(`no agent named ${name}`);
			return c.json(agentView(agent, new Date()), 200);
		},
	);
