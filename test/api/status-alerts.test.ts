import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { UNPAGED_AFTER_MS, unpagedWarning } from "../../src/incidents/alert.ts";
import { closeIncident, markAlerted, OPEN_COUNTED, recordFailure, resolveOpen, UNPAGED_COUNTED } from "../../src/store/incidents.ts";
import { call } from "../helpers/http.ts";

async function warnings(): Promise<string[]> {
	const res = await call("/v1/status");
	expect(res.status).toBe(200);
	return ((await res.json()) as { warnings: string[] }).warnings;
}

/** Each warning's kind, in the warnings' order: what a client (doctor, the dashboard's pill) acts on. */
async function kinds(): Promise<string[]> {
	return ((await (await call("/v1/status")).json()) as { warning_kinds: string[] }).warning_kinds;
}

describe("GET /v1/status: open incidents nobody was paged for", () => {
	it("warns of incidents still unpaged 3 minutes after they opened, and stops once their alert goes out", async () => {
		expect(await warnings()).toEqual([]);
		const now = Date.now();
		const opened = now - 10 * 60_000;
		// Filed while the alert webhook refused it: recorded, still `detected`.
		const { incident: old } = await recordFailure(env.DB, { agent: "unpaged", error: "model call failed: 500", jobId: "job-2026-12-06-aaaaaa", at: opened, source: "manual" });
		// Just opened: its alert may still be on its way, or the next tick's to retry.
		const { incident: fresh } = await recordFailure(env.DB, { agent: "unpaged", error: "another failure", jobId: "job-2026-12-06-bbbbbb", at: now, source: "manual" });
		expect([old.state, fresh.state]).toEqual(["detected", "detected"]);
		expect(await kinds()).toEqual(["incidents_unpaged"]);
		expect(await warnings()).toEqual([
			`alerts: 1 open incident was not paged (the oldest opened ${new Date(opened).toISOString()}, 10 minutes ago; drover incidents --state detected lists them): the alert webhook has not taken their alerts (the Worker's incident.alert_refused and incident.alert_failed lines say why); each tick tries again`,
		]);
		await markAlerted(env.DB, old.id, now);
		expect(await warnings()).toEqual([]);
		expect(await kinds()).toEqual([]);

		// Closed by an operator: nobody is to be paged for it.
		const { incident: closed } = await recordFailure(env.DB, { agent: "unpaged", error: "a third failure", jobId: "job-2026-12-06-cccccc", at: opened, source: "manual" });
		expect((await warnings())[0]).toMatch(/^alerts: 1 open incident was not paged /);
		await closeIncident(env.DB, closed.id, "operator", now);
		expect(await warnings()).toEqual([]);
	});

	it("counts them up to 20 (fleet-scale.test.ts holds the status to its rows read), saying more than that past it", async () => {
		const opened = Date.now() - 10 * 60_000;
		for (let i = 0; i <= UNPAGED_COUNTED; i++) {
			await recordFailure(env.DB, { agent: `unpaged-${i}`, error: "model call failed: 500", jobId: `job-2026-12-06-m${String(i).padStart(5, "0")}`, at: opened, source: "manual" });
		}
		expect(await warnings()).toEqual([
			`alerts: more than ${UNPAGED_COUNTED} open incidents were not paged (drover incidents --state detected lists them): the alert webhook has not taken their alerts (the Worker's incident.alert_refused and incident.alert_failed lines say why); each tick tries again`,
		]);
	});

	it("says why: ALERT_WEBHOOK_URL unset, not a URL, or its webhook not taking them", () => {
		const now = Date.parse("2026-12-06T18:00:00Z");
		const unpaged = { count: 3, more: false, oldest: now - UNPAGED_AFTER_MS - 60_000 };
		const head = "alerts: 3 open incidents were not paged (the oldest opened 2026-12-06T17:56:00.000Z, 4 minutes ago; drover incidents --state detected lists them): ";
		expect(unpagedWarning({ ...env, ALERT_WEBHOOK_URL: "" } as Env, unpaged, now)).toBe(`${head}ALERT_WEBHOOK_URL is not set, so no alert is sent`);
		expect(unpagedWarning({ ...env, ALERT_WEBHOOK_URL: "hooks.slack.com/services/T0/B0/secret" } as Env, unpaged, now)).toBe(`${head}ALERT_WEBHOOK_URL does not hold an http(s) URL`);
		expect(unpagedWarning(env, unpaged, now)).toMatch(new RegExp(`^${head.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}the alert webhook has not taken their alerts`));
		expect(unpagedWarning(env, { count: 0, more: false, oldest: null }, now)).toBeNull();
		// Counted up to UNPAGED_COUNTED: past it, "more than", and no oldest looked for.
		expect(unpagedWarning({ ...env, ALERT_WEBHOOK_URL: "" } as Env, { count: UNPAGED_COUNTED, more: true, oldest: null }, now)).toBe(
			`alerts: more than ${UNPAGED_COUNTED} open incidents were not paged (drover incidents --state detected lists them): ALERT_WEBHOOK_URL is not set, so no alert is sent`,
		);
	});
});

describe("GET /v1/status: open incidents, paged or not", () => {
	async function incidents(): Promise<unknown> {
		const res = await call("/v1/status");
		expect(res.status).toBe(200);
		return ((await res.json()) as { incidents: unknown }).incidents;
	}

	it("counts the detected and alerted ones, not those resolved or closed, up to 20", async () => {
		// A fleet with none open, whatever this file's other tests left (they share its D1).
		await env.DB.prepare("UPDATE incidents SET state = 'resolved' WHERE state IN ('detected', 'alerted')").run();
		expect(await incidents()).toEqual({ open: 0, more: false });
		const at = Date.now();
		const file = (agent: string, i: number) => recordFailure(env.DB, { agent, error: `open failure ${i}`, jobId: `job-2026-12-06-o${String(i).padStart(5, "0")}`, at, source: "manual" });
		const { incident: paged } = await file("open-a", 1);
		await markAlerted(env.DB, paged.id, at);
		const { incident: closed } = await file("open-a", 2);
		await closeIncident(env.DB, closed.id, "operator", at);
		await file("open-b", 3);
		expect(await incidents()).toEqual({ open: 2, more: false });
		// A clean manual run of open-b resolves its incident: open no more.
		await resolveOpen(env.DB, "open-b", at + 1, { source: "manual", live: [] });
		expect(await incidents()).toEqual({ open: 1, more: false });

		// With open-a's alerted one: exactly OPEN_COUNTED open, then one past it.
		for (let i = 0; i < OPEN_COUNTED - 1; i++) await file(`open-many-${i}`, 100 + i);
		expect(await incidents()).toEqual({ open: OPEN_COUNTED, more: false });
		await file("open-many-last", 200);
		expect(await incidents()).toEqual({ open: OPEN_COUNTED, more: true });
	});
	it("are listed by GET /v1/incidents?state=open, detected and alerted together, newest seen first, a page at a time", async () => {
		await env.DB.prepare("UPDATE incidents SET state = 'resolved' WHERE state IN ('detected', 'alerted')").run();
		const at = Date.now();
		const file = (i: number, seen: number) => recordFailure(env.DB, { agent: "open-list", error: `listed failure ${i}`, jobId: `job-2026-12-06-l${String(i).padStart(5, "0")}`, at: seen, source: "manual" });
		const { incident: oldest } = await file(1, at - 3_000);
		const { incident: paged } = await file(2, at - 2_000);
		await markAlerted(env.DB, paged.id, at);
		const { incident: closed } = await file(3, at - 1_000);
		await closeIncident(env.DB, closed.id, "operator", at);
		const { incident: newest } = await file(4, at);
		const ids: string[] = [];
		let cursor: string | null = null;
		do {
			const res = await call(`/v1/incidents?state=open&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
			expect(res.status).toBe(200);
			const page = (await res.json()) as { incidents: { id: string; state: string }[]; next_cursor: string | null };
			ids.push(...page.incidents.map((i) => i.id));
			cursor = page.next_cursor;
		} while (cursor !== null);
		expect(ids).toEqual([newest.id, paged.id, oldest.id]);

		// Seen at the same instant, one alerted and one detected, with the agent filter: by id, newest first, each once.
		const tie = (i: number) => recordFailure(env.DB, { agent: "open-tie", error: `tied failure ${i}`, jobId: `job-2026-12-06-t${String(i).padStart(5, "0")}`, at, source: "manual" });
		const [{ incident: a }, { incident: b }] = [await tie(1), await tie(2)];
		await markAlerted(env.DB, a.id, at);
		const tied: string[] = [];
		cursor = null;
		do {
			const res = await call(`/v1/incidents?state=open&agent=open-tie&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
			const page = (await res.json()) as { incidents: { id: string }[]; next_cursor: string | null };
			tied.push(...page.incidents.map((i) => i.id));
			cursor = page.next_cursor;
		} while (cursor !== null);
		expect(tied).toEqual([a.id, b.id].sort().reverse());
		const bad = await call("/v1/incidents?state=opened");
		expect(bad.status).toBe(400);
	});
});
