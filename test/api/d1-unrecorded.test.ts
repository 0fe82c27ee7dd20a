import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runTick } from "../../src/scheduler/tick.ts";
import { call } from "../helpers/http.ts";

// Two past a quarter hour on a Sunday, far ahead: no tick here is due a fleet run (see heartbeat.test.ts).
const NOW = Date.parse("2037-12-06T14:02:00Z");
afterEach(() => {
	vi.restoreAllMocks();
	vi.useRealTimers();
});

describe("a D1 whose schema was made without wrangler's record of migrations", () => {
	it("is not reported as missing every migration: /healthz answers ok, saying the schema is not checked", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: NOW });
		// Every table is there (made with `wrangler d1 execute --file`, say); the record is not. Reported
		// as missing all eleven, a healthy Worker answered 503, and the fix it named would replay 0001
		// onto tables that exist.
		await env.DB.prepare("DROP TABLE d1_migrations").run();
		await runTick(env, NOW, NOW);
		vi.setSystemTime(NOW + 2_000);
		const answer = await call("/healthz", { as: null });
		const health = (await answer.json()) as { status: string; d1: { ok: boolean; missing?: string[]; fix?: string; recorded?: boolean } };
		expect(health.d1).toEqual({ ok: true, recorded: false });
		expect(answer.status, JSON.stringify(health)).toBe(200);
		expect(health.status).toBe("ok");
	});
});
