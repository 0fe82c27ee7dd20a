/**
 * Minimal checks of the API's answers: the fields the CLI reads, with their types. A server that is
 * not drover (a wrong --url, a proxy's catch-all answering 200 `{}`) fails here with one line instead
 * of a TypeError deep in a command, or a "cancelling undefined" that exits 0. Not a schema: fields
 * the CLI does not rely on are not looked at, and extra fields are fine.
 */
import type { AgentPage, AgentStatus, AgentView, Health, Incident, IncidentPage, JobPage, JobRecord, RunPage, Status, UsagePage } from "./types.ts";

/** null when the value will do; else what is wrong with it, naming the field ("missing `jobs`"). */
export type Shape<T> = ((value: unknown, at?: string) => string | null) & { readonly __answer?: T };

type Check = (value: unknown, at: string) => string | null;

const field = (at: string) => `\`${at}\``;
const is =
	(kind: "string" | "number" | "boolean"): Check =>
	(v, at) =>
		v === undefined ? `missing ${field(at)}` : typeof v === kind ? null : `${field(at)} is not a ${kind}`;

const str = is("string");
const num = is("number");
const bool = is("boolean");

const nullable =
	(check: Check): Check =>
	(v, at) =>
		v === null ? null : check(v, at);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function obj(fields: Record<string, Check>): Check {
	return (v, at) => {
		if (v === undefined) return `missing ${field(at)}`;
		if (!isObject(v)) return at === "" ? "not a JSON object" : `${field(at)} is not an object`;
		for (const [k, check] of Object.entries(fields)) {
			const problem = check(v[k], at === "" ? k : `${at}.${k}`);
			if (problem !== null) return problem;
		}
		return null;
	};
}

const arr =
	(item: Check): Check =>
	(v, at) => {
		if (v === undefined) return `missing ${field(at)}`;
		if (!Array.isArray(v)) return `${field(at)} is not an array`;
		for (const [i, x] of v.entries()) {
			const problem = item(x, `${at}[${i}]`);
			if (problem !== null) return problem;
		}
		return null;
	};

/** An object whose every value passes `value` (a notepad: key → text; jobs by status: status → count). */
const recordOf =
	(value: Check): Check =>
	(v, at) => {
		if (v === undefined) return `missing ${field(at)}`;
		if (!isObject(v)) return at === "" ? "not a JSON object" : `${field(at)} is not an object`;
		for (const [k, x] of Object.entries(v)) {
			const problem = value(x, at === "" ? k : `${at}.${k}`);
			if (problem !== null) return problem;
		}
		return null;
	};

const optional =
	(check: Check): Check =>
	(v, at) =>
		v === undefined ? null : check(v, at);

const shape = <T>(check: Check): Shape<T> => ((v: unknown, at = "") => check(v, at)) as Shape<T>;

const jobSummary = obj({ id: str, agent: str, status: str, trigger_type: str });
const jobRecord = obj({ id: str, agent: str, status: str, usage: obj({ num_turns: num, per_model: recordOf(obj({})) }), transitions: optional(arr(obj({}))) });
const paused = nullable(obj({ at: str }));
const agentView = obj({
	name: str,
	source: str,
	enabled: bool,
	model: str,
	fallback_models: arr(str),
	schedules: arr(obj({ name: str, kind: str, expression: str, enabled: bool })),
	paused,
	running_jobs: arr(obj({ id: str, status: str })),
	queued_jobs: num,
	last_job: nullable(obj({ id: str, status: str })),
});
const incident = obj({ id: str, agent: str, class: str, state: str, error: str, count: num, first_seen_at: str, last_seen_at: str });
const nextCursor = optional(nullable(str));

export const shapes = {
	jobPage: shape<JobPage>(obj({ jobs: arr(jobSummary), next_cursor: nextCursor })),
	job: shape<JobRecord>(jobRecord),
	status: shape<Status>(obj({ scheduler: obj({}), jobs: recordOf(num), agents: obj({ file: num, api: num }) })),
	health: shape<Health>(obj({ version: str, fleet: obj({ ok: bool, agents: num }), scheduler: nullable(obj({})) })),
	agent: shape<AgentView>(agentView),
	agentPage: shape<AgentPage>(obj({ agents: arr(agentView), next_cursor: nextCursor })),
	agentStatus: shape<AgentStatus>(obj({ name: str, paused })),
	runPage: shape<RunPage>(obj({ runs: arr(obj({ status: str, dispatch: str, claimed_at: str, source: str })), next_cursor: nextCursor })),
	incidentPage: shape<IncidentPage>(obj({ incidents: arr(incident), next_cursor: nextCursor })),
	incident: shape<Incident>(incident),
	usagePage: shape<UsagePage>(
		obj({
			since: str,
			until: str,
			days: arr(obj({ day: str, agent: str, jobs: num, input_tokens: num, output_tokens: num, cache_creation_input_tokens: num, cache_read_input_tokens: num, priced_jobs: num, cost_usd: nullable(num) })),
			next_cursor: nextCursor,
		}),
	),
	notepad: shape<Record<string, string>>(recordOf(str)),
	/** The notepad after a write: it must hold the key written. */
	notepadWith: (key: string) => shape<Record<string, string>>((v, at) => recordOf(str)(v, at) ?? obj({ [key]: str })(v, at)),
	note: shape<{ key: string; value: string }>(obj({ key: str, value: str })),
	deleted: shape<{ deleted: number }>(obj({ deleted: num })),
	any: shape<unknown>(() => null),
};
