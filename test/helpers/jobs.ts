import { env, runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { putJob } from "../../durable-objects/agent/jobs.ts";
import { insertOccurrence } from "../../durable-objects/agent/ledger.ts";
import { createJob, transition, type FinalStatus, type JobRecord } from "../../src/jobs/model.ts";
import { settle } from "./agents.ts";
import { call } from "./http.ts";

/** Triggers a manual run through the API and returns the pending job. */
export async function trigger(agent: string, prompt = "Go."): Promise<JobRecord> {
	const res = await call(`/v1/agents/${agent}/jobs`, { method: "POST", as: "operate", body: { prompt } });
	expect(res.status, await res.clone().text()).toBe(201);
	return res.json();
}

export async function jobOf(agent: string, id: string): Promise<JobRecord> {
	const job = await runInDurableObject(env.AGENT.getByName(agent), (instance: AgentDO) => instance.getJob(id));
	if (!job) throw new Error(`no job ${id}`);
	return job;
}

/**
 * Stores a job record as it is, without the status rules (a state a crash or an older version may
 * leave), if it is newer than the agent's; whether it was.
 */
export async function saveJob(agent: string, job: JobRecord): Promise<boolean> {
	return runInDurableObject(env.AGENT.getByName(agent), (instance: AgentDO) => AgentDO.saveJob(instance, job));
}

/** Triggers a run and lets the agent's alarm work until nothing more is due; returns the job then. */
export async function runToRest(agent: string, prompt = "Go."): Promise<JobRecord> {
	const job = await trigger(agent, prompt);
	await settle(agent);
	return jobOf(agent, job.id);
}

/** The job's JSONL lines, parsed, as a user downloads them (from R2 once the job has ended). */
export async function outputOf(_agent: string, id: string): Promise<Record<string, unknown>[]> {
	const res = await call(`/v1/jobs/${id}/output`);
	expect(res.status).toBe(200);
	const text = await res.text();
	return text === "" ? [] : text.trimEnd().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A manual job's records as it goes: created, started and ended (`status`) at `at`; to seed an agent's SQLite or D1's index. */
export function lifecycleRecords(agent: string, at: Date, status: FinalStatus = "completed"): { pending: JobRecord; running: JobRecord; ended: JobRecord } {
	const pending = createJob({ agent, trigger_type: "manual", definition_revision: "r" }, at);
	const running = transition(pending, "running", { reason: "start", at });
	const ended = transition(running, status, { reason: "end", at, ...(status === "completed" ? {} : { error: { type: "test", message: "boom" } }) });
	return { pending, running, ended };
}

/** A job record that was created, started and ended at `at`: history to seed an agent's SQLite with. */
export const endedRecord = (agent: string, at: Date, status: FinalStatus = "completed"): JobRecord => lifecycleRecords(agent, at, status).ended;

/**
 * The `n`th of many ended jobs seeded at once, its id's suffix `n` in base 36: drawn at random, two
 * of a thousand ids of one day meet about once in a hundred runs (the draws' slot holds ~128 million
 * a day), and the second would be stored over the first.
 */
export function numberedRecord(agent: string, at: Date, n: number, status: FinalStatus = "completed"): JobRecord {
	const job = endedRecord(agent, at, status);
	return { ...job, id: `${job.id.slice(0, -6)}${n.toString(36).padStart(6, "0")}` };
}

/** Stores `job` in an agent's SQLite as a manual run does: its ledger row first, then the record. */
export function storeRun(sql: SqlStorage, job: JobRecord): void {
	insertOccurrence(sql, { schedule: null, source: "manual", scheduledInstant: null, dispatch: "manual", claimedAt: Date.parse(job.created_at), status: "claimed", jobId: job.id });
	putJob(sql, job, Date.now());
}
