/**
 * The API's response shapes the CLI reads. Job shapes come from the server's own schema (type-only
 * imports, erased when Node strips the types, so the CLI loads nothing from src/ at run time); the
 * rest mirror the zod schemas in src/api/*.ts, which do not export their inferred types.
 */
import type { JobRecord, JobStatus, JobSummary } from "../src/jobs/schema.ts";
import type { Incident } from "../src/store/incidents.ts";
import type { UsageDay } from "../src/store/usage.ts";

export type { Incident, JobRecord, JobStatus, JobSummary, UsageDay };

export interface JobPage {
	jobs: JobSummary[];
	next_cursor: string | null;
}

export interface SchedulerHealth {
	last_tick_at: string | null;
	age_seconds: number | null;
	stalled: boolean;
	outcome: "ok" | "partial" | "failed" | null;
	last_ok_at: string | null;
}

export interface Health {
	status: "ok" | "degraded";
	version: string;
	fleet: { ok: boolean; agents: number; issues?: { path: string; message: string }[] };
	scheduler: SchedulerHealth | null;
}

export interface Status {
	scheduler: SchedulerHealth & { agents_called: number | null; claimed: number | null; skipped: number | null; error: string | null };
	jobs: Record<string, number>;
	agents: { file: number; api: number };
}

export interface Paused {
	at: string;
	reason: string | null;
	by: string | null;
}

export interface ScheduleView {
	name: string;
	kind: "cron" | "interval";
	expression: string;
	timezone: string | null;
	catch_up: boolean;
	enabled: boolean;
	next_run: string | null;
}

export interface RunningJob {
	id: string;
	status: string;
	started_at: string | null;
	schedule: string | null;
}

export interface LastJob {
	id: string;
	status: string;
	exit_reason: string | null;
	finished_at: string | null;
}

export interface AgentView {
	name: string;
	source: "file" | "api";
	enabled: boolean;
	model: string;
	fallback_models: string[];
	max_concurrent: number;
	overlap: "skip" | "queue";
	schedules: ScheduleView[];
	paused: Paused | null;
	running_jobs: RunningJob[];
	queued_jobs: number;
	last_job: LastJob | null;
}

export interface AgentPage {
	agents: AgentView[];
	next_cursor: string | null;
}

/** What pause and resume answer. */
export interface AgentStatus {
	name: string;
	source: "file" | "api";
	deleted: boolean;
	paused: Paused | null;
	running_jobs: RunningJob[];
	queued_jobs: number;
	last_job: LastJob | null;
	index_backlog: number;
}

export interface Occurrence {
	id: string;
	schedule: string | null;
	source: "cron" | "manual" | "webhook";
	scheduled_instant: string | null;
	dispatch: "on_time" | "late" | "catch_up" | "manual";
	claimed_at: string;
	started_at: string | null;
	finished_at: string | null;
	status: "claimed" | "running" | "completed" | "failed" | "skipped" | "unknown";
	skip_reason: string | null;
	skipped_count: number | null;
	skipped_from: string | null;
	job_id: string | null;
	error: string | null;
}

export interface RunPage {
	runs: Occurrence[];
	next_cursor: string | null;
}

export interface IncidentPage {
	incidents: Incident[];
	next_cursor: string | null;
}

/** One JSONL output line (herdctl's shapes), as loosely as the CLI needs it. */
export interface OutputLine {
	type: string;
	timestamp?: string;
	subtype?: string;
	content?: string;
	model?: string;
	usage?: Record<string, unknown>;
	tool_name?: string;
	tool_use_id?: string;
	input?: unknown;
	success?: boolean;
	result?: string;
	error?: string;
	message?: string;
	code?: string;
	status?: string;
	exit_reason?: string;
	/** Set when the line's text was cut to fit a storage row: which field, and the whole line's size. */
	truncated?: { field?: string; bytes?: number };
	[key: string]: unknown;
}

export interface UsagePage {
	since: string;
	until: string;
	days: UsageDay[];
	next_cursor: string | null;
}
