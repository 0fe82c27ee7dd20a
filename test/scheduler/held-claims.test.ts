import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { createAgent, runsOf, settle, settleClaimedRuns, type Run } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, runToRest } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { dayFromToday, tick } from "../helpers/ticks.ts";

// A scheduled run claimed on time but held before it started (its agent paused or disabled, or
// queued behind capacity) is judged at its start as a slot missed by that much: past its grace
// window it runs labelled late (catch_up on) or not at all (catch_up off). Lateness is measured on
// the ticks' clock (the instants below, a month ahead), not the test's wall clock.
//
// A claimed run starts at its tick plus a spread of up to 5 s by a hash of the agent's name; the
// names of the tests that pause or disable an agent right after a tick have a spread of 4.7 s or
// more, so the pause lands before the run starts (each test checks that it did).
//
// Slots are at :10 past the hour and ticks never on or within 7.5 min after a quarter hour:
// fleet.yaml's site-watch (every 15 min, catch_up off, no system prompt for the emulator to tell
// it by) then claims nothing here, so its runs take none of these tests' scripted answers.

// The ticks' days (YYYY-MM-DD): day(0) a month from the real clock's day, day(n) n days after it.
// They stand for 2027-01-05 and the days after, which would come due, then pass, and more than three
// days past meet shards that no longer deal their job ids.
const day = (n: number) => new Date(dayFromToday(30 + n)).toISOString().slice(0, 10);

const pending = async (agent: string, run: Run) =>
	expect((await jobOf(agent, run.job_id!)).status, "the claimed run is still pending when its agent is held").toBe("pending");

async function pause(agent: string): Promise<void> {
	expect((await call(`/v1/agents/${agent}/pause`, { method: "POST", as: "operate", body: { reason: "holiday" } })).status).toBe(200);
}

async function resume(agent: string): Promise<void> {
	expect((await call(`/v1/agents/${agent}/resume`, { method: "POST", as: "operate" })).status).toBe(200);
}

async function put(agent: string, body: Record<string, unknown>): Promise<void> {
	const res = await call(`/v1/agents/${agent}`, { method: "PUT", as: "admin", body: { name: agent, prompt: "Do the thing.", ...body } });
	expect(res.status, await res.clone().text()).toBe(200);
}

/**
 * Creates the agent, and deletes it when the test ends: the tests share the file's storage and
 * ticks, and an agent left scheduled would claim runs in the next test's ticks and take its
 * scripted answers.
 */
async function created(definition: Record<string, unknown> & { name: string }): Promise<void> {
	await createAgent(definition);
	onTestFinished(async () => {
		expect((await call(`/v1/agents/${definition.name}`, { method: "DELETE", as: "admin" })).status).toBe(200);
	});
}

const runAt = async (agent: string, instant: string) => (await runsOf(agent)).find((r) => r.scheduled_instant === instant)!;

/** The D1 index's view of the agent's jobs (GET /v1/jobs). */
async function indexed(agent: string) {
	const res = await call(`/v1/jobs?agent=${agent}&limit=200`);
	return ((await res.json()) as { jobs: { id: string; schedule: string | null; status: string; dispatch: string | null }[] }).jobs;
}

// The runs this file's ticks claimed (for every agent then due) run in the test that claimed them,
// not by their start alarms during a later one (see settleClaimedRuns).
afterEach(settleClaimedRuns);

describe("a scheduled run held past its slot's grace window", () => {
	it("with catch_up off, is not run when its paused agent resumes: cancelled saying why, its ledger row skipped, hooked as a cancelled job", async () => {
		const emulator = useEmulator();
		const hooks: Record<string, unknown>[] = [];
		fake("https://hooks.example.test", async (req) => {
			hooks.push((await req.json()) as Record<string, unknown>);
			return new Response("ok");
		});
		const name = "held-pause-off"; // start spread 4.9 s
		await created({ name, hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }] }, schedules: { daily: { cron: "10 9 * * *", catch_up: false } } });
		await tick(`${day(0)}T09:10:00Z`);
		await pause(name);
		await pending(name, await runAt(name, `${day(0)}T09:10:00.000Z`));
		for (const d of [1, 2, 3]) await tick(`${day(d)}T09:10:00Z`);
		await resume(name);
		await settle(name);

		const run = await runAt(name, `${day(0)}T09:10:00.000Z`);
		const job = await jobOf(name, run.job_id!);
		const reason =
			`not run: held until 3d after its slot ${day(0)}T09:10:00.000Z (its agent paused, disabled or at capacity), past the slot's grace window of 2h; schedule daily has catch_up: false`;
		expect(job).toMatchObject({ status: "cancelled", exit_reason: "cancelled", started_at: null, dispatch: "on_time", error: { type: "slot_passed", message: reason } });
		expect(job.transitions.at(-1)).toMatchObject({ from: "pending", to: "cancelled", reason });
		expect(run).toMatchObject({ status: "skipped", skip_reason: reason, dispatch: "on_time", job_id: job.id });
		expect((run as Run & { error: unknown }).error).toBeNull();
		expect(emulator.requests).toHaveLength(0);
		// Nothing left waiting; the index and the hooks have it as any cancelled job.
		expect(((await (await call(`/v1/agents/${name}`)).json()) as { queued_jobs: number }).queued_jobs).toBe(0);
		expect(await indexed(name)).toEqual([expect.objectContaining({ id: job.id, status: "cancelled" })]);
		expect(hooks).toEqual([expect.objectContaining({ type: "drover.job.cancelled", job: expect.objectContaining({ id: job.id, status: "cancelled" }) })]);
	});

	it("with catch_up on, runs when its paused agent resumes, labelled late in its job, the index and the ledger", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "done" });
		const name = "held-runs-late"; // start spread 4.7 s
		await created({ name, schedules: { daily: { cron: "10 9 * * *", catch_up: true } } });
		await tick(`${day(0)}T09:10:00Z`);
		await pause(name);
		await pending(name, await runAt(name, `${day(0)}T09:10:00.000Z`));
		for (const d of [1, 2]) await tick(`${day(d)}T09:10:00Z`);
		await resume(name);
		await settle(name);

		const run = await runAt(name, `${day(0)}T09:10:00.000Z`);
		const job = await jobOf(name, run.job_id!);
		expect(job).toMatchObject({ status: "completed", dispatch: "late", scheduled_instant: `${day(0)}T09:10:00.000Z` });
		expect(job.transitions.find((t) => t.to === "running")?.reason).toBe(
			`started late: held until 2d after its slot ${day(0)}T09:10:00.000Z (its agent paused, disabled or at capacity), past the slot's grace window of 2h; schedule daily has catch_up: true`,
		);
		expect(run).toMatchObject({ status: "completed", dispatch: "late" });
		expect(await indexed(name)).toEqual([expect.objectContaining({ id: job.id, status: "completed", dispatch: "late" })]);
		expect(emulator.requests).toHaveLength(1);
	});

	it("with catch_up off, is not run when its disabled agent is enabled again", async () => {
		const emulator = useEmulator();
		const name = "held-disable"; // start spread 4.9 s
		const schedules = { daily: { cron: "10 9 * * *", catch_up: false } };
		await created({ name, schedules });
		await tick(`${day(5)}T09:10:00Z`);
		await put(name, { enabled: false, schedules });
		await pending(name, await runAt(name, `${day(5)}T09:10:00.000Z`));
		for (const d of [6, 7, 8]) await tick(`${day(d)}T09:10:00Z`);
		await put(name, { schedules });
		await settle(name);

		const run = await runAt(name, `${day(5)}T09:10:00.000Z`);
		const job = await jobOf(name, run.job_id!);
		expect(job.status).toBe("cancelled");
		expect(job.error?.message).toBe(
			`not run: held until 1d after its slot ${day(5)}T09:10:00.000Z (its agent paused, disabled or at capacity), past the slot's grace window of 2h; schedule daily has catch_up: false`,
		);
		expect(run).toMatchObject({ status: "skipped", skip_reason: job.error?.message });
		expect(emulator.requests).toHaveLength(0);
	});

	it("with catch_up off, queued behind capacity (overlap: queue), is not run when the capacity frees a day later", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } }, { text: "Not filed." });
		const name = "held-queued";
		await created({
			name,
			overlap: "queue",
			tools: [{ type: "webhook", name: "create_ticket", description: "Create a ticket.", url_secret: "TEST_TICKETS_URL", requires_approval: true }],
			schedules: { daily: { cron: "10 9 * * *", catch_up: false } },
		});
		// A manual run waits on a human, holding the agent's one place: the claim queues behind it.
		const waiting = await runToRest(name);
		expect(waiting.status).toBe("approval_pending");
		await tick(`${day(0)}T09:10:00Z`);
		await tick(`${day(1)}T09:10:00Z`);
		expect((await runsOf(name)).filter((r) => r.schedule === "daily").map((r) => [r.scheduled_instant, r.status])).toEqual([
			[`${day(0)}T09:10:00.000Z`, "claimed"],
			[`${day(1)}T09:10:00.000Z`, "skipped"],
		]);
		expect((await call(`/v1/jobs/${waiting.id}/approval`, { method: "POST", as: "operate", body: { decision: "deny" } })).status).toBe(200);
		await settle(name);

		expect((await jobOf(name, waiting.id)).status).toBe("completed");
		const run = await runAt(name, `${day(0)}T09:10:00.000Z`);
		expect(await jobOf(name, run.job_id!)).toMatchObject({ status: "cancelled", error: { type: "slot_passed" } });
		expect(run).toMatchObject({ status: "skipped", skip_reason: expect.stringMatching(new RegExp(`^not run: held until 1d after its slot ${day(0)}T09:10:00\\.000Z .*catch_up: false$`)) });
		expect(emulator.requests).toHaveLength(2);
	});

	it("is judged at its grace window's edge: held within it, it runs as claimed; held past it, it does not", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "done" });
		const name = "held-boundary-10"; // start spread 5.0 s
		// An hourly slot's grace window is 30 min; ticker's slots (skipped while paused) bring ticks in between.
		await created({ name, schedules: { hourly: { cron: "10 * * * *", catch_up: false }, ticker: { cron: "38,42 * * * *" } } });

		await tick(`${day(0)}T10:10:00Z`);
		await pause(name);
		await pending(name, await runAt(name, `${day(0)}T10:10:00.000Z`));
		await tick(`${day(0)}T10:38:00Z`); // 28 min after the slot
		await resume(name);
		await settle(name);
		const within = await runAt(name, `${day(0)}T10:10:00.000Z`);
		expect(await jobOf(name, within.job_id!)).toMatchObject({ status: "completed", dispatch: "on_time", error: null });
		expect(within).toMatchObject({ status: "completed", dispatch: "on_time", skip_reason: null });

		await tick(`${day(0)}T11:10:00Z`);
		await pause(name);
		await pending(name, await runAt(name, `${day(0)}T11:10:00.000Z`));
		for (const t of ["11:38", "11:42"]) await tick(`${day(0)}T${t}:00Z`); // 32 min after the slot
		await resume(name);
		await settle(name);
		const past = await runAt(name, `${day(0)}T11:10:00.000Z`);
		expect(past).toMatchObject({
			status: "skipped",
			skip_reason: expect.stringMatching(new RegExp(`^not run: held until 32m( \\d+s)? after its slot ${day(0)}T11:10:00\\.000Z .*grace window of 30m; schedule hourly has catch_up: false$`)),
		});
		expect(emulator.requests).toHaveLength(1);
	});
});

describe("a scheduled run held while its schedule is renamed with the same timing", () => {
	it("is the new name's, as its place in time is: judged by its window when its agent resumes, and listed under it in its job, the index and the ledger", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "done" });
		const name = "held-renamed-10"; // start spread 4.9 s
		await created({ name, schedules: { daily: { cron: "10 9 * * *", catch_up: true } } });
		await tick(`${day(10)}T09:10:00Z`);
		await pause(name);
		await pending(name, await runAt(name, `${day(10)}T09:10:00.000Z`));
		await put(name, { schedules: { morning: { cron: "10 9 * * *", catch_up: true } } });
		await tick(`${day(10)}T11:25:00Z`); // past a daily slot's grace window of 2 h
		await resume(name);
		await settle(name);

		const run = await runAt(name, `${day(10)}T09:10:00.000Z`);
		const job = await jobOf(name, run.job_id!);
		expect(job).toMatchObject({ status: "completed", schedule: "morning", dispatch: "late" });
		expect(job.transitions.find((t) => t.to === "running")?.reason).toBe(
			`started late: held until 2h 15m after its slot ${day(10)}T09:10:00.000Z (its agent paused, disabled or at capacity), past the slot's grace window of 2h; schedule morning has catch_up: true`,
		);
		expect(run).toMatchObject({ schedule: "morning", status: "completed", dispatch: "late" });
		expect(await indexed(name)).toEqual([expect.objectContaining({ id: job.id, schedule: "morning", status: "completed" })]);
		expect(emulator.requests).toHaveLength(1);
	});
});
