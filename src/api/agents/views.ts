import { z } from "@hono/zod-openapi";
import type { AgentStatus } from "../../../durable-objects/agent/agent-do.ts";
import { readinessWarnings } from "../../config/readiness.ts";
import { AgentSchema, type DefinitionSummary } from "../../config/schema.ts";
import { storageWarning } from "../../config/storage.ts";
import { nextRun } from "../../scheduler/next-run.ts";
import type { ResolvedAgent } from "../resolve-agent.ts";
import { DateTimeString, LastJobSchema, LastRunSchema, PausedSchema, RunningJobSchema } from "../schemas.ts";
import type { Occurrence } from "../../../durable-objects/agent/ledger.ts";

// An agent as the API answers it: its definition's summary, its schedules' next runs and the state
// its own object reports.

export const ScheduleView = z
	.object({
		name: z.string(),
		kind: z.enum(["cron", "interval"]),
		expression: z.string().openapi({ description: "The cron expression or the interval" }),
		timezone: z.string().nullable(),
		catch_up: z.boolean(),
		enabled: z.boolean(),
		next_run: DateTimeString.nullable().openapi({ description: "Next slot (ISO 8601, UTC); null when disabled" }),
		last_run: LastRunSchema,
	})
	.openapi("ScheduleView");

export const AgentView = z
	.object({
		name: z.string(),
		source: z.enum(["file", "api"]),
		enabled: z.boolean(),
		model: z.string(),
		fallback_models: z.array(z.string()),
		max_concurrent: z.number().int(),
		overlap: z.enum(["skip", "queue"]),
		has_default_prompt: z.boolean().openapi({ description: "false: a manual run must send its own prompt" }),
		schedules: z.array(ScheduleView),
		paused: PausedSchema,
		running_jobs: z.array(RunningJobSchema),
		queued_jobs: z.number().int(),
		last_job: LastJobSchema,
		storage_bytes: z.number().int().openapi({ description: "The agent's Durable Object's SQLite database, in bytes: Cloudflare allows 10 GB an object, and a warning is given from 8 GB" }),
		warnings: z.array(z.string()).openapi({
			description: "What will fail though the agent runs: a webhook trigger's or a hook's secret not set (each a 503 or a call given up), a webhook tool's <url_secret>_SIGNING_KEY not set (its calls signed with their URL, which authenticates nothing), or the agent's storage past 8 of its 10 GB. A secret a run needs pauses the agent instead (paused.by auto)",
		}),
	})
	.openapi("AgentView");


export const AgentDetail = AgentView.extend({ definition: AgentSchema, definition_revision: z.string() }).openapi("AgentDetail");

/** The answers' shapes, for the CLI (a type-only import). */
export type AgentViewT = z.infer<typeof AgentView>;
export type AgentDetailT = z.infer<typeof AgentDetail>;

/** `lastRuns`: each schedule's newest ledger row, from the agent's object (none for a plan not saved). */
export function scheduleViews(agent: DefinitionSummary, now: Date, lastRuns: Record<string, Occurrence> = {}): AgentViewT["schedules"] {
	return Object.entries(agent.schedules).map(([name, s]) => ({
		name,
		kind: "cron" in s ? ("cron" as const) : ("interval" as const),
		expression: "cron" in s ? s.cron : s.interval,
		timezone: "cron" in s ? s.timezone : null,
		catch_up: s.catch_up,
		enabled: s.enabled,
		next_run: agent.enabled && s.enabled ? (nextRun(s, now)?.toISOString() ?? null) : null,
		last_run: lastRunView(lastRuns[name]),
	}));
}

function lastRunView(row: Occurrence | undefined): AgentViewT["schedules"][number]["last_run"] {
	// A schedule's rows all carry their slot's instant (lastRuns reads only those).
	if (!row?.scheduled_instant) return null;
	const { scheduled_instant, status, skip_reason, job_id, finished_at, delivery_outcome } = row;
	return { scheduled_instant, status, skip_reason, job_id, finished_at, delivery_outcome };
}

/** An agent as its view reads it: a listing's summary of its definition, or the whole of it. */
export interface Viewed {
	name: string;
	source: "file" | "api";
	definition: DefinitionSummary;
	hasDefaultPrompt: boolean;
}

export const viewed = (agent: ResolvedAgent): Viewed => ({ ...agent, hasDefaultPrompt: agent.definition.prompt !== undefined && agent.definition.prompt !== null });

export function agentView(agent: Viewed, status: AgentStatus, now: Date, env: Env): AgentViewT {
	const d = agent.definition;
	const full = storageWarning(status.storage_bytes);
	return {
		name: d.name,
		source: agent.source,
		enabled: d.enabled,
		model: d.model,
		fallback_models: d.fallback_models,
		max_concurrent: d.max_concurrent,
		overlap: d.overlap,
		has_default_prompt: agent.hasDefaultPrompt,
		schedules: scheduleViews(d, now, status.last_runs),
		paused: status.paused,
		running_jobs: status.running_jobs,
		queued_jobs: status.queued_jobs,
		last_job: status.last_job,
		storage_bytes: status.storage_bytes,
		warnings: [...readinessWarnings(d, env), ...(full === null ? [] : [full])],
	};
}
