import { env, runInDurableObject } from "cloudflare:test";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { expect } from "vitest";
import { call } from "./http.ts";

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
