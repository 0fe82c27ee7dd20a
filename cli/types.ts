/**
 * The API's response shapes the CLI reads, inferred from the server's own zod schemas (type-only
 * imports, erased by Node's type stripping and by the bundle, so none of these modules loads at run time): a
 * change to an answer's schema is a type error here, not a silent drift.
 */
import type { AgentStatusShape, OccurrenceShape } from "../src/api/agents/actions.ts";
import type { AgentDryRunT } from "../src/api/agents/dry-run.ts";
import type { AgentDetailT, AgentViewT } from "../src/api/agents/views.ts";
import type { HealthShape } from "../src/api/health.ts";
import type { JobManifestShape } from "../src/api/jobs/manifest.ts";
import type { ToolCallPageShape } from "../src/api/jobs/tool-calls.ts";
import type { CurrentSessionShape, SessionResetShape } from "../src/api/agents/sessions.ts";
import type { SessionShape, SessionSummaryShape } from "../src/api/sessions.ts";
import type { SchedulerHealthShape, StatusShape } from "../src/api/status.ts";
import type { TickShape } from "../src/api/tick.ts";
import type { HookCall, JobRecord, JobStatus, JobSummary } from "../src/jobs/schema.ts";
import type { Incident } from "../src/store/incidents.ts";
import type { UsageDay, UsageDayTotal } from "../src/store/usage.ts";
import type { OutputLineView } from "../src/shared/output-line.ts";

export type { HookCall, Incident, JobRecord, JobStatus, JobSummary, UsageDay, UsageDayTotal };

export type SchedulerHealth = SchedulerHealthShape;
export type Health = HealthShape;
export type Status = StatusShape;
export type Tick = TickShape;
export type AgentView = AgentViewT;
export type AgentDetail = AgentDetailT;
export type AgentDryRun = AgentDryRunT;
export type AgentStatus = AgentStatusShape;
export type Occurrence = OccurrenceShape;
export type SessionSummary = SessionSummaryShape;
export type Session = SessionShape;
export type CurrentSession = CurrentSessionShape;
export type SessionReset = SessionResetShape;
export type JobManifest = JobManifestShape;
export type ToolCallPage = ToolCallPageShape;
export type ToolCallView = ToolCallPage["tool_calls"][number];
export type Paused = NonNullable<AgentView["paused"]>;

export interface JobPage {
	jobs: JobSummary[];
	next_cursor: string | null;
}

export interface AgentPage {
	agents: AgentView[];
	next_cursor: string | null;
}

export interface RunPage {
	runs: Occurrence[];
	next_cursor: string | null;
}

export interface SessionPage {
	sessions: SessionSummary[];
	next_cursor: string | null;
}

export interface IncidentPage {
	incidents: Incident[];
	next_cursor: string | null;
}

/** One JSONL output line (herdctl's shapes), as the CLI and the dashboard read it. */
export type OutputLine = OutputLineView;

export interface UsagePage {
	since: string;
	until: string;
	days: UsageDay[];
	next_cursor: string | null;
}

/** GET /v1/usage?group=day: the fleet's days, its agents' rows summed. */
export interface UsageDayTotalPage {
	since: string;
	until: string;
	days: UsageDayTotal[];
	next_cursor: string | null;
}
