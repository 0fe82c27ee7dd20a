import { env } from "cloudflare:test";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { createAgent, runsOf, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, runToRest, saveJob } from "../helpers/jobs.ts";
import { tick } from "../helpers/ticks.ts";

// jobs.ts putJob: a record is stored only if its revision is newer than the one held. A copy of the
// same revision (a step replayed by a second instance, a retried write) changes nothing: the first
// write of a revision stands, and neither the index nor the ledger hear of it again.
describe("a job record saved again at the revision it holds", () => {
	it("is not written: the record the API answers is the one first stored at that revision", async () => {
		useEmulator().enqueue({ text: "The first answer." });
		await createAgent({ name: "same-revision" });
		const job = await runToRest("same-revision");
		expect(job.summary).toBe("The first answer.");
		expect(await saveJob("same-revision", { ...job, summary: "A replayed answer." })).toBe(false);
		const shown = (await (await call(`/v1/jobs/${job.id}`)).json()) as { summary: string; revision: number };
		expect(shown).toMatchObject({ summary: "The first answer.", revision: job.revision });
		// A newer revision is stored.
		expect(await saveJob("same-revision", { ...job, summary: "Amended.", revision: job.revision + 1 })).toBe(true);
		expect(((await (await call(`/v1/jobs/${job.id}`)).json()) as { summary: string }).summary).toBe("Amended.");
	});
});

// jobs.ts pendingJobsOf: a renamed schedule takes its runs claimed and not started yet (see carryRename).
describe("a renamed schedule's run that already ran", () => {
	it("keeps the name it ran under, in its job and its ledger row; only the later slot is the new name's", async () => {
		const name = "renamed-history";
		vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2037-12-02T09:59:30Z") });
		onTestFinished(() => void vi.useRealTimers());
		// The scheduler's last tick dates a definition: this one starts from none (see schedule-changes).
		await env.DB.prepare("DELETE FROM scheduler_heartbeat").run();
		useEmulator().enqueue({ text: "Ran as a." });
		const definition = { name, prompt: "Do the thing.", schedules: { a: { cron: "0 * * * *" } } };
		await createAgent(definition);
		await tick("2037-12-02T10:00:00Z");
		vi.setSystemTime(Date.parse("2037-12-02T10:00:30Z"));
		await settle(name);
		const [ran] = await runsOf(name);
		expect(ran).toMatchObject({ schedule: "a", status: "completed" });

		const put = await call(`/v1/agents/${name}`, { method: "PUT", as: "admin", body: { ...definition, schedules: { b: { cron: "0 * * * *" } } } });
		expect(put.status, await put.clone().text()).toBe(200);
		vi.setSystemTime(Date.parse("2037-12-02T10:59:30Z"));
		await tick("2037-12-02T11:00:00Z");
		expect((await runsOf(name)).map((r) => [r.schedule, r.scheduled_instant, r.status])).toEqual([
			["a", "2037-12-02T10:00:00.000Z", "completed"],
			["b", "2037-12-02T11:00:00.000Z", "claimed"],
		]);
		expect(await jobOf(name, ran!.job_id!)).toMatchObject({ schedule: "a", summary: "Ran as a." });
		await settle(name);
	});
});

// jobs.ts lastFinishedJob: an agent's last outcome is its newest ended job.
describe("an agent's last_job", () => {
	it("is the newest of its ended jobs, not the first", async () => {
		useEmulator().enqueue({ text: "First." }, { text: "Second." });
		await createAgent({ name: "last-outcome" });
		await runToRest("last-outcome");
		const second = await runToRest("last-outcome");
		const shown = (await (await call("/v1/agents/last-outcome")).json()) as { last_job: { id: string; status: string } | null };
		expect(shown.last_job).toMatchObject({ id: second.id, status: "completed" });
	});
});

// jobs.ts parseRecord: a record stored by a release before a field existed reads it as null.
describe("a job record stored before rate_limited_until existed", () => {
	it("reads it as null, as README says, not without the field", async () => {
		useEmulator().enqueue({ text: "Old." });
		await createAgent({ name: "older-record" });
		const job = await runToRest("older-record");
		const { rate_limited_until: _dropped, ...older } = job;
		expect(await saveJob("older-record", { ...older, revision: job.revision + 1 } as typeof job)).toBe(true);
		const shown = (await (await call(`/v1/jobs/${job.id}`)).json()) as Record<string, unknown>;
		expect(shown).toMatchObject({ revision: job.revision + 1, continued_from: null, cancel_requested: null, output_log: null });
		expect(shown).toHaveProperty("rate_limited_until", null);
	});
});
