import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runTick } from "../../src/scheduler/tick.ts";
import { call } from "../helpers/http.ts";

// Two past a quarter hour on a Sunday, far ahead: no tick here is due a fleet run (see heartbeat.test.ts).
const NOW = Date.parse("2037-12-06T14:02:00Z");
const FIX = "npx wrangler d1 migrations apply DB --remote";
afterEach(() => {
	vi.restoreAllMocks();
	vi.useRealTimers();
});

describe("a D1 that lacks only a migration that adds an index", () => {
	it("/healthz stays 200, d1 ok, still naming the migration and how to apply it", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: NOW });
		// 0011 adds agents_live alone: without it the hour's recount of API agents is a scan, and nothing
		// fails. It made /healthz a 503, as a missing column does, and an uptime check page someone.
		await env.DB.prepare("DROP INDEX agents_live").run();
		await env.DB.prepare("DELETE FROM d1_migrations WHERE name = ?").bind("0011_live_agents_index.sql").run();
		await runTick(env, NOW, NOW);
		vi.setSystemTime(NOW + 2_000);
		const answer = await call("/healthz", { as: null });
		const health = (await answer.json()) as { status: string; d1: unknown };
		expect(answer.status, JSON.stringify(health)).toBe(200);
		expect(health.status).toBe("ok");
		expect(health.d1).toEqual({ ok: true, missing: ["0011_live_agents_index.sql"], fix: FIX });
	});

	it("with a migration the code needs missing too, /healthz is a 503 naming both", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: NOW });
		await env.DB.prepare("DELETE FROM d1_migrations WHERE name IN (?, ?)").bind("0010_heartbeat_backlog.sql", "0011_live_agents_index.sql").run();
		await runTick(env, NOW, NOW);
		vi.setSystemTime(NOW + 2_000);
		const answer = await call("/healthz", { as: null });
		const health = (await answer.json()) as { status: string; d1: unknown };
		expect(answer.status).toBe(503);
		expect(health.d1).toEqual({ ok: false, missing: ["0010_heartbeat_backlog.sql", "0011_live_agents_index.sql"], fix: FIX });
	});
});

describe("GET /v1/status", () => {
	it("says which migrations D1 lacks and how to apply them, checked at most once a minute, and no longer once they are applied", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: NOW });
		await env.DB.prepare("DELETE FROM d1_migrations WHERE name IN (?, ?)").bind("0010_heartbeat_backlog.sql", "0011_live_agents_index.sql").run();
		const status = async () => {
			const res = await call("/v1/status");
			expect(res.status, await res.clone().text()).toBe(200);
			return ((await res.json()) as { d1: unknown }).d1;
		};
		expect(await status()).toEqual({ ok: false, missing: ["0010_heartbeat_backlog.sql", "0011_live_agents_index.sql"], fix: FIX });
		// The dashboard asks every 10 s: the answer stands for a minute, not a D1 read each time.
		await env.DB.prepare("INSERT INTO d1_migrations (name) VALUES (?)").bind("0010_heartbeat_backlog.sql").run();
		vi.setSystemTime(NOW + 50_000);
		expect(await status()).toEqual({ ok: false, missing: ["0010_heartbeat_backlog.sql", "0011_live_agents_index.sql"], fix: FIX });
		vi.setSystemTime(NOW + 61_000);
		expect(await status()).toEqual({ ok: true, missing: ["0011_live_agents_index.sql"], fix: FIX });
		await env.DB.prepare("INSERT INTO d1_migrations (name) VALUES (?)").bind("0011_live_agents_index.sql").run();
		vi.setSystemTime(NOW + 122_000);
		expect(await status()).toEqual({ ok: true });
	});
});
