import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, onTestFinished, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { breakD1, createAgent, restoreEnv, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { endedRecord, jobOf, runToRest, storeRun, trigger } from "../helpers/jobs.ts";
import { ticketTool } from "../helpers/tools.ts";
import { alarmOf } from "../helpers/retention.ts";

const DAY_MS = 86_400_000;

afterEach(() => void vi.restoreAllMocks());

type Swappable = { env: Env };

/** Stores `n` jobs of the agent's that ended ten days ago, past a 7-day retention. */
async function expiredJobs(name: string, n: number): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => {
		for (let i = 0; i < n; i++) storeRun(state.storage.sql, endedRecord(name, new Date(Date.now() - 10 * DAY_MS - i * 60_000)));
	});
}

// pass.ts scheduleNext: when the alarm that comes after a pass is set, which README promises.
describe("the alarm a pass leaves", () => {
	it("retries an outbox D1 refused 10 s on, as README says: not sooner, not later", async () => {
		useEmulator().enqueue({ text: "indexed later" });
		await createAgent({ name: "retry-10s" });
		await breakD1("retry-10s");
		const job = await trigger("retry-10s");
		await settle("retry-10s");
		expect((await jobOf("retry-10s", job.id)).status).toBe("completed");
		const wait = (await alarmOf("retry-10s"))! - Date.now();
		expect(wait).toBeGreaterThan(8_000);
		expect(wait).toBeLessThanOrEqual(10_000);
	});

	it("takes up a retention backlog a second after a pass that pruned a full batch", async () => {
		await createAgent({ name: "backlog-1s", retention_days: 7 });
		const stub = env.AGENT.getByName("backlog-1s");
		// More expired jobs than one batch (50) prunes.
		await expiredJobs("backlog-1s", 60);
		await runInDurableObject(stub, (instance: AgentDO) => instance.alarm());
		const held = await runInDurableObject(stub, (_i: AgentDO, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM jobs").one().n);
		expect(held).toBe(10);
		const wait = (await alarmOf("backlog-1s"))! - Date.now();
		expect(wait).toBeGreaterThan(0);
		expect(wait).toBeLessThanOrEqual(1_000);
	});

	it("does not wake an agent at capacity for a queued run that cannot start: each alarm is a billed request", async () => {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } });
		await createAgent({ name: "full-waits", tools: [ticketTool] });
		const holder = await runToRest("full-waits");
		expect(holder.status).toBe("approval_pending");
		const queued = await trigger("full-waits");
		await settle("full-waits");
		expect((await jobOf("full-waits", queued.id)).status).toBe("pending");
		// Its one slot is held by the job waiting for a human: nothing is due until something changes.
		expect(await alarmOf("full-waits")).toBeGreaterThan(Date.now() + 60_000);
	});

	it("leaves a retention backlog to the outbox's 10 s retry while D1 refuses, not a pass a second", async () => {
		await createAgent({ name: "backlog-d1-down", retention_days: 7 });
		await expiredJobs("backlog-d1-down", 60);
		await breakD1("backlog-d1-down");
		await runInDurableObject(env.AGENT.getByName("backlog-d1-down"), (instance: AgentDO) => instance.alarm());
		const wait = (await alarmOf("backlog-d1-down"))! - Date.now();
		expect(wait).toBeGreaterThan(8_000);
		expect(wait).toBeLessThanOrEqual(10_000);
	});

	it("waits for the retry of a definition's sync the shard refused, and the registry then learns it", async () => {
		const name = "sync-retried";
		await createAgent({ name });
		const stub = env.AGENT.getByName(name);
		// The agent's scheduler shard refuses every call, as when it is down.
		await runInDurableObject(stub, (instance: AgentDO) => {
			const self = instance as unknown as Swappable;
			const down = () => Promise.reject(new Error("shard unavailable"));
			const refusing = { getByName: () => ({ register: down, unregister: down }) };
			self.env = { ...self.env, SCHEDULER_SHARD: refusing as unknown as Env["SCHEDULER_SHARD"] };
		});
		vi.spyOn(console, "warn").mockImplementation(() => {});
		const put = await call(`/v1/agents/${name}`, { method: "PUT", as: "admin", body: { name, prompt: "Do the other thing." } });
		expect(put.status).not.toBe(200);
		const registered = async () => JSON.parse((await env.DB.prepare("SELECT definition FROM agents WHERE name = ?").bind(name).first<{ definition: string }>())!.definition) as { prompt: string };
		expect((await registered()).prompt).toBe("Do the thing.");

		// The write's backstop alarm comes before the sync's retry is due: its pass leaves the alarm at that retry.
		const backstop = (await alarmOf(name))!;
		// README: a write whose shard or D1 update fails is kept, and the object's alarm completes it within seconds.
		expect(backstop - Date.now()).toBeLessThanOrEqual(10_000);
		vi.useFakeTimers({ toFake: ["Date"], now: backstop });
		onTestFinished(() => void vi.useRealTimers());
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		const retry = await alarmOf(name);
		expect(retry).not.toBeNull();
		expect(retry! - backstop).toBeGreaterThan(0);
		expect(retry! - backstop).toBeLessThanOrEqual(10_000);

		// The shard is back by then: the retry's pass tells it and the registry.
		await restoreEnv(name);
		vi.setSystemTime(retry!);
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		expect((await registered()).prompt).toBe("Do the other thing.");
	});

	it("is none for an agent with nothing to do: its definition's backstop alarm is taken back once the sync is done", async () => {
		await createAgent({ name: "nothing-due" });
		expect(await alarmOf("nothing-due")).toBeNull();
	});
});
