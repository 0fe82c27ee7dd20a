// How a job starts (durable-objects/agent/runner/start.ts), where a mutation walk found the suite blind:
// a schedule's own output_to_file wins over its agent's, false as well as true; the test's scheduled
// run had only the schedule's set, and the run under an agent's true was a manual one.
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { jobOf } from "../helpers/jobs.ts";
import { tick } from "../helpers/ticks.ts";

afterEach(() => vi.useRealTimers());

describe("a scheduled run whose schedule sets output_to_file false, its agent true", () => {
	it("keeps no plain-text log", async () => {
		// Seven past, no fleet slot; far ahead (2037), so no alarm set by the fake clock comes due on its own.
		const MINUTE = Date.parse("2037-12-04T14:07:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: MINUTE + 10_000 });
		useEmulator().enqueue({ text: "Quiet." });
		await createAgent({ name: "schedule-says-no-log", prompt: "Go.", output_to_file: true, schedules: { quiet: { interval: "1m", output_to_file: false } } });
		await tick(MINUTE);
		await settle("schedule-says-no-log");
		const [run] = await runInDurableObject(env.AGENT.getByName("schedule-says-no-log"), (instance: AgentDO) => instance.runs(5));
		const job = await jobOf("schedule-says-no-log", run!.job_id!);
		expect(job).toMatchObject({ status: "completed", schedule: "quiet", output_log: null });
	});
});
