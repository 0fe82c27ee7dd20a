// src/store at the edges a mutation walk of it found unchecked: the line marks consolidate keeps
// beside a job's output (where a reader of the lines after N starts in R2), a tail of every line of an
// object past the first window (read from the start, not in growing windows), the job list's fields as
// a row moves on, the status counts' order, usage's ranking and day, D1's migration check, and the
// registry's forget of a deleted agent.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentDefinition } from "../../src/config/schema.ts";
import { createJob, JOB_STATUSES, transition, type JobRecord, type JobSummary, type JobUsage } from "../../src/jobs/model.ts";
import { forgetRegisteredAgent, getRegisteredAgent, markAgentDeleted, upsertRegisteredAgent } from "../../src/store/agent-registry.ts";
import { deleteFromJobIndex, upsertJobIndex } from "../../src/store/job-index.ts";
import { consolidate, deleteJobOutputs, outputKey, outputLogKey, readLinesAfter, tailOfR2, type OutputLine, type ReadBatch } from "../../src/store/output-r2.ts";
import { call } from "../helpers/http.ts";
import { lifecycleRecords, numberedRecord } from "../helpers/jobs.ts";
import { recording } from "../helpers/r2.ts";

const bucket = env.OUTPUT;

/** Lines 1..total, each `body` (so line k starts at (k - 1) × (its length + 1)). */
function sameLines(total: number, body: string): ReadBatch {
	return (after, limit) => {
		const out: OutputLine[] = [];
		for (let i = after + 1; i <= Math.min(total, after + limit); i++) out.push({ line: i, body });
		return out;
	};
}

describe("consolidate's line marks", () => {
	it("mark the line that starts exactly markBytes after the mark before", async () => {
		// 5-byte lines and marks every 10 bytes: lines 3, 5 and 7 start at 10, 20 and 30.
		const { marks, bytes } = await consolidate(bucket, "store-edges", "job-2026-12-01-mark10", sameLines(8, "abcd"), { markBytes: 10 });
		expect(bytes).toBe(40);
		expect(marks).toEqual([
			{ line: 3, offset: 10 },
			{ line: 5, offset: 20 },
			{ line: 7, offset: 30 },
		]);
	});

	it("keep 4,096 of them, their spacing doubling only past that", async () => {
		// 2-byte lines and marks every 2 bytes: lines 2..4097 are each marked, 4,096 marks.
		const { marks } = await consolidate(bucket, "store-edges", "job-2026-12-01-mark4k", sameLines(4097, "x"), { markBytes: 2 });
		expect(marks).toHaveLength(4096);
		expect(marks[0]).toEqual({ line: 2, offset: 2 });
		expect(marks.at(-1)).toEqual({ line: 4097, offset: 8192 });
	});
});

describe("a tail of every line of an object larger than the first 64 KiB window", () => {
	it("is handed back to be streamed from the start after the window's one read, not held from windows grown to the whole", async () => {
		// 200 lines of 1,000 bytes: 200 KB, past the 64 KiB window, within the 4 MiB it may grow to.
		const { key, lines } = await consolidate(bucket, "store-edges", "job-2026-12-01-tail00", sameLines(200, "t".repeat(999)));
		expect(lines).toBe(200);
		const rec = recording(bucket);
		expect(await tailOfR2(rec.bucket, key, 200)).toEqual({ after: 0 });
		expect(rec.gets).toEqual([{ suffix: 64 * 1024 }]);
	});
});

describe("a tail of every line of an object exactly the first 64 KiB window's size", () => {
	it("is handed back as the lines themselves from the window's one read, which holds the whole object", async () => {
		// 64 lines of 1,024 bytes: 65,536 bytes, the window's size.
		const { key, bytes } = await consolidate(bucket, "store-edges", "job-2026-12-01-tail64", sameLines(64, "w".repeat(1023)));
		expect(bytes).toBe(64 * 1024);
		const rec = recording(bucket);
		expect(await tailOfR2(rec.bucket, key, 64)).toEqual({ lines: Array.from({ length: 64 }, (_, i) => ({ line: i + 1, body: "w".repeat(1023) })) });
		// Not handed back to be streamed from the start: a second read of the same bytes.
		expect(rec.gets).toEqual([{ suffix: 64 * 1024 }]);
	});
});

describe("lines asked for after a line whose next starts on a mark", () => {
	it("are streamed from that mark at once, the mark saying they start past the end's first window: one R2 read", async () => {
		// 200 lines of 1,000 bytes with a mark about every 16 KiB.
		const { key, marks, bytes } = await consolidate(bucket, "store-edges", "job-2026-12-01-markat", sameLines(200, "m".repeat(999)), { markBytes: 16 * 1024 });
		// The last mark more than the 64 KiB window from the end, the one after it within it.
		const i = marks.findIndex((m, k) => bytes! - m.offset >= 64 * 1024 && bytes! - marks[k + 1]!.offset < 64 * 1024);
		expect(i).toBeGreaterThan(0);
		const m = marks[i]!;
		const rec = recording(bucket);
		const got = await readLinesAfter(rec.bucket, key, { after: m.line - 1, limit: 2, total: 200, bytes, marks });
		const lines: OutputLine[] = [];
		for await (const line of got as AsyncIterable<OutputLine>) lines.push(line);
		expect(lines.map((l) => l.line)).toEqual([m.line, m.line + 1]);
		// Not a read of the last 64 KiB first, which cannot hold them.
		expect(rec.gets).toEqual([{ offset: m.offset - 1 }]);
	});
});

describe("lines asked for after a line whose next starts on a mark exactly the first window from the end", () => {
	it("are streamed from that mark at once, which the end's 64 KiB window cannot show whole: one R2 read", async () => {
		// 200 lines of 1,024 bytes, a mark every 8 KiB: line 137 starts at 139,264, 65,536 bytes from the end.
		const { key, marks, bytes } = await consolidate(bucket, "store-edges", "job-2026-12-01-mark64", sameLines(200, "e".repeat(1023)), { markBytes: 8 * 1024 });
		expect(marks).toContainEqual({ line: 137, offset: 139_264 });
		expect(bytes! - 139_264).toBe(64 * 1024);
		const rec = recording(bucket);
		const got = await readLinesAfter(rec.bucket, key, { after: 136, limit: 2, total: 200, bytes, marks });
		const lines: OutputLine[] = [];
		for await (const line of got as AsyncIterable<OutputLine>) lines.push(line);
		expect(lines.map((l) => l.line)).toEqual([137, 138]);
		expect(rec.gets).toEqual([{ offset: 139_264 - 1 }]);
	});
});

describe("lines asked for that start before the end's first window, a mark within it", () => {
	it("are streamed from the mark before them after that window's read, not read from a window grown past it", async () => {
		// 200 lines of 1,000 bytes with a mark about every 16 KiB; the window starts at 200,000 - 65,536.
		const { key, marks, bytes } = await consolidate(bucket, "store-edges", "job-2026-12-01-markin", sameLines(200, "g".repeat(999)), { markBytes: 16 * 1024 });
		const windowStart = bytes! - 64 * 1024;
		// The first mark within the window; the lines asked for start at the line whose start is just before it.
		const within = marks.find((m) => m.offset >= windowStart)!;
		const after = Math.floor(windowStart / 1000); // line after + 1 starts at after × 1,000, before the window
		expect(after * 1000).toBeLessThan(windowStart);
		expect(within.line).toBeGreaterThan(after + 1);
		const before = marks.filter((m) => m.line <= after + 1).at(-1)!;
		const rec = recording(bucket);
		const got = await readLinesAfter(rec.bucket, key, { after, limit: 3, total: 200, bytes, marks });
		const lines: OutputLine[] = [];
		for await (const line of got as AsyncIterable<OutputLine>) lines.push(line);
		expect(lines.map((l) => l.line)).toEqual([after + 1, after + 2, after + 3]);
		expect(rec.gets).toEqual([{ suffix: 64 * 1024 }, { offset: before.offset - 1 }]);
	});
});

describe("deleteJobOutputs of more jobs than one delete call takes (1,000 keys, two a job)", () => {
	it("leaves none of their objects in R2", async () => {
		const ids = Array.from({ length: 501 }, (_, i) => `job-2026-12-01-d${String(i).padStart(5, "0")}`);
		// Keys 999, 1,000 and 1,001 of the 1,002: job 499's log, job 500's output and its log.
		const kept = [outputLogKey("store-del", ids[499]!), outputKey("store-del", ids[500]!), outputLogKey("store-del", ids[500]!)];
		for (const key of kept) await bucket.put(key, "x\n");
		await deleteJobOutputs(bucket, "store-del", ids);
		expect((await bucket.list({ prefix: "jobs/store-del/" })).objects.map((o) => o.key)).toEqual([]);
	});
});

const T0 = Date.parse("2026-10-01T00:00:00Z");

function job(agent: string, minute: number, fields: Partial<JobRecord> = {}): JobRecord {
	return { ...createJob({ agent, trigger_type: "manual", definition_revision: "rev1", schedule: null }, new Date(T0 + minute * 60_000)), ...fields };
}

async function listed(query: string): Promise<{ jobs: JobSummary[]; next_cursor: string | null }> {
	const res = await call(`/v1/jobs${query}`);
	expect(res.status).toBe(200);
	return res.json();
}

describe("GET /v1/jobs", () => {
	it("lists a job's tool calls as its record counts them, made and failed each its own", async () => {
		await upsertJobIndex(env.DB, [job("store-tools", 1, { tool_calls: { made: 3, failed: 1 } })]);
		const { jobs } = await listed("?agent=store-tools");
		expect(jobs.map((j) => j.tool_calls)).toEqual([{ made: 3, failed: 1 }]);
	});

	it("lists a late scheduled run with its dispatch, and its summary once it has ended, its row first indexed while it ran", async () => {
		const at = new Date(T0 + 30 * 60_000);
		const pending = createJob(
			{ agent: "store-late", trigger_type: "schedule", schedule: "hourly", scheduled_instant: new Date(T0), dispatch: "late", definition_revision: "rev1" },
			at,
		);
		const running = transition(pending, "running", { reason: "claimed", at });
		await upsertJobIndex(env.DB, [running]);
		await upsertJobIndex(env.DB, [transition(running, "completed", { reason: "end", at: new Date(at.getTime() + 1_000), exit_reason: "success", summary: "Filed 3 tickets." })]);
		const { jobs } = await listed("?agent=store-late");
		expect(jobs).toEqual([
			expect.objectContaining({ status: "completed", dispatch: "late", scheduled_instant: new Date(T0).toISOString(), summary: "Filed 3 tickets." }),
		]);
	});

	it("lists an ended job's tool calls as its last record counts them, its row first indexed while it ran", async () => {
		const { running, ended } = lifecycleRecords("store-tools-later", new Date(T0 + 45 * 60_000));
		await upsertJobIndex(env.DB, [{ ...running, tool_calls: { made: 1, failed: 0 } }]);
		await upsertJobIndex(env.DB, [{ ...ended, tool_calls: { made: 3, failed: 2 } }]);
		const { jobs } = await listed("?agent=store-tools-later");
		expect(jobs.map((j) => j.tool_calls)).toEqual([{ made: 3, failed: 2 }]);
	});

	it("lists a held scheduled run under the name its schedule was renamed to, and as late once it started late, its row first indexed while it was held", async () => {
		const held = createJob(
			{ agent: "store-held", trigger_type: "schedule", schedule: "hourly", scheduled_instant: new Date(T0), dispatch: "on_time", definition_revision: "rev1" },
			new Date(T0),
		);
		await upsertJobIndex(env.DB, [held]);
		// The PUT renaming the schedule carries the held run to the new name (scheduling.ts carryRename).
		const renamed = { ...held, schedule: "every-hour", revision: held.revision + 1 };
		await upsertJobIndex(env.DB, [renamed]);
		expect((await listed("?agent=store-held")).jobs.map((j) => [j.schedule, j.dispatch])).toEqual([["every-hour", "on_time"]]);
		// Let go past its grace, it starts late (runner/start.ts).
		const started = transition({ ...renamed, dispatch: "late" }, "running", { reason: "claimed", at: new Date(T0 + 30 * 60_000) });
		await upsertJobIndex(env.DB, [started]);
		expect((await listed("?agent=store-held")).jobs.map((j) => [j.schedule, j.dispatch, j.status])).toEqual([["every-hour", "late", "running"]]);
	});

	it("lists none of an agent's jobs once more than a hundred are pruned in one call, nor counts them", async () => {
		const at = new Date(T0 + 60 * 60_000);
		const ids = Array.from({ length: 101 }, (_, n) => numberedRecord("store-prune", at, n));
		await upsertJobIndex(env.DB, ids);
		const completed = async () => ((await (await call("/v1/status")).json()) as { jobs: Record<string, number> }).jobs.completed ?? 0;
		const before = await completed();
		await deleteFromJobIndex(env.DB, "store-prune", ids.map((j) => j.id));
		expect((await listed("?agent=store-prune")).jobs).toEqual([]);
		expect(await completed()).toBe(before - 101);
	});

	it("lists when an ended job started and finished, as its record says, its row first indexed while it ran", async () => {
		const created = new Date(T0 + 50 * 60_000);
		const started = new Date(created.getTime() + 2_000);
		const finished = new Date(created.getTime() + 9_000);
		const running = transition(createJob({ agent: "store-times", trigger_type: "manual", definition_revision: "rev1" }, created), "running", { reason: "start", at: started });
		await upsertJobIndex(env.DB, [running]);
		await upsertJobIndex(env.DB, [transition(running, "completed", { reason: "end", at: finished, exit_reason: "success" })]);
		const { jobs } = await listed("?agent=store-times");
		expect(jobs.map((j) => [j.started_at, j.finished_at, j.duration_seconds])).toEqual([[started.toISOString(), finished.toISOString(), 7]]);
	});

	it("lists a failed job's error message cut to its first 500 characters, the cut ending in …", async () => {
		const { ended } = lifecycleRecords("store-long-error", new Date(T0 + 55 * 60_000), "failed");
		await upsertJobIndex(env.DB, [{ ...ended, error: { type: "test", message: "e".repeat(1_000) } }]);
		const { jobs } = await listed("?agent=store-long-error");
		expect(jobs.map((j) => j.error)).toEqual([{ type: "test", message: `${"e".repeat(499)}…` }]);
	});

	it("lists a failed job's error, its row first indexed while it ran", async () => {
		const { running, ended } = lifecycleRecords("store-failed", new Date(T0 + 40 * 60_000), "failed");
		await upsertJobIndex(env.DB, [running]);
		await upsertJobIndex(env.DB, [ended]);
		const { jobs } = await listed("?agent=store-failed");
		expect(jobs.map((j) => [j.status, j.error])).toEqual([["failed", { type: "test", message: "boom" }]]);
	});
});

describe("GET /v1/status", () => {
	it("says the jobs by status in the lifecycle's order, a live status before a final one", async () => {
		const done = lifecycleRecords("store-order", new Date(T0 + 10 * 60_000)).ended;
		const live = lifecycleRecords("store-order", new Date(T0 + 11 * 60_000)).running;
		await upsertJobIndex(env.DB, [done, live]);
		const res = await call("/v1/status");
		expect(res.status).toBe(200);
		const { jobs } = (await res.json()) as { jobs: Record<string, number> };
		expect(jobs).toMatchObject({ running: expect.any(Number), completed: expect.any(Number) });
		expect(Object.keys(jobs)).toEqual(JOB_STATUSES.filter((s) => s in jobs));
	});
});

describe("GET /v1/usage?group=agent", () => {
	it("ranks agents by all four classes of tokens added up: cache reads count", async () => {
		const used = (agent: string, minute: number, u: Partial<JobUsage["per_model"][string]>): JobRecord => ({
			...lifecycleRecords(agent, new Date(T0 + minute * 60_000)).ended,
			usage: {
				per_model: { "model-x": { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...u } },
				num_turns: 1,
				total_cost_usd: 0.01,
			},
		});
		// rank-fresh: 300 tokens read fresh; rank-cached: 10 fresh and 1,000 read from the cache.
		await upsertJobIndex(env.DB, [used("rank-fresh", 20, { input_tokens: 200, output_tokens: 100 }), used("rank-cached", 21, { input_tokens: 10, cache_read_input_tokens: 1_000 })]);
		const res = await call("/v1/usage?since=2026-10-01&until=2026-10-01&group=agent&agent=rank-fresh,rank-cached");
		expect(res.status).toBe(200);
		const { agents } = (await res.json()) as { agents: { agent: string }[] };
		expect(agents.map((a) => a.agent)).toEqual(["rank-cached", "rank-fresh"]);
	});
});

describe("GET /v1/usage", () => {
	it("counts a job on the UTC day it was created, though it ended the day after", async () => {
		const at = new Date(Date.parse("2026-10-01T23:59:00Z"));
		const running = transition(createJob({ agent: "store-day", trigger_type: "manual", definition_revision: "rev1" }, at), "running", { reason: "start", at });
		const ended = transition(running, "completed", { reason: "end", at: new Date(Date.parse("2026-10-02T00:01:00Z")), exit_reason: "success" });
		const usage: JobUsage = {
			per_model: { "model-x": { input_tokens: 5, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } },
			num_turns: 1,
			total_cost_usd: 0.01,
		};
		await upsertJobIndex(env.DB, [{ ...ended, usage }]);
		const res = await call("/v1/usage?since=2026-10-01&until=2026-10-02&agent=store-day");
		expect(res.status).toBe(200);
		const { days } = (await res.json()) as { days: { day: string; jobs: number; input_tokens: number }[] };
		expect(days.map((d) => [d.day, d.jobs, d.input_tokens])).toEqual([["2026-10-01", 1, 5]]);
	});
});

describe("GET /v1/usage's cost", () => {
	it("is the cost of a day's one priced job that used tokens only as cache reads: it is no tokenless job", async () => {
		const { ended } = lifecycleRecords("store-cached-only", new Date(Date.parse("2026-10-03T08:00:00Z")));
		const usage: JobUsage = {
			per_model: { "model-x": { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 4_000 } },
			num_turns: 1,
			total_cost_usd: 0.0012,
		};
		await upsertJobIndex(env.DB, [{ ...ended, usage }]);
		const res = await call("/v1/usage?since=2026-10-03&until=2026-10-03&agent=store-cached-only");
		expect(res.status).toBe(200);
		const { days } = (await res.json()) as { days: { day: string; cache_read_input_tokens: number; cost_usd: number | null }[] };
		expect(days.map((d) => [d.day, d.cache_read_input_tokens, d.cost_usd])).toEqual([["2026-10-03", 4_000, 0.0012]]);
	});
});

describe("GET /v1/status's d1", () => {
	afterEach(() => {
		vi.restoreAllMocks();
		vi.useRealTimers();
	});

	it("says a failed read of D1's migrations once: the next call reads again, within the minute a good read stands", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2038-01-10T10:00:00Z") });
		const d1 = async () => {
			const res = await call("/v1/status");
			expect(res.status, await res.clone().text()).toBe(200);
			return ((await res.json()) as { d1: unknown }).d1;
		};
		// d1_migrations without its name column: the read fails (not "no such table", which is no record).
		await env.DB.prepare("ALTER TABLE d1_migrations RENAME TO d1_migrations_kept").run();
		await env.DB.prepare("CREATE TABLE d1_migrations (id INTEGER PRIMARY KEY)").run();
		const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
		expect(await d1()).toEqual({ ok: false });
		expect(errors.mock.calls.map(([line]) => JSON.parse(String(line)).event)).toEqual(["status.d1_unreadable"]);
		await env.DB.prepare("DROP TABLE d1_migrations").run();
		await env.DB.prepare("ALTER TABLE d1_migrations_kept RENAME TO d1_migrations").run();
		vi.setSystemTime(Date.parse("2038-01-10T10:00:10Z"));
		expect(await d1()).toEqual({ ok: true });
	});

	it("is ok, saying D1 keeps no record, where it has no d1_migrations table (a schema made by hand)", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2038-01-10T11:00:00Z") });
		await env.DB.prepare("ALTER TABLE d1_migrations RENAME TO d1_migrations_kept").run();
		try {
			const res = await call("/v1/status");
			expect(res.status, await res.clone().text()).toBe(200);
			expect(((await res.json()) as { d1: unknown }).d1).toEqual({ ok: true, recorded: false });
		} finally {
			await env.DB.prepare("ALTER TABLE d1_migrations_kept RENAME TO d1_migrations").run();
		}
	});
});

describe("the agent registry's forget of a deleted agent", () => {
	it("removes only the row of the deletion it names: a later delete of the name keeps its row", async () => {
		const definition = { name: "forget-later", prompt: "Do the thing." } as unknown as AgentDefinition;
		const t = Date.parse("2026-10-01T00:00:00Z");
		await upsertRegisteredAgent(env.DB, definition, "r1", "root", t);
		await markAgentDeleted(env.DB, "forget-later", t + 1);
		await upsertRegisteredAgent(env.DB, definition, "r2", "root", t + 2);
		await markAgentDeleted(env.DB, "forget-later", t + 3);
		// The first deletion's forget, arriving after the second deletion.
		await forgetRegisteredAgent(env.DB, "forget-later", t + 1);
		expect(await getRegisteredAgent(env.DB, "forget-later")).toMatchObject({ name: "forget-later", deletedAt: t + 3 });
		await forgetRegisteredAgent(env.DB, "forget-later", t + 3);
		expect(await getRegisteredAgent(env.DB, "forget-later")).toBeNull();
	});
});
