import { describe, expect, inject, it } from "vitest";

describe("the local Worker for end-to-end tests", () => {
	it("answers /healthz and an authenticated /v1/jobs over real HTTP", async () => {
		const { url, tokens } = inject("drover");
		const health = await fetch(`${url}/healthz`);
		expect([200, 503]).toContain(health.status);
		const body = (await health.json()) as { fleet: { ok: boolean }; d1: { ok: boolean } };
		expect(body.fleet.ok).toBe(true);
		// The harness records the migrations it applies as wrangler does.
		expect(body.d1).toEqual({ ok: true });
		const jobs = await fetch(`${url}/v1/jobs`, { headers: { authorization: `Bearer ${tokens.read}` } });
		expect(jobs.status).toBe(200);
		expect((await fetch(`${url}/v1/jobs`)).status).toBe(401);
	});
});
