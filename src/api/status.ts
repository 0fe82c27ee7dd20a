import { z } from "@hono/zod-openapi";
import { loadFleet } from "../config/bundled.ts";
import { numberVar } from "../config/vars.ts";
import { countRegisteredAgents } from "../store/agent-registry.ts";
import { countJobsByStatus } from "../store/job-index.ts";
import { heartbeatHealth, readHeartbeat } from "../store/heartbeat.ts";
import { createApi, withRole } from "./factory.ts";

export const SchedulerHealth = z
	.object({
		last_tick_at: z.string().nullable(),
		age_seconds: z.number().int().nullable(),
		stalled: z.boolean().openapi({ description: "No tick within HEARTBEAT_STALE_SECONDS (or none ever)" }),
		outcome: z.enum(["ok", "partial", "failed"]).nullable(),
		last_ok_at: z.string().nullable(),
	})
	.openapi("SchedulerHealth");

const Status = z
	.object({
		scheduler: SchedulerHealth.extend({
			agents_called: z.number().int().nullable(),
			claimed: z.number().int().nullable(),
			skipped: z.number().int().nullable(),
			error: z.string().nullable().openapi({ description: "Which agents or shards the last tick could not reach; why is in the Worker's logs" }),
		}),
		jobs: z.record(z.string(), z.number().int()).openapi({ description: "Indexed jobs by status" }),
		agents: z.object({ file: z.number().int(), api: z.number().int() }),
	})
	.openapi("Status");

/** The answers' shapes, for the CLI (a type-only import: nothing of src/ loads in it at run time). */
export type SchedulerHealthShape = z.infer<typeof SchedulerHealth>;
export type StatusShape = z.infer<typeof Status>;

export const statusApi = createApi().openapi(
	withRole("read", {
		method: "get",
		path: "/",
		summary: "Scheduler heartbeat, jobs by status and agent counts (like `hermes cron status`)",
		responses: { 200: { description: "The fleet's status", content: { "application/json": { schema: Status } } } },
	}),
	async (c) => {
		const [hb, byStatus, api] = await Promise.all([
			readHeartbeat(c.env.DB),
			countJobsByStatus(c.env.DB),
			countRegisteredAgents(c.env.DB),
		]);
		return c.json(
			{
				scheduler: {
					...heartbeatHealth(hb, Date.now(), numberVar(c.env, "HEARTBEAT_STALE_SECONDS")),
					agents_called: hb?.agents_called ?? null,
					claimed: hb?.claimed ?? null,
					skipped: hb?.skipped ?? null,
					error: hb?.error ?? null,
				},
				jobs: byStatus,
				agents: { file: loadFleet().agents.length, api },
			},
			200,
		);
	},
);
