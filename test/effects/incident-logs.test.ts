import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { recordFailure, resolveIncident } from "../../src/store/incidents.ts";
import { writeBefore } from "../helpers/incidents.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { captureLogs } from "../helpers/logs.ts";

afterEach(() => {
	vi.restoreAllMocks();
});

async function incidentsOf(agent: string): Promise<{ id: string; state: string; closed_by: string | null; closed_at: string | null }[]> {
	return ((await (await call(`/v1/incidents?agent=${agent}`)).json()) as { incidents: { id: string; state: string; closed_by: string | null; closed_at: string | null }[] }).incidents;
}

describe("an incident followed through the logs by its id", () => {
	it("is logged closed once, by whoever closed it: a second close changes nothing and names no second closer", async () => {
		fake("https://alerts.example.test", () => new Response("ok"));
		useEmulator().enqueue({ error: 400, message: "closed twice" });
		await createAgent({ name: "closed-twice" });
		await runToRest("closed-twice");
		const [incident] = await incidentsOf("closed-twice");
		const lines = captureLogs();
		const first = await call(`/v1/incidents/${incident!.id}/close`, { method: "POST", as: "operate" });
		expect(first.status).toBe(200);
		const closing = (await first.json()) as { closed_by: string; closed_at: string };
		expect(closing.closed_by).toBe("operator");
		const second = await call(`/v1/incidents/${incident!.id}/close`, { method: "POST", as: "admin" });
		expect(second.status).toBe(200);
		// The record keeps its closing: who closed it and when.
		expect(await second.json()).toMatchObject({ state: "closed", closed_by: "operator", closed_at: closing.closed_at });
		expect(lines.filter((l) => l.event === "incident.closed")).toEqual([expect.objectContaining({ incident: incident!.id, by: "operator" })]);
	});

	it("names each incident an agent's deletion resolves, open or closed, on a line of its own", async () => {
		fake("https://alerts.example.test", () => new Response("ok"));
		useEmulator().enqueue({ error: 400, message: "first failure" }, { error: 400, message: "second failure" });
		await createAgent({ name: "retired-logged" });
		await runToRest("retired-logged");
		await runToRest("retired-logged");
		const incidents = await incidentsOf("retired-logged");
		expect(incidents).toHaveLength(2);
		expect((await call(`/v1/incidents/${incidents[1]!.id}/close`, { method: "POST", as: "operate" })).status).toBe(200);
		const lines = captureLogs();
		expect((await call("/v1/agents/retired-logged", { method: "DELETE", as: "admin" })).status).toBe(200);
		await settle("retired-logged");
		expect((await incidentsOf("retired-logged")).map((i) => i.state)).toEqual(["resolved", "resolved"]);
		const resolved = lines.filter((l) => l.event === "incident.resolved" && l.agent === "retired-logged");
		expect(resolved.map((l) => l.incident).sort()).toEqual(incidents.map((i) => i.id).sort());
		for (const line of resolved) expect(line).toMatchObject({ level: "info", reason: "agent deleted or removed from fleet.yaml" });
		expect(lines.some((l) => l.event === "incident.retired")).toBe(false);
	});

	it("is logged opened once an opening: a failure D1 takes just after an operator resolved its incident opened it again", async () => {
		const alerts: unknown[] = [];
		fake("https://alerts.example.test", async (req) => {
			alerts.push(await req.json());
			return new Response("ok");
		});
		await createAgent({ name: "reopened-raced" });
		const lines = captureLogs();
		await runInDurableObject(env.AGENT.getByName("reopened-raced"), async (instance: AgentDO, state) => {
			const swappable = instance as unknown as { env: Env };
			const real = swappable.env;
			const flush = () => (instance as unknown as { passes: { closing: { flushIndex(): Promise<boolean> } } }).passes.closing.flushIndex();
			const fail = (job: string) =>
				state.storage.sql.exec("INSERT INTO incident_events (kind, job_id, error, at, source) VALUES ('failure', ?, 'tool ticket failed: 502', ?, 'manual')", `job-2026-12-06-${job}`, Date.now());
			fail("aaaaaa");
			expect(await flush()).toBe(true);
			const opened = lines.filter((l) => l.event === "incident.opened");
			expect(opened).toHaveLength(1);
			// The next failure reads its incident open; the operator's resolve lands before its write.
			swappable.env = { ...real, DB: writeBefore(real.DB, "INSERT INTO incidents", (db) => resolveIncident(db, opened[0]!.incident as string, Date.now())) };
			fail("bbbbbb");
			expect(await flush()).toBe(true);
			swappable.env = real;
			await AgentDO.alertsSent(instance);
		});
		const [incident] = await incidentsOf("reopened-raced");
		expect(incident).toMatchObject({ state: "alerted" });
		expect(lines.filter((l) => l.event === "incident.opened")).toEqual([
			expect.objectContaining({ incident: incident!.id, job_id: "job-2026-12-06-aaaaaa" }),
			expect.objectContaining({ incident: incident!.id, job_id: "job-2026-12-06-bbbbbb" }),
		]);
		// Each opening paged.
		expect(alerts).toHaveLength(2);
	});

	it("is not logged resolved, nor resolved, by an operator's resolve asked before its last failure: answered as it stands, open", async () => {
		// Seen failing after the request is read: as a failure D1 takes while the resolve is on its way.
		const { incident } = await recordFailure(env.DB, { agent: "resolve-late", error: "tool ticket failed: 502", jobId: "job-2026-12-06-aaaaaa", at: Date.now() + 60_000, source: "manual" });
		const lines = captureLogs();
		const res = await call(`/v1/incidents/${incident.id}/resolve`, { method: "POST", as: "operate" });
		expect(res.status).toBe(200);
		expect(await res.json()).toMatchObject({ id: incident.id, state: "detected", resolved_at: null, failing: ["manual"], last_seen_at: incident.last_seen_at });
		expect((await incidentsOf("resolve-late")).map((i) => i.state)).toEqual(["detected"]);
		expect(lines.filter((l) => l.event === "incident.resolved")).toEqual([]);
	});
	it("is not resolved over a failure counted after the operator read it, even one from before the request that reached D1 late", async () => {
		const now = Date.now();
		const first = await recordFailure(env.DB, { agent: "resolve-seen", error: "tool ticket failed: 503", jobId: "job-2026-12-06-bbbbbb", at: now - 20_000, source: "manual" });
		expect(first.incident.count).toBe(1);
		// The operator reads count 1; a failure from 10 s ago is filed while they press Resolve (its
		// agent's write was retried): it happened before the request, so the arrival guard passes it.
		const late = await recordFailure(env.DB, { agent: "resolve-seen", error: "tool ticket failed: 503", jobId: "job-2026-12-06-cccccc", at: now - 10_000, source: "manual" });
		expect(late.incident.count).toBe(2);
		const lines = captureLogs();
		const res = await call(`/v1/incidents/${first.incident.id}/resolve`, { method: "POST", as: "operate", body: { count: 1 } });
		expect(res.status).toBe(200);
		expect(await res.json()).toMatchObject({ id: first.incident.id, state: "detected", resolved_at: null, count: 2 });
		expect((await incidentsOf("resolve-seen")).map((i) => i.state)).toEqual(["detected"]);
		expect(lines.filter((l) => l.event === "incident.resolved")).toEqual([]);
		// Read again, the count the operator now sees resolves it.
		const again = await call(`/v1/incidents/${first.incident.id}/resolve`, { method: "POST", as: "operate", body: { count: 2 } });
		expect(again.status).toBe(200);
		expect(await again.json()).toMatchObject({ state: "resolved", count: 2 });
		expect(lines.filter((l) => l.event === "incident.resolved")).toEqual([expect.objectContaining({ incident: first.incident.id, by: "operator" })]);
	});

	it("refuses a resolve naming a count the incident never reached, or not a count, and changes nothing", async () => {
		const { incident } = await recordFailure(env.DB, { agent: "resolve-bad-count", error: "tool ticket failed: 504", jobId: "job-2026-12-06-dddddd", at: Date.now() - 5_000, source: "manual" });
		const ahead = await call(`/v1/incidents/${incident.id}/resolve`, { method: "POST", as: "operate", body: { count: 5 } });
		expect(ahead.status).toBe(409);
		expect((await errorOf(ahead)).message).toContain("has counted 1 failures, fewer than the count 5");
		for (const body of [{ count: 0 }, { count: "1" }, { count: 1.5 }, { count: 1, force: true }]) {
			const res = await call(`/v1/incidents/${incident.id}/resolve`, { method: "POST", as: "operate", body });
			expect(res.status, JSON.stringify(body)).toBe(400);
		}
		expect((await incidentsOf("resolve-bad-count")).map((i) => i.state)).toEqual(["detected"]);
	});
});
