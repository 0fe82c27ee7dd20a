import { applyD1Migrations, env, type D1Migration } from "cloudflare:test";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { runTick } from "../../src/scheduler/tick.ts";
import { upsertJobIndex } from "../../src/store/job-index.ts";
import type { JobSummary } from "../../src/jobs/model.ts";
import { lifecycleRecords } from "../helpers/jobs.ts";
import { call } from "../helpers/http.ts";

// A Worker deployed before its D1 migrations were applied (a bare `wrangler deploy`, a Git build):
// this file's D1 lacks migrations 0010, 0011, 0014 and 0015, with a heartbeat the previous release wrote.
const NEWER = ["0010_heartbeat_backlog.sql", "0011_live_agents_index.sql", "0014_count_live_agents.sql", "0015_index_job_errors.sql"];
const FIX = "npx wrangler d1 migrations apply DB --remote";

interface Health {
	status: string;
	scheduler: { last_tick_at: string | null; stalled: boolean; outcome: string | null } | null;
	d1?: { ok: boolean; missing?: string[]; fix?: string };
}

// Two past a quarter hour on a Sunday, far ahead: no tick here is due a fleet run (see heartbeat.test.ts).
const NOW = Date.parse("2037-12-06T14:02:00Z");
beforeEach(() => {
	vi.useFakeTimers({ toFake: ["Date"], now: NOW });
});
afterEach(() => {
	vi.restoreAllMocks();
	vi.useRealTimers();
});

beforeAll(async () => {
	for (const column of ["deferred", "oldest_deferred_at", "shards_behind"]) await env.DB.prepare(`ALTER TABLE scheduler_heartbeat DROP COLUMN ${column}`).run();
	await env.DB.prepare("DROP INDEX agents_live").run();
	await env.DB.prepare("DROP TABLE agent_counts").run();
	for (const column of ["error_type", "error_message"]) await env.DB.prepare(`ALTER TABLE jobs DROP COLUMN ${column}`).run();
	await env.DB.prepare(`DELETE FROM d1_migrations WHERE name IN (${NEWER.map(() => "?").join(", ")})`).bind(...NEWER).run();
	// The previous release's last tick, a minute ago, as it wrote it.
	const at = NOW - 60_000;
	await env.DB.prepare(
		`INSERT INTO scheduler_heartbeat (id, tick_at, scheduled_time, outcome, shards_ok, shards_failed, agents_called, claimed, skipped, error, last_ok_at)
		 VALUES (1, ?, ?, 'ok', 16, 0, 2, 1, 0, NULL, ?)`,
	)
		.bind(at, at, at)
		.run();
});

// One scenario, step by step, in order even in a shuffled run: the migrations are applied at its end.
describe("a Worker whose D1 lacks this release's migrations", { shuffle: false }, () => {
	it("/healthz reads the older heartbeat, says which migrations are missing and how to apply them: 503", async () => {
		const res = await call("/healthz", { as: null });
		expect(res.status).toBe(503);
		const health = (await res.json()) as Health;
		expect(health.status).toBe("degraded");
		expect(health.scheduler).toMatchObject({ last_tick_at: new Date(NOW - 60_000).toISOString(), stalled: false, outcome: "ok" });
		expect(health.d1).toEqual({ ok: false, missing: NEWER, fix: FIX });
	});

	it("/v1/status answers with the scheduler's figures, the newer ones null", async () => {
		const res = await call("/v1/status");
		expect(res.status, await res.clone().text()).toBe(200);
		const body = (await res.json()) as { scheduler: Record<string, unknown>; agents: { api: number }; d1: Health["d1"] };
		expect(body.scheduler).toMatchObject({ stalled: false, outcome: "ok", agents_called: 2, claimed: 1, deferred: null, oldest_deferred_minute: null, shards_behind: null });
		// Without agent_counts the API agents are counted from the registry itself; the dashboard's pill
		// and drover status read the missing migrations from here.
		expect(body.agents.api).toBe(0);
		expect(body.d1).toEqual({ ok: false, missing: NEWER, fix: FIX });
	});

	it("takes an agent's definition (drover apply), which reads the heartbeat", async () => {
		const res = await call("/v1/agents", { method: "POST", as: "admin", body: { name: "older-d1", prompt: "x" } });
		expect(res.status, await res.clone().text()).toBe(201);
	});

	it("indexes a job's changes without its error, where it would have failed the outbox's every retry and left the job unlisted", async () => {
		const { running, ended } = lifecycleRecords("older-d1", new Date(NOW - 30_000), "failed");
		await upsertJobIndex(env.DB, [running]);
		await upsertJobIndex(env.DB, [ended]);
		const { jobs } = (await (await call("/v1/jobs?agent=older-d1")).json()) as { jobs: JobSummary[] };
		expect(jobs.map((j) => [j.id, j.status, j.error])).toEqual([[ended.id, "failed", null]]);
		// Counted once, as a first final status is.
		const status = (await (await call("/v1/status")).json()) as { jobs: Record<string, number> };
		expect(status.jobs.failed).toBe(1);
	});

	it("a tick that cannot write the heartbeat logs which migrations are missing and how to apply them", async () => {
		const lines: Record<string, unknown>[] = [];
		vi.spyOn(console, "error").mockImplementation((line: unknown) => void lines.push(JSON.parse(String(line)) as Record<string, unknown>));
		await runTick(env, NOW, NOW);
		const failed = lines.find((l) => l.event === "tick.heartbeat_failed");
		expect(failed).toMatchObject({ level: "error", missing_migrations: NEWER, fix: FIX });
		expect(String(failed?.error_message)).toMatch(/deferred/);
	});

	it("is healthy again once the migrations are applied", async () => {
		const { TEST_MIGRATIONS } = env as unknown as { TEST_MIGRATIONS: D1Migration[] };
		await applyD1Migrations(env.DB, TEST_MIGRATIONS);
		await runTick(env, NOW, NOW);
		vi.setSystemTime(NOW + 2_000);
		const res = await call("/healthz", { as: null });
		const health = (await res.json()) as Health;
		expect(res.status, JSON.stringify(health)).toBe(200);
		expect(health.d1).toEqual({ ok: true });
		expect(health.scheduler).toMatchObject({ last_tick_at: new Date(NOW).toISOString(), stalled: false });
		// The agent defined meanwhile was registered without a count; 0014 counted it as it ran.
		const status = (await (await call("/v1/status")).json()) as { agents: { api: number } };
		expect(status.agents.api).toBe(1);
		// A job's error is indexed again, with 0015's columns.
		const { running, ended } = lifecycleRecords("older-d1", new Date(NOW), "failed");
		await upsertJobIndex(env.DB, [running, ended]);
		const { jobs } = (await (await call("/v1/jobs?agent=older-d1")).json()) as { jobs: JobSummary[] };
		expect(jobs.find((j) => j.id === ended.id)?.error).toEqual({ type: "test", message: "boom" });
	});
});
