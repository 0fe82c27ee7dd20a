import { env, listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { currentDefinition, readState } from "../../durable-objects/agent/state.ts";
import { triggerJob } from "../../durable-objects/agent/triggers.ts";
import { drawnJobId } from "../../src/jobs/id-blocks.ts";
import { expect } from "vitest";
import { call } from "./http.ts";

/** Defines `name` anew through the API (PUT), as an admin would, and fails the test if it is refused. */
export async function redefineAgent(name: string, definition: Record<string, unknown>): Promise<void> {
	const res = await call(`/v1/agents/${name}`, { method: "PUT", as: "admin", body: { name, prompt: "Do the thing.", ...definition } });
	expect(res.status, await res.clone().text()).toBe(200);
}

/** Defines an agent through the API, as an admin would, and fails the test if it is refused. */
export async function createAgent(definition: Record<string, unknown>): Promise<void> {
	const res = await call("/v1/agents", { method: "POST", as: "admin", body: { prompt: "Do the thing.", ...definition } });
	expect(res.status, await res.clone().text()).toBe(201);
}

export interface Run {
	id: string;
	schedule: string | null;
	source: string;
	scheduled_instant: string | null;
	dispatch: string;
	status: string;
	skip_reason: string | null;
	skipped_count: number | null;
	skipped_from: string | null;
	job_id: string | null;
}

/** The agent's whole ledger, oldest first. */
export async function runsOf(agent: string): Promise<Run[]> {
	const res = await call(`/v1/agents/${agent}/runs?limit=200`);
	expect(res.status).toBe(200);
	const { runs } = (await res.json()) as { runs: Run[] };
	return runs.reverse();
}

/**
 * Runs the agent's alarm work until nothing is due now: starts pending jobs, runs them turn by
 * turn, sends the D1 index its rows. An alarm the runtime already started is joined, not doubled.
 */
export async function settle(agent: string): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(agent), (instance: AgentDO) => AgentDO.settle(instance));
}

/**
 * Runs to rest every agent whose object holds a queued or running job and an alarm to start it. A
 * tick claims for every agent then due, the file's earlier tests' and fleet.yaml's as well as the
 * test's own, and each claim starts by its own alarm up to 5 s on (the start spread), in whichever
 * later test of the file is running then: its model call would take that test's scripted answers
 * and count among its emulator's requests. After each test of a file whose ticks claim runs; it
 * runs them with the test's fakes (an emulator's script used up answers with its demo).
 */
export async function settleClaimedRuns(): Promise<void> {
	for (const id of await listDurableObjectIds(env.AGENT)) {
		await runInDurableObject(env.AGENT.get(id), async (instance: AgentDO, state) => {
			const queued = state.storage.sql.exec("SELECT 1 FROM jobs WHERE status IN ('pending', 'running') LIMIT 1").toArray().length > 0;
			if (queued && (await state.storage.getAlarm()) !== null) await AgentDO.settle(instance);
		});
	}
}

/**
 * Queues a manual run in the agent's object and sets its alarm for now, so the pass that starts it is
 * the alarm's (not a trigger's, which begins one in the request): the runtime fires it, or a test
 * runs it with runDurableObjectAlarm.
 */
export async function queueForAlarm(agent: string, prompt: string): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(agent), async (_i: AgentDO, storage) => {
		const sql = storage.storage.sql;
		const state = readState(sql)!;
		triggerJob(sql, { agent: currentDefinition(state)!, state, definitionRevision: state.definitionRevision!, now: Date.now(), drawJobId: drawnJobId }, { kind: "manual", prompt, owner: "test" });
		await storage.storage.setAlarm(Date.now());
	});
}

type Swappable = { env: Env };

/** Every D1 statement from the agent's object fails from here on, as in an outage (until restoreEnv). */
export async function breakD1(agent: string): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(agent), (instance: AgentDO) => {
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
}

/** Gives the agent's object the test's bindings back, after breakD1 or another swap. */
export async function restoreEnv(agent: string): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(agent), (instance: AgentDO) => {
		(instance as unknown as Swappable).env = env;
	});
}
