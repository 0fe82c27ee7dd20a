// A file agent a deploy drops from fleet.yaml is told so by its shard (durable-objects/shard/shard-do.ts
// syncFileAgents); one that cannot be told stays listed, and the fleet's revision unrecorded, so the
// next tick tells it. A mutation walk of the shard found that retry unchecked.
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createJob, type JobRecord } from "../../src/jobs/model.ts";
import { shardName, shardOf } from "../../src/scheduler/shards.ts";
import { saveJob } from "../helpers/jobs.ts";
import { tick } from "../helpers/ticks.ts";

beforeEach(() => {
	vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2037-12-05T09:00:00Z") });
});
afterEach(() => {
	vi.useRealTimers();
});

describe("a file agent a deploy drops from fleet.yaml, whose object fails the shard's first word of it", () => {
	it("is told at the next tick: its queued run ends cancelled and its shard lists it no more", async () => {
		const name = "untold-agent";
		const agent = env.AGENT.getByName(name);
		await agent.tick(name, "file", Date.parse("2037-12-05T09:00:00Z"));
		await agent.pause(name, "file", "holiday", "operator");
		const queued = createJob({ agent: name, trigger_type: "manual", definition_revision: "r" }, new Date("2037-12-05T09:00:00Z"));
		expect(await saveJob(name, queued)).toBe(true);
		const shard = env.SCHEDULER_SHARD.getByName(shardName(shardOf(name)));
		await tick("2037-12-05T09:00:00Z");
		// The previous deploy's fleet.yaml had it: its shard lists it.
		await runInDurableObject(shard, (_i, state) => {
			state.storage.sql.exec("INSERT INTO agents (name, source, next_due_at) VALUES (?, 'file', 0)", name);
			state.storage.sql.exec("UPDATE meta SET value = 'the previous deploy' WHERE key = 'fleet'");
		});
		// Its object fails every call for a minute (its stored state does not parse).
		const kept = await runInDurableObject(agent, (_i, state) => {
			const { definition } = state.storage.sql.exec<{ definition: string | null }>("SELECT definition FROM agent_state").one();
			state.storage.sql.exec("UPDATE agent_state SET definition = '{not json'");
			return definition;
		});
		vi.setSystemTime(Date.parse("2037-12-05T09:01:05Z"));
		await tick("2037-12-05T09:01:00Z");
		expect(await agent.getJob(queued.id)).toMatchObject({ status: "pending" });
		await runInDurableObject(agent, (_i, state) => {
			state.storage.sql.exec("UPDATE agent_state SET definition = ?", kept);
		});
		vi.setSystemTime(Date.parse("2037-12-05T09:02:05Z"));
		await tick("2037-12-05T09:02:00Z");
		const job = (await agent.getJob(queued.id)) as JobRecord | null;
		expect(job).toMatchObject({ status: "cancelled" });
		expect(job!.transitions.at(-1)).toMatchObject({ to: "cancelled", reason: "agent removed from fleet.yaml" });
		expect(await runInDurableObject(shard, (_i, state) => state.storage.sql.exec("SELECT name FROM agents WHERE name = ?", name).toArray())).toEqual([]);
	});
});
