// A tick's count of the agents a shard leaves to its follow-up (durable-objects/shard/shard-do.ts), which
// a mutation walk of the shard found unchecked where the last agent called failed. A file of its own, so
// no other shard owes a minute and the fleet's count is this shard's.
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { namesInShard, shardWithVars } from "../helpers/vars.ts";

afterEach(() => {
	vi.useRealTimers();
});

describe("a tick's count of the agents it leaves to a follow-up", () => {
	it("leaves out the last agent it called, whose call failed: it stays due for the next tick, and the follow-up calls only those after it", async () => {
		// Shard 15: 12 agents due at 11:05, one invocation's 8 calls (SUBREQUEST_LIMIT 10).
		vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2037-12-12T11:04:30Z") });
		const names = namesInShard("counted", 15, 12);
		for (const name of names) await createAgent({ name, schedules: { once: { cron: "5 11 * * *" } } });
		await shardWithVars(15, { SUBREQUEST_LIMIT: "10" });
		// The eighth in name order, the last the tick reaches, fails every call (its stored state no longer parses).
		const last = [...names].sort()[7]!;
		await runInDurableObject(env.AGENT.getByName(last), (_i, state) => {
			state.storage.sql.exec("UPDATE agent_state SET definition = '{not json'");
		});
		vi.setSystemTime(Date.parse("2037-12-12T11:05:02Z"));
		const res = await call("/v1/tick", { method: "POST", as: "admin" });
		expect(res.status).toBe(200);
		const answer = (await res.json()) as { scheduled_time: string; deferred: number };
		expect(answer.scheduled_time).toBe("2037-12-12T11:05:00.000Z");
		// The four after it, not five.
		expect(answer.deferred).toBe(4);
	});
});

