import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { gate, useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { jobOf, runToRest, trigger } from "../helpers/jobs.ts";
import { ticketTool } from "../helpers/tools.ts";

// A deleted API agent's history stays readable for its retention; after that nothing of it is kept:
// not its object's storage (its definition, up to 256 KiB, among it), not its registry row. CI that
// creates and deletes throwaway agents would otherwise grow D1 by a definition, and the fleet by a
// billed object, per deletion, for good.

const DAY = 86_400_000;

afterEach(() => {
	vi.useRealTimers();
});

type Swappable = { env: Env };

/** Time passes as it does deployed: the clock moves to each alarm the object holds, and that alarm fires. */
async function followAlarms(name: string, days: number): Promise<number> {
	const stub = env.AGENT.getByName(name);
	const until = Date.now() + days * DAY;
	let fired = 0;
	for (; fired < 50; fired++) {
		const at = await runInDurableObject(stub, (_i: AgentDO, state) => state.storage.getAlarm());
		if (at === null || at > until) break;
		vi.useFakeTimers({ toFake: ["Date"], now: Math.max(at, Date.now()) + 1 });
		expect(await runDurableObjectAlarm(stub)).toBe(true);
	}
	return fired;
}

/** Nothing of the agent is kept: no table, no alarm, no registry row, no job in the index. */
async function expectForgotten(name: string): Promise<void> {
	expect(await storageOf(name)).toEqual({ tables: {}, alarm: null });
	expect(await registryRow(name)).toBeNull();
	expect(await env.DB.prepare("SELECT count(*) AS n FROM jobs WHERE agent = ?").bind(name).first<{ n: number }>()).toEqual({ n: 0 });
}

/** Its name defined again is a new agent, which runs. */
async function expectDefinedAfresh(name: string, emulator: ReturnType<typeof useEmulator>): Promise<void> {
	emulator.enqueue({ text: "again" });
	await createAgent({ name, prompt: "Start over." });
	expect((await runToRest(name)).status).toBe("completed");
}

/** The object's tables, and the rows each holds (read without waking a fresh agent: no RPC). */
function storageOf(name: string): Promise<{ tables: Record<string, number>; alarm: number | null }> {
	return runInDurableObject(env.AGENT.getByName(name), async (_i: AgentDO, state) => {
		const sql = state.storage.sql;
		const names = sql
			.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY name")
			.toArray()
			.map((r) => r.name);
		const tables = Object.fromEntries(names.map((t) => [t, sql.exec<{ n: number }>(`SELECT count(*) AS n FROM "${t}"`).one().n]));
		return { tables, alarm: await state.storage.getAlarm() };
	});
}

/** `target` with `replaced` in place of its own methods of those names, its others bound to it. */
function withMethods<T extends object>(target: T, replaced: Record<string, unknown>): T {
	return new Proxy(target, {
		get: (t, prop) => {
			if (typeof prop === "string" && prop in replaced) return replaced[prop];
			const value = Reflect.get(t, prop) as unknown;
			return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(t) : value;
		},
	});
}

/** Puts `around` between the agent's object and D1's delete of a registry row (see forgetRegisteredAgent). */
function aroundRowDelete(name: string, around: (run: () => Promise<D1Result>) => Promise<D1Result>): Promise<void> {
	return runInDurableObject(env.AGENT.getByName(name), (instance: AgentDO) => {
		const self = instance as unknown as Swappable & { realDB?: D1Database };
		const real = (self.realDB ??= self.env.DB);
		const prepare = (query: string): D1PreparedStatement => {
			const statement = real.prepare(query);
			if (!query.startsWith("DELETE FROM agents")) return statement;
			return withMethods(statement, {
				bind: (...values: unknown[]) => {
					const bound = statement.bind(...values);
					return withMethods(bound, { run: () => around(() => bound.run()) });
				},
			});
		};
		self.env = { ...self.env, DB: withMethods(real, { prepare }) };
	});
}

/**
 * Holds the agent object's next ask of its shard for job ids (see job-ids.ts) until `release`:
 * the wait during which other calls, the forget's alarm among them, reach the object.
 */
function holdJobIdDeal(name: string): Promise<{ reached: Promise<void>; release: () => void }> {
	const { promise: held, open: release } = gate();
	const { promise: reached, open: arrived } = gate();
	return runInDurableObject(env.AGENT.getByName(name), (instance: AgentDO) => {
		const self = instance as unknown as Swappable;
		const shards = self.env.SCHEDULER_SHARD;
		let once = false;
		const getByName = (shardName: string) => {
			const shard = shards.getByName(shardName);
			const dealJobIds = async (...args: Parameters<typeof shard.dealJobIds>) => {
				if (!once) {
					once = true;
					arrived();
					await held;
				}
				return shard.dealJobIds(...args);
			};
			// Not withMethods: a stub's other members are remote methods, and .bind would be one too.
			return new Proxy(shard, { get: (t, prop) => (prop === "dealJobIds" ? dealJobIds : Reflect.get(t, prop)) });
		};
		self.env = { ...self.env, SCHEDULER_SHARD: withMethods(shards, { getByName }) };
		return { reached, release };
	});
}

const registryRow = (name: string) =>
	env.DB.prepare("SELECT deleted_at, definition FROM agents WHERE name = ?").bind(name).first<{ deleted_at: number | null; definition: string }>();

const bigPrompt = "Check every dashboard, then every queue, and report what changed. ".repeat(1500);

describe("a deleted API agent", () => {
	it("keeps its registry row without its definition, its history readable, until its retention has passed", async () => {
		useEmulator().enqueue({ text: "done" });
		await createAgent({ name: "gone-kept", retention_days: 7, prompt: bigPrompt });
		const job = await runToRest("gone-kept");
		expect((await registryRow("gone-kept"))?.definition.length).toBeGreaterThan(bigPrompt.length);
		expect((await call("/v1/agents/gone-kept", { method: "DELETE", as: "admin" })).status).toBe(200);
		await settle("gone-kept");

		// Nothing reads a deleted agent's definition from the registry (its object keeps what its
		// history needs: its retention, the hooks of a run still ending): the row keeps its name.
		const row = await registryRow("gone-kept");
		expect(row?.deleted_at).toEqual(expect.any(Number));
		expect(row?.definition.length).toBeLessThan(10);
		expect((await call("/v1/agents/gone-kept")).status).toBe(404);
		expect((await call(`/v1/jobs/${job.id}`)).status).toBe(200);
		const runs = (await (await call("/v1/agents/gone-kept/runs")).json()) as { runs: { job_id: string }[] };
		expect(runs.runs.map((r) => r.job_id)).toEqual([job.id]);
		expect((await call("/v1/agents/gone-kept", { method: "PUT", as: "admin", body: { name: "gone-kept", prompt: "Back?" } })).status).toBe(404);
	});

	it("is forgotten once its retention has passed: no rows, no alarm, no registry row, and its name starts afresh", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "done" });
		await createAgent({ name: "gone-probe", retention_days: 7, prompt: bigPrompt, schedules: { daily: { cron: "0 9 * * *" } } });
		const job = await runToRest("gone-probe");
		await call("/v1/agents/gone-probe/notepad/seen", { method: "PUT", as: "operate", body: { value: "the old agent's" } });
		expect((await call("/v1/agents/gone-probe", { method: "DELETE", as: "admin" })).status).toBe(200);
		await settle("gone-probe");

		expect(await followAlarms("gone-probe", 400)).toBeGreaterThan(0);
		const left = await storageOf("gone-probe");
		// Not one table: an empty schema alone is some 230 KB.
		expect(left.tables).toEqual({});
		expect(left.alarm).toBeNull();
		expect(await registryRow("gone-probe")).toBeNull();
		expect(await env.DB.prepare("SELECT count(*) AS n FROM jobs WHERE agent = 'gone-probe'").first<{ n: number }>()).toEqual({ n: 0 });
		expect((await env.OUTPUT.list({ prefix: "jobs/gone-probe/" })).objects).toEqual([]);
		// A name nothing is kept of answers as one never defined, without waking the object.
		expect((await call("/v1/agents/gone-probe")).status).toBe(404);
		expect((await call("/v1/agents/gone-probe/runs")).status).toBe(404);
		expect((await call(`/v1/jobs/${job.id}`)).status).toBe(404);
		expect((await storageOf("gone-probe")).tables).toEqual(left.tables);

		// Defined again, it is a new agent: it runs, is listed, and has none of the old one's notepad.
		emulator.enqueue({ text: "again" });
		await createAgent({ name: "gone-probe", prompt: "Start over." });
		expect((await call("/v1/agents/gone-probe")).status).toBe(200);
		const again = await runToRest("gone-probe");
		expect(again.status).toBe("completed");
		const runs = (await (await call("/v1/agents/gone-probe/runs")).json()) as { runs: { job_id: string }[] };
		expect(runs.runs.map((r) => r.job_id)).toEqual([again.id]);
		expect(await (await call("/v1/agents/gone-probe/notepad")).json()).toEqual({});
		expect(await registryRow("gone-probe")).toMatchObject({ deleted_at: null });
		const listed = (await (await call("/v1/agents?limit=200")).json()) as { agents: { name: string }[] };
		expect(listed.agents.map((a) => a.name)).toContain("gone-probe");
	});

	it("stores nothing again for a stray call that reaches its forgotten object", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "done" });
		await createAgent({ name: "gone-stray", retention_days: 1 });
		const job = await runToRest("gone-stray");
		expect((await call("/v1/agents/gone-stray", { method: "DELETE", as: "admin" })).status).toBe(200);
		await settle("gone-stray");
		expect(await followAlarms("gone-stray", 400)).toBeGreaterThan(0);
		expect(await storageOf("gone-stray")).toEqual({ tables: {}, alarm: null });
		// What reaches it after its registry row went: the shard's retention notice, which read the row
		// before; reads that passed the registry just before (a job, the runs, the sessions).
		const stub = env.AGENT.getByName("gone-stray");
		await stub.retentionShortened();
		expect(await storageOf("gone-stray")).toEqual({ tables: {}, alarm: null });
		expect(await stub.getJob(job.id)).toBeNull();
		expect(await stub.runs(10)).toEqual([]);
		expect((await stub.sessions(10)).sessions).toEqual([]);
		expect(await stub.manifest(job.id)).toBeNull();
		expect(await storageOf("gone-stray")).toEqual({ tables: {}, alarm: null });
		// Its name still starts afresh.
		await expectDefinedAfresh("gone-stray", emulator);
	});

	it("answers a trigger waiting for job ids when its forget lands as no agent, and keeps nothing of it", async () => {
		const emulator = useEmulator();
		await createAgent({ name: "gone-trigger-wait", retention_days: 1 });
		expect((await call("/v1/agents/gone-trigger-wait", { method: "DELETE", as: "admin" })).status).toBe(200);
		await settle("gone-trigger-wait");
		const stub = env.AGENT.getByName("gone-trigger-wait");
		// A trigger that reached the object (the route's registry read, or its 30 s cache, before the
		// row went) asks the shard for ids; the forget's alarm runs meanwhile.
		const { reached, release } = await holdJobIdDeal("gone-trigger-wait");
		vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 2 * DAY });
		const triggered = stub.trigger("gone-trigger-wait", "api", { kind: "manual", prompt: "Late.", owner: "operator" });
		await reached;
		// Opened inside the object, the gate resumes this test in the object's context: a stub made here.
		expect(await runDurableObjectAlarm(env.AGENT.getByName("gone-trigger-wait"))).toBe(true);
		expect(await storageOf("gone-trigger-wait")).toEqual({ tables: {}, alarm: null });
		release();

		expect(await triggered).toEqual({ refused: { status: 404, message: "no agent named gone-trigger-wait" } });
		await expectForgotten("gone-trigger-wait");
		vi.useRealTimers();
		await expectDefinedAfresh("gone-trigger-wait", emulator);
	});

	it("answers a continue waiting for job ids when its forget lands with the API's 404, and keeps nothing of it", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "done" });
		await createAgent({ name: "gone-continue-wait", retention_days: 1 });
		const job = await runToRest("gone-continue-wait");
		expect((await call("/v1/agents/gone-continue-wait", { method: "DELETE", as: "admin" })).status).toBe(200);
		await settle("gone-continue-wait");
		// The route finds the job's owner in the index before the alarm prunes the job, then the object
		// asks the shard for ids; the alarms that prune the job and forget the agent run meanwhile.
		const { reached, release } = await holdJobIdDeal("gone-continue-wait");
		vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 2 * DAY });
		// Its body read as it comes: the gate, opened inside the object, resumes this test in the object's context.
		const continued = call(`/v1/jobs/${job.id}/continue`, { method: "POST", as: "operate", body: { prompt: "And then?" } }).then(async (res) => ({ status: res.status, error: await errorOf(res) }));
		await reached;
		expect(await followAlarms("gone-continue-wait", 1)).toBeGreaterThan(0);
		expect(await storageOf("gone-continue-wait")).toEqual({ tables: {}, alarm: null });
		release();

		expect(await continued).toEqual({ status: 404, error: { code: "not_found", message: `no job ${job.id}` } });
		await expectForgotten("gone-continue-wait");
		vi.useRealTimers();
		await expectDefinedAfresh("gone-continue-wait", emulator);
	});

	it("is forgotten once the runs it was deleted with have ended: a call waiting for approval, and its queue", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "create_ticket", input: { title: "Disk full" } } });
		await createAgent({ name: "gone-waiting", retention_days: 1, tools: [ticketTool], approval_timeout: "2h", timeout: "3h" });
		const waiting = await runToRest("gone-waiting");
		expect(waiting.status).toBe("approval_pending");
		const queued = [await trigger("gone-waiting"), await trigger("gone-waiting")];
		expect((await call("/v1/agents/gone-waiting", { method: "DELETE", as: "admin" })).status).toBe(200);
		await settle("gone-waiting");
		for (const job of queued) expect((await jobOf("gone-waiting", job.id)).status).toBe("cancelled");
		expect((await jobOf("gone-waiting", waiting.id)).status).toBe("approval_pending");

		// Nobody decides: the call counts as denied at its approval_timeout, the run ends on the model's
		// answer to that, and its history goes at its retention, the agent with it.
		emulator.enqueue({ text: "Not filed." });
		expect(await followAlarms("gone-waiting", 400)).toBeGreaterThan(0);
		await expectForgotten("gone-waiting");
	});

	it("is not wiped when its name was defined again before its history expired", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "old" }, { text: "new" });
		await createAgent({ name: "gone-reborn", retention_days: 7 });
		const old = await runToRest("gone-reborn");
		expect((await call("/v1/agents/gone-reborn", { method: "DELETE", as: "admin" })).status).toBe(200);
		await settle("gone-reborn");
		await createAgent({ name: "gone-reborn", retention_days: 30, prompt: bigPrompt });
		const recent = await runToRest("gone-reborn");

		// Past both runs' retention: each pruned at its own, and the agent itself left as it is.
		expect(await followAlarms("gone-reborn", 400)).toBeGreaterThan(1);
		expect((await call(`/v1/jobs/${old.id}`)).status).toBe(404);
		expect((await call(`/v1/jobs/${recent.id}`)).status).toBe(404);
		const shown = (await (await call("/v1/agents/gone-reborn")).json()) as { definition: { prompt: string; retention_days: number } };
		expect(shown.definition).toMatchObject({ prompt: bigPrompt, retention_days: 30 });
		expect(await registryRow("gone-reborn")).toMatchObject({ deleted_at: null });
		expect((await storageOf("gone-reborn")).tables.agent_state).toBe(1);
		emulator.enqueue({ text: "still here" });
		expect((await runToRest("gone-reborn")).status).toBe("completed");
	});

	it("is not wiped when its name is defined again while the registry is being told to forget it", async () => {
		const emulator = useEmulator();
		await createAgent({ name: "gone-raced", retention_days: 1, prompt: bigPrompt });
		expect((await call("/v1/agents/gone-raced", { method: "DELETE", as: "admin" })).status).toBe(200);
		await settle("gone-raced");
		const stub = env.AGENT.getByName("gone-raced");
		// The registry's delete of the row is held until the name has been created again.
		const { promise: held, open: release } = gate();
		const { promise: reached, open: arrived } = gate();
		await aroundRowDelete("gone-raced", async (run) => {
			arrived();
			await held;
			return run();
		});

		vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 2 * DAY });
		const alarm = runDurableObjectAlarm(stub);
		expect(await Promise.race([reached.then(() => "held"), alarm.then(() => "alarm over")])).toBe("held");
		await createAgent({ name: "gone-raced", prompt: "Made while the old one was being forgotten." });
		release();
		expect(await alarm).toBe(true);

		const shown = (await (await call("/v1/agents/gone-raced")).json()) as { definition: { prompt: string } };
		expect(shown.definition.prompt).toBe("Made while the old one was being forgotten.");
		expect(await registryRow("gone-raced")).toMatchObject({ deleted_at: null });
		expect((await storageOf("gone-raced")).tables.agent_state).toBe(1);
		emulator.enqueue({ text: "runs" });
		expect((await runToRest("gone-raced")).status).toBe("completed");
	});

	it("keeps everything while D1 refuses to delete its registry row, and is forgotten by a later alarm", async () => {
		await createAgent({ name: "gone-d1-down", retention_days: 1, prompt: bigPrompt });
		expect((await call("/v1/agents/gone-d1-down", { method: "DELETE", as: "admin" })).status).toBe(200);
		await settle("gone-d1-down");
		const stub = env.AGENT.getByName("gone-d1-down");
		let refused = 0;
		await aroundRowDelete("gone-d1-down", async () => {
			refused++;
			throw new Error("D1_ERROR: database unavailable");
		});

		vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 2 * DAY });
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		expect(refused).toBe(1);
		// Nothing deleted: with the row kept and the storage gone, a read of the name would make it again.
		const kept = await storageOf("gone-d1-down");
		expect(kept.tables.agent_state).toBe(1);
		expect(kept.alarm).toBe(Date.now() + 3_600_000);
		expect(await registryRow("gone-d1-down")).toMatchObject({ deleted_at: expect.any(Number) });

		await aroundRowDelete("gone-d1-down", (run) => run());
		expect(await followAlarms("gone-d1-down", 1)).toBe(1);
		expect(await storageOf("gone-d1-down")).toEqual({ tables: {}, alarm: null });
		expect(await registryRow("gone-d1-down")).toBeNull();
	});
});
