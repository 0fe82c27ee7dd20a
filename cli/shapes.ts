/**
 * Minimal checks of the API's answers: the fields the CLI reads, with their types. A server that is
 * not drover (a wrong --url, a proxy's catch-all answering 200 `{}`) fails here with one line instead
 * of a TypeError deep in a command, or a "cancelling undefined" that exits 0. Not the API's whole schema: fields
 * the CLI does not rely on are not looked at, and extra fields are fine.
 */
import { z } from "zod";
import type {
	AgentDetail,
	AgentDryRun,
	AgentPage,
	AgentStatus,
	AgentView,
	CurrentSession,
	Health,
	Incident,
	IncidentPage,
	JobManifest,
	JobPage,
	JobRecord,
	RunPage,
	ToolCallPage,
	Session,
	SessionPage,
	SessionReset,
	Status,
	Tick,
	UsageDayTotalPage,
	UsagePage,
} from "./types.ts";

/** A check of one answer; `T` is what the caller then reads it as. */
export interface Shape<T> {
	readonly schema: z.ZodType;
	readonly __answer?: T;
}

const shape = <T>(schema: z.ZodType): Shape<T> => ({ schema });

/** null when the value will do; else what is wrong with it, naming the field ("missing `jobs`"). */
export function problemOf(shape: Shape<unknown>, value: unknown): string | null {
	const result = shape.schema.safeParse(value);
	if (result.success) return null;
	const issue = result.error.issues[0]!;
	if (issue.path.length === 0) return "not a JSON object";
	const at = `\`${issue.path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("")}\``;
	const found = issue.path.reduce<unknown>((v, p) => (v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[p] : undefined), value);
	if (found === undefined) return `missing ${at}`;
	return issue.code === "invalid_type" ? `${at} is not a${/^[aeiou]/.test(issue.expected) ? "n" : ""} ${issue.expected}` : `${at}: ${issue.message}`;
}

// Only the fields the CLI reads, with their types; extra fields are fine (z.object ignores them, and
// the caller keeps the answer as sent).
const nullable = <S extends z.ZodType>(s: S) => s.nullable();
const jobSummary = z.object({ id: z.string(), agent: z.string(), status: z.string(), trigger_type: z.string() });
const jobRecord = z.object({
	id: z.string(),
	agent: z.string(),
	status: z.string(),
	usage: z.object({ num_turns: z.number(), per_model: z.record(z.string(), z.object({})) }),
	transitions: z.array(z.object({})).optional(),
	// GET /v1/jobs/:id's hook calls (absent from an older server's answer, and from an action's).
	hooks: z.array(z.object({ hook: z.string(), url_secret: z.string(), outcome: z.string(), attempts: z.number(), error: z.string().optional(), next_attempt_at: z.string().optional(), waiting_for: z.string().optional() })).optional(),
});
const paused = nullable(z.object({ at: z.string() }));
const agentView = z.object({
	name: z.string(),
	source: z.string(),
	enabled: z.boolean(),
	model: z.string(),
	fallback_models: z.array(z.string()),
	schedules: z.array(z.object({ name: z.string(), kind: z.string(), expression: z.string(), enabled: z.boolean() })),
	paused,
	running_jobs: z.array(z.object({ id: z.string(), status: z.string() })),
	queued_jobs: z.number(),
	last_job: nullable(z.object({ id: z.string(), status: z.string() })),
});
const incident = z.object({ id: z.string(), agent: z.string(), class: z.string(), state: z.string(), error: z.string(), count: z.number(), first_seen_at: z.string(), last_seen_at: z.string(), alerted_at: nullable(z.string()) });
const nextCursor = z.string().nullable().optional();
const sessionJobRef = z.object({ id: z.string(), status: z.string(), created_at: z.string() });
const sessionSummary = z.object({ session_id: z.string(), agent: z.string(), job_count: z.number(), first_job: sessionJobRef, last_job: sessionJobRef, updated_at: z.string() });
const notepad = z.record(z.string(), z.string());

/** A page of GET /v1/usage: its rows' sums, with what names a row (`agent`, or with group=day the day's `agents`). */
function usagePageOf(names: z.ZodRawShape) {
	return z.object({
		since: z.string(),
		until: z.string(),
		days: z.array(
			z.object({
				day: z.string(),
				...names,
				jobs: z.number(),
				input_tokens: z.number(),
				output_tokens: z.number(),
				cache_creation_input_tokens: z.number(),
				cache_read_input_tokens: z.number(),
				priced_jobs: z.number(),
				cost_usd: z.number().nullable(),
			}),
		),
		next_cursor: nextCursor,
	});
}

export const shapes = {
	jobPage: shape<JobPage>(z.object({ jobs: z.array(jobSummary), next_cursor: nextCursor })),
	job: shape<JobRecord>(jobRecord),
	tick: shape<Tick>(z.object({ scheduled_time: z.string(), outcome: z.string(), agents_called: z.number(), claimed: z.number(), skipped: z.number() })),
	status: shape<Status>(z.object({ scheduler: z.object({}), jobs: z.record(z.string(), z.number()), agents: z.object({ file: z.number(), api: z.number() }) })),
	health: shape<Health>(z.object({ version: z.string(), fleet: z.object({ ok: z.boolean(), agents: z.number() }), scheduler: nullable(z.object({})) })),
	agent: shape<AgentView>(agentView),
	agentDetail: shape<AgentDetail>(agentView.extend({ definition: z.object({ name: z.string() }), definition_revision: z.string() })),
	agentDryRun: shape<AgentDryRun>(z.object({ dry_run: z.literal(true), action: z.string(), definition: z.object({ name: z.string() }), definition_revision: z.string(), previous_revision: z.string().nullable(), warnings: z.array(z.string()) })),
	agentPage: shape<AgentPage>(z.object({ agents: z.array(agentView), next_cursor: nextCursor })),
	me: shape<{ name: string; role: string }>(z.object({ name: z.string(), role: z.string() })),
	agentStatus: shape<AgentStatus>(z.object({ name: z.string(), paused })),
	runPage: shape<RunPage>(z.object({ runs: z.array(z.object({ status: z.string(), dispatch: z.string(), claimed_at: z.string(), source: z.string() })), next_cursor: nextCursor })),
	sessionPage: shape<SessionPage>(z.object({ sessions: z.array(sessionSummary), next_cursor: nextCursor })),
	session: shape<Session>(sessionSummary.extend({ jobs: z.array(jobSummary) })),
	currentSession: shape<CurrentSession>(
		z.object({
			agent: z.string(),
			mode: z.string(),
			session_id: z.string().nullable(),
			last_job: z.string().nullable(),
			expires_at: z.string().nullable(),
			expired: z.boolean(),
			continues: z.boolean(),
		}),
	),
	manifest: shape<JobManifest>(
		z.object({
			job_id: z.string(),
			agent: z.string(),
			models: z.array(z.string()),
			system: z.array(z.object({ text: z.string() })),
			tools: z.array(z.object({})),
			definition: z.object({ max_turns: z.number(), timeout: z.string() }),
		}),
	),
	toolCallPage: shape<ToolCallPage>(
		z.object({
			job_id: z.string(),
			agent: z.string(),
			status: z.string(),
			tool_calls: z.array(z.object({ name: z.string(), status: z.string(), input: z.record(z.string(), z.unknown()), result: z.string().nullable() })),
			next_cursor: nextCursor,
		}),
	),
	sessionReset: shape<SessionReset>(z.object({ agent: z.string(), forgotten: z.string().nullable() })),
	incidentPage: shape<IncidentPage>(z.object({ incidents: z.array(incident), next_cursor: nextCursor })),
	incident: shape<Incident>(incident),
	usagePage: shape<UsagePage>(usagePageOf({ agent: z.string() })),
	usageDayTotalPage: shape<UsageDayTotalPage>(usagePageOf({ agents: z.number() })),
	notepad: shape<Record<string, string>>(notepad),
	/** The notepad after a write: it must hold the key written. */
	notepadWith: (key: string) => shape<Record<string, string>>(notepad.and(z.object({ [key]: z.string() }))),
	note: shape<{ key: string; value: string }>(z.object({ key: z.string(), value: z.string() })),
	deleted: shape<{ deleted: number }>(z.object({ deleted: z.number() })),
	agentDeleted: shape<{ deleted: string }>(z.object({ deleted: z.string() })),
	any: shape<unknown>(z.unknown()),
};
