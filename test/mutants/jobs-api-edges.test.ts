// The jobs HTTP API (src/api/jobs/*) where a mutation walk found the suite blind: each case below
// passed on a single mutation of the route's code and fails on it (the walk's labels in brackets).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createJob, transition, type JobRecord, type JobSummary } from "../../src/jobs/model.ts";
import { upsertJobIndex } from "../../src/store/job-index.ts";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { jobOf, runToRest, saveJob } from "../helpers/jobs.ts";
import { ticketTool } from "../helpers/tools.ts";
import { MAX_PROMPT_CHARS } from "../../src/config/schema.ts";

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
