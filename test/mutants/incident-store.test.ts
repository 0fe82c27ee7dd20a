// src/store/incidents.ts: a mutation walk found that an alert claim held ten times as long (a dead
// sender's claim kept for 10 minutes, not taken over after one), GET /v1/status saying "more than 20"
// of exactly 20 unpaged incidents, and the tick's retry passing over an incident last seen at its
// bound, and an error kept whole at 20,000 characters rather than clipped at 2,000, all passed the
// suite. Times are passed in.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { claimAlert, recordFailure, unalerted, UNPAGED_COUNTED } from "../../src/store/incidents.ts";
import { call } from "../helpers/http.ts";

// Seen an hour from now (times are the caller's): not among the unpaged incidents the status counts.
describe("an alert's claim", () => {
	it("is held for a minute: refused to another sender until then, taken over at it", async () => {
		const at = Date.now() + 3_600_000;
		const { incident } = await recordFailure(env.DB, { agent: "claimed", error: "model call failed: 500", jobId: "job-2026-12-06-aaaaaa", at, source: "manual" });
		expect(await claimAlert(env.DB, incident.id, at + 1000)).toBe(at);
		expect(await claimAlert(env.DB, incident.id, at + 1000 + 59_999)).toBeNull();
		expect(await claimAlert(env.DB, incident.id, at + 1000 + 60_000)).toBe(at);
	});
});

describe("the tick's retry of unsent alerts", () => {
	it("takes an incident last seen at its bound", async () => {
		const at = Date.now() + 3_600_000;
		const { incident } = await recordFailure(env.DB, { agent: "bounded", error: "model call failed: 500", jobId: "job-2026-12-06-bbbbbb", at, source: "manual" });
		const of = async (before: number) => (await unalerted(env.DB, before, 100)).filter((i) => i.agent === "bounded").map((i) => i.id);
		expect(await of(at)).toEqual([incident.id]);
		expect(await of(at - 1)).toEqual([]);
	});
});

describe("GET /v1/status's unpaged count", () => {
	it("says exactly 20, with the oldest opening, for 20 unpaged incidents", async () => {
		const opened = Date.now() - 10 * 60_000;
		for (let i = 0; i < UNPAGED_COUNTED; i++) {
			await recordFailure(env.DB, { agent: `unpaged-${i}`, error: "model call failed: 500", jobId: `job-2026-12-06-n${String(i).padStart(5, "0")}`, at: opened, source: "manual" });
		}
		const { warnings } = (await (await call("/v1/status")).json()) as { warnings: string[] };
		expect(warnings).toHaveLength(1);
		expect(warnings[0]).toMatch(new RegExp(`^alerts: ${UNPAGED_COUNTED} open incidents were not paged \\(the oldest opened ${new Date(opened).toISOString().replace(/\./g, "\\.")}, 10 minutes ago;`));
	});
});

describe("an incident's error", () => {
	it("is kept to 2,000 characters, as GET /v1/incidents shows it", async () => {
		const { incident } = await recordFailure(env.DB, { agent: "long-error", error: `model call failed: ${"x".repeat(5000)}`, jobId: "job-2026-12-06-cccccc", at: Date.now() - 60_000, source: "manual" });
		const [listed] = ((await (await call("/v1/incidents?agent=long-error")).json()) as { incidents: { id: string; error: string }[] }).incidents;
		expect(listed!.id).toBe(incident.id);
		expect([...listed!.error].length).toBeLessThanOrEqual(2000);
		expect(listed!.error.startsWith("model call failed: xxx")).toBe(true);
	});
});
