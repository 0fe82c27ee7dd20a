// What GET /v1/status, GET /v1/usage, POST /v1/tick and /healthz answer and log, at points a mutation
// walk of src/api/{status,usage,tick,health}.ts found unchecked: each case failed on a mutant the suite let through.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { app } from "../../src/app.ts";
import { bundleFleetForTest } from "../../src/config/bundled.ts";
import { shardName } from "../../src/scheduler/shards.ts";
import { recordTick } from "../../src/store/heartbeat.ts";
import { captureLogs } from "../helpers/logs.ts";
import { TOKENS } from "../helpers/tokens.ts";

afterEach(() => {
	vi.restoreAllMocks();
	bundleFleetForTest(undefined);
});

const as = (role: keyof typeof TOKENS) => ({ headers: { authorization: `Bearer ${TOKENS[role]}` } });

/** The test's D1, every statement whose SQL holds `from` refused as D1 refuses one it cannot run. */
function d1Refusing(from: string, message: string): D1Database {
	return new Proxy(env.DB, {
		get(target, prop) {
			if (prop !== "prepare") return Reflect.get(target, prop, target);
			return (sql: string) => {
				if (sql.includes(from)) throw new Error(message);
				return target.prepare(sql);
			};
		},
	});
}

describe("GET /v1/status's scheduler", () => {
	it("says the last tick's counts as the heartbeat recorded them", async () => {
		const now = Date.now();
		const minute = Math.floor(now / 60_000) * 60_000;
		await recordTick(env.DB, { tickAt: now, scheduledTime: minute, outcome: "partial", shardsOk: 15, shardsFailed: 1, agentsCalled: 7, claimed: 5, skipped: 2, deferred: 3, oldestDeferredAt: minute - 60_000, shardsBehind: 1, error: "shard 4" });
		const res = await app.request("/v1/status", as("read"), env);
		expect(((await res.json()) as { scheduler: unknown }).scheduler).toMatchObject({
			outcome: "partial",
			agents_called: 7,
			claimed: 5,
			skipped: 2,
			error: "shard 4",
			deferred: 3,
			oldest_deferred_minute: new Date(minute - 60_000).toISOString(),
			shards_behind: 1,
			shards_ok: 15,
			shards_failed: 1,
		});
	});
});

describe("GET /v1/status with D1 nearly full", () => {
	it("warns of D1's storage from 8 of its 10 GB, kind d1_storage, beside d1_bytes", async () => {
		// The real D1, its answer's size as Cloudflare reports a database of 8.5 GB (meta.size_after).
		const DB = new Proxy(env.DB, {
			get(target, prop) {
				if (prop !== "prepare") return Reflect.get(target, prop, target);
				return (sql: string) => {
					const stmt = target.prepare(sql);
					if (!sql.includes("FROM scheduler_heartbeat")) return stmt;
					return new Proxy(stmt, {
						get: (s, p) =>
							p === "all"
								? async () => {
										const result = await s.all();
										return { ...result, meta: { ...result.meta, size_after: 8_500_000_000 } };
									}
								: Reflect.get(s, p, s),
					});
				};
			},
		});
		const res = await app.request("/v1/status", as("read"), { ...env, DB } as Env);
		expect(res.status).toBe(200);
		const status = (await res.json()) as { d1_bytes: number; warnings: string[]; warning_kinds: string[] };
		expect(status.d1_bytes).toBe(8_500_000_000);
		expect(status.warning_kinds).toContain("d1_storage");
		expect(status.warnings[status.warning_kinds.indexOf("d1_storage")]).toMatch(/^storage: D1 holds 8\.5 GB of the 10 GB Cloudflare allows a database/);
	});
});

describe("GET /v1/status with D1 refusing the incidents' queries", () => {
	it("answers incidents null and says so once a minute, not once a query", async () => {
		const DB = d1Refusing("FROM incidents", "D1_ERROR: no such table: incidents");
		const lines = captureLogs();
		for (let i = 0; i < 2; i++) {
			const res = await app.request("/v1/status", as("read"), { ...env, DB } as Env);
			expect(res.status).toBe(200);
			expect(((await res.json()) as { incidents: unknown }).incidents).toBeNull();
		}
		expect(lines.filter((l) => l.event === "status.incidents_unreadable")).toHaveLength(1);
	});
});

describe("GET /v1/usage without a limit", () => {
	it("answers up to 500 rows a page (its documented default): 101 agent-days on one page", async () => {
		const first = Date.parse("2025-01-01T00:00:00Z");
		await env.DB.batch(
			Array.from({ length: 101 }, (_, i) =>
				env.DB.prepare("INSERT INTO usage_daily (day, agent, jobs, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, cost_usd, priced_jobs) VALUES (?, 'usage-page', 1, 10, 5, 0, 0, 0, 0)").bind(first + i * 86_400_000),
			),
		);
		const res = await app.request("/v1/usage?since=2025-01-01&until=2025-12-31&agent=usage-page", as("read"), env);
		expect(res.status).toBe(200);
		const page = (await res.json()) as { days: unknown[]; next_cursor: string | null };
		expect(page.days).toHaveLength(101);
		expect(page.next_cursor).toBeNull();
	});
});

describe("POST /v1/tick with a shard that does not answer", () => {
	it("is partial and counts the shard in shards_failed, as GET /v1/status says after it", async () => {
		// The real shards, but for one whose every call fails.
		const SCHEDULER_SHARD = new Proxy(env.SCHEDULER_SHARD, {
			get(target, prop) {
				if (prop !== "getByName") return Reflect.get(target, prop, target);
				return (name: string) => (name === shardName(3) ? { tick: () => Promise.reject(new Error("shard 3 down")) } : target.getByName(name));
			},
		});
		const lines = captureLogs();
		const res = await app.request("/v1/tick", { method: "POST", ...as("admin") }, { ...env, SCHEDULER_SHARD } as Env);
		expect(res.status).toBe(200);
		expect(await res.json()).toMatchObject({ outcome: "partial", shards_failed: 1 });
		expect(lines.filter((l) => l.event === "tick.shard_failed")).toEqual([expect.objectContaining({ shard: 3, error_message: "shard 3 down" })]);
		// GET /v1/status says it after, from the heartbeat: which shards answered and which did not.
		const status = await app.request("/v1/status", as("read"), env);
		expect(((await status.json()) as { scheduler: unknown }).scheduler).toMatchObject({ outcome: "partial", shards_ok: 15, shards_failed: 1, error: "shard 3 did not answer the tick" });
	});
});

describe("/healthz with the heartbeat unreadable", () => {
	it("is a 503 with scheduler null, D1's schema still read and ok", async () => {
		const DB = d1Refusing("FROM scheduler_heartbeat", "D1_ERROR: heartbeat unreadable");
		const lines = captureLogs();
		const res = await app.request("/healthz", {}, { ...env, DB } as Env);
		expect(res.status).toBe(503);
		expect(await res.json()).toMatchObject({ status: "degraded", scheduler: null, d1: { ok: true } });
		expect(lines.filter((l) => l.event === "request")).toEqual([expect.objectContaining({ status: 503, error_message: "not ok: scheduler" })]);
	});
});

describe("/healthz degraded by fleet.yaml and more", () => {
	it("lists fleet.yaml's issues, and logs its 503 at error where the file is not its one cause (a scheduler no tick reaches too)", async () => {
		await env.DB.prepare("DELETE FROM scheduler_heartbeat").run();
		bundleFleetForTest(new TextEncoder().encode('version: 1\nagents:\n  - name: x\n    prompt: Go.\n    schedules:\n      m: { cron: "0 9 * *" }\n'));
		const lines = captureLogs();
		const res = await app.request("/healthz", {}, env);
		expect(res.status).toBe(503);
		expect(((await res.json()) as { fleet: unknown }).fleet).toEqual({ ok: false, agents: 0, issues: [{ path: "agents[0].schedules.m.cron", message: expect.stringMatching(/^invalid cron "0 9 \* \*"/) }] });
		expect(lines.filter((l) => l.event === "request")).toEqual([expect.objectContaining({ level: "error", path: "/healthz", status: 503, code: "degraded", error_message: "not ok: fleet, scheduler" })]);
	});
});
