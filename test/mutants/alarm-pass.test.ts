import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { endedRecord, jobOf, runToRest, storeRun, trigger } from "../helpers/jobs.ts";
import { ticketTool } from "../helpers/tools.ts";
import { alarmOf } from "../helpers/retention.ts";

const DAY_MS = 86_400_000;

// pass.ts scheduleNext: when the alarm that comes after a pass is set, which README promises.
describe("the alarm a pass leaves", () => {
	it("retries an outbox D1 refused 10 s on, as README says: not sooner, not later", async () => {
		useEmulator().enqueue({ text: "indexed later" });
		await createAgent({ name: "retry-10s" });
		type Swappable = { env: Env };
		await runInDurableObject(env.AGENT.getByName("retry-10s"), (instance: AgentDO) => {
			const self = instance as unknown as Swappable;
			const real = self.env;
			const down = new Proxy(real.DB, {
				get: (target, prop) =>
					prop === "batch" || prop === "prepare"
						? () => {
								throw new Error("D1_ERROR: database unavailable");
							}
						: Reflect.get(target, prop),
			});
			self.env = { ...real, DB: down };
		});
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
		await runInDurableObject(stub, (_i: AgentDO, state) => {
			// More expired jobs than one batch (50) prunes.
			for (let i = 0; i < 60; i++) storeRun(state.storage.sql, endedRecord("backlog-1s", new Date(Date.now() - 10 * DAY_MS - i * 60_000)));
		});
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
});
