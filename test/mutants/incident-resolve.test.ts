// src/api/incidents.ts: a mutation walk found that a second resolve naming the count it read (a second
// press, another operator) answered 409 "fewer than the count" instead of the resolved incident as it
// stands, and that passed the suite.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { recordFailure } from "../../src/store/incidents.ts";
import { call } from "../helpers/http.ts";

describe("a resolve naming the count it read", () => {
	it("asked again once resolved is answered with the incident as it stands, not a 409", async () => {
		const { incident } = await recordFailure(env.DB, { agent: "resolved-twice", error: "tool ticket failed: 502", jobId: "job-2026-12-06-eeeeee", at: Date.now() - 5_000, source: "manual" });
		for (const press of ["first", "second"]) {
			const res = await call(`/v1/incidents/${incident.id}/resolve`, { method: "POST", as: "operate", body: { count: 1 } });
			expect(res.status, press).toBe(200);
			expect(await res.json(), press).toMatchObject({ id: incident.id, state: "resolved", count: 1 });
		}
	});
});
