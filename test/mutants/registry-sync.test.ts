import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { queueSync, RegistrySync } from "../../durable-objects/agent/registry-sync.ts";
import { readState, saveDefinition } from "../../durable-objects/agent/state.ts";
import { createAgent, restoreEnv, settle } from "../helpers/agents.ts";
import { gate, useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, trigger } from "../helpers/jobs.ts";
import { alarmOf } from "../helpers/retention.ts";

const registered = async (name: string) =>
	JSON.parse((await env.DB.prepare("SELECT definition FROM agents WHERE name = ?").bind(name).first<{ definition: string }>())!.definition) as { prompt: string };

// registry-sync.ts: a sync tells the shard and the D1 registry what the object held as it started;
// a definition saved while it was on its way is told next, by the same sync, not dropped with the
// first one's pending row.
describe("a definition saved while the registry sync of the one before is under way", () => {
	it("reaches the registry too: the sync tells it next, and leaves nothing pending", async () => {
		const name = "sync-crossing";
		await createAgent({ name });
		const { promise: released, open: release } = gate();
		const { promise: reached, open: reach } = gate();
		await runInDurableObject(env.AGENT.getByName(name), async (_i: AgentDO, state) => {
			const sql = state.storage.sql;
			let calls = 0;
			// The shard's first call waits for the test; the rest, and D1, are the real ones.
			const shard = env.SCHEDULER_SHARD;
			const slowShard = {
				getByName: (shardName: string) => ({
					register: async (agent: string) => {
						if (calls++ === 0) {
							reach();
							await released;
						}
						return shard.getByName(shardName).register(agent);
					},
				}),
			};
			const sync = new RegistrySync(sql, () => ({ ...env, SCHEDULER_SHARD: slowShard as unknown as Env["SCHEDULER_SHARD"] }));
			const current = readState(sql)!;
			saveDefinition(sql, name, { ...current.definition!, prompt: "First." }, "rev-first");
			queueSync(sql, "first", Date.now());
			const first = sync.sync();
			await reached;
			// Saved, as a PUT saves it, while the first sync waits on the shard.
			saveDefinition(sql, name, { ...current.definition!, prompt: "Second." }, "rev-second");
			queueSync(sql, "second", Date.now());
			release();
			await first;
			expect(sql.exec("SELECT count(*) AS n FROM registry_sync").one().n).toBe(0);
		});
		expect((await registered(name)).prompt).toBe("Second.");
	});
});

// registry-sync.ts catchUp: a pass runs a pending sync only once it is due. One the shard refused is
// due again 10 s on ("not at once again: the alarm would spin on a store that is down"), however
// many passes the agent's jobs make meanwhile.
describe("a definition's sync the shard refused", () => {
	it("is tried again at its retry, not by every pass before it", async () => {
		const name = "sync-not-hammered";
		await createAgent({ name });
		const stub = env.AGENT.getByName(name);
		let asked = 0;
		await runInDurableObject(stub, (instance: AgentDO) => {
			const self = instance as unknown as { env: Env };
			const down = () => {
				asked++;
				return Promise.reject(new Error("shard unavailable"));
			};
			self.env = { ...self.env, SCHEDULER_SHARD: { getByName: () => ({ register: down, unregister: down }) } as unknown as Env["SCHEDULER_SHARD"] };
		});
		vi.spyOn(console, "warn").mockImplementation(() => {});
		onTestFinished(() => void vi.restoreAllMocks());
		const put = await call(`/v1/agents/${name}`, { method: "PUT", as: "admin", body: { name, prompt: "Do the other thing." } });
		expect(put.status).toBe(500);
		expect(asked).toBe(1);

		// A run and its pass, within the retry's 10 s: the shard is not asked again.
		useEmulator().enqueue({ text: "Ran meanwhile." });
		const job = await trigger(name);
		await settle(name);
		expect(await jobOf(name, job.id)).toMatchObject({ status: "completed", summary: "Ran meanwhile." });
		expect(asked).toBe(1);

		// At the retry it is.
		const retry = (await alarmOf(name))!;
		vi.useFakeTimers({ toFake: ["Date"], now: retry });
		onTestFinished(() => void vi.useRealTimers());
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		expect(asked).toBe(2);
		await restoreEnv(name);
	});
});
