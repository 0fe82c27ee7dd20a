import { describe, expect, it } from "vitest";
import { settle, runsOf } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { fake } from "../helpers/outbound.ts";
import { tick } from "../helpers/ticks.ts";

// fleet.yaml's example agents, ticked as deployed crons would tick them.
describe("fleet.yaml agents", () => {
	it("are scheduled from the bundled file: intervals, timezone crons, and manual-only agents", async () => {
		// Friday 2026-12-04: 09:00 Berlin (08:00Z) is weekday-morning, 16:00 Berlin (15:00Z) weekly-recap.
		// site-watch's demo run fetches its allowlisted page.
		fake("https://example.com", () => new Response("<html>Example Domain</html>", { headers: { "content-type": "text/html" } }));
		for (const t of ["07:59", "08:00", "08:15", "08:30"]) await tick(`2026-12-04T${t}:00Z`);
		await settle("daily-digest");
		await settle("site-watch");

		expect((await runsOf("daily-digest")).map((r) => [r.schedule, r.scheduled_instant, r.dispatch, r.status])).toEqual([
			["weekday-morning", "2026-12-04T08:00:00.000Z", "on_time", "completed"],
		]);
		// site-watch runs every 15 minutes, one at a time (overlap: skip): its first job had not run yet.
		expect((await runsOf("site-watch")).map((r) => [r.scheduled_instant, r.status, r.skip_reason])).toEqual([
			["2026-12-04T08:00:00.000Z", "completed", null],
			["2026-12-04T08:15:00.000Z", "skipped", "already running (max_concurrent 1)"],
			["2026-12-04T08:30:00.000Z", "skipped", "already running (max_concurrent 1)"],
		]);
		expect(await runsOf("triage")).toEqual([]);

		const jobs = (await (await call("/v1/jobs?trigger_type=schedule")).json()) as { jobs: { agent: string; schedule: string }[] };
		expect(jobs.jobs.map((j) => `${j.agent}/${j.schedule}`).sort()).toEqual(["daily-digest/weekday-morning", "site-watch/every-15m"]);
	});

	it("report each schedule's next run and the agent's state", async () => {
		const digest = (await (await call("/v1/agents/daily-digest")).json()) as {
			schedules: { name: string; next_run: string }[];
			paused: unknown;
			running_jobs: unknown[];
			queued_jobs: number;
			last_job: { status: string };
		};
		expect(digest.paused).toBeNull();
		expect(digest.queued_jobs).toBe(0);
		expect(digest.last_job.status).toBe("completed");
		expect(digest.schedules.map((s) => s.name)).toEqual(["weekday-morning", "weekly-recap"]);
	});
});
