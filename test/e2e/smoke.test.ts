import { describe, expect, inject, it } from "vitest";

describe("the local Worker for end-to-end tests", () => {
	it("answers /healthz and an authenticated /v1/jobs over real HTTP", async () => {
		const { url, tokens } = inject("drover");
		const health = await fetch(`${url}/healthz`);
		expect([200, 503]).toContain(health.status);
		expect(((await health.json()) as { fleet: { ok: boolean } }).fleet.ok).toBe(true);
		const jobs = await fetch(`${url}/v1/jobs`, { headers: { authorization: `Bearer ${tokens.read}` } });
		expect(jobs.status).toBe(200);
		expect((await fetch(`${url}/v1/jobs`)).status).toBe(401);
	});
});
