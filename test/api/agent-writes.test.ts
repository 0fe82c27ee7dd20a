import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { AGENT_MIGRATIONS } from "../../durable-objects/agent/schema.ts";
import { migrate } from "../../src/store/sqlite-migrations.ts";
import { shardName, shardOf } from "../../src/scheduler/shards.ts";
import { createAgent } from "../helpers/agents.ts";
import { call, errorOf } from "../helpers/http.ts";
import { killSwitch } from "../helpers/kill.ts";
import { rollBackAgentSchema } from "../helpers/sql.ts";

// An API agent's definition is decided by its own Durable Object, which then brings its shard and
// the D1 registry in line, and leaves that to its alarm when cut off. These tests hold the API to
// its promise: a request that fails changes nothing or is completed later, and nothing is lost.

type Swappable = { env: Env };

interface Detail {
	definition: { name: string; prompt: string };
	definition_revision: string;
}

async function registryRow(name: string) {
	return env.DB.prepare("SELECT definition, definition_revision, deleted_at FROM agents WHERE name = ?")
		.bind(name)
		.first<{ definition: string; definition_revision: string; deleted_at: number | null }>();
}

async function shardRow(name: string): Promise<{ source: string } | null> {
	return runInDurableObject(
		env.SCHEDULER_SHARD.getByName(shardName(shardOf(name))),
		(_i, state) => state.storage.sql.exec<{ source: string }>("SELECT source FROM agents WHERE name = ?", name).toArray()[0] ?? null,
	);
}

/** What the agent's own object holds: its definition, and whether a sync is still pending. */
async function objectState(name: string): Promise<{ prompt: string | null; revision: string | null; deleted: boolean; pending: number }> {
	return runInDurableObject(env.AGENT.getByName(name), (_i, state) => {
		const row = state.storage.sql
			.exec<{ definition: string | null; definition_revision: string | null; deleted_at: number | null }>(
				"SELECT definition, definition_revision, deleted_at FROM agent_state WHERE id = 1",
			)
			.one();
		const pending = state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM registry_sync").one().n;
		const definition = row.definition === null ? null : (JSON.parse(row.definition) as { prompt: string });
		return { prompt: definition?.prompt ?? null, revision: row.definition_revision, deleted: row.deleted_at !== null, pending };
	});
}

/** Swaps one of the agent's object's bindings for a failing one; returns a function that puts the real one back. */
async function breakBinding(name: string, swap: (real: Env) => Partial<Env>): Promise<() => Promise<void>> {
	const stub = env.AGENT.getByName(name);
	let real!: Env;
	await runInDurableObject(stub, (instance: AgentDO) => {
		real = (instance as unknown as Swappable).env;
		(instance as unknown as Swappable).env = { ...real, ...swap(real) };
	});
	return () =>
		runInDurableObject(stub, (instance: AgentDO) => {
			(instance as unknown as Swappable).env = real;
		});
}

function d1Down(real: Env): Partial<Env> {
	return {
		DB: new Proxy(real.DB, {
			get: (target, prop) => {
				if (prop === "prepare" || prop === "batch") return () => {
					throw new Error("D1 unavailable");
				};
				const value = Reflect.get(target, prop) as unknown;
				return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
			},
		}),
	};
}

function shardDown(real: Env): Partial<Env> {
	const fail = () => Promise.reject(new Error("shard unavailable"));
	return {
		SCHEDULER_SHARD: new Proxy(real.SCHEDULER_SHARD, {
			get: (target, prop) => {
				if (prop === "getByName") return () => ({ register: fail, unregister: fail });
				const value = Reflect.get(target, prop) as unknown;
				return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
			},
		}),
	};
}

/** Lets the object's alarm take up the pending sync now, as it would once the grace has passed. */
async function alarmTakesItUp(name: string): Promise<void> {
	const stub = env.AGENT.getByName(name);
	await runInDurableObject(stub, (_i, state) => state.storage.sql.exec("UPDATE registry_sync SET due_at = 0"));
	expect(await runDurableObjectAlarm(stub)).toBe(true);
}

describe("concurrent writes of one API agent", () => {
	it("create it once: one POST of a name gets 201, the others 409, and the agent is the winner's", async () => {
		const name = "raced-create";
		const bodies = [1, 2, 3, 4, 5].map((i) => ({ name, prompt: `Caller ${i}'s prompt.`, schedules: { hourly: { cron: "0 * * * *" } } }));
		const answers = await Promise.all(bodies.map((body) => call("/v1/agents", { method: "POST", as: "admin", body })));
		const statuses = answers.map((r) => r.status);
		expect(statuses.filter((s) => s === 201)).toHaveLength(1);
		expect(statuses.filter((s) => s === 409)).toHaveLength(4);
		const winner = bodies[statuses.indexOf(201)]!;
		for (const loser of answers.filter((r) => r.status === 409)) expect((await errorOf(loser)).message).toMatch(/already exists/);

		const shown = (await (await call(`/v1/agents/${name}`)).json()) as Detail;
		expect(shown.definition.prompt).toBe(winner.prompt);
		expect(await objectState(name)).toMatchObject({ prompt: winner.prompt, deleted: false, pending: 0 });
		expect(await shardRow(name)).toEqual({ source: "api" });
	});

	it("delete it once: one DELETE gets 200, the others 404", async () => {
		const name = "raced-delete";
		await createAgent({ name });
		const answers = await Promise.all([1, 2, 3, 4, 5].map(() => call(`/v1/agents/${name}`, { method: "DELETE", as: "admin" })));
		const statuses = answers.map((r) => r.status);
		expect(statuses.filter((s) => s === 200)).toHaveLength(1);
		expect(statuses.filter((s) => s === 404)).toHaveLength(4);
		expect((await call(`/v1/agents/${name}`)).status).toBe(404);
		expect(await registryRow(name)).toMatchObject({ deleted_at: expect.any(Number) });
		expect(await shardRow(name)).toBeNull();
	});

});

describe("an agent write cut off before its shard and D1 heard of it", () => {
	it("a PUT whose D1 write fails answers 5xx, keeps the new definition, and the alarm brings D1 in line", async () => {
		const name = "stale-registry";
		await createAgent({ name, prompt: "First.", schedules: { hourly: { cron: "0 * * * *" } } });
		const restore = await breakBinding(name, d1Down);
		const put = await call(`/v1/agents/${name}`, { method: "PUT", as: "admin", body: { name, prompt: "Second.", schedules: { half: { cron: "30 * * * *" } } } });
		expect(put.status).toBeGreaterThanOrEqual(500);
		// The object runs the new definition; D1 (what the API shows) still has the old one, for now.
		expect(await objectState(name)).toMatchObject({ prompt: "Second.", pending: 1 });
		expect(((await (await call(`/v1/agents/${name}`)).json()) as Detail).definition.prompt).toBe("First.");

		await restore();
		await alarmTakesItUp(name);
		const object = await objectState(name);
		expect(object).toMatchObject({ prompt: "Second.", pending: 0 });
		const shown = (await (await call(`/v1/agents/${name}`)).json()) as Detail & { schedules: { name: string }[] };
		expect(shown.definition.prompt).toBe("Second.");
		expect(shown.definition_revision).toBe(object.revision);
		expect(shown.schedules.map((s) => s.name)).toEqual(["half"]);
		expect((await registryRow(name))?.definition_revision).toBe(object.revision);
		expect(await shardRow(name)).toEqual({ source: "api" });
	});

	it("a DELETE whose shard call fails answers 5xx, and the alarm unregisters it and marks it deleted in D1", async () => {
		const name = "stale-shard";
		await createAgent({ name, schedules: { hourly: { cron: "0 * * * *" } } });
		const restore = await breakBinding(name, shardDown);
		const del = await call(`/v1/agents/${name}`, { method: "DELETE", as: "admin" });
		expect(del.status).toBeGreaterThanOrEqual(500);
		expect(await objectState(name)).toMatchObject({ deleted: true, pending: 1 });
		// The object has it deleted: another DELETE is refused by it, whatever D1 still says.
		expect((await call(`/v1/agents/${name}`, { method: "DELETE", as: "admin" })).status).toBe(404);

		await restore();
		await alarmTakesItUp(name);
		expect(await objectState(name)).toMatchObject({ deleted: true, pending: 0 });
		expect((await call(`/v1/agents/${name}`)).status).toBe(404);
		expect(await registryRow(name)).toMatchObject({ deleted_at: expect.any(Number) });
		expect(await shardRow(name)).toBeNull();
	});

	it("a POST whose object is killed mid-sync is completed when a retry is refused by the fresh instance", async () => {
		const name = "killed-create";
		const switcher = await killSwitch(name);
		await breakBinding(name, (real) => ({
			DB: new Proxy(real.DB, {
				get: (target, prop) => {
					if (prop === "prepare") return () => {
						void switcher.kill().catch(() => {});
						throw new Error("killed mid-sync");
					};
					const value = Reflect.get(target, prop) as unknown;
					return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
				},
			}),
		}));
		const post = await call("/v1/agents", { method: "POST", as: "admin", body: { name, prompt: "Made once.", schedules: { hourly: { cron: "0 * * * *" } } } });
		expect(post.status).toBeGreaterThanOrEqual(500);
		expect(switcher.fired).toBe(1);
		expect((await call(`/v1/agents/${name}`)).status).toBe(404);
		// A retry is refused: the object has the agent, and it is the arbiter. Refusing, it tells its
		// shard and D1 what it holds, so the caller's next look agrees with the refusal.
		expect((await call("/v1/agents", { method: "POST", as: "admin", body: { name, prompt: "Made twice." } })).status).toBe(409);

		const object = await objectState(name);
		expect(object).toMatchObject({ prompt: "Made once.", pending: 0 });
		expect(((await (await call(`/v1/agents/${name}`)).json()) as Detail).definition.prompt).toBe("Made once.");
		expect((await registryRow(name))?.definition_revision).toBe(object.revision);
		expect(await shardRow(name)).toEqual({ source: "api" });
	});
});

describe("an API agent left half-written by the release before", () => {
	// That release made the object's, the shard's and D1's writes one after another, and a failure
	// between them stayed: here a DELETE that never reached D1 or the shard.
	async function deletedButListed(name: string): Promise<void> {
		await createAgent({ name, prompt: "Left behind.", schedules: { hourly: { cron: "0 * * * *" } } });
		await runInDurableObject(env.AGENT.getByName(name), (_i, state) => {
			state.storage.sql.exec("UPDATE agent_state SET deleted_at = ?", Date.now());
		});
		expect((await registryRow(name))?.deleted_at).toBeNull();
		expect(await shardRow(name)).toEqual({ source: "api" });
	}

	it("is brought in line by the next write the object refuses, which then agrees with what is listed", async () => {
		const name = "half-deleted";
		await deletedButListed(name);
		const again = await call(`/v1/agents/${name}`, { method: "DELETE", as: "admin" });
		expect(again.status).toBe(404);
		expect((await registryRow(name))?.deleted_at).toEqual(expect.any(Number));
		expect(await shardRow(name)).toBeNull();
		expect((await call(`/v1/agents/${name}`)).status).toBe(404);
		// Created again from scratch, as any deleted name can be.
		expect((await call("/v1/agents", { method: "POST", as: "admin", body: { name, prompt: "Back again." } })).status).toBe(201);
	});

	it("listed with an old definition, is brought in line by a POST of its name, which its object refuses", async () => {
		const name = "stale-listing";
		await createAgent({ name, prompt: "What it runs." });
		await env.DB.prepare("UPDATE agents SET definition = json_set(definition, '$.prompt', 'An old prompt.') WHERE name = ?").bind(name).run();
		expect(((await (await call(`/v1/agents/${name}`)).json()) as Detail).definition.prompt).toBe("An old prompt.");
		const post = await call("/v1/agents", { method: "POST", as: "admin", body: { name, prompt: "A new one." } });
		expect(post.status).toBe(409);
		expect(((await (await call(`/v1/agents/${name}`)).json()) as Detail).definition.prompt).toBe("What it runs.");
	});

	it("listed as deleted while its object still has it, is changed by a PUT, which reaches the object", async () => {
		const name = "unlisted-live";
		await createAgent({ name, prompt: "Still here." });
		await env.DB.prepare("UPDATE agents SET deleted_at = ? WHERE name = ?").bind(Date.now(), name).run();
		const put = await call(`/v1/agents/${name}`, { method: "PUT", as: "admin", body: { name, prompt: "Changed." } });
		expect(put.status).toBe(200);
		expect(((await (await call(`/v1/agents/${name}`)).json()) as Detail).definition.prompt).toBe("Changed.");
		expect((await registryRow(name))?.deleted_at).toBeNull();
	});

	it("is brought in line by its first pass after the upgrade, unasked", async () => {
		const name = "half-deleted-upgraded";
		await deletedButListed(name);
		const stub = env.AGENT.getByName(name);
		// The object as the release before left it: no registry_sync steps run yet.
		await runInDurableObject(stub, async (instance: AgentDO, state) => {
			rollBackAgentSchema(state.storage.sql, 12);
			migrate(state.storage, AGENT_MIGRATIONS);
			await AgentDO.settle(instance);
		});
		expect((await registryRow(name))?.deleted_at).toEqual(expect.any(Number));
		expect(await shardRow(name)).toBeNull();
		expect((await objectState(name)).pending).toBe(0);
	});
});
