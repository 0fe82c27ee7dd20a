import { Validator, type Schema as JsonSchema } from "@cfworker/json-schema";
import { describe, expect, it } from "vitest";
import { call } from "../helpers/http.ts";

/**
 * The document as an API consumer reads it: client generators (openapi-typescript, hey-api,
 * openapi-generator) name their methods and group their classes by it, and Swagger UI and Redoc
 * lay it out. What each test asserts is what `redocly lint` (recommended) or a generated client
 * caught before it was mended.
 */
interface Operation {
	operationId?: string;
	tags?: string[];
	security?: unknown;
	parameters?: { name?: string; in?: string; description?: string; schema?: unknown; $ref?: string }[];
	responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema?: unknown }> }>;
}
interface Doc {
	tags?: { name: string; description?: string }[];
	paths: Record<string, Record<string, Operation>>;
	components: { schemas: Record<string, Schema> };
}
interface Schema {
	type?: string | string[];
	format?: string;
	enum?: unknown[];
	properties?: Record<string, Schema>;
	items?: Schema;
	allOf?: Schema[];
	anyOf?: Schema[];
	oneOf?: Schema[];
	additionalProperties?: Schema | boolean;
	$ref?: string;
	pattern?: string;
}

async function doc(): Promise<Doc> {
	return (await (await call("/openapi.json", { as: null })).json()) as Doc;
}

function operations(d: Doc): [string, Operation][] {
	return Object.entries(d.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, Operation]));
}

describe("the OpenAPI document, as a client generator reads it", () => {
	it("gives every operation an operationId, each unique, in camelCase (a generated client's method names)", async () => {
		const ops = operations(await doc());
		expect(ops.length).toBeGreaterThan(30);
		const ids = ops.map(([route, op]) => [route, op.operationId] as const);
		for (const [route, id] of ids) expect(id, route).toMatch(/^[a-z][A-Za-z0-9]*$/);
		expect(new Set(ids.map(([, id]) => id)).size).toBe(ids.length);
		// A few that clients call by name.
		const byRoute = Object.fromEntries(ids);
		expect(byRoute).toMatchObject({ "GET /v1/jobs": "listJobs", "GET /v1/jobs/{id}": "getJob", "POST /v1/agents/{agent}/jobs": "runAgent", "POST /v1/jobs/{id}/cancel": "cancelJob", "POST /v1/agents": "createAgent" });
	});

	it("tags every operation with one tag that the document declares with a description", async () => {
		const d = await doc();
		const declared = new Map((d.tags ?? []).map((t) => [t.name, t.description]));
		expect(declared.size).toBeGreaterThan(3);
		for (const [name, description] of declared) expect(description, name).toBeTruthy();
		const used = new Set<string>();
		for (const [route, op] of operations(d)) {
			expect(op.tags, route).toHaveLength(1);
			expect(declared.has(op.tags![0]!), `${route}: ${op.tags![0]}`).toBe(true);
			used.add(op.tags![0]!);
		}
		// No tag is declared that no operation uses.
		expect(used).toEqual(new Set(declared.keys()));
		expect(d.paths["/v1/agents/{agent}/jobs"]!.post!.tags).toEqual(["jobs"]);
		expect(d.paths["/v1/agents/{agent}/notepad/{key}"]!.put!.tags).toEqual(["notepad"]);
	});
});

describe("the OpenAPI document's security", () => {
	it("says of each operation how it is authenticated: the bearer token under /v1, none (an explicit empty list) on /healthz and the signed webhook", async () => {
		const d = await doc();
		for (const [route, op] of operations(d)) {
			const open = route === "GET /healthz" || route === "POST /v1/hooks/{agent}";
			// With no root-level security, an operation that leaves it out says nothing: Redoc and
			// linters cannot tell a public route from a forgotten one.
			expect(op.security, route).toEqual(open ? [] : [{ bearer: [] }]);
		}
	});
});

describe("the OpenAPI document's error body", () => {
	it("lists every error code a client can branch on, and types details' issues and candidates rather than leaving them unknown", async () => {
		const error = (await doc()).components.schemas.Error!.properties!.error!;
		// README's HTTP API section names each of these with its status.
		expect(new Set(error.properties!.code!.enum)).toEqual(
			new Set(["bad_request", "unauthorized", "forbidden", "not_found", "method_not_allowed", "conflict", "agent_paused", "agent_disabled", "precondition_failed", "payload_too_large", "unsupported_media_type", "range_not_satisfiable", "rate_limited", "internal", "config_invalid", "unavailable"]),
		);
		const details = error.properties!.details!;
		expect(details.type).toBe("object");
		expect(details.properties!.issues).toMatchObject({ type: "array", items: { type: "object", required: ["path", "message"] } });
		expect(details.properties!.candidates).toMatchObject({ type: "array", items: { required: ["session_id", "agent"] } });
		// A 400 as it is answered fits it (call() holds every answer to the document too).
		const res = await call("/v1/jobs?limit=500");
		expect(res.status).toBe(400);
		expect(((await res.json()) as { error: { details: unknown } }).error.details).toEqual({ issues: [{ path: "limit", message: expect.any(String) }] });
	});
});

describe("the OpenAPI document's times", () => {
	/** The schema at a dotted path through components.schemas (through allOf, nullable anyOf and items). */
	function at(d: Doc, path: string): Schema {
		const [name, ...keys] = path.split(".");
		let s: Schema = d.components.schemas[name!]!;
		const resolve = (x: Schema): Schema => (x.$ref ? d.components.schemas[x.$ref.split("/").at(-1)!]! : x);
		for (const key of keys) {
			s = resolve(s);
			const parts = [s, ...(s.allOf ?? []), ...(s.anyOf ?? [])].map(resolve);
			const holder = key === "[]" ? parts.find((p) => p.items) : parts.find((p) => p.properties?.[key]);
			expect(holder, `${path} at ${key}`).toBeDefined();
			s = key === "[]" ? holder!.items! : holder!.properties![key]!;
		}
		return resolve(s);
	}

	it("marks every time an answer gives as format date-time, and every day as format date, so a generated client can read them as dates", async () => {
		const d = await doc();
		const times = [
			"SchedulerHealth.last_tick_at",
			"SchedulerHealth.last_ok_at",
			"Tick.scheduled_time",
			"Tick.oldest_deferred_minute",
			"Status.scheduler.oldest_deferred_minute",
			"AgentView.paused.at",
			"AgentView.running_jobs.[].started_at",
			"AgentView.last_job.finished_at",
			"ScheduleView.next_run",
			"AgentStatus.paused.at",
			"Occurrence.scheduled_instant",
			"Occurrence.claimed_at",
			"Occurrence.started_at",
			"Occurrence.finished_at",
			"CurrentSession.started_at",
			"CurrentSession.active_at",
			"CurrentSession.expires_at",
			"SessionSummary.updated_at",
			"SessionJobRef.created_at",
			"JobManifest.deadline",
			"ToolCall.started_at",
			"ToolCall.finished_at",
			"JobRecord.created_at",
			"JobSummary.finished_at",
		];
		for (const path of times) expect(at(d, path).format, path).toBe("date-time");
		for (const page of ["UsagePage", "UsageDayTotalPage", "UsageAgentTotalPage"]) {
			for (const key of ["since", "until"]) expect(at(d, `${page}.${key}`).format, `${page}.${key}`).toBe("date");
		}
	});

	it("leaves no time or day unmarked anywhere in the document: every string property named like one has its format", async () => {
		const d = await doc();
		const unmarked: string[] = [];
		const walk = (schema: Schema | undefined, path: string): void => {
			if (!schema || schema.$ref) return;
			for (const [name, property] of Object.entries(schema.properties ?? {})) {
				const strings = [property, ...(property.anyOf ?? []), ...(property.oneOf ?? [])].filter((s) => s.type === "string" || (Array.isArray(s.type) && s.type.includes("string")));
				const wanted = /(_at|_instant|_time|_minute|^deadline|^next_run)$/.test(name) ? "date-time" : /^(day|since|until)$/.test(name) ? "date" : null;
				// GET /v1/jobs' since and until are inputs (parameters), not answers: only schemas are walked.
				if (wanted && strings.length > 0 && !strings.some((s) => s.format === wanted || s.format === "date-time" || s.pattern !== undefined)) unmarked.push(`${path}.${name}`);
				walk(property, `${path}.${name}`);
				walk(property.items, `${path}.${name}.[]`);
			}
			for (const part of [...(schema.allOf ?? []), ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) walk(part, path);
			walk(schema.items, `${path}.[]`);
		};
		for (const [name, schema] of Object.entries(d.components.schemas)) walk(schema, name);
		expect(unmarked).toEqual([]);
	});
});

describe("the OpenAPI document's response headers", () => {
	it("declares the headers a client reads: the definition's ETag (PUT's If-Match) and source, a range's Content-Range, and what Last-Event-ID means", async () => {
		const d = await doc();
		const definition = d.paths["/v1/agents/{agent}/definition"]!.get!;
		for (const status of ["200", "304"]) {
			expect(Object.keys(definition.responses[status]!.headers ?? {}), status).toEqual(expect.arrayContaining(["ETag", "Cache-Control", "X-Drover-Source"]));
		}
		const output = d.paths["/v1/jobs/{id}/output"]!.get!;
		expect(output.responses["206"]!.headers).toHaveProperty("Content-Range");
		expect(output.responses["416"]!.headers).toHaveProperty("Content-Range");
		expect(output.responses["200"]!.headers).toHaveProperty("Accept-Ranges");
		const lastEventId = d.paths["/v1/jobs/{id}/stream"]!.get!.parameters!.find((p) => p.name === "last-event-id");
		expect(lastEventId?.description).toContain("resumes after");
	});
});

describe("the OpenAPI document's enums", () => {
	it("gives an agent's running and last job the job record's status and exit_reason enums, not bare strings", async () => {
		const schemas = (await doc()).components.schemas;
		const record = schemas.JobRecord!.properties!;
		for (const name of ["AgentView", "AgentStatus"]) {
			const p = schemas[name]!.properties!;
			const running = p.running_jobs!.items!.properties!;
			const last = [p.last_job!, ...(p.last_job!.anyOf ?? [])].find((s) => s.properties)!.properties!;
			expect(new Set(running.status!.enum), name).toEqual(new Set(record.status!.enum));
			expect(new Set(last.status!.enum), name).toEqual(new Set(record.status!.enum));
			expect(new Set(last.exit_reason!.enum), name).toEqual(new Set(record.exit_reason!.enum ?? record.exit_reason!.anyOf!.flatMap((s) => s.enum ?? []).concat([null])));
		}
	});
});

describe("the OpenAPI document's usage schemas", () => {
	it("type every count of jobs, tokens, agents and days as an integer, and a cost as a number or null", async () => {
		const schemas = (await doc()).components.schemas;
		const counts = ["jobs", "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "priced_jobs"];
		for (const [name, extra] of [["UsageDay", []], ["UsageDayTotal", ["agents"]], ["UsageAgentTotal", ["days"]]] as const) {
			const p = schemas[name]!.properties!;
			for (const field of [...counts, ...extra]) expect(p[field]!.type, `${name}.${field}`).toBe("integer");
			expect([p.cost_usd!.type].flat().filter(Boolean), `${name}.cost_usd`).toContain("number");
		}
	});
});

describe("the OpenAPI document's parameters", () => {
	it("describes every parameter and gives it a schema (Swagger UI's try-it-out form shows nothing else)", async () => {
		const d = await doc();
		for (const [route, op] of operations(d)) {
			for (const p of op.parameters ?? []) {
				if (p.$ref) continue;
				expect(p.description, `${route} ${p.in} ${p.name}`).toBeTruthy();
				expect(p.schema, `${route} ${p.in} ${p.name}`).toBeDefined();
			}
		}
	});
});

describe("the OpenAPI document's time filters", () => {
	it("documents GET /v1/jobs' since and until so that each spelling the route takes passes a client's check of the schema, each listed once", async () => {
		const params = (await doc()).paths["/v1/jobs"]!.get!.parameters!;
		for (const name of ["since", "until"]) {
			const schema = params.find((p) => p.name === name)!.schema as { anyOf: unknown[] };
			expect(new Set(schema.anyOf.map((s) => JSON.stringify(s))).size, name).toBe(schema.anyOf.length);
			const validator = new Validator(schema as JsonSchema, "2020-12", false);
			for (const value of ["2026-11-30T09:00:00Z", "2026-11-30T09:00:00.000Z", "2026-11-30T09:00Z", "2026-11-30T09:00+01:00", "2026-11-30"]) {
				expect(validator.validate(value).valid, `${name}=${value}`).toBe(true);
				expect((await call(`/v1/jobs?${name}=${encodeURIComponent(value)}`)).status, `${name}=${value}`).toBe(200);
			}
		}
	});
});
