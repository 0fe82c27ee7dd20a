// The job.finished line of a job that ends indeterminate (durable-objects/agent/runner/step-common.ts),
// where a mutation walk found the suite blind: README promises it at warn, as a failed job's, where a
// level filter finds it (a side effect unaccounted for is something to look at); the tests checked
// only the job's record.
import { env, runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAgent, runsOf, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { jobOf } from "../helpers/jobs.ts";
import { killSwitch, recover } from "../helpers/kill.ts";
import { captureLogs } from "../helpers/logs.ts";
import { fake } from "../helpers/outbound.ts";
import { dayFromToday, minuteOn, tick } from "../helpers/ticks.ts";

const MINUTE = new Date(minuteOn(dayFromToday(-1), "08:07")).toISOString();

afterEach(() => vi.restoreAllMocks());

describe("a job whose object died while a tool call ran", () => {
	it("ends indeterminate, its job.finished at warn", async () => {
		useEmulator().enqueue({ tool_use: { name: "http_fetch", input: { url: "https://dies.example.test/" } } }, { text: "never asked" });
		await createAgent({ name: "died-logged", schedules: { m: { interval: "1m" } }, tools: [{ type: "http_fetch", allow_hosts: ["dies.example.test"] }] });
		const killed = await killSwitch("died-logged");
		fake("https://dies.example.test", () => killed.kill());
		// Claimed by a tick and run by the agent's alarm (killed, a manual trigger's request would fail with it).
		await tick(MINUTE);
		const jobId = (await runsOf("died-logged"))[0]!.job_id!;
		await settle("died-logged").catch((err: unknown) => expect(String(err)).toMatch(/killed by the test/));
		expect(killed.fired).toBe(1);
		const logs = captureLogs();
		await runDurableObjectAlarm(env.AGENT.getByName("died-logged"));
		await recover("died-logged");
		expect((await jobOf("died-logged", jobId)).status).toBe("indeterminate");
		expect(logs.filter((l) => l.event === "job.finished" && l.job_id === jobId)).toEqual([expect.objectContaining({ level: "warn", status: "indeterminate" })]);
	});
});
