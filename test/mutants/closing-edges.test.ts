import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, onTestFinished, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent, restoreEnv, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { endedRecord, jobOf, storeRun, trigger } from "../helpers/jobs.ts";
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
