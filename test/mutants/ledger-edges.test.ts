import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { endedRecord, storeRun } from "../helpers/jobs.ts";

/** The agent's ledger rows as GET /v1/agents/:agent/runs lists them: job, status and error. */
async function ledger(agent: string): Promise<{ job_id: string | null; status: string; error: string | null }[]> {
	const res = await call(`/v1/agents/${agent}/runs`);
	expect(res.status).toBe(200);
	return ((await res.json()) as { runs: { job_id: string | null; status: string; error: string | null }[] }).runs.map(({ job_id, status, error }) => ({ job_id, status, error }));
}

// ledger.ts syncOccurrenceWithJob: a run's ledger row in Hermes' vocabulary (claimed, running,
// completed, failed, skipped, unknown), kept in step with its job.
describe("a run's ledger row", () => {
	it("says when its run started and finished, as its job does (Hermes' execution row)", async () => {
		const name = "ledger-times";
		await createAgent({ name });
		const job = endedRecord(name, new Date(Date.now() - 60_000));
		await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => storeRun(state.storage.sql, job));
		const res = await call(`/v1/agents/${name}/runs`);
		expect(res.status).toBe(200);
		const { runs } = (await res.json()) as { runs: { job_id: string; started_at: string | null; finished_at: string | null }[] };
		expect(runs).toMatchObject([{ job_id: job.id, started_at: job.started_at, finished_at: job.finished_at }]);
		expect(job.started_at).not.toBeNull();
		expect(job.finished_at).not.toBeNull();
	});

	it("reads failed with the error cancelled for a cancelled job, and unknown (never success) for an indeterminate one", async () => {
		const name = "ledger-ends";
		await createAgent({ name });
		const at = Date.now() - 60_000;
		const cancelled = endedRecord(name, new Date(at), "cancelled");
		const indeterminate = { ...endedRecord(name, new Date(at + 1_000), "indeterminate"), error: { type: "indeterminate", message: "the run stopped while tool create_ticket was executing; its effect is unknown" } };
		await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => {
			storeRun(state.storage.sql, cancelled);
			storeRun(state.storage.sql, indeterminate);
		});
		expect(await ledger(name)).toEqual([
			{ job_id: indeterminate.id, status: "unknown", error: indeterminate.error.message },
			{ job_id: cancelled.id, status: "failed", error: "cancelled" },
		]);
	});
});
