import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import type { JobRecord } from "../../src/jobs/model.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { heldModel, useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { listSessions } from "../../durable-objects/agent/sessions.ts";
import { getSetup, putSetup } from "../../durable-objects/agent/runner/session.ts";
import { AGENT_MIGRATIONS } from "../../durable-objects/agent/schema.ts";
import { migrate } from "../../src/store/sqlite-migrations.ts";
import { endedRecord, jobOf, lifecycleRecords, numberedRecord, runToRest, storeRun, trigger } from "../helpers/jobs.ts";
import { countingReads, sessionsSnapshot, undoAgentStep } from "../helpers/sql.ts";

interface JobRef {
	id: string;
	status: string;
	created_at: string;
}
interface SessionSummary {
	session_id: string;
	agent: string;
	job_count: number;
	first_job: JobRef;
	last_job: JobRef;
	updated_at: string;
}
interface Session extends SessionSummary {
	jobs: { id: string; status: string; trigger_type: string; continued_from: string | null; error: { type: string; message: string } | null }[];
}
interface SessionPage {
	sessions: SessionSummary[];
	next_cursor: string | null;
}

async function continueJob(id: string, prompt = "And then?"): Promise<JobRecord> {
	const res = await call(`/v1/jobs/${id}/continue`, { method: "POST", as: "operate", body: { prompt } });
	expect(res.status, await res.clone().text()).toBe(201);
	return res.json();
}

async function getSession(id: string): Promise<Session> {
	const res = await call(`/v1/sessions/${id}`);
	expect(res.status, await res.clone().text()).toBe(200);
	return res.json();
}

/** An agent with one finished job: its session's first. */
async function agentWithSession(name: string): Promise<JobRecord> {
	useEmulator();
	await createAgent({ name });
	return runToRest(name);
}

describe("session ids", () => {
	it("name the session's first job, and a continue joins its session", async () => {
		const first = await agentWithSession("ses-first");
		expect(first.status).toBe("completed");
		expect(first.session_id).toBe(`ses-${first.id}`);

		const next = await continueJob(first.id);
		await settle("ses-first");
		const done = await jobOf("ses-first", next.id);
		expect(done).toMatchObject({ status: "completed", session_id: first.session_id, continued_from: first.id });

		const session = await getSession(first.session_id!);
		expect(session).toMatchObject({ session_id: first.session_id, agent: "ses-first", job_count: 2, first_job: { id: first.id }, last_job: { id: next.id, status: "completed" } });
		expect(session.jobs.map((j) => [j.id, j.trigger_type, j.continued_from])).toEqual([
			[first.id, "manual", null],
			[next.id, "continue", first.id],
		]);
	});

	it("lists a session's failed job with what ended it, as GET /v1/jobs does", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "First." }, { error: 400, message: "prompt is too long: 250000 tokens > 200000 maximum" });
		await createAgent({ name: "ses-failed" });
		const first = await runToRest("ses-failed");
		const next = await continueJob(first.id);
		await settle("ses-failed");
		const failed = await jobOf("ses-failed", next.id);
		expect(failed).toMatchObject({ status: "failed", error: { message: expect.stringContaining("prompt is too long") } });
		const session = await getSession(first.session_id!);
		expect(session.jobs.map((j) => [j.id, j.error])).toEqual([
			[first.id, null],
			// The list's error is the record's type and message (its request_id is the record's alone).
			[next.id, { type: failed.error!.type, message: failed.error!.message }],
		]);
	});

	it("a fork starts a session of its own, named by the fork", async () => {
		const first = await agentWithSession("ses-fork");
		const res = await call(`/v1/jobs/${first.id}/fork`, { method: "POST", as: "operate", body: { prompt: "Another way?" } });
		expect(res.status).toBe(201);
		const fork = (await res.json()) as JobRecord;
		await settle("ses-fork");
		expect(await jobOf("ses-fork", fork.id)).toMatchObject({ status: "completed", session_id: `ses-${fork.id}`, forked_from: first.id });
		const session = await getSession(`ses-${fork.id}`);
		expect(session.jobs.map((j) => j.id)).toEqual([fork.id]);
		expect((await getSession(first.session_id!)).jobs.map((j) => j.id)).toEqual([first.id]);
	});

	it("resolve by whole id and by a unique prefix; the newest job is the one to resume", async () => {
		const first = await agentWithSession("ses-prefix");
		const second = await continueJob(first.id);
		await settle("ses-prefix");
		const whole = await getSession(first.session_id!);
		// All but the id's last character: no other session of the day shares the other five.
		const byPrefix = await getSession(first.session_id!.slice(0, -1));
		expect(byPrefix).toEqual(whole);
		expect(whole.last_job.id).toBe(second.id);

		// Resuming continues the newest job: the new job is in the same session, continuing it.
		const resumed = await continueJob(whole.last_job.id, "One more thing.");
		await settle("ses-prefix");
		expect(await jobOf("ses-prefix", resumed.id)).toMatchObject({ status: "completed", session_id: first.session_id, continued_from: second.id });
		const after = await getSession(first.session_id!.slice(0, -2));
		expect(after.jobs.map((j) => j.id)).toEqual([first.id, second.id, resumed.id]);
	});

	it("a continue just asked for counts in its session, before it has run", async () => {
		const first = await agentWithSession("ses-queued");
		const next = await continueJob(first.id);
		const session = await getSession(first.session_id!);
		expect(session.job_count).toBe(2);
		expect(session.last_job.id).toBe(next.id);
		await settle("ses-queued");
	});

	it("refuses a prefix that fits several sessions, naming them", async () => {
		const a = await agentWithSession("ses-ambiguous-a");
		useEmulator();
		await createAgent({ name: "ses-ambiguous-b" });
		const b = await runToRest("ses-ambiguous-b");
		// Both jobs are of today: `ses-job-YYYY-MM-DD-` fits both.
		const day = a.id.slice(0, "job-YYYY-MM-DD-".length);
		expect(b.id.startsWith(day)).toBe(true);
		const res = await call(`/v1/sessions/ses-${day}`);
		expect(res.status).toBe(409);
		const error = await errorOf(res);
		expect(error.code).toBe("conflict");
		expect(error.message).toMatch(new RegExp(`^session id prefix ses-${day} fits more than one session: `));
		expect(error.message).toMatch(/; give more of the id$/);
		const named = (error.details as { candidates: { session_id: string; agent: string }[] }).candidates;
		expect(named.length).toBeGreaterThanOrEqual(2);
		expect(named.length).toBeLessThanOrEqual(5);
		expect(error.message).toContain(named[0]!.session_id);
	});

	it("refuses what is no session id, or too short a prefix, with a 400 that says so", async () => {
		for (const id of ["ses-job-20", "job-2026-12-02-abcdef", "ses-JOB-2026-12-02-ABCDEF", "ses-job-2026-12-02_abcdef"]) {
			const res = await call(`/v1/sessions/${id}`);
			expect(res.status, id).toBe(400);
			const error = await errorOf(res);
			expect(error.message, id).toMatch(/^invalid param: id: must be a session id: ses-<first job's id> .*at least 8 characters after ses-/);
		}
	});

	it("answers 404 for a session no job started, and for an unknown agent", async () => {
		const none = await call("/v1/sessions/ses-job-2020-01-01-zzzzzz");
		expect(none.status).toBe(404);
		expect((await errorOf(none)).message).toMatch(/^no session ses-job-2020-01-01-zzzzzz: /);
		// Said to a CLI user as well as to the API's: how each names the agent.
		expect((await errorOf(await call("/v1/sessions/ses-job-2020-01-01-zzzzzz"))).message).toMatch(/found through its agent: \?agent=<name> in the API, --agent <name> in drover sessions resume\)$/);
		const agent = await call("/v1/sessions/ses-job-2020-01-01-zzzzzz?agent=no-such-agent");
		expect(agent.status).toBe(404);
		expect((await errorOf(agent)).message).toBe("no agent named no-such-agent");
		const list = await call("/v1/agents/no-such-agent/sessions");
		expect(list.status).toBe(404);
		expect((await errorOf(list)).message).toBe("no agent named no-such-agent");
	});

	it("a session from before ids named their first job (ses-<uuid>) is found through its agent", async () => {
		const job = await agentWithSession("ses-legacy");
		const legacy = "ses-0f8c2d4e-5b6a-4c3d-9e8f-7a6b5c4d3e2f";
		await runInDurableObject(env.AGENT.getByName("ses-legacy"), (_i: AgentDO, state) => {
			state.storage.sql.exec("UPDATE job_setup SET session_id = ? WHERE job_id = ?", legacy, job.id);
			state.storage.sql.exec("UPDATE jobs SET record = json_set(record, '$.session_id', ?) WHERE id = ?", legacy, job.id);
		});
		const without = await call(`/v1/sessions/${legacy}`);
		expect(without.status).toBe(404);
		expect((await errorOf(without)).message).toMatch(/ses-<uuid> .* is looked up through its agent: \?agent=<name> in the API, --agent <name> in drover sessions resume$/);

		const found = await call(`/v1/sessions/${legacy}?agent=ses-legacy`);
		expect(found.status).toBe(200);
		expect(await found.json()).toMatchObject({ session_id: legacy, agent: "ses-legacy", job_count: 1, first_job: { id: job.id } });
		const prefix = await call(`/v1/sessions/${legacy.slice(0, 12)}?agent=ses-legacy`);
		expect(prefix.status).toBe(200);
		expect(((await prefix.json()) as Session).session_id).toBe(legacy);
		// Its own job's id no longer names it.
		expect((await call(`/v1/sessions/ses-${job.id}`)).status).toBe(404);
	});
});

describe("GET /v1/agents/:agent/sessions", () => {
	it("lists each session once, newest first by its newest job, in pages", async () => {
		const a = await agentWithSession("ses-list");
		const b = await runToRest("ses-list");
		const c = await runToRest("ses-list");
		const d = await continueJob(a.id);
		await settle("ses-list");

		const first = await call("/v1/agents/ses-list/sessions?limit=2");
		expect(first.status).toBe(200);
		const page1 = (await first.json()) as SessionPage;
		expect(page1.sessions.map((s) => s.session_id)).toEqual([a.session_id, c.session_id]);
		expect(page1.sessions[0]).toMatchObject({ agent: "ses-list", job_count: 2, first_job: { id: a.id }, last_job: { id: d.id, status: "completed" } });
		expect(Date.parse(page1.sessions[0]!.updated_at)).toBeGreaterThanOrEqual(Date.parse(page1.sessions[0]!.last_job.created_at));
		expect(page1.next_cursor).toEqual(expect.any(String));

		const second = await call(`/v1/agents/ses-list/sessions?limit=2&cursor=${page1.next_cursor}`);
		const page2 = (await second.json()) as SessionPage;
		expect(page2.sessions.map((s) => [s.session_id, s.job_count])).toEqual([[b.session_id, 1]]);
		expect(page2.next_cursor).toBeNull();

		const all = (await (await call("/v1/agents/ses-list/sessions")).json()) as SessionPage;
		expect(all.sessions.map((s) => s.session_id)).toEqual([a.session_id, c.session_id, b.session_id]);
	});

	it("lists a session whose started jobs retention removed while a continue of it is queued, by that continue", async () => {
		const emulator = useEmulator();
		await createAgent({ name: "ses-kept", retention_days: 7 });
		const first = await runToRest("ses-kept");
		// A run calling the model holds the only slot, so the continue stays queued behind it.
		const { arrived, release } = heldModel(emulator);
		const running = await trigger("ses-kept");
		await arrived;
		const queued = await continueJob(first.id);
		expect(queued.status).toBe("pending");

		// The continued run is past its 7 days: the hourly prune removes it, the queued continue stays.
		const stub = env.AGENT.getByName("ses-kept");
		await runInDurableObject(stub, (_i: AgentDO, state) => {
			const eightDays = 8 * 86_400_000;
			const sql = state.storage.sql;
			const record = JSON.parse(sql.exec<{ record: string }>("SELECT record FROM jobs WHERE id = ?", first.id).one().record) as Record<string, string>;
			for (const field of ["created_at", "started_at", "finished_at"]) record[field] = new Date(Date.parse(record[field]!) - eightDays).toISOString();
			sql.exec("UPDATE jobs SET created_at = created_at - ?, record = ? WHERE id = ?", eightDays, JSON.stringify(record), first.id);
			sql.exec("UPDATE occurrences SET claimed_at = claimed_at - ?1, started_at = started_at - ?1, finished_at = finished_at - ?1 WHERE job_id = ?2", eightDays, first.id);
		});
		expect(await runInDurableObject(stub, (instance: AgentDO) => AgentDO.prune(instance, Date.now(), true))).toBe(1);
		expect(await stub.getJob(first.id)).toBeNull();
		expect(await jobOf("ses-kept", queued.id)).toMatchObject({ status: "pending", session_id: first.session_id });

		const list = (await (await call("/v1/agents/ses-kept/sessions")).json()) as SessionPage;
		expect(list.sessions.map((s) => [s.session_id, s.job_count, s.last_job.id])).toEqual([
			[first.session_id, 1, queued.id],
			[`ses-${running.id}`, 1, running.id],
		]);
		const paged = (await (await call("/v1/agents/ses-kept/sessions?limit=1")).json()) as SessionPage;
		expect(paged.sessions.map((s) => s.session_id)).toEqual([first.session_id]);
		const rest = (await (await call(`/v1/agents/ses-kept/sessions?limit=1&cursor=${paged.next_cursor}`)).json()) as SessionPage;
		expect(rest).toMatchObject({ sessions: [{ last_job: { id: running.id } }], next_cursor: null });
		// Found through its agent, by its id or a prefix of it, as a session whose first job retention removed is.
		expect((await getSession(`${first.session_id}?agent=ses-kept`)).jobs.map((j) => j.id)).toEqual([queued.id]);
		expect((await getSession(`${first.session_id!.slice(0, -1)}?agent=ses-kept`)).session_id).toBe(first.session_id);

		release();
		await settle("ses-kept");
		expect(await jobOf("ses-kept", queued.id)).toMatchObject({ status: "completed", session_id: first.session_id });
	});

	it("summarises long sessions from their two ends and a count, listing a session's newest 200 jobs", async () => {
		await createAgent({ name: "ses-long" });
		const stub = env.AGENT.getByName("ses-long");
		// Three sessions of 250 jobs each, started in turn a minute apart (as a persistent agent's
		// runs carry its session on), each job's setup row written as it starts.
		const ids = await runInDurableObject(stub, (_i: AgentDO, state) => {
			const sql = state.storage.sql;
			const sessions: string[][] = [[], [], []];
			for (let i = 0; i < 750; i++) {
				const job = numberedRecord("ses-long", new Date(Date.parse("2026-06-01T00:00:00Z") + i * 60_000), i);
				const list = sessions[i % 3]!;
				const sessionId = `ses-${list[0] ?? job.id}`;
				storeRun(sql, { ...job, session_id: sessionId });
				sql.exec(
					"INSERT INTO job_setup (job_id, session_id, definition, system, tools, models, max_tokens, deadline, next_step_at) VALUES (?, ?, '{}', '', '[]', '[]', 1024, 0, 0)",
					job.id,
					sessionId,
				);
				list.push(job.id);
			}
			return sessions;
		});
		const { pages, rowsRead } = await runInDurableObject(stub, (_i: AgentDO, state) => {
			const reads = countingReads(state.storage.sql);
			const first = listSessions(reads.sql, "ses-long", 2);
			const rowsRead = reads.rowsRead();
			return { pages: [first, listSessions(state.storage.sql, "ses-long", 2, first.next!)], rowsRead };
		});
		expect(pages.flatMap((p) => p.sessions).map((s) => [s.session_id, s.job_count, s.first_job.id, s.last_job.id])).toEqual(
			[2, 1, 0].map((k) => [`ses-${ids[k]![0]}`, 250, ids[k]![0], ids[k]![249]]),
		);
		// Two sessions' 250 count entries each and their two ends; reading every job of each, it was
		// over 1,000.
		expect(rowsRead).toBeLessThan(700);

		const session = await getSession(`ses-${ids[0]![0]}?agent=ses-long`);
		expect(session).toMatchObject({ job_count: 250, first_job: { id: ids[0]![0] }, last_job: { id: ids[0]![249] } });
		expect(session.jobs.map((j) => j.id)).toEqual(ids[0]!.slice(50));
	});

	it("refuses a bad cursor and one from another agent's list", async () => {
		useEmulator();
		await createAgent({ name: "ses-cursor" });
		await runToRest("ses-cursor");
		await runToRest("ses-cursor");
		const bad = await call("/v1/agents/ses-cursor/sessions?cursor=not-a-cursor");
		expect(bad.status).toBe(400);
		expect((await errorOf(bad)).message).toMatch(/^cursor is malformed/);
		const runs = (await (await call("/v1/agents/ses-cursor/runs?limit=1")).json()) as { next_cursor: string | null };
		expect(runs.next_cursor).toEqual(expect.any(String));
		const foreign = await call(`/v1/agents/ses-cursor/sessions?cursor=${runs.next_cursor}`);
		expect(foreign.status).toBe(400);
		expect((await errorOf(foreign)).message).toMatch(/^cursor belongs to another list/);
		const limit = await call("/v1/agents/ses-cursor/sessions?limit=0");
		expect(limit.status).toBe(400);
		const own = (await (await call("/v1/agents/ses-cursor/sessions?limit=1")).json()) as SessionPage;
		expect(own.next_cursor).toEqual(expect.any(String));
		const elsewhere = await call(`/v1/agents/ses-list/sessions?cursor=${own.next_cursor}`);
		expect(elsewhere.status).toBe(400);
		await createAgent({ name: "ses-none" });
		const empty = await call("/v1/agents/ses-none/sessions");
		expect(await empty.json()).toEqual({ sessions: [], next_cursor: null });
	});
});

const DAY = 86_400_000;

/** A started job's setup row as a test seeds it: never due, so no pass steps it. */
function seedSetup(sql: SqlStorage, jobId: string, sessionId: string): void {
	sql.exec(
		"INSERT INTO job_setup (job_id, session_id, definition, system, tools, models, max_tokens, deadline, next_step_at) VALUES (?, ?, '{}', '', '[]', '[]', 1024, 0, ?)",
		jobId,
		sessionId,
		Number.MAX_SAFE_INTEGER,
	);
}

/** The agent's sessions table beside what job_setup sums up to (see sessionsSnapshot). */
async function sessionsTable(agent: string): Promise<{ kept: unknown[]; fromSetup: unknown[] }> {
	return runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) => sessionsSnapshot(state.storage.sql));
}

async function expectTableInStep(agent: string): Promise<void> {
	const { kept, fromSetup } = await sessionsTable(agent);
	expect(kept).toEqual(fromSetup);
}

async function listed(agent: string, query = ""): Promise<SessionPage> {
	const res = await call(`/v1/agents/${agent}/sessions${query}`);
	expect(res.status, await res.clone().text()).toBe(200);
	return res.json();
}

/** Every page of the agent's sessions, `limit` a page, followed by their cursors. */
async function allPages(agent: string, limit: number): Promise<SessionSummary[][]> {
	const pages: SessionSummary[][] = [];
	let cursor: string | null = null;
	do {
		const page: SessionPage = await listed(agent, `?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
		pages.push(page.sessions);
		cursor = page.next_cursor;
	} while (cursor);
	return pages;
}

describe("the sessions an agent lists (schema step 29's sessions table)", () => {
	it("stay right as jobs start, end, continue and fork", async () => {
		const emulator = useEmulator();
		await createAgent({ name: "ses-table" });
		const { arrived, release } = heldModel(emulator);
		const first = await trigger("ses-table");
		await arrived;
		// Started, its answer held: listed running.
		const running = await listed("ses-table");
		expect(running.sessions.map((s) => [s.session_id, s.job_count, s.last_job.id, s.last_job.status])).toEqual([[`ses-${first.id}`, 1, first.id, "running"]]);
		await expectTableInStep("ses-table");
		release();
		await settle("ses-table");
		// Ended: the same session, its job completed.
		expect((await listed("ses-table")).sessions.map((s) => [s.session_id, s.job_count, s.last_job.status])).toEqual([[`ses-${first.id}`, 1, "completed"]]);

		const other = await runToRest("ses-table");
		const next = await continueJob(first.id);
		await settle("ses-table");
		const fork = (await (await call(`/v1/jobs/${next.id}/fork`, { method: "POST", as: "operate", body: { prompt: "Another way?" } })).json()) as JobRecord;
		await settle("ses-table");
		await expectTableInStep("ses-table");
		const after = await listed("ses-table");
		expect(after.sessions.map((s) => [s.session_id, s.job_count, s.first_job.id, s.last_job.id, s.last_job.status])).toEqual([
			[`ses-${fork.id}`, 1, fork.id, fork.id, "completed"],
			[`ses-${first.id}`, 2, first.id, next.id, "completed"],
			[`ses-${other.id}`, 1, other.id, other.id, "completed"],
		]);
		expect(await allPages("ses-table", 1)).toEqual(after.sessions.map((s) => [s]));
	});

	it("count a job whose setup is written again (its start retried) once", async () => {
		const first = await agentWithSession("ses-restart");
		const next = await continueJob(first.id);
		await settle("ses-restart");
		await runInDurableObject(env.AGENT.getByName("ses-restart"), (_i: AgentDO, state) => {
			const sql = state.storage.sql;
			for (const id of [first.id, next.id]) putSetup(sql, getSetup(sql, id)!);
		});
		await expectTableInStep("ses-restart");
		// Both setups written again, in turn: each job counted once, the session's last still its last.
		expect((await listed("ses-restart")).sessions.map((s) => [s.job_count, s.last_job.id])).toEqual([[2, next.id]]);
	});

	it("stay right as retention removes a session's jobs, its last to start included, and the sessions whose jobs all went", async () => {
		await createAgent({ name: "ses-pruned", retention_days: 7 });
		const stub = env.AGENT.getByName("ses-pruned");
		const now = Date.now();
		// Session A: a run still waiting on a human (not removable), then a continue of it started
		// after it and ended 30 days ago. Session B: a run started between them, still running. C:
		// one run ended 20 days ago. D: one of yesterday.
		const at = (daysAgo: number) => new Date(now - daysAgo * DAY);
		const a1 = lifecycleRecords("ses-pruned", at(31)).running;
		const b = lifecycleRecords("ses-pruned", at(30.5)).running;
		const a2 = endedRecord("ses-pruned", at(30));
		const c = endedRecord("ses-pruned", at(20));
		const d = endedRecord("ses-pruned", at(1));
		const sessionOf = new Map([
			[a1.id, `ses-${a1.id}`],
			[a2.id, `ses-${a1.id}`],
			[b.id, `ses-${b.id}`],
			[c.id, `ses-${c.id}`],
			[d.id, `ses-${d.id}`],
		]);
		await runInDurableObject(stub, (_i: AgentDO, state) => {
			for (const job of [a1, b, a2, c, d]) {
				storeRun(state.storage.sql, { ...job, session_id: sessionOf.get(job.id)! });
				seedSetup(state.storage.sql, job.id, sessionOf.get(job.id)!);
			}
		});
		await expectTableInStep("ses-pruned");
		const before = await listed("ses-pruned");
		expect(before.sessions.map((s) => [s.session_id, s.job_count, s.last_job.id])).toEqual([
			[`ses-${d.id}`, 1, d.id],
			[`ses-${c.id}`, 1, c.id],
			[`ses-${a1.id}`, 2, a2.id],
			[`ses-${b.id}`, 1, b.id],
		]);

		expect(await runInDurableObject(stub, (instance: AgentDO) => AgentDO.prune(instance, now, true))).toBe(2);
		await expectTableInStep("ses-pruned");
		// A's last went: A is listed at its first again, dated by it (after B, now); C is gone.
		const after = await listed("ses-pruned");
		expect(after.sessions.map((s) => [s.session_id, s.job_count, s.first_job.id, s.last_job.id, s.last_job.status])).toEqual([
			[`ses-${d.id}`, 1, d.id, d.id, "completed"],
			[`ses-${b.id}`, 1, b.id, b.id, "running"],
			[`ses-${a1.id}`, 1, a1.id, a1.id, "running"],
		]);
		expect(await allPages("ses-pruned", 2)).toEqual([after.sessions.slice(0, 2), after.sessions.slice(2)]);
		expect((await call(`/v1/sessions/ses-${c.id}?agent=ses-pruned`)).status).toBe(404);
		expect((await call(`/v1/sessions/ses-${a1.id}?agent=ses-pruned`)).status).toBe(200);
	});

	it("are the same after the upgrade to step 29, which sums up the sessions of the jobs started before it", async () => {
		const first = await agentWithSession("ses-upgrade");
		const second = await runToRest("ses-upgrade");
		const continued = await continueJob(first.id);
		await settle("ses-upgrade");
		const stub = env.AGENT.getByName("ses-upgrade");
		// As the release before: no sessions table. Jobs start meanwhile, a session's continue among them.
		await runInDurableObject(stub, (_i: AgentDO, state) => undoAgentStep(state.storage.sql, 29));
		const third = await runToRest("ses-upgrade");
		const resumed = await continueJob(second.id);
		await settle("ses-upgrade");
		// The upgrade: step 29 as migrate() runs it, in one transaction.
		const step = AGENT_MIGRATIONS.find((m) => m.version === 29)!;
		await runInDurableObject(stub, (_i: AgentDO, state) => state.storage.transactionSync(() => void state.storage.sql.exec(step.sql)));

		await expectTableInStep("ses-upgrade");
		const all = await listed("ses-upgrade");
		expect(all.sessions.map((s) => [s.session_id, s.job_count, s.first_job.id, s.last_job.id])).toEqual([
			[`ses-${second.id}`, 2, second.id, resumed.id],
			[`ses-${third.id}`, 1, third.id, third.id],
			[`ses-${first.id}`, 2, first.id, continued.id],
		]);
		expect(await allPages("ses-upgrade", 1)).toEqual(all.sessions.map((s) => [s]));
		// Kept from then on: a job that starts after the upgrade moves its session up.
		const again = await continueJob(first.id);
		await settle("ses-upgrade");
		await expectTableInStep("ses-upgrade");
		expect((await listed("ses-upgrade", "?limit=1")).sessions.map((s) => [s.session_id, s.job_count, s.last_job.id])).toEqual([[`ses-${first.id}`, 3, again.id]]);
	});

	it("are read a page at a time, whatever the length of the sessions between them", async () => {
		await createAgent({ name: "ses-seek" });
		const stub = env.AGENT.getByName("ses-seek");
		// A one-job session, then one of 2,000 jobs, then another one-job session.
		const ids = await runInDurableObject(stub, (_i: AgentDO, state) => {
			const sql = state.storage.sql;
			const made: string[] = [];
			let long = "";
			for (let i = 0; i < 2002; i++) {
				const job = numberedRecord("ses-seek", new Date(Date.parse("2026-03-01T00:00:00Z") + i * 60_000), i);
				const sessionId = i === 0 || i === 2001 ? `ses-${job.id}` : (long ||= `ses-${job.id}`);
				storeRun(sql, { ...job, session_id: sessionId });
				seedSetup(sql, job.id, sessionId);
				made.push(job.id);
			}
			return made;
		});
		const { pages, rowsRead } = await runInDurableObject(stub, (_i: AgentDO, state) => {
			const reads = countingReads(state.storage.sql);
			const first = listSessions(reads.sql, "ses-seek", 2);
			const rowsRead = reads.rowsRead();
			return { pages: [first, listSessions(state.storage.sql, "ses-seek", 2, first.next!)], rowsRead };
		});
		expect(pages.map((p) => p.sessions.map((s) => [s.session_id, s.job_count, s.first_job.id, s.last_job.id]))).toEqual([
			[
				[`ses-${ids[2001]}`, 1, ids[2001], ids[2001]],
				[`ses-${ids[1]}`, 2000, ids[1], ids[2000]],
			],
			[[`ses-${ids[0]}`, 1, ids[0], ids[0]]],
		]);
		expect(pages[1]!.next).toBeNull();
		// Walking the jobs newest first for the sessions' last jobs, and counting the long one's, the
		// page read over 4,000 rows.
		console.log(`sessions page of 2 over a 2,000-job session: ${rowsRead} rows read`);
		expect(rowsRead).toBeLessThan(50);
	});
});
