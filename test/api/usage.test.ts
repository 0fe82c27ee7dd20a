import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { JobRecord, JobUsage } from "../../src/jobs/model.ts";
import { deleteFromJobIndex, upsertJobIndex } from "../../src/store/job-index.ts";
import type { UsageAgentTotal, UsageDay, UsageDayTotal } from "../../src/store/usage.ts";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { lifecycleRecords, runToRest } from "../helpers/jobs.ts";

interface UsagePage {
	since: string;
	until: string;
	days: UsageDay[];
	next_cursor: string | null;
}

const tokens = (n: number) => ({ input_tokens: n, output_tokens: 2 * n, cache_creation_input_tokens: 3 * n, cache_read_input_tokens: 4 * n });

/** A job of `agent` created at `at`: its running record and its final one, with this usage. */
function job(agent: string, at: string, usage: JobUsage): { running: JobRecord; ended: JobRecord } {
	const { running, ended } = lifecycleRecords(agent, new Date(at));
	return { running, ended: { ...ended, usage } };
}

// A test that reads "today" as the server does runs on a fake clock: on the real one, a midnight UTC
// passing between the test's reading and the server's moved the default days under it.
const DAY_OF_TEST = Date.parse("2037-06-15T12:00:00Z");
afterEach(() => {
	vi.useRealTimers();
});

async function usage(query: string): Promise<UsagePage> {
	const res = await call(`/v1/usage?${query}`);
	expect(res.status).toBe(200);
	return (await res.json()) as UsagePage;
}

describe("GET /v1/usage: a job on an unpriced model that reported no tokens", () => {
	it("makes no cost for its day: it is no priced job, though it used no tokens", async () => {
		const zero = job("usage-zero", "2026-05-11T08:00:00Z", { per_model: { "model-unpriced": tokens(0) }, num_turns: 1, total_cost_usd: null });
		await upsertJobIndex(env.DB, [zero.ended]);
		const page = await usage("since=2026-05-11&until=2026-05-11&agent=usage-zero");
		expect(page.days).toEqual([{ day: "2026-05-11", agent: "usage-zero", jobs: 1, ...tokens(0), cost_usd: null, priced_jobs: 0 }]);
	});
});

describe("GET /v1/usage: a day's cost", () => {
	it("is summed to the millionth of a dollar: a cheap model's calls are not rounded away, nor a float sum's error kept", async () => {
		const cheap = job("usage-cheap", "2026-05-12T08:00:00Z", { per_model: { "model-x": tokens(1) }, num_turns: 1, total_cost_usd: 0.000123 });
		const tenth = job("usage-cheap", "2026-05-12T09:00:00Z", { per_model: { "model-x": tokens(1) }, num_turns: 1, total_cost_usd: 0.1 });
		const fifth = job("usage-cheap", "2026-05-12T10:00:00Z", { per_model: { "model-x": tokens(1) }, num_turns: 1, total_cost_usd: 0.2 });
		await upsertJobIndex(env.DB, [cheap.ended, tenth.ended, fifth.ended]);
		const page = await usage("since=2026-05-12&until=2026-05-12&agent=usage-cheap");
		expect(page.days).toEqual([{ day: "2026-05-12", agent: "usage-cheap", jobs: 3, ...tokens(3), cost_usd: 0.300123, priced_jobs: 3 }]);
	});
});

describe("GET /v1/usage: tokens and cost by agent and day", () => {
	it("adds each ended job to its agent's day once, however the index receives its records, and keeps it after the job is pruned", async () => {
		const a1 = job("usage-a", "2026-11-02T08:00:00Z", { per_model: { "model-x": tokens(10), "model-y": tokens(1) }, num_turns: 2, total_cost_usd: 0.25 });
		const a2 = job("usage-a", "2026-11-02T23:59:00Z", { per_model: { "model-x": tokens(100) }, num_turns: 1, total_cost_usd: null });
		const a3 = job("usage-a", "2026-11-03T00:00:00Z", { per_model: { "model-x": tokens(1000) }, num_turns: 1, total_cost_usd: 0.5 });
		const b1 = job("usage-b", "2026-11-02T12:00:00Z", { per_model: {}, num_turns: 0, total_cost_usd: null });
		const live = job("usage-b", "2026-11-03T09:00:00Z", { per_model: { "model-x": tokens(7) }, num_turns: 1, total_cost_usd: 0.1 });

		// As the outbox sends them: in order; coalesced (first seen final); a final record again after
		// a lost acknowledgement; a late older one; a final one saved again later; one still running.
		await upsertJobIndex(env.DB, [a1.running, b1.ended]);
		await upsertJobIndex(env.DB, [a1.ended, a2.ended, a3.running]);
		await upsertJobIndex(env.DB, [a1.ended, a1.running, a3.ended, live.running]);
		await upsertJobIndex(env.DB, [{ ...a3.ended, revision: a3.ended.revision + 1, summary: "delivered" }]);

		const page = await usage("since=2026-11-01&until=2026-11-03");
		expect(page).toMatchObject({ since: "2026-11-01", until: "2026-11-03", next_cursor: null });
		expect(page.days).toEqual([
			{ day: "2026-11-03", agent: "usage-a", jobs: 1, ...tokens(1000), cost_usd: 0.5, priced_jobs: 1 },
			{ day: "2026-11-02", agent: "usage-a", jobs: 2, ...tokens(111), cost_usd: 0.25, priced_jobs: 1 },
			// A job that never called a model cost nothing: priced, at $0, not among the unpriced; alone, it
			// makes no cost for the day.
			{ day: "2026-11-02", agent: "usage-b", jobs: 1, ...tokens(0), cost_usd: null, priced_jobs: 1 },
		]);

		// One agent, one day.
		expect((await usage("agent=usage-b&since=2026-11-02&until=2026-11-02")).days.map((d) => [d.day, d.agent, d.jobs])).toEqual([["2026-11-02", "usage-b", 1]]);

		// Retention prunes jobs from the index, not from their usage.
		await deleteFromJobIndex(env.DB, "usage-a", [a1.ended.id, a2.ended.id]);
		await deleteFromJobIndex(env.DB, "usage-b", [b1.ended.id]);
		expect((await usage("since=2026-11-01&until=2026-11-03")).days).toEqual(page.days);
	});

	it("gives no cost for a day on which no job that used tokens was priced: a job that never called a model is priced, at $0, but does not make the day's cost $0", async () => {
		const none: JobUsage = { per_model: {}, num_turns: 0, total_cost_usd: null };
		const noCall = (agent: string, hour: string, status: "cancelled" | "failed") => lifecycleRecords(agent, new Date(`2026-09-10T${hour}:00:00Z`), status).ended;
		// As the walkthrough had it: a cancelled and a failed run that made no model call, and a run on
		// a model without a price; every record's total_cost_usd null.
		const unpriced = job("nocall-a", "2026-09-10T10:00:00Z", { per_model: { "model-unpriced": tokens(50) }, num_turns: 1, total_cost_usd: null });
		const priced = job("nocall-b", "2026-09-10T10:00:00Z", { per_model: { "model-x": tokens(50) }, num_turns: 1, total_cost_usd: 0.2 });
		await upsertJobIndex(env.DB, [
			{ ...noCall("nocall-a", "08", "cancelled"), usage: none },
			{ ...noCall("nocall-a", "09", "failed"), usage: none },
			unpriced.ended,
			{ ...noCall("nocall-b", "08", "cancelled"), usage: none },
			priced.ended,
			{ ...noCall("nocall-c", "08", "failed"), usage: none },
		]);
		expect((await usage("since=2026-09-10&until=2026-09-10")).days).toEqual([
			// Its tokens' cost is not known: no cost, not $0 (the two that made no call are still priced).
			{ day: "2026-09-10", agent: "nocall-a", jobs: 3, ...tokens(50), cost_usd: null, priced_jobs: 2 },
			// Beside a priced job, one that made no call is priced at $0: the day is not partly priced.
			{ day: "2026-09-10", agent: "nocall-b", jobs: 2, ...tokens(50), cost_usd: 0.2, priced_jobs: 2 },
			// No job that used tokens at all: no cost either.
			{ day: "2026-09-10", agent: "nocall-c", jobs: 1, ...tokens(0), cost_usd: null, priced_jobs: 1 },
		]);

		// A day added to before migration 0013 (its tokenless_priced_jobs 0) is answered as it was: the
		// rollup holds sums, not jobs, so it cannot be told apart.
		await env.DB.prepare(
			`INSERT INTO usage_daily (day, agent, jobs, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, cost_usd, priced_jobs) VALUES (?, 'nocall-old', 3, 50, 100, 150, 200, 0, 2)`,
		)
			.bind(Date.parse("2026-09-09"))
			.run();
		expect((await usage("since=2026-09-09&until=2026-09-09")).days).toEqual([{ day: "2026-09-09", agent: "nocall-old", jobs: 3, ...tokens(50), cost_usd: 0, priced_jobs: 2 }]);
	});

	it("adds a job whose id another agent's job holds never, rather than once per send: it has no index row to count it by", async () => {
		const a = job("dup-a", "2026-10-05T08:00:00Z", { per_model: { "model-x": tokens(100) }, num_turns: 1, total_cost_usd: 0.1 });
		const b = job("dup-b", "2026-10-05T09:00:00Z", { per_model: { "model-x": tokens(100) }, num_turns: 1, total_cost_usd: 0.1 });
		const bEnded = { ...b.ended, id: a.ended.id, status: "failed" as const, exit_reason: "error" as const, error: { type: "error", message: "x" } };
		const countsBefore = await env.DB.prepare("SELECT status, n FROM job_counts").all<{ status: string; n: number }>();
		await upsertJobIndex(env.DB, [a.ended]);
		await upsertJobIndex(env.DB, [bEnded]);
		await upsertJobIndex(env.DB, [{ ...bEnded, revision: bEnded.revision + 1 }]);
		const days = (await usage("since=2026-10-05&until=2026-10-05")).days;
		expect(days.map((d) => [d.agent, d.jobs])).toEqual([["dup-a", 1]]);
		const counts = await env.DB.prepare("SELECT status, n FROM job_counts").all<{ status: string; n: number }>();
		const n = (rows: { status: string; n: number }[], status: string) => rows.find((r) => r.status === status)?.n ?? 0;
		expect(n(counts.results, "failed")).toBe(n(countsBefore.results, "failed"));
		expect(n(counts.results, "completed")).toBe(n(countsBefore.results, "completed") + 1);
	});

	it("pages through agents and days with next_cursor, newest day first, none missed or repeated", async () => {
		const jobs = [];
		for (let d = 1; d <= 4; d++) {
			for (const agent of ["page-c", "page-a", "page-b"]) jobs.push(job(agent, `2026-10-0${d}T10:00:00Z`, { per_model: { m: tokens(d) }, num_turns: 1, total_cost_usd: null }).ended);
		}
		await upsertJobIndex(env.DB, jobs);
		const whole = (await usage("since=2026-10-01&until=2026-10-04")).days.map((d) => `${d.day} ${d.agent}`);
		expect(whole).toEqual(["04", "03", "02", "01"].flatMap((d) => ["page-a", "page-b", "page-c"].map((a) => `2026-10-${d} ${a}`)));
		const paged: string[] = [];
		let cursor: string | null = null;
		do {
			const page: UsagePage = await usage(`since=2026-10-01&until=2026-10-04&limit=5${cursor ? `&cursor=${cursor}` : ""}`);
			expect(page.days.length).toBeLessThanOrEqual(5);
			paged.push(...page.days.map((d) => `${d.day} ${d.agent}`));
			cursor = page.next_cursor;
		} while (cursor);
		expect(paged).toEqual(whole);
	});

	it("binds a cursor to the days and agent that gave it: other days or another agent are a 400, the same days asked explicitly page on", async () => {
		// A day of its own: the default days (the week to today) hold only this test's jobs, not those
		// of a test of the file on DAY_OF_TEST that ran first.
		vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2037-03-16T12:00:00Z") });
		const today = new Date().toISOString().slice(0, 10);
		const yesterday = new Date(Date.parse(today) - 86_400_000).toISOString().slice(0, 10);
		const weekAgo = new Date(Date.parse(today) - 6 * 86_400_000).toISOString().slice(0, 10);
		await upsertJobIndex(
			env.DB,
			["scope-a", "scope-b"].flatMap((agent) => [today, yesterday].map((day) => job(agent, `${day}T01:00:00Z`, { per_model: { m: tokens(1) }, num_turns: 1, total_cost_usd: null }).ended)),
		);
		const first = await usage("limit=1");
		expect(first.days.map((d) => `${d.day} ${d.agent}`)).toEqual([`${today} scope-a`]);
		const cursor = encodeURIComponent(first.next_cursor!);

		// The same days, by default or spelled out, page on.
		const rest = `${today} scope-b,${yesterday} scope-a,${yesterday} scope-b`;
		for (const query of [`cursor=${cursor}`, `since=${weekAgo}&until=${today}&cursor=${cursor}`]) {
			expect((await usage(query)).days.map((d) => `${d.day} ${d.agent}`).join(), query).toBe(rest);
		}
		for (const query of [`until=${yesterday}&cursor=${cursor}`, `until=2026-11-30&cursor=${cursor}`, `since=${yesterday}&cursor=${cursor}`, `agent=scope-b&cursor=${cursor}`]) {
			const res = await call(`/v1/usage?${query}`);
			expect(res.status, query).toBe(400);
			expect((await errorOf(res)).message, query).toMatch(/cursor belongs to another list or to other filters/);
		}
		// Another list's cursor is refused too.
		expect((await call(`/v1/jobs?cursor=${cursor}`)).status).toBe(400);

		// An untagged cursor names no list: it is refused, as on the other lists.
		const untagged = btoa(JSON.stringify([Date.parse(today), "scope-a"])).replace(/=+$/, "");
		const res = await call(`/v1/usage?until=${yesterday}&cursor=${untagged}`);
		expect(res.status).toBe(400);
		expect((await errorOf(res)).message).toMatch(/^cursor does not belong to this list: it names none/);
	});

	it("counts a job run by an agent with the usage its record reports, on the day it was created", async () => {
		vi.useFakeTimers({ toFake: ["Date"], now: DAY_OF_TEST });
		useEmulator().enqueue({ text: "Done." });
		await createAgent({ name: "usage-run" });
		const done = await runToRest("usage-run");
		expect(done.status).toBe("completed");
		const model = Object.values(done.usage.per_model);
		expect(model).toHaveLength(1);
		const today = done.created_at.slice(0, 10);
		const page = await usage(`agent=usage-run&since=${today}&until=${today}`);
		expect(page.days).toEqual([{ day: today, agent: "usage-run", jobs: 1, ...model[0]!, cost_usd: done.usage.total_cost_usd, priced_jobs: done.usage.total_cost_usd === null ? 0 : 1 }]);
		// Without dates: the last 7 days, today included.
		const recent = await usage("agent=usage-run");
		expect(recent.until).toBe(new Date().toISOString().slice(0, 10));
		expect(Date.parse(recent.until) - Date.parse(recent.since)).toBe(6 * 86_400_000);
		expect(recent.days).toEqual(page.days);
	});

	it("sums each day's agents with group=day, as their rows add up: no cost only when no agent's day has one, paged by day", async () => {
		const none: JobUsage = { per_model: {}, num_turns: 0, total_cost_usd: null };
		const at = (day: string, agent: string, hour: string) => `2026-08-${day}T${hour}:00:00Z`;
		await upsertJobIndex(env.DB, [
			// The 3rd: an agent on a model without a price, one whose only jobs made no call, one priced.
			job("sum-a", at("03", "sum-a", "08"), { per_model: { "model-unpriced": tokens(50) }, num_turns: 1, total_cost_usd: null }).ended,
			{ ...lifecycleRecords("sum-b", new Date(at("03", "sum-b", "09")), "cancelled").ended, usage: none },
			job("sum-c", at("03", "sum-c", "10"), { per_model: { "model-x": tokens(10) }, num_turns: 1, total_cost_usd: 0.25 }).ended,
			job("sum-c", at("03", "sum-c", "11"), { per_model: { "model-x": tokens(5) }, num_turns: 1, total_cost_usd: 0.125 }).ended,
			// The 2nd: no agent's day has a cost (an unpriced model, a job that made no call).
			job("sum-a", at("02", "sum-a", "08"), { per_model: { "model-unpriced": tokens(7) }, num_turns: 1, total_cost_usd: null }).ended,
			{ ...lifecycleRecords("sum-b", new Date(at("02", "sum-b", "09")), "failed").ended, usage: none },
			// The 1st: one agent, priced.
			job("sum-b", at("01", "sum-b", "08"), { per_model: { "model-x": tokens(1) }, num_turns: 1, total_cost_usd: 0.5 }).ended,
		]);
		const range = "since=2026-08-01&until=2026-08-04";
		const byAgent = (await usage(range)).days;
		const totals = (await call(`/v1/usage?${range}&group=day`).then((r) => r.json())) as { since: string; until: string; days: UsageDayTotal[]; next_cursor: string | null };
		expect(totals).toEqual({
			since: "2026-08-01",
			until: "2026-08-04",
			days: [
				{ day: "2026-08-03", agents: 3, jobs: 4, ...tokens(65), cost_usd: 0.375, priced_jobs: 3 },
				{ day: "2026-08-02", agents: 2, jobs: 2, ...tokens(7), cost_usd: null, priced_jobs: 1 },
				{ day: "2026-08-01", agents: 1, jobs: 1, ...tokens(1), cost_usd: 0.5, priced_jobs: 1 },
			],
			next_cursor: null,
		});
		// Each day is its agents' rows added up, a cost where any of them has one.
		for (const total of totals.days) {
			const rows = byAgent.filter((d) => d.day === total.day);
			const sum = (k: keyof UsageDay & keyof UsageDayTotal) => rows.reduce((n, d) => n + (d[k] as number), 0);
			expect(total.agents).toBe(rows.length);
			for (const k of ["jobs", "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "priced_jobs"] as const) expect(total[k], `${total.day} ${k}`).toBe(sum(k));
			expect(total.cost_usd).toBe(rows.every((d) => d.cost_usd === null) ? null : rows.reduce((n, d) => n + (d.cost_usd ?? 0), 0));
		}
		// One agent's days alone.
		expect((await call(`/v1/usage?${range}&group=day&agent=sum-c`).then((r) => r.json())) as { days: UsageDayTotal[] }).toMatchObject({
			days: [{ day: "2026-08-03", agents: 1, jobs: 2, ...tokens(15), cost_usd: 0.375, priced_jobs: 2 }],
		});
		// Paged by day, none missed or repeated; a cursor of the list by agent is another list's.
		const days: string[] = [];
		let cursor: string | null = null;
		do {
			const res = await call(`/v1/usage?${range}&group=day&limit=2${cursor ? `&cursor=${cursor}` : ""}`);
			expect(res.status).toBe(200);
			const page = (await res.json()) as { days: UsageDayTotal[]; next_cursor: string | null };
			expect(page.days.length).toBeLessThanOrEqual(2);
			days.push(...page.days.map((d) => d.day));
			cursor = page.next_cursor;
		} while (cursor);
		expect(days).toEqual(["2026-08-03", "2026-08-02", "2026-08-01"]);
		const agentCursor = (await usage(`${range}&limit=1`)).next_cursor!;
		const foreign = await call(`/v1/usage?${range}&group=day&cursor=${agentCursor}`);
		expect(foreign.status).toBe(400);
		expect((await errorOf(foreign)).message).toMatch(/cursor belongs to another list/);
		expect((await call(`/v1/usage?${range}&group=week`)).status).toBe(400);
	});

	it("sums each agent's days with group=agent, busiest first by its tokens, paged by agent with the count of them all; agent takes several names", async () => {
		const none: JobUsage = { per_model: {}, num_turns: 0, total_cost_usd: null };
		const on = (day: string, hour: string) => `2026-07-${day}T${hour}:00:00Z`;
		await upsertJobIndex(env.DB, [
			// rank-b: 100 + 10 tokens (x10 for the four classes) over two days, priced.
			job("rank-b", on("01", "08"), { per_model: { "model-x": tokens(100) }, num_turns: 1, total_cost_usd: 0.25 }).ended,
			job("rank-b", on("02", "08"), { per_model: { "model-x": tokens(10) }, num_turns: 1, total_cost_usd: 0.5 }).ended,
			// rank-a and rank-c tie on 110 tokens: by name.
			job("rank-c", on("02", "09"), { per_model: { "model-unpriced": tokens(11) }, num_turns: 1, total_cost_usd: null }).ended,
			job("rank-a", on("03", "09"), { per_model: { "model-x": tokens(11) }, num_turns: 1, total_cost_usd: 0.125 }).ended,
			// rank-d: the most tokens, a day of them and a day of a job that made no call.
			job("rank-d", on("01", "10"), { per_model: { "model-x": tokens(500) }, num_turns: 1, total_cost_usd: 1 }).ended,
			{ ...lifecycleRecords("rank-d", new Date(on("03", "10")), "cancelled").ended, usage: none },
			// rank-e: no tokens at all, last.
			{ ...lifecycleRecords("rank-e", new Date(on("02", "10")), "failed").ended, usage: none },
			// Outside the days asked.
			job("rank-a", "2026-06-30T09:00:00Z", { per_model: { "model-x": tokens(9999) }, num_turns: 1, total_cost_usd: 9 }).ended,
		]);
		const range = "since=2026-07-01&until=2026-07-03";
		const res = await call(`/v1/usage?${range}&group=agent`);
		expect(res.status).toBe(200);
		const whole = (await res.json()) as { since: string; until: string; agents: UsageAgentTotal[]; total: number; next_cursor: string | null };
		expect(whole).toEqual({
			since: "2026-07-01",
			until: "2026-07-03",
			agents: [
				{ agent: "rank-d", days: 2, jobs: 2, ...tokens(500), cost_usd: 1, priced_jobs: 2 },
				{ agent: "rank-b", days: 2, jobs: 2, ...tokens(110), cost_usd: 0.75, priced_jobs: 2 },
				{ agent: "rank-a", days: 1, jobs: 1, ...tokens(11), cost_usd: 0.125, priced_jobs: 1 },
				{ agent: "rank-c", days: 1, jobs: 1, ...tokens(11), cost_usd: null, priced_jobs: 0 },
				{ agent: "rank-e", days: 1, jobs: 1, ...tokens(0), cost_usd: null, priced_jobs: 1 },
			],
			total: 5,
			next_cursor: null,
		});
		// Each agent is its rows by day added up.
		const byDay = (await usage(range)).days;
		for (const a of whole.agents) {
			const rows = byDay.filter((d) => d.agent === a.agent);
			expect(a.days).toBe(rows.length);
			expect(a.input_tokens).toBe(rows.reduce((n, d) => n + d.input_tokens, 0));
		}
		// Paged by agent, none missed or repeated, the count on every page; a cursor of another grouping is another list's.
		const paged: string[] = [];
		let cursor: string | null = null;
		do {
			const page = (await call(`/v1/usage?${range}&group=agent&limit=2${cursor ? `&cursor=${cursor}` : ""}`).then((r) => r.json())) as typeof whole;
			expect(page.agents.length).toBeLessThanOrEqual(2);
			expect(page.total).toBe(5);
			paged.push(...page.agents.map((a) => a.agent));
			cursor = page.next_cursor;
		} while (cursor);
		expect(paged).toEqual(["rank-d", "rank-b", "rank-a", "rank-c", "rank-e"]);
		const dayCursor = ((await call(`/v1/usage?${range}&group=day&limit=1`).then((r) => r.json())) as { next_cursor: string }).next_cursor;
		const foreign = await call(`/v1/usage?${range}&group=agent&cursor=${dayCursor}`);
		expect(foreign.status).toBe(400);
		expect((await errorOf(foreign)).message).toMatch(/cursor belongs to another list/);

		// Several agents: their rows alone, in each grouping; a cursor is bound to the names given.
		const two = "agent=rank-b,rank-c";
		expect((await usage(`${range}&${two}`)).days.map((d) => `${d.day} ${d.agent}`)).toEqual(["2026-07-02 rank-b", "2026-07-02 rank-c", "2026-07-01 rank-b"]);
		const first = await usage(`${range}&${two}&limit=1`);
		expect((await usage(`${range}&${two}&cursor=${first.next_cursor}`)).days.map((d) => `${d.day} ${d.agent}`)).toEqual(["2026-07-02 rank-c", "2026-07-01 rank-b"]);
		expect((await call(`/v1/usage?${range}&agent=rank-b&cursor=${first.next_cursor}`)).status).toBe(400);
		expect(((await call(`/v1/usage?${range}&${two}&group=day`).then((r) => r.json())) as { days: UsageDayTotal[] }).days).toEqual([
			{ day: "2026-07-02", agents: 2, jobs: 2, ...tokens(21), cost_usd: 0.5, priced_jobs: 1 },
			{ day: "2026-07-01", agents: 1, jobs: 1, ...tokens(100), cost_usd: 0.25, priced_jobs: 1 },
		]);
		expect((await call(`/v1/usage?${range}&${two}&group=agent`).then((r) => r.json())) as typeof whole).toMatchObject({ agents: [{ agent: "rank-b" }, { agent: "rank-c" }], total: 2 });
	});

	it("refuses bad input with a 400 that says what was wrong, and callers without a token", async () => {
		const cases: [string, RegExp][] = [
			["since=2026-13-01", /since: must be a date, YYYY-MM-DD/],
			["until=yesterday", /until: must be a date, YYYY-MM-DD/],
			// Its default since would be of year -1, answered as "-000001-12".
			["until=0000-01-03", /until: must be 1970-01-01 or later: no job is older/],
			["since=1969-12-31", /since: must be 1970-01-01 or later/],
			["since=2026-11-05&until=2026-11-04", /since must not be after until/],
			["since=2999-01-01", /since: 2999-01-01 is after until \(\d{4}-\d{2}-\d{2}, today by default\)/],
			["limit=0", /limit/],
			["limit=1001", /limit/],
			["agent=Not_An_Agent", /agent: must be an agent name, or several separated by commas, each 1-63 lowercase letters, digits or -, starting with a letter or digit; it has "N" at character 1/],
			["agent=ok-one,Not_An_Agent", /agent: must be an agent name, or several separated by commas, each 1-63 lowercase letters, digits or -, starting with a letter or digit; "Not_An_Agent" has "N"/],
			["agent=ok-one,", /agent: .*; "" is empty/],
			[`agent=${Array.from({ length: 21 }, (_, i) => `a-${i}`).join(",")}`, /agent: names 21 agents; at most 20/],
			["group=week", /group: /],
			["cursor=not*a*cursor", /cursor is malformed/],
			["days=7", /days/],
		];
		for (const [query, message] of cases) {
			const res = await call(`/v1/usage?${query}`);
			expect(res.status, query).toBe(400);
			expect((await errorOf(res)).message, query).toMatch(message);
		}
		// An until of 1970's first days gives a default since of 1970-01-01, not a day the query would refuse.
		expect(await (await call("/v1/usage?until=1970-01-03")).json()).toMatchObject({ since: "1970-01-01", until: "1970-01-03" });
		// The check made after the schema's reads as the schema's own: the field at fault in details.issues.
		const after = await errorOf(await call("/v1/usage?since=2999-01-01"));
		expect(after).toMatchObject({ code: "bad_request", details: { issues: [{ path: "since", message: expect.stringMatching(/^2999-01-01 is after until/) }] } });
		expect(after.message).toBe(`invalid query: since: ${after.details?.issues?.[0]?.message}`);
		expect((await call("/v1/usage", { as: null })).status).toBe(401);
	});
});
