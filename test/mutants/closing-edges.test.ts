import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { breakD1, createAgent, restoreEnv, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { endedRecord, jobOf, numberedRecord, saveJob, storeRun, trigger } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { alarmOf } from "../helpers/retention.ts";

afterEach(() => void vi.restoreAllMocks());

type Swappable = { env: Env };

/** Every R2 write from the agent's object fails from here on, as in an outage (until restoreEnv). */
async function breakR2(agent: string): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(agent), (instance: AgentDO) => {
		const self = instance as unknown as Swappable;
		const real = self.env;
		const down = new Proxy(real.OUTPUT, {
			get: (target, prop) => {
				if (prop === "put" || prop === "createMultipartUpload") return () => Promise.reject(new Error("R2 unavailable"));
				const value = Reflect.get(target, prop) as unknown;
				return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
			},
		});
		self.env = { ...real, OUTPUT: down };
	});
}

// closing.ts: a pass's closing work, and the share of it done as each job ends mid-pass.
describe("the closing work of ended jobs", () => {
	it("waits 10 s to put an output R2 refused, not a pass at once, and puts it then", async () => {
		const name = "close-r2-down";
		vi.spyOn(console, "warn").mockImplementation(() => {});
		useEmulator().enqueue({ text: "Kept for later." });
		await createAgent({ name });
		await breakR2(name);
		const job = await trigger(name);
		await settle(name);
		expect((await jobOf(name, job.id)).status).toBe("completed");
		expect(await env.OUTPUT.head(`jobs/${name}/${job.id}.jsonl`)).toBeNull();
		const retry = (await alarmOf(name))!;
		expect(retry - Date.now()).toBeGreaterThan(8_000);
		expect(retry - Date.now()).toBeLessThanOrEqual(10_000);
		// R2 is back by then: the retry puts the output.
		await restoreEnv(name);
		vi.useFakeTimers({ toFake: ["Date"], now: retry });
		onTestFinished(() => void vi.useRealTimers());
		expect(await runDurableObjectAlarm(env.AGENT.getByName(name))).toBe(true);
		expect(await env.OUTPUT.head(`jobs/${name}/${job.id}.jsonl`)).not.toBeNull();
	});

	it("puts the outputs of the jobs that ended before one alarm in that alarm: three ended, three downloadable from R2 after it", async () => {
		const name = "close-three-outputs";
		await createAgent({ name });
		const stub = env.AGENT.getByName(name);
		const at = Date.now() - 60_000;
		const ids = await runInDurableObject(stub, async (instance: AgentDO, state) => {
			const made: string[] = [];
			for (let i = 0; i < 3; i++) {
				const job = numberedRecord(name, new Date(at + i * 1_000), i);
				storeRun(state.storage.sql, job);
				AgentDO.appendOutput(instance, job.id, [{ type: "system", subtype: "init", content: `run ${i}` }]);
				made.push(job.id);
			}
			await state.storage.setAlarm(Date.now());
			return made;
		});
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		for (const id of ids) expect(await env.OUTPUT.head(`jobs/${name}/${id}.jsonl`), id).not.toBeNull();
	});

	it("takes up at once, once D1 is back from an outage, what one closing left (past its 100 ended jobs): the last one's incident is filed at the next alarm, now", async () => {
		const name = "close-after-d1";
		vi.spyOn(console, "warn").mockImplementation(() => {});
		fake("https://alerts.example.test", () => new Response("ok"));
		await createAgent({ name });
		const stub = env.AGENT.getByName(name);
		// An outage, and D1 back: the retry's flush gets through.
		await breakD1(name);
		expect(await saveJob(name, endedRecord(name, new Date(Date.now() - 120_000)))).toBe(true);
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		await restoreEnv(name);
		await settle(name);
		// 101 jobs end before one alarm; the last failed. The closing queues the effects of 100.
		const at = Date.now() - 60_000;
		const failed = await runInDurableObject(stub, async (_i: AgentDO, state) => {
			for (let i = 0; i < 100; i++) storeRun(state.storage.sql, numberedRecord(name, new Date(at), i));
			const last = numberedRecord(name, new Date(at + 1_000), 100, "failed");
			storeRun(state.storage.sql, last);
			await state.storage.setAlarm(Date.now());
			return last;
		});
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		expect(await alarmOf(name)).toBeLessThanOrEqual(Date.now());
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		const { incidents } = (await (await call(`/v1/incidents?agent=${name}`)).json()) as { incidents: { state: string; count: number; error: string }[] };
		expect(incidents).toMatchObject([{ state: "alerted", count: 1, error: failed.error!.message }]);
	});

	it("files the effects of jobs that ended before one closing in the order they ended: a failure, then the clean run that resolves it", async () => {
		const name = "close-order";
		fake("https://alerts.example.test", () => new Response("ok"));
		await createAgent({ name });
		const at = Date.now() - 60_000;
		await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => {
			storeRun(state.storage.sql, endedRecord(name, new Date(at), "failed"));
			storeRun(state.storage.sql, endedRecord(name, new Date(at + 1_000)));
		});
		await settle(name);
		const { incidents } = (await (await call(`/v1/incidents?agent=${name}`)).json()) as { incidents: { state: string; count: number }[] };
		expect(incidents).toMatchObject([{ state: "resolved", count: 1 }]);
	});
});
