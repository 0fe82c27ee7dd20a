import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { putJob } from "../../durable-objects/agent/jobs.ts";
import { insertOccurrence } from "../../durable-objects/agent/ledger.ts";
import { createJob, type JobRecord } from "../../src/jobs/model.ts";
import { createAgent, queueForAlarm } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";
import { killSwitch, type KillSwitch } from "../helpers/kill.ts";
import { ticketTool } from "../helpers/tools.ts";

afterEach(() => {
	vi.restoreAllMocks();
	vi.useRealTimers();
});

type Internals = { ctx: DurableObjectState; env: Env };

/**
 * The agent's object dies the first time it asks for its alarm once `due` (a count in SQL) is above
 * zero, or calls its scheduler shard or sends D1 a batch then: after the write, at the first point
 * the code before this change reached before setting the alarm. A real `ctx.abort()`, its writes
 * so far made durable first (kill.ts), so what this checks is that the alarm is set before any of
 * those; that the write and the alarm set in its turn commit as one is the output gate's promise
 * (as for a claim and its start alarm), which a kill after `sync()` cannot show.
 * Once: a fresh instance has the real storage and bindings.
 */
async function dieAfterWrite(agent: string, due: string, ...params: SqlStorageValue[]): Promise<KillSwitch> {
	const switcher = await killSwitch(agent);
	await runInDurableObject(env.AGENT.getByName(agent), (instance: AgentDO) => {
		const self = instance as unknown as Internals;
		const { ctx } = self;
		const written = () => switcher.fired === 0 && ctx.storage.sql.exec<{ n: number }>(`SELECT (${due}) AS n`, ...params).one().n > 0;
		const storage = ctx.storage as { getAlarm: DurableObjectStorage["getAlarm"] };
		const real = storage.getAlarm.bind(ctx.storage);
		storage.getAlarm = (...args) => (written() ? switcher.kill() : real(...args));
		const shards = self.env.SCHEDULER_SHARD;
		const shardOf = (name: string) => {
			const stub = shards.getByName(name) as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
			return new Proxy(stub, { get: (target, prop) => (...a: unknown[]) => (written() ? switcher.kill() : target[prop as string]!(...a)) });
		};
		const db = self.env.DB;
		const batch: D1Database["batch"] = (statements) => (written() ? switcher.kill() : db.batch(statements));
		const DB = new Proxy(db, { get: (target, prop) => (prop === "batch" ? batch : (Reflect.get(target, prop) as (...a: unknown[]) => unknown).bind(target)) });
		self.env = { ...self.env, DB, SCHEDULER_SHARD: { ...shards, getByName: shardOf } as unknown as Env["SCHEDULER_SHARD"] };
	});
	return switcher;
}

/** A job other than `except` that is queued or under way. */
const LIVE_JOB = "SELECT count(*) FROM jobs WHERE status IN ('pending', 'running') AND id <> ?";

/** What a fresh instance of the object holds: its jobs and whether an alarm will wake it. */
async function stored(agent: string): Promise<{ jobs: { id: string; status: string }[]; alarm: number | null }> {
	return runInDurableObject(env.AGENT.getByName(agent), async (_i: AgentDO, state) => ({
		jobs: state.storage.sql.exec<{ id: string; status: string }>("SELECT id, status FROM jobs ORDER BY created_at, id").toArray(),
		alarm: await state.storage.getAlarm(),
	}));
}

/** The job's status in the D1 index, which lists and the dashboard read. */
async function indexed(id: string): Promise<string | undefined> {
	return (await env.DB.prepare("SELECT status FROM jobs WHERE id = ?").bind(id).first<{ status: string }>())?.status;
}

/**
 * A new agent with a run queued just before its pause, whose start the pause held (its pass started
 * nothing): the run, pending in the object and in the D1 index.
 */
async function pausedWithQueuedRun(name: string): Promise<{ id: string; status: string }> {
	await createAgent({ name });
	await queueForAlarm(name, "Go.");
	expect((await call(`/v1/agents/${name}/pause`, { method: "POST", as: "operate" })).status).toBe(200);
	expect(await runDurableObjectAlarm(env.AGENT.getByName(name))).toBe(true);
	const [job] = (await stored(name)).jobs;
	expect(job?.status).toBe("pending");
	expect(await indexed(job!.id)).toBe("pending");
	return job!;
}

/**
 * What a cancel cut off by the object's death leaves: the job cancelled in the object, an alarm set
 * within a heartbeat (`why`), and the index told once that alarm runs.
 */
async function cancelReachesIndexByAlarm(name: string, id: string, why: string): Promise<void> {
	const after = await stored(name);
	expect(after.jobs).toEqual([{ id, status: "cancelled" }]);
	expect(after.alarm, why).not.toBeNull();
	expect(after.alarm! - Date.now(), "the alarm's delay (ms)").toBeLessThanOrEqual(30_000);
	expect(await runDurableObjectAlarm(env.AGENT.getByName(name))).toBe(true);
	expect(await indexed(id)).toBe("cancelled");
}

async function jobStatus(id: string): Promise<string> {
	const res = await call(`/v1/jobs/${id}`);
	expect(res.status, await res.clone().text()).toBe(200);
	return ((await res.json()) as JobRecord).status;
}

function quiet(): void {
	vi.spyOn(console, "error").mockImplementation(() => {});
	vi.spyOn(console, "warn").mockImplementation(() => {});
}

// A job a request creates starts in that instance, and only its pass set an alarm, turns after the
// job was written: an object dying between the two kept a running job that nothing would ever wake
// (an agent without schedules has no tick calling it again), unlisted, as the request failed before
// indexing it; the retry of a keyed trigger then answered with that job, which never ran.
describe("the agent's object dying just after a request wrote work that is due", () => {
	it("a trigger's job is woken by its alarm and runs once; the keyed retry answers with it", async () => {
		const name = "dies-triggering";
		useEmulator().enqueue({ text: "Ran once." });
		await createAgent({ name });
		const dying = await dieAfterWrite(name, LIVE_JOB, "");
		quiet();
		const send = () => call(`/v1/agents/${name}/jobs`, { method: "POST", as: "operate", body: { prompt: "Go." }, headers: { "idempotency-key": "deploy-77" } });
		expect((await send()).status).toBe(500);
		expect(dying.fired).toBe(1);
		const after = await stored(name);
		const [kept] = after.jobs;
		expect(kept?.status).toMatch(/^(pending|running)$/);
		expect(after.alarm, "an alarm set to wake the job").not.toBeNull();
		// Within a heartbeat, as the job's pass would have set it.
		expect(after.alarm! - Date.now(), "the alarm's delay (ms)").toBeLessThanOrEqual(30_000);

		expect(await runDurableObjectAlarm(env.AGENT.getByName(name)), "an alarm set to wake the job").toBe(true);
		expect(await jobStatus(kept!.id)).toBe("completed");
		const retried = await send();
		expect(retried.status).toBe(200);
		expect(((await retried.json()) as JobRecord).id).toBe(kept!.id);
		expect((await stored(name)).jobs).toEqual([{ id: kept!.id, status: "completed" }]);
	});

	it("a continue's job is woken by its alarm and runs", async () => {
		const name = "dies-continuing";
		const emulator = useEmulator();
		emulator.enqueue({ text: "First." });
		await createAgent({ name });
		const first = await runToRest(name);
		expect(first.status).toBe("completed");
		emulator.enqueue({ text: "Continued." });
		const dying = await dieAfterWrite(name, LIVE_JOB, first.id);
		quiet();
		const res = await call(`/v1/jobs/${first.id}/continue`, { method: "POST", as: "operate", body: { prompt: "And then?" } });
		expect(res.status).toBe(500);
		expect(dying.fired).toBe(1);
		const after = await stored(name);
		const kept = after.jobs.find((j) => j.id !== first.id);
		expect(kept?.status).toMatch(/^(pending|running)$/);
		// Within a heartbeat: the alarm the first job's pass left waits for its retention, days out.
		expect(after.alarm! - Date.now(), "the alarm's delay (ms)").toBeLessThanOrEqual(30_000);

		expect(await runDurableObjectAlarm(env.AGENT.getByName(name)), "an alarm set to wake the job").toBe(true);
		expect(await jobStatus(kept!.id)).toBe("completed");
		expect((await stored(name)).jobs.map((j) => j.status)).toEqual(["completed", "completed"]);
	});

	it("an approval's decision: the resumed job is woken by its alarm, not at the approval's expiry", async () => {
		const name = "dies-deciding";
		const emulator = useEmulator();
		emulator.enqueue({ tool_use: { name: "create_ticket", input: { title: "one" } } }, { text: "No ticket then." });
		await createAgent({ name, tools: [ticketTool] });
		const job = await runToRest(name);
		expect(job.status).toBe("approval_pending");
		const dying = await dieAfterWrite(name, LIVE_JOB, "");
		quiet();
		// Denied: the job goes on to its next model call, no tool call in flight when the object dies.
		const res = await call(`/v1/jobs/${job.id}/approval`, { method: "POST", as: "operate", body: { decision: "deny" } });
		expect(res.status).toBe(500);
		expect(dying.fired).toBe(1);
		const after = await stored(name);
		expect(after.jobs).toEqual([{ id: job.id, status: "running" }]);
		expect(after.alarm, "an alarm set to wake the job").not.toBeNull();
		// Within a heartbeat: the alarm the job had waits for the approval's expiry, hours out.
		expect(after.alarm! - Date.now(), "the alarm's delay (ms)").toBeLessThanOrEqual(30_000);

		expect(await runDurableObjectAlarm(env.AGENT.getByName(name))).toBe(true);
		expect(await jobStatus(job.id)).toBe("completed");
	});

	it("a resume: the runs the pause held are woken by its alarm", async () => {
		const name = "dies-resuming";
		useEmulator().enqueue({ text: "Held, then ran." });
		const job = await pausedWithQueuedRun(name);
		const dying = await dieAfterWrite(name, "SELECT count(*) FROM jobs, agent_state WHERE jobs.status = 'pending' AND agent_state.paused_at IS NULL");
		quiet();
		expect((await call(`/v1/agents/${name}/resume`, { method: "POST", as: "operate" })).status).toBe(500);
		expect(dying.fired).toBe(1);
		const after = await stored(name);
		expect(after.jobs).toEqual([{ id: job.id, status: "pending" }]);
		expect(after.alarm, "an alarm set to start the held run").not.toBeNull();
		expect(after.alarm! - Date.now(), "the alarm's delay (ms)").toBeLessThanOrEqual(30_000);

		expect(await runDurableObjectAlarm(env.AGENT.getByName(name))).toBe(true);
		expect(await jobStatus(job.id)).toBe("completed");
	});

	it("a definition's save: its sync to the shard and the registry is woken by its alarm", async () => {
		const name = "dies-defining";
		await createAgent({ name });
		const dying = await dieAfterWrite(name, "SELECT count(*) FROM registry_sync");
		quiet();
		const put = await call(`/v1/agents/${name}`, { method: "PUT", as: "admin", body: { name, prompt: "Do the other thing.", schedules: { daily: { cron: "0 9 * * *" } } } });
		expect(put.status).toBe(500);
		expect(dying.fired).toBe(1);
		const after = await stored(name);
		expect(after.alarm, "an alarm set to finish the sync").not.toBeNull();
		expect(after.alarm! - Date.now(), "the alarm's delay (ms)").toBeLessThanOrEqual(5_000);

		// The alarm as the runtime fires it: at its time, when the sync is due.
		vi.useFakeTimers({ toFake: ["Date"], now: after.alarm! });
		expect(await runDurableObjectAlarm(env.AGENT.getByName(name))).toBe(true);
		const registered = await env.DB.prepare("SELECT definition FROM agents WHERE name = ?").bind(name).first<{ definition: string }>();
		expect(JSON.parse(registered!.definition)).toMatchObject({ prompt: "Do the other thing.", schedules: { daily: { cron: "0 9 * * *" } } });
	});

	it("a queued run's cancel: its index row is woken by its alarm, not left pending", async () => {
		const name = "dies-cancelling";
		const job = await pausedWithQueuedRun(name);
		const dying = await dieAfterWrite(name, "SELECT count(*) FROM jobs WHERE status = 'cancelled'");
		quiet();
		expect((await call(`/v1/jobs/${job.id}/cancel`, { method: "POST", as: "operate" })).status).toBe(500);
		expect(dying.fired).toBe(1);
		await cancelReachesIndexByAlarm(name, job.id, "an alarm set to send the index its row");
	});

	it("an agent's delete: its queued run's cancel reaches the index by its alarm", async () => {
		const name = "dies-deleting";
		const job = await pausedWithQueuedRun(name);
		const dying = await dieAfterWrite(name, "SELECT count(*) FROM agent_state WHERE deleted_at IS NOT NULL");
		quiet();
		expect((await call(`/v1/agents/${name}`, { method: "DELETE", as: "admin" })).status).toBe(500);
		expect(dying.fired).toBe(1);
		await cancelReachesIndexByAlarm(name, job.id, "an alarm set to finish the delete");
		// The sync is due a few seconds after the delete: the pass left the alarm at that time.
		vi.useFakeTimers({ toFake: ["Date"], now: (await stored(name)).alarm! });
		expect(await runDurableObjectAlarm(env.AGENT.getByName(name))).toBe(true);
		const registered = await env.DB.prepare("SELECT deleted_at FROM agents WHERE name = ?").bind(name).first<{ deleted_at: number | null }>();
		expect(registered?.deleted_at, "the registry's row marked deleted").not.toBeNull();
	});
	it("a deploy's drop from fleet.yaml: its queued run's cancel reaches the index by its alarm", async () => {
		// A file agent this deployment's fleet.yaml no longer has, with a run queued (held by a pause).
		const name = "dies-dropped";
		const stub = env.AGENT.getByName(name);
		await stub.tick(name, "file", Date.now());
		const queued = createJob({ agent: name, trigger_type: "manual", definition_revision: "r" }, new Date());
		await runInDurableObject(stub, (_i: AgentDO, state) => {
			insertOccurrence(state.storage.sql, { schedule: null, source: "manual", scheduledInstant: null, dispatch: "manual", claimedAt: Date.now(), status: "claimed", jobId: queued.id });
			putJob(state.storage.sql, queued, Date.now());
		});
		const dying = await dieAfterWrite(name, "SELECT count(*) FROM jobs WHERE status = 'cancelled'");
		quiet();
		// What its shard's call meets (the shard tries again at its next tick).
		expect(await env.AGENT.getByName(name).dropFromFleet(null).catch((e: unknown) => e)).toBeInstanceOf(Error);
		expect(dying.fired).toBe(1);
		await cancelReachesIndexByAlarm(name, queued.id, "an alarm set to send the index its row");
	});

	it("a cancel of a job waiting for approval: its end reaches the index by its alarm, not at the approval's expiry", async () => {
		const name = "dies-cancelling-waiting";
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "one" } } });
		await createAgent({ name, tools: [ticketTool] });
		const job = await runToRest(name);
		expect(job.status).toBe("approval_pending");
		expect(await indexed(job.id)).toBe("approval_pending");
		const dying = await dieAfterWrite(name, "SELECT count(*) FROM jobs WHERE status = 'cancelled'");
		quiet();
		expect((await call(`/v1/jobs/${job.id}/cancel`, { method: "POST", as: "operate" })).status).toBe(500);
		expect(dying.fired).toBe(1);
		// Within a heartbeat: the alarm the job had waits for the approval's expiry, hours out.
		await cancelReachesIndexByAlarm(name, job.id, "an alarm set to send the index its row");
	});
});
