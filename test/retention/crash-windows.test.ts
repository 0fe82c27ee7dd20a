import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { endedRecord, runToRest, storeRun } from "../helpers/jobs.ts";
import { killDuring, recover } from "../helpers/kill.ts";
import { jobRowsOf } from "../helpers/sql.ts";
import { agentWithVars } from "../helpers/vars.ts";

const DAY = 86_400_000;

type Internals = { env: Env; passes: { lastPrune: number } };

/** Moves a job, its record and its ledger row `days` into the past. */
async function age(agent: string, jobId: string, days: number): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) => {
		const shift = days * DAY;
		const row = state.storage.sql.exec<{ record: string }>("SELECT record FROM jobs WHERE id = ?", jobId).one();
		const record = JSON.parse(row.record) as Record<string, unknown>;
		for (const field of ["created_at", "started_at", "finished_at"]) {
			if (typeof record[field] === "string") record[field] = new Date(Date.parse(record[field] as string) - shift).toISOString();
		}
		state.storage.sql.exec("UPDATE jobs SET created_at = created_at - ?, record = ? WHERE id = ?", shift, JSON.stringify(record), jobId);
		state.storage.sql.exec("UPDATE occurrences SET claimed_at = claimed_at - ?1, started_at = started_at - ?1, finished_at = finished_at - ?1 WHERE job_id = ?2", shift, jobId);
	});
}

/** An agent keeping jobs 7 days, with one run ten days old and one of today: their ids. */
async function oldAndRecent(name: string): Promise<{ old: string; recent: string }> {
	useEmulator().enqueue({ text: "old" }, { text: "new" });
	await createAgent({ name, retention_days: 7 });
	const old = await runToRest(name);
	const recent = await runToRest(name);
	await age(name, old.id, 10);
	return { old: old.id, recent: recent.id };
}

/** The keys R2 holds under the job's output key and prefix. */
async function r2Keys(agent: string, jobId: string): Promise<string[]> {
	const listed = await env.OUTPUT.list({ prefix: `jobs/${agent}/${jobId}` });
	return listed.objects.map((o) => o.key);
}

/**
 * What a user sees: every job the agent's list shows answers GET /v1/jobs/:id and its output (200),
 * none 404s or 500s. The ids listed.
 */
async function listedJobsAnswer(agent: string): Promise<string[]> {
	const { jobs } = (await (await call(`/v1/jobs?agent=${agent}`)).json()) as { jobs: { id: string }[] };
	for (const { id } of jobs) {
		expect((await call(`/v1/jobs/${id}`)).status, `GET /v1/jobs/${id}`).toBe(200);
		const output = await call(`/v1/jobs/${id}/output`);
		expect(output.status, `GET /v1/jobs/${id}/output: ${await output.clone().text()}`).toBe(200);
	}
	return jobs.map((j) => j.id);
}

/** Runs the agent's next pass now, with its hourly prune due (as a fresh instance's is). */
async function passWithPrune(agent: string, swap?: (bucket: R2Bucket) => R2Bucket): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(agent), async (instance: AgentDO) => {
		const self = instance as unknown as Internals;
		self.passes.lastPrune = 0;
		if (swap) self.env = { ...self.env, OUTPUT: swap(env.OUTPUT) };
		await instance.alarm();
	});
}

/** The bucket with `delete` failing as R2 would: `after` it deleted (its answer lost), or `before`. */
function failingDelete(when: "before" | "after"): (bucket: R2Bucket) => R2Bucket {
	return (bucket) =>
		new Proxy(bucket, {
			get: (target, prop) => {
				const value = Reflect.get(target, prop) as unknown;
				if (prop !== "delete") return typeof value === "function" ? value.bind(target) : value;
				return async (keys: string | string[]) => {
					if (when === "after") await target.delete(keys);
					throw new Error("R2: we encountered an internal error, please try again");
				};
			},
		});
}

describe("a prune whose R2 delete fails", () => {
	it("once R2 has deleted the output (its answer lost): no job is listed whose output 404s, and the next prune leaves nothing", async () => {
		const { old, recent } = await oldAndRecent("r2-answer-lost");
		await passWithPrune("r2-answer-lost", failingDelete("after"));
		// Until the next prune (within the hour), every job listed answers, its output too.
		expect(await listedJobsAnswer("r2-answer-lost")).not.toContain(undefined);
		await runInDurableObject(env.AGENT.getByName("r2-answer-lost"), (instance: AgentDO) => {
			(instance as unknown as Internals).env = env;
		});
		await passWithPrune("r2-answer-lost");
		expect(await listedJobsAnswer("r2-answer-lost")).toEqual([recent]);
		expect((await call(`/v1/jobs/${old}`)).status).toBe(404);
		expect(await r2Keys("r2-answer-lost", old)).toEqual([]);
		expect(await r2Keys("r2-answer-lost", recent)).toEqual([`jobs/r2-answer-lost/${recent}.jsonl`]);
	});

	it("before deleting anything, for an agent nothing else wakes: its alarm stays, and its next prune leaves no output in R2", async () => {
		await createAgent({ name: "r2-down-alone", retention_days: 7 });
		// A job of the agent's, ended ten days ago, with its output in R2; nothing else.
		const job = await runInDurableObject(env.AGENT.getByName("r2-down-alone"), async (_i: AgentDO, state) => {
			const record = endedRecord("r2-down-alone", new Date(Date.now() - 10 * DAY));
			storeRun(state.storage.sql, record);
			state.storage.sql.exec("INSERT INTO output_state (job_id, flushed_line, output_key, lines, bytes) VALUES (?, 1, ?, 1, 3)", record.id, `jobs/r2-down-alone/${record.id}.jsonl`);
			return record;
		});
		await env.OUTPUT.put(`jobs/r2-down-alone/${job.id}.jsonl`, "{}\n");
		await env.OUTPUT.put(`jobs/r2-down-alone/${job.id}/output.log`, "x\n");
		await passWithPrune("r2-down-alone", failingDelete("before"));
		expect(await listedJobsAnswer("r2-down-alone")).not.toContain(undefined);
		// Something still wakes the object for the output it holds: an alarm, within the hour.
		const alarm = await runInDurableObject(env.AGENT.getByName("r2-down-alone"), (_i: AgentDO, state) => state.storage.getAlarm());
		expect(alarm).not.toBeNull();
		expect(alarm!).toBeLessThanOrEqual(Date.now() + 3600_000);

		// R2 is back at that alarm (a fresh instance, the deployment's bindings).
		await runInDurableObject(env.AGENT.getByName("r2-down-alone"), (instance: AgentDO) => {
			const self = instance as unknown as Internals;
			self.env = env;
			self.passes.lastPrune = 0;
		});
		expect(await runDurableObjectAlarm(env.AGENT.getByName("r2-down-alone"))).toBe(true);
		expect(await listedJobsAnswer("r2-down-alone")).toEqual([]);
		expect((await call(`/v1/jobs/${job.id}`)).status).toBe(404);
		expect(await r2Keys("r2-down-alone", job.id)).toEqual([]);
	});
});

describe("the agent's object dying in a prune", () => {
	for (const when of ["before", "after"] as const) {
		it(`${when} R2 deletes the output: no job is listed whose record or output 404s, and the next alarm leaves nothing in R2`, async () => {
			const name = `prune-killed-${when}`;
			const { old, recent } = await oldAndRecent(name);
			const killed = await killDuring(name, "OUTPUT", "delete", when);
			await runInDurableObject(env.AGENT.getByName(name), (instance: AgentDO) => {
				(instance as unknown as Internals).passes.lastPrune = 0;
			});
			await expect(runInDurableObject(env.AGENT.getByName(name), (instance: AgentDO) => instance.alarm())).rejects.toThrow();
			expect(killed.fired).toBe(1);
			// Between the death and the alarm's retry.
			expect(await listedJobsAnswer(name)).not.toContain(undefined);
			await recover(name);
			expect(await listedJobsAnswer(name)).toEqual([recent]);
			expect((await call(`/v1/jobs/${old}`)).status).toBe(404);
			expect(await r2Keys(name, old)).toEqual([]);
			expect(await r2Keys(name, recent)).toEqual([`jobs/${name}/${recent}.jsonl`]);
		});
	}
});

/**
 * Runs the agent's alarms until it sets none that is due (at most `limit`), its R2 and D1 calls
 * counted as the platform counts an invocation's subrequests: a D1 statement when it runs (not when
 * prepared or bound), a batch once, every R2 call. The calls of each alarm run.
 */
async function countedAlarmRuns(agent: string, limit: number): Promise<number[]> {
	const stub = env.AGENT.getByName(agent);
	let calls = 0;
	const counted = <F extends (...a: never[]) => unknown>(f: F): F =>
		((...args: Parameters<F>) => {
			calls++;
			return f(...args);
		}) as F;
	const countedStatement = (statement: D1PreparedStatement): D1PreparedStatement => {
		for (const method of ["run", "all", "first", "raw"] as const) {
			(statement as unknown as Record<string, unknown>)[method] = counted((statement[method] as (...a: never[]) => unknown).bind(statement));
		}
		const bind = statement.bind.bind(statement);
		statement.bind = (...values: unknown[]) => countedStatement(bind(...values));
		return statement;
	};
	const countedBinding = <B extends object>(binding: B): B =>
		new Proxy(binding, {
			get: (target, prop) => {
				const value = Reflect.get(target, prop) as unknown;
				if (typeof value !== "function") return value;
				if (prop === "prepare") return (query: string) => countedStatement((target as unknown as D1Database).prepare(query));
				return counted((value as (...a: never[]) => unknown).bind(target));
			},
		});
	await runInDurableObject(stub, (instance: AgentDO, state) => {
		const self = instance as unknown as Internals;
		self.env = { ...self.env, OUTPUT: countedBinding(self.env.OUTPUT), DB: countedBinding(self.env.DB) };
		self.passes.lastPrune = 0;
		return state.storage.setAlarm(Date.now());
	});
	const perRun: number[] = [];
	for (let run = 0; run < limit && (await runDurableObjectAlarm(stub)); run++) {
		perRun.push(calls);
		calls = 0;
	}
	return perRun;
}

describe("a retention backlog larger than an invocation's subrequests", () => {
	for (const kind of ["consolidated", "chunked"] as const) {
		it(`is pruned over alarms, each within SUBREQUEST_LIMIT's R2 and D1 calls, every ${kind} output deleted once it is unlisted`, async () => {
			const name = `prune-budget-${kind}`;
			await createAgent({ name, retention_days: 7 });
			const stub = env.AGENT.getByName(name);
			// Consolidated: 120 jobs, one object each. Chunked (R2 took chunks but never the whole, nor is
			// it up now: the prefix is listed): 12 jobs, two chunks each.
			const count = kind === "consolidated" ? 120 : 12;
			const ids = await runInDurableObject(stub, (_i: AgentDO, state) => {
				const made: string[] = [];
				for (let i = 0; i < count; i++) {
					const job = endedRecord(name, new Date(Date.now() - 10 * DAY - i * 60_000));
					storeRun(state.storage.sql, job);
					if (kind === "chunked") state.storage.sql.exec("INSERT INTO output_state (job_id, flushed_line) VALUES (?, 2)", job.id);
					made.push(job.id);
				}
				return made;
			});
			for (const id of ids) {
				if (kind === "consolidated") await env.OUTPUT.put(`jobs/${name}/${id}.jsonl`, "{}\n");
				else for (const lines of ["000000001-000000001", "000000002-000000002"]) await env.OUTPUT.put(`jobs/${name}/${id}/lines-${lines}.jsonl`, "{}\n");
			}
			await agentWithVars(name, { SUBREQUEST_LIMIT: "10" });
			const perRun = await countedAlarmRuns(name, 60);
			expect(Math.max(...perRun), `R2 and D1 calls of each alarm run: ${perRun.join(", ")}`).toBeLessThanOrEqual(10);
			const left = await runInDurableObject(stub, (_i: AgentDO, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM jobs").one().n);
			expect(left).toBe(0);
			expect((await env.OUTPUT.list({ prefix: `jobs/${name}/` })).objects).toEqual([]);
			expect(await listedJobsAnswer(name)).toEqual([]);
		});
	}
});

describe("a job past retention whose output R2 took only now (R2 was down since it ended)", () => {
	it("is pruned whole in the pass that puts its output: no row of it is left, nor its output in R2", async () => {
		const name = "late-output";
		await createAgent({ name, retention_days: 7 });
		const stub = env.AGENT.getByName(name);
		const job = await runInDurableObject(stub, (instance: AgentDO, state) => {
			const record = endedRecord(name, new Date(Date.now() - 10 * DAY));
			storeRun(state.storage.sql, record);
			AgentDO.appendOutput(instance, record.id, [{ type: "system", subtype: "init", content: "started" }]);
			return record;
		});
		expect(await jobRowsOf(name, job.id)).toMatchObject({ output_lines: 1 });
		await passWithPrune(name);
		expect(await jobRowsOf(name, job.id)).toEqual({});
		expect(await r2Keys(name, job.id)).toEqual([]);
		expect((await call(`/v1/jobs/${job.id}`)).status).toBe(404);
	});
});

describe("a retention backlog across an R2 failure", () => {
	it("waits the hour R2 failed for, not a second, and then works off the rest of the backlog a second apart", async () => {
		const name = "backlog-r2-failed";
		await createAgent({ name, retention_days: 7 });
		const stub = env.AGENT.getByName(name);
		const ids = await runInDurableObject(stub, (_i: AgentDO, state) => {
			const made: string[] = [];
			for (let i = 0; i < 120; i++) {
				const job = endedRecord(name, new Date(Date.now() - 10 * DAY - i * 60_000));
				storeRun(state.storage.sql, job);
				made.push(job.id);
			}
			return made;
		});
		for (const id of ids) await env.OUTPUT.put(`jobs/${name}/${id}.jsonl`, "{}\n");
		const held = () => runInDurableObject(stub, (_i: AgentDO, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM jobs").one().n);

		// A batch's rows go, and R2 fails on their output (its answer lost), and goes on failing.
		await passWithPrune(name, failingDelete("after"));
		expect(await held()).toBe(70);
		// Tried again within the hour, as retention.failed says; not every second while R2 is down.
		const alarmAt = async () => (await runInDurableObject(stub, (_i: AgentDO, state) => state.storage.getAlarm()))!;
		// (Other work of the agent's first passes due at once runs first.)
		for (let run = 0; run < 5 && (await alarmAt()) <= Date.now(); run++) await runDurableObjectAlarm(stub);
		expect(await held()).toBe(70);
		const alarm = await alarmAt();
		expect(alarm).toBeGreaterThan(Date.now() + 30 * 60_000);
		expect(alarm).toBeLessThanOrEqual(Date.now() + 3600_000);

		// The hour passes (the instance's last prune that long ago), R2 is back: that alarm, and the
		// ones a second apart it leaves, work off the rest.
		await runInDurableObject(stub, (instance: AgentDO) => {
			const self = instance as unknown as Internals;
			self.env = env;
			self.passes.lastPrune = 0;
		});
		for (let run = 0; run < 10 && (await held()) > 0; run++) expect(await runDurableObjectAlarm(stub)).toBe(true);
		expect(await held()).toBe(0);
		expect((await env.OUTPUT.list({ prefix: `jobs/${name}/` })).objects).toEqual([]);
		expect(await listedJobsAnswer(name)).toEqual([]);
	});
});
