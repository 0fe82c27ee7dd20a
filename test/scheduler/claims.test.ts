import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { startSpreadMs, type AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { afterEach, describe, expect, it } from "vitest";
import { MessagesEmulator } from "../../emulator/messages-api.ts";
import { createAgent, queueForAlarm, runsOf, settle, settleClaimedRuns } from "../helpers/agents.ts";
import { heldModel, heldModelFor, useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, trigger } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { readEvents } from "../helpers/sse.ts";
import { dayFromToday, tick } from "../helpers/ticks.ts";

const at = (iso: string) => Date.parse(iso);
/**
 * The days most of these ticks fall on (YYYY-MM-DD): the two before today, standing for the literal
 * 2026-12-01 and 12-02 they replace. Once more than three days old, a day's ticks meet a shard that
 * no longer deals their job ids: the runs draw theirs, and each agent's dealJobIds call logs an
 * uncaught RangeError. (The daylight-saving days below are the calendar's own, and stay.)
 */
const DAY1 = new Date(dayFromToday(-2)).toISOString().slice(0, 10);
const DAY2 = new Date(dayFromToday(-1)).toISOString().slice(0, 10);

async function jobsOf(agent: string) {
	const res = await call(`/v1/jobs?agent=${agent}&limit=200`);
	return ((await res.json()) as { jobs: { id: string; status: string; schedule: string; scheduled_instant: string; dispatch: string; trigger_type: string }[] }).jobs;
}

// The runs this file's ticks claimed (for every agent then due) run in the test that claimed them,
// not by their start alarms during a later one (see settleClaimedRuns).
afterEach(settleClaimedRuns);

describe("claiming occurrences", () => {
	it("indexes a run claimed behind a job whose model call is under way, so its id answers at once, not once it starts", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "First." }, { text: "Second." });
		const { arrived, release } = heldModel(emulator);
		await createAgent({ name: "queued-behind-call", overlap: "queue", schedules: { every: { cron: "* * * * *" } } });
		const first = await trigger("queued-behind-call");
		await arrived;
		await tick(`${DAY1}T10:00:00Z`);
		const [run] = (await runsOf("queued-behind-call")).filter((r) => r.schedule === "every");
		expect(run).toMatchObject({ status: "claimed", dispatch: "on_time" });
		// The agent's pass is held in the first job's model call: the claimed run is queued behind it.
		const res = await call(`/v1/jobs/${run!.job_id}`);
		expect(res.status, await res.clone().text()).toBe(200);
		expect(await res.json()).toMatchObject({ status: "pending", trigger_type: "schedule", schedule: "every" });
		// (Created at the tick's time, days before the manual run: listed after it.)
		expect((await jobsOf("queued-behind-call")).map((j) => [j.id, j.status])).toEqual([
			[first.id, "running"],
			[run!.job_id, "pending"],
		]);
		expect((await call(`/v1/jobs/${run!.job_id}/cancel`, { method: "POST", as: "operate", body: { reason: "not today" } })).status).toBe(200);
		release();
		await settle("queued-behind-call");
		expect((await jobOf("queued-behind-call", first.id)).status).toBe("completed");
		expect((await jobOf("queued-behind-call", run!.job_id!)).status).toBe("cancelled");
	});

	it("starts a run claimed during a pass its alarm began, at its spread start when there is room, not once that pass ends", async () => {
		// A name whose spread start is within a fifth of a second of its tick.
		let name = "claimed-mid-pass";
		for (let i = 0; startSpreadMs(name) > 200; i++) name = `claimed-mid-pass-${i}`;
		const emulator = useEmulator();
		// The claimed run's call is answered first (the first job's is held before it reaches the emulator).
		emulator.enqueue({ text: "Second." }, { text: "First." });
		const { arrived: firstAsked, release: releaseFirst, others: claimedAsked } = heldModelFor(emulator, "First job");
		await createAgent({ name, max_concurrent: 2, schedules: { every: { cron: "* * * * *" } } });
		// A job started by the agent's alarm, fired by the runtime itself, held in its model call:
		// alarms do not overlap, so the tick's start alarm cannot fire until this pass ends.
		await queueForAlarm(name, "First job");
		await firstAsked;
		await tick(Math.ceil(Date.now() / 60_000) * 60_000);
		// Started within that pass: its model call is made, and it ends, while the first's is held.
		await claimedAsked;
		const [run] = (await runsOf(name)).filter((r) => r.schedule === "every");
		expect(run).toMatchObject({ dispatch: "on_time" });
		await readEvents(await call(`/v1/jobs/${run!.job_id}/stream`));
		expect(await jobOf(name, run!.job_id!)).toMatchObject({ status: "completed", summary: "Second." });
		const listed = (await (await call(`/v1/jobs?agent=${name}&status=running`)).json()) as { jobs: unknown[] };
		expect(listed.jobs).toHaveLength(1);
		releaseFirst();
		await settle(name);
	});

	it("claims a slot once even when the schedule's cursor is behind it: the ledger, not the cursor, has the last word", async () => {
		await createAgent({ name: "cursor-behind", max_concurrent: 5, schedules: { quarter: { interval: "15m" } } });
		await tick(`${DAY1}T10:00:00Z`);
		const stub = env.AGENT.getByName("cursor-behind");
		// The cursor says every slot up to 10:00 was handled; wound back before it (as an object restored
		// from before the claim's cursor write would hold it), the agent's next tick of that minute (the
		// shard's retry of a call it saw fail; the shard itself calls a minute once) plans 10:00 again.
		await runInDurableObject(stub, (_i: AgentDO, state) => {
			expect(state.storage.sql.exec("UPDATE schedule_state SET cursor = ? WHERE schedule = 'quarter'", Date.parse(`${DAY1}T09:45:00Z`)).rowsWritten).toBe(1);
		});
		expect(await stub.tick("cursor-behind", "api", Date.parse(`${DAY1}T10:00:00Z`))).toMatchObject({ claimed: 0 });
		const runs = await runsOf("cursor-behind");
		expect(runs.map((r) => [r.scheduled_instant, r.status])).toEqual([[`${DAY1}T10:00:00.000Z`, "claimed"]]);
		const jobs = await runInDurableObject(stub, (_i: AgentDO, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM jobs").one().n);
		expect(jobs).toBe(1);
	});

	it("claims each occurrence once under duplicate, retried and concurrent ticks", async () => {
		await createAgent({ name: "dup-ticks", schedules: { quarter: { interval: "15m" } } });
		await tick(`${DAY1}T10:00:00Z`);
		await tick(`${DAY1}T10:00:00Z`); // duplicate delivery
		await Promise.all([tick(`${DAY1}T10:15:00Z`), tick(`${DAY1}T10:15:00Z`), tick(`${DAY1}T10:15:00Z`)]); // concurrent
		await tick(`${DAY1}T10:15:00Z`); // retried after the fact

		const runs = await runsOf("dup-ticks");
		expect(runs.map((r) => [r.scheduled_instant, r.dispatch, r.status])).toEqual([
			[`${DAY1}T10:00:00.000Z`, "on_time", "claimed"],
			[`${DAY1}T10:15:00.000Z`, "on_time", "skipped"],
		]);
		// max_concurrent 1 with the first job still pending: the second slot is skipped, and recorded so.
		expect(runs[1]!.skip_reason).toBe("at capacity (max_concurrent 1): 1 run claimed and not started yet");

		const stub = env.AGENT.getByName("dup-ticks");
		const job = await stub.getJob(runs[0]!.job_id!);
		expect(job).toMatchObject({
			agent: "dup-ticks",
			trigger_type: "schedule",
			schedule: "quarter",
			status: "pending",
			scheduled_instant: `${DAY1}T10:00:00.000Z`,
			dispatch: "on_time",
			prompt: "Do the thing.",
		});
	});

	it("turns a claim into a job that the agent's alarm indexes in D1 and runs to completion", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "All quiet this hour." });
		await createAgent({ name: "to-runner", schedules: { hourly: { cron: "0 * * * *" } } });
		await tick(`${DAY1}T11:00:00Z`);
		await settle("to-runner");
		const jobs = await jobsOf("to-runner");
		expect(jobs).toHaveLength(1);
		expect(jobs[0]).toMatchObject({
			schedule: "hourly",
			scheduled_instant: `${DAY1}T11:00:00.000Z`,
			dispatch: "on_time",
			trigger_type: "schedule",
			status: "completed",
		});
		expect((await runsOf("to-runner"))[0]).toMatchObject({ status: "completed" });
		expect(emulator.requests).toHaveLength(1);
	});

	// herdctl runs one scheduled job at a time fleet-wide, so one long job delays every agent. Here each
	// agent's jobs run in its own object: a job held mid-call holds up no other agent's slot.
	it("runs another agent's job due the same minute, and the next, while one agent's job is held mid-call", async () => {
		let release!: () => void;
		const held = new Promise<void>((resolve) => (release = resolve));
		let reached!: () => void;
		const slowCalled = new Promise<void>((resolve) => (reached = resolve));
		fake("https://api.anthropic.com", async (req) => {
			const emulator = new MessagesEmulator();
			if (JSON.stringify(await req.clone().json()).includes("SLOW")) {
				reached();
				await held;
			}
			emulator.enqueue({ text: "done" });
			return emulator.handle(req);
		});
		await createAgent({ name: "held-slow", prompt: "SLOW", schedules: { m: { interval: "1m" } } });
		await createAgent({ name: "not-held", prompt: "FAST", schedules: { m: { interval: "1m" } } });
		await tick(`${DAY1}T12:07:00Z`);
		const slow = settle("held-slow");
		await slowCalled;
		await settle("not-held");
		expect((await runsOf("held-slow")).map((r) => r.status)).toEqual(["running"]);
		expect((await runsOf("not-held")).map((r) => r.status)).toEqual(["completed"]);
		await tick(`${DAY1}T12:08:00Z`);
		await settle("not-held");
		expect((await runsOf("not-held")).map((r) => r.status)).toEqual(["completed", "completed"]);
		release();
		await slow;
		expect((await runsOf("held-slow"))[0]).toMatchObject({ scheduled_instant: `${DAY1}T12:07:00.000Z`, status: "completed" });
	});

	it("fires a tick that comes late within the grace window as late", async () => {
		await createAgent({ name: "late-one", schedules: { hourly: { cron: "0 * * * *" } } });
		await tick(`${DAY1}T09:30:00Z`);
		await tick(`${DAY1}T10:20:00Z`); // 20 min late; an hourly schedule's grace is 30 min
		const runs = await runsOf("late-one");
		expect(runs.map((r) => [r.scheduled_instant, r.dispatch, r.status])).toEqual([[`${DAY1}T10:00:00.000Z`, "late", "claimed"]]);
	});

	it("collapses slots missed beyond the grace window into one catch-up run, recording the rest", async () => {
		await createAgent({ name: "catch-up-on", schedules: { quarter: { interval: "15m" } } });
		await tick(`${DAY1}T12:00:00Z`);
		await settle("catch-up-on"); // the first run finishes, so the catch-up has capacity
		// Ticks stop for over an hour: 12:15 … 13:00 all lie beyond the 7.5 min grace of a 15 min schedule.
		await tick(`${DAY1}T13:10:00Z`);
		const runs = await runsOf("catch-up-on");
		// One run for the outage, and one row for the slots it stands for, saying so: nothing else.
		expect(runs.map((r) => [r.dispatch, r.status, r.scheduled_instant, r.skipped_count, r.skipped_from, r.skip_reason])).toEqual([
			["on_time", "completed", `${DAY1}T12:00:00.000Z`, null, null, null],
			["late", "skipped", `${DAY1}T12:45:00.000Z`, 3, `${DAY1}T12:15:00.000Z`, `collapsed into catch-up run of ${DAY1}T13:00:00.000Z`],
			["catch_up", "claimed", `${DAY1}T13:00:00.000Z`, null, null, null],
		]);
	});

	it("with catch_up off, records every missed slot as skipped with the reason, and runs none", async () => {
		await createAgent({ name: "catch-up-off", max_concurrent: 5, schedules: { quarter: { interval: "15m", catch_up: false } } });
		await tick(`${DAY1}T12:00:00Z`);
		await tick(`${DAY1}T13:10:00Z`);
		const runs = await runsOf("catch-up-off");
		expect(runs).toHaveLength(2);
		expect(runs[1]).toMatchObject({ status: "skipped", scheduled_instant: `${DAY1}T13:00:00.000Z`, skipped_count: 4, skipped_from: `${DAY1}T12:15:00.000Z`, job_id: null });
		expect(runs[1]!.skip_reason).toMatch(/catch_up is off/);
	});

	it("runs the catch-up when capacity allows", async () => {
		await createAgent({ name: "catch-up-runs", max_concurrent: 5, schedules: { quarter: { interval: "15m" } } });
		await tick(`${DAY1}T12:00:00Z`);
		await tick(`${DAY1}T13:10:00Z`);
		const runs = await runsOf("catch-up-runs");
		const catchUp = runs.find((r) => r.dispatch === "catch_up")!;
		expect(catchUp).toMatchObject({ status: "claimed", scheduled_instant: `${DAY1}T13:00:00.000Z` });
		expect(await env.AGENT.getByName("catch-up-runs").getJob(catchUp.job_id!)).toMatchObject({ dispatch: "catch_up", status: "pending" });
	});

	it("says a slot was skipped for a run claimed in the same tick, not for one already running", async () => {
		await createAgent({ name: "two-schedules", schedules: { often: { interval: "3m" }, midnight: { cron: "0 0 * * *" } } });
		await tick(`${DAY2}T00:00:00Z`);
		const runs = await runsOf("two-schedules");
		expect(runs.map((r) => r.status).sort()).toEqual(["claimed", "skipped"]);
		expect(runs.find((r) => r.status === "skipped")!.skip_reason).toBe("at capacity (max_concurrent 1): 1 run claimed and not started yet");
	});

	it("lists the rows one tick claimed after an outage newest slot first", async () => {
		await createAgent({ name: "outage-order", max_concurrent: 5, schedules: { quarter: { interval: "15m" } } });
		await tick(`${DAY1}T12:00:00Z`);
		await tick(`${DAY1}T13:10:00Z`);
		// As the API lists them (newest first); the catch-up and the range of slots it stands for were
		// claimed at the same time, by one tick.
		const { runs } = (await (await call("/v1/agents/outage-order/runs")).json()) as { runs: { scheduled_instant: string; dispatch: string; status: string; claimed_at: string }[] };
		expect(runs.map((r) => [r.scheduled_instant, r.dispatch, r.status])).toEqual([
			[`${DAY1}T13:00:00.000Z`, "catch_up", "claimed"],
			[`${DAY1}T12:45:00.000Z`, "late", "skipped"],
			[`${DAY1}T12:00:00.000Z`, "on_time", "claimed"],
		]);
		expect(runs[0]!.claimed_at).toBe(runs[1]!.claimed_at);
	});

	it("queues one run beyond capacity with overlap: queue, and skips the next", async () => {
		await createAgent({ name: "queue-one", overlap: "queue", schedules: { minute: { interval: "1m" } } });
		for (const t of ["10:00", "10:01", "10:02"]) await tick(`${DAY1}T${t}:00Z`);
		const runs = await runsOf("queue-one");
		expect(runs.map((r) => r.status)).toEqual(["claimed", "claimed", "skipped"]);
		expect(runs[2]!.skip_reason).toBe("at capacity (max_concurrent 1) with a run already queued");
	});

	it("records a paused agent's due occurrences as skipped with the reason, and claims again after resume", async () => {
		await createAgent({ name: "pausable", max_concurrent: 3, schedules: { quarter: { interval: "15m" } } });
		const paused = await call("/v1/agents/pausable/pause", { method: "POST", as: "operate", body: { reason: "vendor outage" } });
		expect(paused.status).toBe(200);
		expect(((await paused.json()) as { paused: { reason: string; by: string } }).paused).toMatchObject({ reason: "vendor outage", by: "operator" });
		await tick(`${DAY1}T14:00:00Z`);
		expect((await call("/v1/agents/pausable/resume", { method: "POST", as: "operate" })).status).toBe(200);
		await tick(`${DAY1}T14:15:00Z`);
		const runs = await runsOf("pausable");
		expect(runs.map((r) => [r.scheduled_instant, r.status, r.skip_reason])).toEqual([
			[`${DAY1}T14:00:00.000Z`, "skipped", "paused: vendor outage"],
			[`${DAY1}T14:15:00.000Z`, "claimed", null],
		]);
	});

	it("auto-pauses an agent whose model is retired, records its slots as skipped, and resumes once it is fixed", async () => {
		await createAgent({ name: "old-model", model: "claude-sonnet-4-5", max_concurrent: 3, schedules: { quarter: { interval: "15m" } } });
		await tick(`${DAY1}T16:00:00Z`);
		const paused = (await (await call("/v1/agents/old-model")).json()) as { paused: { by: string; reason: string } };
		// Paused since its creation showed it (the API's answer), not only since this tick.
		expect(paused.paused).toMatchObject({
			by: "auto",
			reason: "auto: model claude-sonnet-4-5 is retired (end of life 2026-11-30) and no fallback model is current",
		});
		const fixed = await call("/v1/agents/old-model", {
			method: "PUT",
			as: "admin",
			body: { name: "old-model", prompt: "Do the thing.", model: "claude-sonnet-5-5", max_concurrent: 3, schedules: { quarter: { interval: "15m" } } },
		});
		expect(fixed.status).toBe(200);
		await tick(`${DAY1}T16:15:00Z`);
		expect((await runsOf("old-model")).map((r) => [r.scheduled_instant, r.status, r.skip_reason])).toEqual([
			[`${DAY1}T16:00:00.000Z`, "skipped", paused.paused.reason.replace(/^auto/, "paused: auto")],
			[`${DAY1}T16:15:00.000Z`, "claimed", null],
		]);
		expect(((await (await call("/v1/agents/old-model")).json()) as { paused: unknown }).paused).toBeNull();
	});

	it("starts a run queued while the agent was paused automatically once the pause lifts, not weeks later", async () => {
		useEmulator().enqueue({ text: "Held, then run." }, { text: "On time." });
		await createAgent({ name: "held-pause-off", schedules: { quarter: { interval: "15m" } } });
		const stub = env.AGENT.getByName("held-pause-off");
		await tick(`${DAY1}T17:00:00Z`);
		// Before its start (a few seconds' spread), drover paused the agent itself, as autoPause writes
		// it (a secret found unset by a status read); the pass leaves the run queued.
		await runInDurableObject(stub, (_i: AgentDO, state) => {
			state.storage.sql.exec("UPDATE agent_state SET paused_at = ?, paused_reason = 'auto: secret X is not set', paused_by = 'auto' WHERE id = 1", Date.now());
		});
		await settle("held-pause-off");
		const [held] = await runsOf("held-pause-off");
		expect((await jobOf("held-pause-off", held!.job_id!)).status).toBe("pending");
		// The cause is gone: the next tick lifts the pause. Its slot is skipped behind the queued run,
		// which now starts within a claim's spread instead of at the alarm retention left, days out.
		await tick(`${DAY1}T17:15:00Z`);
		const alarm = await runInDurableObject(stub, (_i: AgentDO, state) => state.storage.getAlarm());
		expect(alarm! - Date.now()).toBeLessThanOrEqual(5_000);
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		await settle("held-pause-off");
		expect((await jobOf("held-pause-off", held!.job_id!)).status).toBe("completed");
		await tick(`${DAY1}T17:30:00Z`);
		expect((await runsOf("held-pause-off")).map((r) => [r.scheduled_instant, r.status])).toEqual([
			[`${DAY1}T17:00:00.000Z`, "completed"],
			[`${DAY1}T17:15:00.000Z`, "skipped"],
			[`${DAY1}T17:30:00.000Z`, "claimed"],
		]);
	});

	it("ignores a tick whose scheduled time goes backwards", async () => {
		await createAgent({ name: "backwards", max_concurrent: 5, schedules: { quarter: { interval: "15m" } } });
		await tick(`${DAY1}T15:00:00Z`);
		await tick(`${DAY1}T14:45:00Z`);
		await tick(`${DAY1}T14:30:00Z`);
		expect((await runsOf("backwards")).map((r) => r.scheduled_instant)).toEqual([`${DAY1}T15:00:00.000Z`]);
	});

	it("aligns interval occurrences to the epoch, whenever the agent was first seen", async () => {
		await createAgent({ name: "ninety", max_concurrent: 10, schedules: { slow: { interval: "1h30m" } } });
		for (const t of ["00:00", "00:30", "01:00", "01:30", "02:00", "02:30", "03:00"]) await tick(`${DAY2}T${t}:00Z`);
		// 90-minute slots since 1970-01-01T00:00Z fall on 00:00, 01:30, 03:00 UTC of this day.
		expect((await runsOf("ninety")).map((r) => [r.scheduled_instant, r.dispatch])).toEqual([
			[`${DAY2}T00:00:00.000Z`, "on_time"],
			[`${DAY2}T01:30:00.000Z`, "on_time"],
			[`${DAY2}T03:00:00.000Z`, "on_time"],
		]);
	});
});

describe("daylight saving time", () => {
	async function nightOf(agent: string, startIso: string, hours: number) {
		for (let m = 0; m <= hours * 60; m += 30) await tick(at(startIso) + m * 60_000);
		return (await runsOf(agent)).map((r) => [r.scheduled_instant, r.status]);
	}

	it("runs a 02:30 Berlin job once on the spring-forward night, at the first valid time", async () => {
		await createAgent({ name: "dst-spring", max_concurrent: 5, schedules: { night: { cron: "30 2 * * *", timezone: "Europe/Berlin" } } });
		// 2026-03-29: clocks jump from 02:00 to 03:00 CET→CEST, so 02:30 does not exist.
		expect(await nightOf("dst-spring", "2026-03-28T23:00:00Z", 4)).toEqual([["2026-03-29T01:00:00.000Z", "claimed"]]);
	});

	it("runs a 02:30 Berlin job once on the fall-back night, though 02:30 happens twice", async () => {
		await createAgent({ name: "dst-fall", max_concurrent: 5, schedules: { night: { cron: "30 2 * * *", timezone: "Europe/Berlin" } } });
		// 2026-10-25: 02:30 CEST is 00:30Z, 02:30 CET would be 01:30Z.
		expect(await nightOf("dst-fall", "2026-10-24T23:00:00Z", 4)).toEqual([["2026-10-25T00:30:00.000Z", "claimed"]]);
	});

	it("keeps a 09:00 Berlin job at 09:00 local across the change", async () => {
		await createAgent({ name: "dst-nine", max_concurrent: 5, schedules: { morning: { cron: "0 9 * * *", timezone: "Europe/Berlin" } } });
		await tick("2026-03-28T07:59:00Z");
		await tick("2026-03-28T08:00:00Z"); // 09:00 CET
		await tick("2026-03-29T06:59:00Z");
		await tick("2026-03-29T07:00:00Z"); // 09:00 CEST
		expect((await runsOf("dst-nine")).map((r) => r.scheduled_instant)).toEqual(["2026-03-28T08:00:00.000Z", "2026-03-29T07:00:00.000Z"]);
	});
});
