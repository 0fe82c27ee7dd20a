/**
 * The API's JSON as the dashboard's scripts read it: types only (index.ts ships the *.client.js
 * files, nothing of this), made global names for their JSDoc by types.d.ts.
 *
 * Where the server's own module loads without the Workers runtime (the client's check has only the
 * DOM), its type as it is. The other answers' types are declared in src/api/ modules that load the
 * whole Worker: for those, the fields the scripts read, named and typed as the server's are, and
 * test/unit/dashboard-script.test.ts checks (under tsc) that the server's types fit them.
 */
import type { z } from "@hono/zod-openapi";
import type { LastJobSchema, LastRunSchema, PausedSchema, RunningJobSchema } from "../../api/schemas.ts";
import type { Incident } from "../../incidents/schema.ts";
import type { DeliveryOutcome, JobSummary } from "../../jobs/schema.ts";
import type { UsageAgentTotal, UsageDay, UsageDayTotal } from "../../jobs/usage-day.ts";

export type { Incident, JobSummary, UsageAgentTotal, UsageDay, UsageDayTotal };
export type { JobRecord, JobView, ModelUsage } from "../../jobs/schema.ts";
export type { SseEvent } from "../../shared/sse.ts";

/** A list endpoint's page: the rows under their key, and the cursor for the next page (null at the end). */
export type Page<K extends string, T> = { [k in K]: T[] } & { next_cursor: string | null };

export type Paused = z.infer<typeof PausedSchema>;

/** GET /v1/agents: each agent (src/api/agents/definitions.ts, AgentView). */
export type AgentView = {
	name: string;
	source: "file" | "api";
	enabled: boolean;
	model: string;
	has_default_prompt: boolean;
	/** last_run: absent from a server before it. */
	schedules: { name: string; expression: string; timezone: string | null; enabled: boolean; next_run: string | null; last_run?: z.infer<typeof LastRunSchema> }[];
	paused: Paused;
	running_jobs: z.infer<typeof RunningJobSchema>[];
	queued_jobs: number;
	last_job: z.infer<typeof LastJobSchema>;
	/** Absent from a server before it. */
	warnings?: string[];
};

/** GET /v1/me: the caller (src/api/me.ts, Me). */
/** POST/PUT /v1/agents?dry_run=true: what the write would do (src/api/agents/dry-run.ts, AgentDryRun). */
export type DryRun = { name: string; action: "create" | "update" | "unchanged"; definition_revision: string; previous_revision: string | null; schedules: AgentView["schedules"]; warnings: string[] };

export type Me = { name: string; role: "read" | "operate" | "admin" };

/** POST /v1/agents/:agent/pause and /resume (src/api/agents/actions.ts, AgentStatus). */
export type AgentStatus = {
	paused: Paused;
};

/** GET /v1/status (src/api/status.ts). */
export type Status = {
	/** shards_behind, shards_ok, shards_failed and warnings are absent from a server before them. stalled: no good (ok or partial) tick since last_ok_at. */
	scheduler: { last_tick_at: string | null; stalled: boolean; outcome: "ok" | "partial" | "failed" | null; last_ok_at: string | null; error: string | null; shards_behind?: number | null; shards_ok?: number | null; shards_failed?: number | null };
	agents: { file: number; api: number };
	warnings?: string[];
	/** Each warning's kind, in the warnings' order (absent from a server before it). */
	warning_kinds?: ("scheduler_behind" | "d1_storage" | "incidents_unpaged" | "definition_secret")[];
	/** D1's migrations (absent from a server before it): `missing` those D1 lacks, `ok` still true when they only add indexes. */
	d1?: { ok: boolean; missing?: string[]; fix?: string; recorded?: false };
	/** Open incidents, counted up to 20 (`more` past that); null when D1 could not say, absent from a server before it. */
	incidents?: { open: number; more: boolean } | null;
};

/** GET /v1/agents/:agent/runs: a row of the occurrence ledger (src/api/agents/actions.ts, Occurrence). */
export type Occurrence = {
	id: string;
	schedule: string | null;
	source: "cron" | "manual" | "webhook";
	scheduled_instant: string | null;
	dispatch: "on_time" | "late" | "catch_up" | "manual";
	claimed_at: string;
	status: "claimed" | "running" | "completed" | "failed" | "skipped" | "unknown";
	skip_reason: string | null;
	skipped_count: number | null;
	skipped_from: string | null;
	job_id: string | null;
	error: string | null;
	/** Its job's delivery outcome; null without a delivery target, or before the delivery has one. */
	delivery_outcome: DeliveryOutcome | null;
};

/** GET /v1/agents/:agent/sessions/current: the agent's persistent session (src/api/sessions.ts, CurrentSession). */
export type CurrentSession = {
	mode: "fresh_per_job" | "persistent";
	session_id: string | null;
	last_job: string | null;
	active_at: string | null;
	expires_at: string | null;
	expired: boolean;
	continues: boolean;
	not_continued_because: string | null;
};

/** GET /v1/jobs/:id/manifest: what a job runs with (src/api/jobs/manifest.ts, JobManifest). */
export type JobManifest = {
	definition_revision: string;
	definition: { max_turns: number; timeout: string };
	models: string[];
	max_tokens: number;
	system: { text: string }[];
	tools: Record<string, unknown>[];
	deadline: string;
	persistent_from: string | null;
	continued_from: string | null;
};

/** GET /v1/jobs/:id/tool-calls: a job's tool calls in the order made (src/api/jobs/tool-calls.ts, ToolCallPage). */
export type ToolCallView = {
	name: string;
	input: Record<string, unknown>;
	status: "pending" | "executing" | "completed" | "failed" | "denied" | "interrupted";
	decision: "approve" | "deny" | null;
	decided_by: string | null;
	is_error: boolean;
	result: string | null;
	result_chars: number | null;
	started_at: string | null;
	finished_at: string | null;
};
export type ToolCallPage = Page<"tool_calls", ToolCallView> & { status: JobSummary["status"] };

export type AgentPage = Page<"agents", AgentView>;
/** GET /v1/agents?view=names: each agent's name and source (src/api/agents/definitions.ts, AgentName). */
export type AgentNamePage = Page<"agents", { name: string; source: "file" | "api" }>;
export type JobPage = Page<"jobs", JobSummary>;
export type IncidentPage = Page<"incidents", Incident>;
export type UsagePage = Page<"days", UsageDay>;
/** GET /v1/usage?group=day: the fleet's days, its agents' rows summed. */
export type UsageTotalPage = Page<"days", UsageDayTotal>;
/** GET /v1/usage?group=agent: agents' days summed, busiest first, and how many agents in all. */
export type UsageAgentTotalPage = Page<"agents", UsageAgentTotal> & { total: number };

export type { OutputLineView as OutputLine } from "../../shared/output-line.ts";
