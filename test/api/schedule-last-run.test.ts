import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { tick } from "../helpers/ticks.ts";

// Each schedule's last run in the agent view, as Hermes' `cron list` shows a job's last status: the
// newest slot's ledger row (GET /v1/agents/:agent/runs), read by `drover status <agent>` and the fleet.

interface LastRun {
	scheduled_instant: string;
	status: string;
	skip_reason: string | null;
	job_id: string | null;
	finished_at: string | null;
	delivery_outcome: string | null;
}

const at = (iso: string) => Date.parse(iso);
beforeEach(() => {
	vi.useFakeTimers({ toFake: ["Date"], now: at("2037-11-02T08:59:30Z") });
});
afterEach(() => {
	vi.useRealTimers();
});

async function lastRuns(agent: string): Promise<Record<string, LastRun | null>> {
	const res = await call(`/v1/agents/${agent}`);
	expect(res.status).toBe(200);
	const { schedules } = (await res.json()) as { schedules: { name: string; last_run: LastRun | null }[] };
	return Object.fromEntries(schedules.map((s) => [s.name, s.last_run]));
}

describe("a schedule's last run", () => {
	it("is null before its first slot, then its newest slot's row: claimed, completed with its job, skipped saying why", async () => {
		useEmulator();
		const name = "last-run-each";
		await createAgent({ name, schedules: { often: { interval: "1m" }, daily: { cron: "0 18 * * *" } } });
		expect(await lastRuns(name)).toEqual({ often: null, daily: null });

		vi.setSystemTime(at("2037-11-02T09:00:02Z"));
		await tick("2037-11-02T09:00:00Z");
		const claimed = (await lastRuns(name)).often!;
		expect(claimed).toMatchObject({ scheduled_instant: "2037-11-02T09:00:00.000Z", status: "claimed", skip_reason: null, finished_at: null });
		expect(claimed.job_id).toMatch(/^job-/);
		// Another schedule's row is its own: the daily one has had no slot yet.
		expect((await lastRuns(name)).daily).toBeNull();

		await settle(name);
		const done = (await lastRuns(name)).often!;
		expect(done).toMatchObject({ scheduled_instant: "2037-11-02T09:00:00.000Z", status: "completed", job_id: claimed.job_id, delivery_outcome: null });
		expect(done.finished_at).not.toBeNull();
		const job = (await (await call(`/v1/jobs/${claimed.job_id}`)).json()) as { status: string; agent: string };
		expect(job).toMatchObject({ status: "completed", agent: name });

		const paused = await call(`/v1/agents/${name}/pause`, { method: "POST", as: "operate", body: { reason: "maintenance" } });
		expect(paused.status).toBe(200);
		// The pause answers the agent's state; the schedules' last runs are the view's.
		expect(Object.keys((await paused.json()) as object)).not.toContain("last_runs");
		vi.setSystemTime(at("2037-11-02T09:01:02Z"));
		await tick("2037-11-02T09:01:00Z");
		const skipped = (await lastRuns(name)).often!;
		expect(skipped).toMatchObject({ scheduled_instant: "2037-11-02T09:01:00.000Z", status: "skipped", job_id: null });
		expect(skipped.skip_reason).toContain("paused");
	});

	it("is listed for each agent of the fleet's page", async () => {
		useEmulator();
		const name = "last-run-listed";
		await createAgent({ name, schedules: { hourly: { cron: "0 * * * *" } } });
		vi.setSystemTime(at("2037-11-02T10:00:02Z"));
		await tick("2037-11-02T10:00:00Z");
		await settle(name);
		const res = await call("/v1/agents?limit=200");
		const { agents } = (await res.json()) as { agents: { name: string; schedules: { name: string; last_run: LastRun | null }[] }[] };
		const mine = agents.find((a) => a.name === name)!;
		expect(mine.schedules).toEqual([expect.objectContaining({ name: "hourly", last_run: expect.objectContaining({ scheduled_instant: "2037-11-02T10:00:00.000Z", status: "completed" }) })]);
	});
});
