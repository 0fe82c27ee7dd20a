// The jobs HTTP API (src/api/jobs/*) where a mutation walk found the suite blind: each case below
// passed on a single mutation of the route's code and fails on it (the walk's labels in brackets).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createJob, transition, type JobRecord, type JobSummary } from "../../src/jobs/model.ts";
import { sessionStarts, upsertJobIndex } from "../../src/store/job-index.ts";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { jobOf, runToRest, saveJob } from "../helpers/jobs.ts";
import { ticketTool } from "../helpers/tools.ts";
import { MAX_PROMPT_CHARS } from "../../src/config/schema.ts";
import { agentRpc } from "../../durable-objects/agent/client.ts";
import { definitionRevision } from "../../src/config/fleet.ts";
import { REDACTED } from "../../src/security/redact.ts";
import { outputLogKey } from "../../src/store/output-r2.ts";
import { parseAgent } from "../helpers/definitions.ts";
import { fake } from "../helpers/outbound.ts";
import { gate } from "../helpers/emulator.ts";
import { settle } from "../helpers/agents.ts";
import { trigger } from "../helpers/jobs.ts";
import type { ToolCallPageShape } from "../../src/api/jobs/tool-calls.ts";

const T0 = Date.parse("2026-11-10T08:00:00Z");

function indexed(agent: string, minute: number): JobRecord {
	return createJob({ agent, trigger_type: "manual", definition_revision: "rev1", schedule: null }, new Date(T0 + minute * 60_000));
}

describe("GET /v1/jobs", () => {
	it("gives 20 jobs a page when no limit is asked for, with a cursor to the rest [ja05]", async () => {
		const jobs = Array.from({ length: 21 }, (_, i) => indexed("default-page", i));
		await upsertJobIndex(env.DB, jobs);
		const res = await call("/v1/jobs?agent=default-page");
		expect(res.status).toBe(200);
		const page = (await res.json()) as { jobs: JobSummary[]; next_cursor: string | null };
		// Newest first: the 20 latest, the oldest left for the cursor.
		expect(page.jobs.map((j) => j.id)).toEqual(jobs.slice(1).reverse().map((j) => j.id));
		expect(page.next_cursor).not.toBeNull();
	});
});

describe("GET /v1/jobs/:id", () => {
	it("gives YAML for Accept: text/x-yaml, one of the names YAML goes by [ja15]", async () => {
		const record = transition(indexed("x-yaml", 0), "running", { reason: "claimed", at: new Date(T0 + 1000) });
		await saveJob("x-yaml", record);
		await upsertJobIndex(env.DB, [record]);
		const res = await call(`/v1/jobs/${record.id}`, { headers: { accept: "text/x-yaml" } });
		expect(res.status).toBe(200);
		expect(res.headers.get("content-type")).toMatch(/^application\/yaml/);
		expect(await res.text()).toContain(`id: ${record.id}`);
	});
});

const followUp = (kind: "continue" | "fork", id: string, body: object, key: string) =>
	call(`/v1/jobs/${id}/${kind}`, { method: "POST", as: "operate", body, headers: { "idempotency-key": key } });

describe("a continue under an Idempotency-Key", () => {
	it("refuses the key for the same prompt with allow_definition_change changed: a different request [ja13]", async () => {
		useEmulator().enqueue({ text: "First." });
		await createAgent({ name: "keyed-allow" });
		const first = await runToRest("keyed-allow");
		const made = await followUp("continue", first.id, { prompt: "And then?" }, "allow-1");
		expect(made.status, await made.clone().text()).toBe(201);
		const other = await followUp("continue", first.id, { prompt: "And then?", allow_definition_change: true }, "allow-1");
		expect(other.status).toBe(409);
		expect((await errorOf(other)).message).toMatch(/Idempotency-Key was used within 24 h for a different request/);
	});
});

describe("a continue's prompt at its limit", () => {
	it(`takes ${MAX_PROMPT_CHARS} characters and refuses one more as a 400 naming prompt, queueing nothing [ja24]`, async () => {
		useEmulator().enqueue({ text: "First." });
		await createAgent({ name: "continue-limit" });
		const first = await runToRest("continue-limit");
		const over = await call(`/v1/jobs/${first.id}/continue`, { method: "POST", as: "operate", body: { prompt: "x".repeat(MAX_PROMPT_CHARS + 1) } });
		expect(over.status).toBe(400);
		expect((await errorOf(over)).details?.issues?.[0]?.path).toBe("prompt");
		const listed = await call("/v1/agents/continue-limit/jobs");
		expect(((await listed.json()) as { jobs: { id: string }[] }).jobs.map((j) => j.id)).toEqual([first.id]);
		const at = await call(`/v1/jobs/${first.id}/continue`, { method: "POST", as: "operate", body: { prompt: "x".repeat(MAX_PROMPT_CHARS) } });
		expect(at.status, await at.clone().text()).toBe(201);
	});
});

describe("a decision's tool_use_id", () => {
	it("of 201 characters is a 400 naming it; one of 200 is read, and answered 409 as not the call waiting [ja18]", async () => {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "Disk full" } } });
		await createAgent({ name: "decision-id-limit", tools: [ticketTool] });
		const waiting = await runToRest("decision-id-limit");
		expect(waiting.status).toBe("approval_pending");
		const long = await call(`/v1/jobs/${waiting.id}/approval`, { method: "POST", as: "operate", body: { decision: "deny", tool_use_id: "t".repeat(201) } });
		expect(long.status).toBe(400);
		expect((await errorOf(long)).details?.issues?.[0]?.path).toBe("tool_use_id");
		const other = await call(`/v1/jobs/${waiting.id}/approval`, { method: "POST", as: "operate", body: { decision: "deny", tool_use_id: "t".repeat(200) } });
		expect(other.status).toBe(409);
		expect((await jobOf("decision-id-limit", waiting.id)).status).toBe("approval_pending");
	});
});

describe("GET /v1/jobs/:id/output?lines=N", () => {
	it("takes up to 100000 lines and refuses 100001 as a 400 naming lines [ja36]", async () => {
		useEmulator().enqueue({ text: "Done." });
		await createAgent({ name: "lines-limit" });
		const job = await runToRest("lines-limit");
		const most = await call(`/v1/jobs/${job.id}/output?lines=100000`);
		expect(most.status).toBe(200);
		expect((await most.text()).trimEnd().split("\n").length).toBeGreaterThan(1);
		const over = await call(`/v1/jobs/${job.id}/output?lines=100001`);
		expect(over.status).toBe(400);
		expect((await errorOf(over)).details?.issues?.[0]?.path).toBe("lines");
	});
});

describe("GET /v1/jobs/:id/output.log", () => {
	async function loggedJob(agent: string, at: string, log: string): Promise<JobRecord> {
		const created = createJob({ agent, trigger_type: "manual", definition_revision: "rev1", schedule: null }, new Date(at));
		const job = transition(transition(created, "running", { reason: "claimed", at: new Date(at) }), "completed", { reason: "done", at: new Date(at) });
		await upsertJobIndex(env.DB, [job]);
		await env.OUTPUT.put(outputLogKey(agent, job.id), log);
		return job;
	}

	it("says that retention may have removed a log its agent no longer holds, for an id from before RETENTION_DAYS [ol10]", async () => {
		// Indexed, but gone from R2 and from its agent's object: the index row outlived the record.
		const created = createJob({ agent: "log-gone", trigger_type: "manual", definition_revision: "rev1", schedule: null }, new Date("2025-01-06T10:00:00Z"));
		await upsertJobIndex(env.DB, [created]);
		const res = await call(`/v1/jobs/${created.id}/output.log`);
		expect(res.status).toBe(404);
		expect((await errorOf(res)).message).toMatch(/^no job job-2025-01-06-[a-z0-9]{6}: its id is from 2025-01-06, .* so retention may have removed it$/);
	});
});

describe("GET /v1/jobs/:id/manifest", () => {
	it("says the max_tokens and system prompt every turn is sent with, as the model was sent them [mf04]", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "Done." });
		await createAgent({ name: "manifest-sent", system_prompt: "You keep the lights on." });
		const job = await runToRest("manifest-sent");
		const res = await call(`/v1/jobs/${job.id}/manifest`);
		expect(res.status).toBe(200);
		const manifest = (await res.json()) as { max_tokens: number; system: unknown };
		const sent = emulator.requests.at(-1)!;
		expect(manifest.max_tokens).toBe(sent.max_tokens);
		expect(manifest.system).toEqual(sent.system);
	});

	it("shows a secret's value held in the system prompt as the marker, never the value [mf05]", async () => {
		// A value of the Worker's secrets (vitest.config.mts's bindings), in a definition an older release stored.
		const value = "https://tickets.example.test/hook";
		const definition = parseAgent({ name: "leaky-system", prompt: "Look around.", system_prompt: `Post what you find to ${value}.` });
		const stored = await agentRpc(env, definition.name).define(definition.name, definition, await definitionRevision(definition), null, "create", "older-release");
		expect(stored).toHaveProperty("revision");
		useEmulator().enqueue({ text: "Done." });
		const job = await runToRest("leaky-system", "Check.");
		const res = await call(`/v1/jobs/${job.id}/manifest`);
		const text = await res.clone().text();
		expect(res.status, text).toBe(200);
		expect(text).not.toContain("tickets.example.test/hook");
		const manifest = (await res.json()) as { system: { text: string }[] };
		expect(manifest.system[0]?.text).toBe(`Post what you find to ${REDACTED}.`);
	});
});

describe("a continue's manifest", () => {
	it("names the job whose conversation it carries on in continued_from [mf07]", async () => {
		useEmulator().enqueue({ text: "First." }, { text: "Second." });
		await createAgent({ name: "manifest-continued" });
		const first = await runToRest("manifest-continued");
		const made = await call(`/v1/jobs/${first.id}/continue`, { method: "POST", as: "operate", body: { prompt: "And then?" } });
		expect(made.status).toBe(201);
		const next = (await made.json()) as JobRecord;
		await settle("manifest-continued");
		const res = await call(`/v1/jobs/${next.id}/manifest`);
		expect(res.status).toBe(200);
		expect(((await res.json()) as { continued_from: string | null }).continued_from).toBe(first.id);
	});
});

const fetchTool = { type: "http_fetch", allow_hosts: ["status.example.test"] };

async function toolCalls(id: string, query = ""): Promise<ToolCallPageShape> {
	const res = await call(`/v1/jobs/${id}/tool-calls${query}`);
	expect(res.status, await res.clone().text()).toBe(200);
	return res.json();
}

describe("GET /v1/jobs/:id/tool-calls", () => {
	it("gives a deny's reason and who denied it [tc05]", async () => {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "Disk full" } } }, { text: "Not filed." });
		await createAgent({ name: "calls-denied", tools: [ticketTool] });
		const waiting = await runToRest("calls-denied");
		const denied = await call(`/v1/jobs/${waiting.id}/approval`, { method: "POST", as: "operate", body: { decision: "deny", reason: "Not during the freeze." } });
		expect(denied.status, await denied.clone().text()).toBe(200);
		await settle("calls-denied");
		const [call0] = (await toolCalls(waiting.id)).tool_calls;
		expect(call0).toMatchObject({ status: "denied", decision: "deny", decided_by: "operator", decision_reason: "Not during the freeze." });
	});

	it("has no finished_at for a call still under way, only its started_at [tc06]", async () => {
		const held = gate();
		const reached = gate();
		fake("https://status.example.test", () => {
			reached.open();
			return held.promise.then(() => new Response("all green"));
		});
		useEmulator().enqueue({ tool_use: { name: "http_fetch", input: { url: "https://status.example.test/slow" } } }, { text: "Green." });
		await createAgent({ name: "calls-under-way", tools: [fetchTool] });
		const job = await trigger("calls-under-way");
		// The call is recorded as executing before its request goes: it is under way once the target has it.
		await reached.promise;
		const page = await toolCalls(job.id);
		expect(page.tool_calls[0]).toMatchObject({ status: "executing", finished_at: null, result: null });
		expect(page.tool_calls[0]!.started_at).not.toBeNull();
		held.open();
		await settle("calls-under-way");
		const done = (await toolCalls(job.id)).tool_calls[0]!;
		expect(done.status).toBe("completed");
		expect(done.finished_at).not.toBeNull();
	});

	it("gives 50 calls a page when no limit is asked for, with a cursor to the rest [tc07]", async () => {
		fake("https://status.example.test", () => new Response("ok"));
		const calls = Array.from({ length: 51 }, (_, i) => ({ name: "http_fetch", input: { url: `https://status.example.test/${i}` } }));
		useEmulator().enqueue({ tool_use: calls }, { text: "Read them." });
		await createAgent({ name: "calls-default-page", tools: [fetchTool] });
		const job = await runToRest("calls-default-page");
		const page = await toolCalls(job.id);
		expect(page.tool_calls.map((t) => t.input.url)).toEqual(calls.slice(0, 50).map((c) => c.input.url));
		expect(page.next_cursor).not.toBeNull();
	});
});

describe("GET /openapi.json, for the job list and a job", () => {
	it("documents every field a listed job and a job record answer with, and a catch-up run's dispatch among its values [sc02, sc04]", async () => {
		const created = createJob({ agent: "documented", trigger_type: "schedule", schedule: "nightly", definition_revision: "rev1", scheduled_instant: new Date(T0), dispatch: "catch_up" }, new Date(T0 + 60_000));
		const ended = transition(transition(created, "running", { reason: "claimed", at: new Date(T0 + 61_000) }), "completed", { reason: "done", at: new Date(T0 + 62_000), tool_calls: { made: 0, failed: 0 } });
		await saveJob("documented", ended);
		await upsertJobIndex(env.DB, [ended]);
		const record = (await (await call(`/v1/jobs/${ended.id}`)).json()) as Record<string, unknown>;
		const listed = ((await (await call("/v1/jobs?agent=documented")).json()) as { jobs: Record<string, unknown>[] }).jobs[0]!;
		expect([record.dispatch, listed.dispatch]).toEqual(["catch_up", "catch_up"]);
		const doc = (await (await call("/openapi.json", { as: null })).json()) as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } };
		for (const [name, answer] of [["JobView", record], ["JobSummary", listed]] as const) {
			const properties = doc.components.schemas[name]!.properties;
			expect(Object.keys(answer).filter((k) => !(k in properties)), name).toEqual([]);
			expect(JSON.stringify(properties.dispatch), name).toContain('"catch_up"');
		}
	});
});

describe("a session id's form (src/jobs/session-id-format.ts, session-ids.ts)", () => {
	it("refuses a prefix of 7 characters after ses- as a 400, and looks up one of 64, refusing 65 [sf01, sf02]", async () => {
		const short = await call("/v1/sessions/ses-job-202");
		expect(short.status).toBe(400);
		const longest = await call(`/v1/sessions/ses-${"a".repeat(64)}`);
		expect(longest.status).toBe(404);
		const over = await call(`/v1/sessions/ses-${"a".repeat(65)}`);
		expect(over.status).toBe(400);
	});

	it("finds a first job by a prefix whose next character is z, the last an id may hold [si02]", async () => {
		const created = createJob({ id: "job-2026-11-11-z00001", agent: "z-prefix", trigger_type: "manual", definition_revision: "rev1", schedule: null }, new Date(T0));
		const started = transition(created, "running", { reason: "claimed", at: new Date(T0 + 1000) });
		await upsertJobIndex(env.DB, [started]);
		expect((await sessionStarts(env.DB, "job-2026-11-11-", 10)).map((j) => j.id)).toEqual([started.id]);
	});
});

describe("GET /openapi.json, for a job's usage", () => {
	it("documents its token counts and turns as never below 0 [sc03]", async () => {
		type Node = { properties?: Record<string, Node>; additionalProperties?: Node; minimum?: number };
		const doc = (await (await call("/openapi.json", { as: null })).json()) as { components: { schemas: Record<string, Node> } };
		const usage = doc.components.schemas.JobView!.properties!.usage!;
		expect(usage.properties!.num_turns!.minimum).toBe(0);
		for (const count of ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"]) {
			expect(usage.properties!.per_model!.additionalProperties!.properties![count]!.minimum, count).toBe(0);
		}
	});
});
