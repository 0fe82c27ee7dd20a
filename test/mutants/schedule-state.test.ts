import { env } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createAgent, redefineAgent, type Run, runsOf } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";
import { ticketTool } from "../helpers/tools.ts";
import { tick } from "../helpers/ticks.ts";
import { readHeartbeat } from "../../src/store/heartbeat.ts";

// A schedule's place in time across definition changes (durable-objects/agent/scheduling.ts), where
// a mutation walk found the suite silent: what the ledger (`drover runs`, the runs view) shows for
// the slots a change came between. The wall clock is a fake one far ahead, as in
// test/scheduler/schedule-changes.test.ts, whose set-up this copies.

const at = (iso: string) => Date.parse(iso);
const wallClock = (time: string) => vi.setSystemTime(at(time));
beforeEach(async () => {
	vi.useFakeTimers({ toFake: ["Date"], now: at("2037-12-01T00:00:00Z") });
	await env.DB.prepare("DELETE FROM scheduler_heartbeat").run();
});
/** The agents a test made, deleted after it: the file's storage is shared, and an agent scheduled every minute would be called at every later test's ticks. */
const made: string[] = [];
const agent = async (definition: { name: string } & Record<string, unknown>) => {
	made.push(definition.name);
	await createAgent(definition);
};
afterEach(async () => {
	for (const name of made.splice(0)) expect((await call(`/v1/agents/${name}`, { method: "DELETE", as: "admin" })).status).toBe(200);
	vi.useRealTimers();
});

const put = (name: string, body: Record<string, unknown>) => redefineAgent(name, { max_concurrent: 5, ...body });

/** The ledger, oldest first: each slot's instant, how it was dispatched, and run or skipped (with the range a skipped row covers). */
const ledger = async (agent: string) =>
	(await runsOf(agent))
		.map((r: Run) => [r.scheduled_instant, r.status === "skipped" ? `skipped ${r.skipped_count ?? 1} from ${(r as Run & { skipped_from?: string | null }).skipped_from ?? r.scheduled_instant}: ${r.skip_reason}` : `ran ${r.dispatch}`] as const)
		.sort((a, b) => `${a[0]} ${a[1]}`.localeCompare(`${b[0]} ${b[1]}`));

describe("an agent disabled while ticks were missing", () => {
	it("accounts for the slots up to its disabling as not run, and none after it", async () => {
		const name = "disabled-in-outage";
		wallClock("2037-12-01T09:59:30Z");
		await agent({ name, max_concurrent: 5, schedules: { m: { interval: "1m" } } });
		await tick("2037-12-01T10:00:00Z");
		// No tick from 10:01 to 10:09; the agent disabled at 10:05, in the middle of them.
		wallClock("2037-12-01T10:05:00Z");
		await put(name, { enabled: false, schedules: { m: { interval: "1m" } } });
		wallClock("2037-12-01T10:10:00Z");
		await tick("2037-12-01T10:10:00Z");
		const why = `not run: agent ${name} was disabled before this slot was claimed`;
		expect(await ledger(name)).toEqual([
			["2037-12-01T10:00:00.000Z", "ran on_time"],
			["2037-12-01T10:04:00.000Z", `skipped 4 from 2037-12-01T10:01:00.000Z: ${why}`],
			["2037-12-01T10:05:00.000Z", `skipped 1 from 2037-12-01T10:05:00.000Z: ${why}`],
		]);
	});
});

describe("a schedule removed while its ticks came late", () => {
	it("accounts for every slot due before its removal, the ones after the late tick's minute too", async () => {
		const name = "removed-in-backlog";
		wallClock("2037-12-01T09:59:30Z");
		await agent({ name, max_concurrent: 5, schedules: { m: { interval: "1m" }, keep: { interval: "1h" } } });
		await tick("2037-12-01T10:00:00Z");
		// The scheduler behind: 10:01's tick reaches the agent at 10:03:10, after m was removed at 10:03.
		wallClock("2037-12-01T10:03:00Z");
		await put(name, { schedules: { keep: { interval: "1h" } } });
		wallClock("2037-12-01T10:03:10Z");
		for (const t of ["10:01", "10:02", "10:03", "10:04"]) await tick(`2037-12-01T${t}:00Z`);
		const why = "not run: schedule m was removed before this slot was claimed";
		// 10:02 and 10:03 were due while m was there: each has its row (two in one, as missed slots are),
		// though no tick claimed them before the removal.
		expect((await ledger(name)).filter(([, what]) => what.includes("schedule m ") || what.startsWith("ran"))).toEqual([
			["2037-12-01T10:00:00.000Z", "ran on_time"],
			["2037-12-01T10:00:00.000Z", "ran on_time"],
			["2037-12-01T10:02:00.000Z", `skipped 2 from 2037-12-01T10:01:00.000Z: ${why}`],
			["2037-12-01T10:03:00.000Z", `skipped 1 from 2037-12-01T10:03:00.000Z: ${why}`],
		]);
	});
});

describe("a schedule retimed while its ticks came late", () => {
	it("accounts for every slot its old timing had before the change, the ones after the late tick's minute too", async () => {
		const name = "retimed-in-backlog";
		wallClock("2037-12-01T09:59:30Z");
		await agent({ name, max_concurrent: 5, schedules: { m: { interval: "1m" } } });
		await tick("2037-12-01T10:00:00Z");
		// The scheduler behind: 10:01's tick reaches the agent at 10:03:10, after m went to every 5 minutes at 10:03:05.
		wallClock("2037-12-01T10:03:05Z");
		await put(name, { schedules: { m: { cron: "*/5 * * * *" } } });
		wallClock("2037-12-01T10:03:10Z");
		for (const t of ["10:01", "10:02", "10:03", "10:04"]) await tick(`2037-12-01T${t}:00Z`);
		wallClock("2037-12-01T10:05:02Z");
		await tick("2037-12-01T10:05:00Z");
		const why = "not run: schedule m's timing changed before this slot was claimed";
		// 10:02 and 10:03 were due on the old timing, before the change: each has its row (two in one, as
		// missed slots are), though no tick claimed them before it; the new timing runs from the change.
		expect(await ledger(name)).toEqual([
			["2037-12-01T10:00:00.000Z", "ran on_time"],
			["2037-12-01T10:02:00.000Z", `skipped 2 from 2037-12-01T10:01:00.000Z: ${why}`],
			["2037-12-01T10:03:00.000Z", `skipped 1 from 2037-12-01T10:03:00.000Z: ${why}`],
			["2037-12-01T10:05:00.000Z", "ran on_time"],
		]);
	});
});

describe("a scheduled run claimed and not started yet", () => {
	it("is shown with its schedule's prompt and its agent's usage limits, as it will run", async () => {
		const name = "claimed-not-started";
		wallClock("2037-12-01T09:59:30Z");
		await agent({ name, max_concurrent: 5, usage_limits: { max_requests: 3 }, schedules: { m: { interval: "1m", prompt: "Check the site." } } });
		await tick("2037-12-01T10:00:00Z");
		const [run] = await runsOf(name);
		// Read from its agent's object: the index is told at the object's next pass.
		expect(await env.AGENT.getByName(name).getJob(run!.job_id!)).toMatchObject({ status: "pending", schedule: "m", prompt: "Check the site.", usage_limits: { max_requests: 3 } });
	});
});

describe("an agent's next slot", () => {
	it("is where its shard calls it next: a tick before it calls no one", async () => {
		wallClock("2037-12-01T09:59:30Z");
		await agent({ name: "every-quarter", max_concurrent: 5, schedules: { q: { interval: "15m" } } });
		await tick("2037-12-01T10:00:00Z");
		expect((await readHeartbeat(env.DB))?.agents_called).toBeGreaterThan(0);
		wallClock("2037-12-01T10:01:00Z");
		await tick("2037-12-01T10:01:00Z");
		expect((await readHeartbeat(env.DB))?.agents_called).toBe(0);
	});
});

describe("a schedule renamed and retimed in one PUT", () => {
	it("claims no instant its old name took when that minute's tick comes again minutes late", async () => {
		const name = "retimed-rename-late";
		wallClock("2037-12-07T08:59:30Z");
		await agent({ name, max_concurrent: 5, schedules: { daily: { cron: "0 9 * * *" } } });
		await tick("2037-12-07T09:00:00Z"); // a Monday
		wallClock("2037-12-07T09:00:30Z");
		await put(name, { schedules: { weekdays: { cron: "0 9 * * 1-5" } } });
		// 09:00's tick delivered again, reaching the agent six minutes on (its shard behind).
		wallClock("2037-12-07T09:06:00Z");
		await tick("2037-12-07T09:00:00Z");
		expect((await runsOf(name)).filter((r) => r.scheduled_instant === "2037-12-07T09:00:00.000Z").map((r) => [r.schedule, r.status])).toEqual([["daily", "claimed"]]);
	});
});

describe("a second PUT before any tick saw the first", () => {
	it("keeps the first's moment for what it removed and retimed: the slots after it are not the old timing's", async () => {
		const name = "two-puts-in-outage";
		wallClock("2037-12-01T09:59:30Z");
		await agent({ name, max_concurrent: 5, schedules: { gone: { interval: "1m" }, re: { interval: "1m" } } });
		await tick("2037-12-01T10:00:00Z");
		// No tick from 10:01 to 10:09. At 10:03 `gone` is removed and `re` retimed; at 10:06 only the prompt changes.
		wallClock("2037-12-01T10:03:00Z");
		await put(name, { schedules: { re: { interval: "1h" } } });
		wallClock("2037-12-01T10:06:00Z");
		await put(name, { prompt: "Do the other thing.", schedules: { re: { interval: "1h" } } });
		wallClock("2037-12-01T10:10:00Z");
		await tick("2037-12-01T10:10:00Z");
		const skipped = (await ledger(name)).filter(([, what]) => what.startsWith("skipped"));
		expect(skipped).toEqual([
			["2037-12-01T10:02:00.000Z", "skipped 2 from 2037-12-01T10:01:00.000Z: not run: schedule gone was removed before this slot was claimed"],
			["2037-12-01T10:02:00.000Z", "skipped 2 from 2037-12-01T10:01:00.000Z: not run: schedule re's timing changed before this slot was claimed"],
			["2037-12-01T10:03:00.000Z", "skipped 1 from 2037-12-01T10:03:00.000Z: not run: schedule gone was removed before this slot was claimed"],
			["2037-12-01T10:03:00.000Z", "skipped 1 from 2037-12-01T10:03:00.000Z: not run: schedule re's timing changed before this slot was claimed"],
		]);
	});
});

describe("a schedule added with the timing of one that still runs", () => {
	it("starts its own place in time: the other's runs claimed and not started stay the other's", async () => {
		const name = "same-timing-added";
		wallClock("2037-12-01T09:59:30Z");
		await agent({ name, max_concurrent: 5, schedules: { a: { interval: "1h" } } });
		await tick("2037-12-01T10:00:00Z");
		wallClock("2037-12-01T10:00:30Z");
		await put(name, { schedules: { a: { interval: "1h" }, b: { interval: "1h" } } });
		wallClock("2037-12-01T10:01:00Z");
		await tick("2037-12-01T10:01:00Z");
		expect((await runsOf(name)).map((r) => [r.schedule, r.scheduled_instant, r.status])).toEqual([["a", "2037-12-01T10:00:00.000Z", "claimed"]]);
	});
});

describe("a slot due while its agent's one run waits for approval", () => {
	it("is skipped as already running, the run that holds the capacity named for what it is", async () => {
		const name = "one-run-waiting";
		wallClock("2037-12-01T09:59:30Z");
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "one" } } });
		await agent({ name, max_concurrent: 1, overlap: "skip", tools: [ticketTool], schedules: { h: { interval: "1h" } } });
		expect((await runToRest(name)).status).toBe("approval_pending");
		await tick("2037-12-01T10:00:00Z");
		expect((await runsOf(name)).filter((r) => r.schedule === "h").map((r) => [r.status, r.skip_reason])).toEqual([["skipped", "already running (max_concurrent 1)"]]);
	});
});

describe("an agent whose max_concurrent was lowered below the runs it has", () => {
	it("still queues one slot behind them under overlap: queue, as it would at capacity", async () => {
		const name = "lowered-capacity";
		wallClock("2037-12-01T09:59:30Z");
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "one" } } }, { tool_use: { name: "create_ticket", input: { title: "two" } } });
		const definition = { name, overlap: "queue", tools: [ticketTool], schedules: { h: { interval: "1h" } } };
		await agent({ ...definition, max_concurrent: 2 });
		expect((await runToRest(name)).status).toBe("approval_pending");
		expect((await runToRest(name)).status).toBe("approval_pending");
		await put(name, { ...definition, max_concurrent: 1 });
		await tick("2037-12-01T10:00:00Z");
		expect((await runsOf(name)).filter((r) => r.schedule === "h").map((r) => [r.status, r.skip_reason])).toEqual([["claimed", null]]);
	});
});
