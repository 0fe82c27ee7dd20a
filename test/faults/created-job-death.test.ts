import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import type { JobRecord } from "../../src/jobs/model.ts";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";
import { killSwitch, type KillSwitch } from "../helpers/kill.ts";

afterEach(() => {
	vi.restoreAllMocks();
});

type Internals = { ctx: DurableObjectState };

/**
 * The agent's object dies the first time it asks for its alarm while a job other than `from` is
 * stored unfinished: after the turn that wrote the job, before anything after it that turn did not
 * already do. A real `ctx.abort()`, its writes so far made durable first (kill.ts). Once: a fresh
 * instance has the real storage.
 */
async function dieAfterJobWritten(agent: string, from = ""): Promise<KillSwitch> {
	const switcher = await killSwitch(agent);
	await runInDurableObject(env.AGENT.getByName(agent), (instance: AgentDO) => {
		const { ctx } = instance as unknown as Internals;
		const storage = ctx.storage as { getAlarm: DurableObjectStorage["getAlarm"] };
		const real = storage.getAlarm.bind(ctx.storage);
		storage.getAlarm = (...args) => {
			const live = ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM jobs WHERE status IN ('pending', 'running') AND id <> ?", from).one().n;
			return switcher.fired > 0 || live === 0 ? real(...args) : switcher.kill();
		};
	});
	return switcher;
}

/** What a fresh instance of the object holds: its jobs and whether an alarm will wake it. */
async function stored(agent: string): Promise<{ jobs: { id: string; status: string }[]; alarm: number | null }> {
	return runInDurableObject(env.AGENT.getByName(agent), async (_i: AgentDO, state) => ({
		jobs: state.storage.sql.exec<{ id: string; status: string }>("SELECT id, status FROM jobs ORDER BY created_at, id").toArray(),
		alarm: await state.storage.getAlarm(),
	}));
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
describe("the agent's object dying just after a request wrote its job", () => {
	it("a trigger's job is woken by its alarm and runs once; the keyed retry answers with it", async () => {
		const name = "dies-triggering";
		useEmulator().enqueue({ text: "Ran once." });
		await createAgent({ name });
		const dying = await dieAfterJobWritten(name);
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
		const dying = await dieAfterJobWritten(name, first.id);
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
});
