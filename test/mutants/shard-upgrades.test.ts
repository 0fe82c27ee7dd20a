// The scheduler shard's SQLite steps (durable-objects/shard/schema.ts), as this release upgrades a
// shard an earlier release left: a mutation walk of them found the upgrades unchecked but for steps 4
// and 5's own cases (schedule-changes, agent-admin).
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SHARD_MIGRATIONS } from "../../durable-objects/shard/schema.ts";
import type { SchedulerShardDO } from "../../durable-objects/shard/shard-do.ts";
import { shardName } from "../../src/scheduler/shards.ts";
import { migrate } from "../../src/store/sqlite-migrations.ts";
import { createAgent } from "../helpers/agents.ts";
import { loggedDuring } from "../helpers/logs.ts";
import { rollBackShardSchema } from "../helpers/sql.ts";
import { tick } from "../helpers/ticks.ts";
import { namesInShard, shardWithVars } from "../helpers/vars.ts";

beforeEach(() => {
	vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2037-12-01T00:00:00Z") });
});
afterEach(() => {
	vi.useRealTimers();
});

/** A shard's tables with their columns, and its indexes, as SQLite describes them. */
function schemaOf(stub: DurableObjectStub<SchedulerShardDO>) {
	return runInDurableObject(stub, (_i: SchedulerShardDO, state) => {
		const sql = state.storage.sql;
		const tables = sql
			.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%' ORDER BY name")
			.toArray()
			.map((t) => t.name);
		return {
			columns: Object.fromEntries(
				tables.map((t) => [
					t,
					sql
						.exec<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number }>(`PRAGMA table_info(${t})`)
						.toArray()
						.map((c) => `${c.name} ${c.type}${c.notnull ? " NOT NULL" : ""}${c.dflt_value !== null ? ` DEFAULT ${c.dflt_value}` : ""}${c.pk ? " PK" : ""}`)
						.sort(),
				]),
			),
			indexes: sql.exec<{ name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name").toArray(),
			steps: sql.exec<{ version: number; name: string }>("SELECT version, name FROM schema_migrations ORDER BY version").toArray(),
		};
	});
}

describe("a scheduler shard an earlier release left", () => {
	// The shard each case's agent lives in: none shared between cases.
	it.each([2, 3, 4, 5, 6, 7])("without the steps from %i on is upgraded to a new shard's tables and indexes, and its next tick writes its agent's due time", async (from) => {
		const day = `2037-12-${String(from + 1).padStart(2, "0")}`;
		vi.setSystemTime(Date.parse(`${day}T09:59:30Z`));
		const [name] = namesInShard(`upgraded-${from}`, from, 1);
		await createAgent({ name: name!, schedules: { nightly: { cron: "0 3 * * *" } } });
		const shard = env.SCHEDULER_SHARD.getByName(shardName(from));
		await runInDurableObject(shard, (_i: SchedulerShardDO, state) => {
			rollBackShardSchema(state.storage.sql, from);
			migrate(state.storage, SHARD_MIGRATIONS);
		});
		const fresh = await schemaOf(env.SCHEDULER_SHARD.getByName(`never-upgraded-${from}`));
		expect(fresh.columns.agents).toContain("failing_since INTEGER");
		expect(await schemaOf(shard)).toEqual(fresh);
		const dueAt = () =>
			runInDurableObject(shard, (_i: SchedulerShardDO, state) => state.storage.sql.exec<{ next_due_at: number }>("SELECT next_due_at FROM agents WHERE name = ?", name).one().next_due_at);
		expect(await dueAt()).toBe(0);
		await tick(`${day}T10:00:00Z`);
		const next = new Date(Date.parse(`${day}T03:00:00Z`) + 86_400_000).toISOString();
		expect(new Date(await dueAt()).toISOString()).toBe(next);
	});
});

describe("a new scheduler shard", () => {
	it("records the steps released shards hold under the versions they hold them: none is run on them again", async () => {
		// A shard deployed holds these rows; a step of theirs renumbered would run again on it (a column
		// added twice is an error in the constructor, and the shard never ticks).
		const released = ["create_agents", "file_agent_definitions", "agent_generations", "exact_generations_and_file_definitions", "resync_for_replaced_api_agents", "job_id_counters", "failing_agents"];
		const { steps } = await schemaOf(env.SCHEDULER_SHARD.getByName("never-upgraded"));
		expect(steps.slice(0, released.length)).toEqual(released.map((name, i) => ({ version: i + 1, name })));
	});
});

describe("a shard upgraded past step 5 in the deploy that lowers RETENTION_DAYS", () => {
	it("tells its agents, from the value it recorded before the upgrade", async () => {
		const ten = Date.parse("2037-12-20T10:02:00Z");
		vi.setSystemTime(ten - 30_000);
		const shard = 11;
		for (const name of namesInShard("kept-over-upgrade", shard, 2)) await createAgent({ name });
		await shardWithVars(shard, { RETENTION_DAYS: "60" });
		vi.setSystemTime(ten + 5_000);
		await tick(ten);
		// The release before step 5 recorded 60 days; this one is deployed with 7.
		await runInDurableObject(env.SCHEDULER_SHARD.getByName(shardName(shard)), (_i: SchedulerShardDO, state) => {
			rollBackShardSchema(state.storage.sql, 5);
			migrate(state.storage, SHARD_MIGRATIONS);
		});
		await shardWithVars(shard, { RETENTION_DAYS: "7" });
		vi.setSystemTime(ten + 65_000);
		expect(await loggedDuring(() => tick(ten + 60_000), "shard.retention_shortened")).toEqual([expect.objectContaining({ shard, from: 60, to: 7 })]);
	});
});
