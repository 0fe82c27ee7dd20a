import { describe, expect, it } from "vitest";
import { createAgent, runsOf, type Run } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { tick } from "../helpers/ticks.ts";

async function put(name: string, body: Record<string, unknown>): Promise<void> {
	const res = await call(`/v1/agents/${name}`, { method: "PUT", as: "admin", body: { name, prompt: "Do the thing.", max_concurrent: 5, ...body } });
	expect(res.status, await res.clone().text()).toBe(200);
}

const ledger = async (agent: string) =>
	(await runsOf(agent))
		.map((r: Run) => [r.scheduled_instant, r.dispatch, r.status === "skipped" ? `skipped: ${r.skip_reason}` : "ran"] as const)
		.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));

describe("a schedule that stops and runs again", () => {
	for (const [what, off, on] of [
		["the schedule", { schedules: { q: { interval: "15m", enabled: false } } }, { schedules: { q: { interval: "15m" } } }],
		["its agent", { enabled: false, schedules: { q: { interval: "15m" } } }, { schedules: { q: { interval: "15m" } } }],
		["removed and added back", { schedules: {} }, { schedules: { q: { interval: "15m" } } }],
	] as const) {
		it(`owes nothing for the time it was off (${what}): no catch-up run, no missed slots`, async () => {
			const name = `off-${what.replaceAll(" ", "-")}`;
			await createAgent({ name, max_concurrent: 5, schedules: { q: { interval: "15m", catch_up: true } } });
			await tick("2026-12-01T10:00:00Z");
			await put(name, off);
			for (const t of ["10:15", "10:30", "11:00", "11:30"]) await tick(`2026-12-01T${t}:00Z`);
			await put(name, { ...on, schedules: { q: { interval: "15m", catch_up: true } } });
			await tick("2026-12-01T12:10:00Z");
			await tick("2026-12-01T12:15:00Z");
			expect(await ledger(name)).toEqual([
				["2026-12-01T10:00:00.000Z", "on_time", "ran"],
				["2026-12-01T12:15:00.000Z", "on_time", "ran"],
			]);
		});
	}
});

describe("slots collapsed into a fire that is not run", () => {
	it("say why the fire was not run, not that a run covered them", async () => {
		await createAgent({ name: "collapsed-paused", max_concurrent: 5, schedules: { m: { interval: "1m" } } });
		await tick("2026-12-01T10:00:00Z");
		await call("/v1/agents/collapsed-paused/pause", { method: "POST", as: "operate", body: { reason: "maint" } });
		await tick("2026-12-01T10:05:00Z");
		const rows = (await runsOf("collapsed-paused")).filter((r) => r.status === "skipped");
		expect(rows.length).toBeGreaterThanOrEqual(2);
		for (const r of rows) expect(r.skip_reason, r.scheduled_instant!).toBe("paused: maint");
	});
});
