import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { queueSync, RegistrySync } from "../../durable-objects/agent/registry-sync.ts";
import { readState, saveDefinition } from "../../durable-objects/agent/state.ts";
import { createAgent } from "../helpers/agents.ts";
import { gate } from "../helpers/emulator.ts";

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
