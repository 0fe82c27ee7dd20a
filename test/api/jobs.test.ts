import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createJob, transition, type JobRecord, type JobSummary } from "../../src/jobs/model.ts";
import { buildListQuery, INDEX_ERROR_CHARS, INDEX_SUMMARY_CHARS, upsertJobIndex } from "../../src/store/job-index.ts";
import { call, errorOf } from "../helpers/http.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { runToRest, saveJob } from "../helpers/jobs.ts";
import { clip } from "../../src/shared/clip.ts";

const T0 = Date.parse("2026-11-01T00:00:00Z");

function job(i: number, agent: string, trigger: "schedule" | "manual" = "manual"): JobRecord {
	return createJob(
		{ agent, trigger_type: trigger, definition_revision: "rev1", schedule: trigger === "schedule" ? "nightly" : null },
		// Two jobs share each minute, so pages must break ties on the id.
		new Date(T0 + Math.floor(i / 2) * 60_000),
	);
}

async function page(query: string): Promise<{ jobs: JobSummary[]; next_cursor: string | null }> {
	const res = await call(`/v1/jobs${query}`);
	expect(res.status).toBe(200);
	return res.json();
}

async function all(query: string, limit: number): Promise<JobSummary[]> {
	const seen: JobSummary[] = [];
	let cursor: string | null = null;
	do {
		const sep = query ? "&" : "?";
		const p = await page(`${query}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
		expect(p.jobs.length).toBeLessThanOrEqual(limit);
		seen.push(...p.jobs);
		cursor = p.next_cursor;
	} while (cursor);
	return seen;
}

/** The index as it is before any job: the file's other tests index theirs in it, whichever ran first. */
async function emptyIndex(): Promise<void> {
	await env.DB.prepare("DELETE FROM jobs").run();
}

describe("GET /v1/jobs", () => {
	it("returns an empty page when there are no jobs", async () => {
		await emptyIndex();
		expect(await page("")).toEqual({ jobs: [], next_cursor: null });
	});

	it("pages newest first through every job exactly once, ties broken by id", async () => {
		await emptyIndex();
		const jobs = Array.from({ length: 45 }, (_, i) => job(i, i % 3 === 0 ? "alpha" : "beta", i % 2 ? "schedule" : "manual"));
		// One finished job, to show the index carries status changes.
		jobs[0] = transition(transition(jobs[0]!, "running", { reason: "start", at: new Date(T0 + 1000) }), "completed", {
			reason: "done",
			at: new Date(T0 + 5000),
		});
		await upsertJobIndex(env.DB, jobs);

		const listed = await all("", 20);
		expect(listed).toHaveLength(45);
		expect(new Set(listed.map((j) => j.id)).size).toBe(45);
		const keys = listed.map((j) => [Date.parse(j.created_at), j.id] as const);
		const sorted = [...keys].sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? 1 : -1));
		expect(keys).toEqual(sorted);

		const first = listed.find((j) => j.id === jobs[0]!.id)!;
		expect(first).toMatchObject({ status: "completed", exit_reason: "success", revision: 3, duration_seconds: 4 });

		const alpha = await all("?agent=alpha", 7);
		expect(alpha.map((j) => j.id).sort()).toEqual(jobs.filter((j) => j.agent === "alpha").map((j) => j.id).sort());
		const scheduledBeta = await all("?agent=beta&trigger_type=schedule", 5);
		expect(scheduledBeta.length).toBe(jobs.filter((j) => j.agent === "beta" && j.trigger_type === "schedule").length);
		expect(scheduledBeta.every((j) => j.agent === "beta" && j.trigger_type === "schedule" && j.schedule === "nightly")).toBe(true);
		expect((await all("?status=completed", 10)).map((j) => j.id)).toEqual([jobs[0]!.id]);

		const since = new Date(T0 + 10 * 60_000).toISOString();
		const until = new Date(T0 + 15 * 60_000).toISOString();
		const window = await all(`?since=${since}&until=${until}`, 3);
		expect(window).toHaveLength(10);
		expect(window.every((j) => j.created_at >= since && j.created_at < until)).toBe(true);
		// A date alone is its start, in UTC: every job was made on 2026-11-01.
		expect(await all("?since=2026-11-01&until=2026-11-02", 10)).toHaveLength(jobs.length);
		expect(await all("?until=2026-11-01", 10)).toHaveLength(0);
		// ISO 8601 to the minute (no seconds), in UTC or with an offset, is the same window.
		const minute = (ms: number) => new Date(ms).toISOString().slice(0, 16);
		const offset = (ms: number) => `${new Date(ms + 3_600_000).toISOString().slice(0, 16)}%2B01:00`;
		const byMinute = await all(`?since=${minute(T0 + 10 * 60_000)}Z&until=${offset(T0 + 15 * 60_000)}`, 3);
		expect(byMinute.map((j) => j.id)).toEqual(window.map((j) => j.id));
	});

	it("never lets an older revision overwrite a newer one in the index", async () => {
		const pending = job(100, "gamma");
		const running = transition(pending, "running", { reason: "start", at: new Date(T0) });
		await upsertJobIndex(env.DB, [running]);
		await upsertJobIndex(env.DB, [pending]);
		const listed = await page("?agent=gamma");
		expect(listed.jobs.map((j) => [j.status, j.revision])).toEqual([["running", 2]]);
	});

	it("keeps a summary within 500 characters, cut with … and no emoji split, however long the record's (the record keeps 2,000)", async () => {
		// The runner clips the summary it writes; the index is bounded by its own write, not by trusting
		// every sender: a row past D1's size limit would fail the whole outbox batch, again at each retry.
		const long = "x".repeat(INDEX_SUMMARY_CHARS - 5) + "🦀".repeat(5000);
		const done = transition(transition(job(0, "clipper"), "running", { reason: "start", at: new Date(T0 + 1000) }), "completed", {
			reason: "done",
			at: new Date(T0 + 5000),
			summary: long,
		});
		await upsertJobIndex(env.DB, [done]);
		const [listed] = (await page("?agent=clipper")).jobs;
		expect(listed!.summary!.length).toBeLessThanOrEqual(500);
		expect(listed!.summary === clip(long, INDEX_SUMMARY_CHARS)).toBe(true);
		expect(listed!.summary!.endsWith("🦀…")).toBe(true);
		expect(listed!.summary!.isWellFormed()).toBe(true);
		const short = transition(job(1, "clipper"), "running", { reason: "start", at: new Date(T0 + 1000) });
		await upsertJobIndex(env.DB, [transition(short, "completed", { reason: "done", at: new Date(T0 + 2000), summary: "All done." })]);
		expect((await page("?agent=clipper")).jobs.map((j) => j.summary)).toContain("All done.");
	});

	it("says what ended a failed job, as its record does, where a completed job has its answer", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ error: 400, message: "max_tokens: 999999 > 64000, which is the maximum allowed" }, { text: "All clear." });
		await createAgent({ name: "why-failed" });
		const failed = await runToRest("why-failed");
		const done = await runToRest("why-failed");
		await settle("why-failed");
		expect(failed).toMatchObject({ status: "failed", error: { type: expect.any(String), message: expect.stringContaining("max_tokens: 999999 > 64000") } });
		const listed = (await page("?agent=why-failed")).jobs;
		expect(listed.map((j) => [j.id, j.status, j.summary, j.error])).toEqual([
			[done.id, "completed", "All clear.", null],
			// The list's error is the record's type and message (its request_id is the record's alone).
			[failed.id, "failed", null, { type: failed.error!.type, message: failed.error!.message }],
		]);
		expect(failed.error!.request_id).toMatch(/^req_/);
	});

	it("keeps a listed error message within 500 characters, cut with …, the record holding it whole", async () => {
		const message = "upstream said: " + "e".repeat(INDEX_ERROR_CHARS * 2);
		const running = transition(job(2, "long-error"), "running", { reason: "start", at: new Date(T0 + 1000) });
		await upsertJobIndex(env.DB, [transition(running, "failed", { reason: "model call failed", at: new Date(T0 + 2000), error: { type: "api_error", message } })]);
		const [listed] = (await page("?agent=long-error")).jobs;
		expect(listed!.error).toEqual({ type: "api_error", message: clip(message, INDEX_ERROR_CHARS) });
		expect(listed!.error!.message).toHaveLength(INDEX_ERROR_CHARS);
		expect(listed!.error!.message.endsWith("e…")).toBe(true);
	});

	it("stamps a row's updated_at in whole ms as D1 writes it, and keeps it when a stale revision is refused", async () => {
		const updatedAt = async (id: string) => (await env.DB.prepare("SELECT updated_at FROM jobs WHERE id = ?").bind(id).first<{ updated_at: number }>())!.updated_at;
		const pending = job(101, "delta");
		// workerd's clock stands still between I/O, so D1's can only be at or past it.
		const before = Date.now();
		await upsertJobIndex(env.DB, [pending]);
		const first = await updatedAt(pending.id);
		expect(Number.isInteger(first)).toBe(true);
		expect(first).toBeGreaterThanOrEqual(before);
		expect(first).toBeLessThanOrEqual(Date.now() + 1);
		const running = transition(pending, "running", { reason: "start", at: new Date(T0) });
		await upsertJobIndex(env.DB, [running]);
		const second = await updatedAt(pending.id);
		expect(second).toBeGreaterThanOrEqual(first);
		await upsertJobIndex(env.DB, [pending]);
		expect(await updatedAt(pending.id)).toBe(second);
	});

	const bad: [string, string, string][] = [
		["?limit=0", "limit", "must be at least 1, got 0"],
		["?limit=201", "limit", "must be at most 200, got 201"],
		["?limit=ten", "limit", "must be a whole number from 1 to 200"],
		["?status=done", "status", "pending"],
		["?trigger_type=cron", "trigger_type", "schedule"],
		["?agent=../etc", "agent", "must be an agent name"],
		["?agent=%27%3B%20DROP%20TABLE%20jobs%3B--", "agent", "must be an agent name"],
		["?since=yesterday", "since", "ISO 8601"],
		["?until=2026-13-01", "until", "or a date"],
		["?since=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z", "since", "since must be before until"],
		["?stauts=failed", "stauts", "unrecognized key"],
	];
	for (const [query, path, fragment] of bad) {
		it(`answers 400 to ${decodeURIComponent(query)}, naming the field`, async () => {
			const res = await call(`/v1/jobs${query}`);
			expect(res.status).toBe(400);
			const error = await errorOf(res);
			expect(error.code).toBe("bad_request");
			expect(error.details?.issues?.some((i) => i.path === path && i.message.toLowerCase().includes(fragment.toLowerCase()))).toBe(true);
		});
	}

	for (const cursor of ["not-a-cursor!", "bm90IGpzb24", btoa(JSON.stringify(["x", 1])), btoa(JSON.stringify([1]))]) {
		it(`answers 400 to the malformed cursor ${cursor}`, async () => {
			const res = await call(`/v1/jobs?cursor=${encodeURIComponent(cursor)}`);
			expect(res.status).toBe(400);
			const error = await errorOf(res);
			expect(error.message).toMatch(/cursor is malformed/);
			expect(error.details?.issues?.map((i) => i.path)).toEqual(["cursor"]);
		});
	}

	it("refuses a cursor with other filters or from another list, and still pages with the ones that gave it", async () => {
		await upsertJobIndex(env.DB, Array.from({ length: 6 }, (_, i) => job(200 + i, i % 2 ? "omega" : "sigma")));
		const first = await page("?agent=omega&limit=2");
		expect(first.next_cursor).not.toBeNull();
		const cursor = encodeURIComponent(first.next_cursor!);

		const same = await page(`?agent=omega&limit=2&cursor=${cursor}`);
		expect(same.jobs.map((j) => j.agent)).toEqual(["omega"]);

		for (const query of [`?agent=sigma&cursor=${cursor}`, `?cursor=${cursor}`, `?agent=omega&status=pending&cursor=${cursor}`]) {
			const res = await call(`/v1/jobs${query}`);
			expect(res.status).toBe(400);
			const error = await errorOf(res);
			expect(error.message).toMatch(/cursor belongs to another list or to other filters/);
			expect(error.details?.issues?.map((i) => i.path)).toEqual(["cursor"]);
		}
		const runs = await call(`/v1/agents/omega/runs?cursor=${cursor}`);
		expect(runs.status).toBe(400);
		expect((await errorOf(runs)).message).toMatch(/another list/);
	});

	it("refuses a cursor that names no list (untagged, or with its tag cut off) on every list, and one cut short, paging nothing", async () => {
		await upsertJobIndex(env.DB, Array.from({ length: 3 }, (_, i) => job(300 + i, "kappa")));
		const first = await page("?agent=kappa&limit=1");
		// The same position without its list's tag: [at, id] instead of [at, id, tag].
		const [at, id] = JSON.parse(atob(first.next_cursor!.replace(/-/g, "+").replace(/_/g, "/"))) as [number, string, string];
		const untagged = btoa(JSON.stringify([at, id])).replace(/=+$/, "");
		for (const list of ["/v1/jobs?agent=kappa&", "/v1/jobs?", "/v1/agents/kappa/runs?", "/v1/usage?", "/v1/incidents?"]) {
			const res = await call(`${list}cursor=${untagged}`);
			expect(res.status, list).toBe(400);
			const error = await errorOf(res);
			expect(error.code).toBe("bad_request");
			expect(error.message, list).toBe("cursor does not belong to this list: it names none (a cursor from before cursors named their list, or one cut short); drop the cursor to start over");
			expect(error.details?.issues?.map((i) => i.path)).toEqual(["cursor"]);
		}
		const cut = await call(`/v1/jobs?agent=kappa&cursor=${first.next_cursor!.slice(0, -4)}`);
		expect(cut.status).toBe(400);
		expect((await errorOf(cut)).message).toMatch(/cursor is malformed/);
		// The cursor as given still pages on.
		expect((await page(`?agent=kappa&limit=1&cursor=${encodeURIComponent(first.next_cursor!)}`)).jobs).toHaveLength(1);
	});
});

describe("the job index's query plans", () => {
	// Every filter shape the API allows, each with no cursor and with a cursor on either side of
	// `until`. D1 runs no ANALYZE: these are the plans production gets, whatever the table holds.
	const values = { agent: "a", status: "running", trigger_type: "manual", since: T0 - 86_400_000, until: T0 } as const;
	const keys = Object.keys(values) as (keyof typeof values)[];
	const shapes = Array.from({ length: 1 << keys.length }, (_, mask) => Object.fromEntries(keys.filter((_k, i) => mask & (1 << i)).map((k) => [k, values[k]])));
	const intended = (f: Record<string, unknown>) =>
		f.agent !== undefined && f.status !== undefined ? "jobs_by_agent_status_time" : f.agent !== undefined ? "jobs_by_agent_time" : f.status !== undefined ? "jobs_by_status_time" : f.trigger_type !== undefined ? "jobs_by_trigger_time" : "jobs_by_time";
	for (const filters of shapes) {
		it(`reads ${intended(filters)}, in its order, for ${JSON.stringify(filters)}, with and without a cursor`, async () => {
			for (const after of [undefined, { at: T0 - 3_600_000, id: "job-2026-10-31-aaaaaa" }, { at: T0 + 3_600_000, id: "job-2026-11-01-aaaaaa" }]) {
				const { sql, params } = buildListQuery(filters, 20, after);
				const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`).bind(...params).all<{ detail: string }>();
				const plan = results.map((r) => r.detail).join(" | ");
				const bounded = Object.keys(filters).length > 0 || after !== undefined;
				expect(plan, JSON.stringify({ filters, after })).toMatch(new RegExp(`^${bounded ? "SEARCH" : "SCAN"} jobs USING INDEX ${intended(filters)}\\b`));
				expect(plan, JSON.stringify({ filters, after })).not.toMatch(/TEMP B-TREE|\|/);
			}
		});
	}

	it("pages through an until window with a cursor to the same rows, whichever side of until the cursor lies", async () => {
		const jobs = Array.from({ length: 30 }, (_, i) => job(5000 + i, i % 2 ? "upsilon" : "phi", i % 3 ? "schedule" : "manual"));
		await upsertJobIndex(env.DB, jobs);
		const until = new Date(T0 + 2505 * 60_000).toISOString();
		const expected = (pick: (j: JobRecord) => boolean) =>
			jobs
				.filter((j) => pick(j) && j.created_at < until)
				.sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at) || (a.id < b.id ? 1 : -1))
				.map((j) => j.id);
		expect((await all(`?agent=upsilon&until=${until}`, 2)).map((j) => j.id)).toEqual(expected((j) => j.agent === "upsilon"));
		expect((await all(`?agent=phi&status=pending&until=${until}`, 3)).map((j) => j.id)).toEqual(expected((j) => j.agent === "phi"));
		expect((await all(`?trigger_type=schedule&until=${until}&since=${new Date(T0 + 2502 * 60_000).toISOString()}`, 1)).map((j) => j.id)).toEqual(
			expected((j) => j.trigger_type === "schedule" && j.created_at >= new Date(T0 + 2502 * 60_000).toISOString()),
		);
		// A cursor from a page before until was moved below it: the rows after the cursor, none at or past until.
		const { sql, params } = buildListQuery({ agent: "upsilon", until: Date.parse(until) - 60_000 }, 100, { at: Date.parse(until) + 60_000, id: "job-2026-11-01-zzzzzz" });
		const { results } = await env.DB.prepare(sql).bind(...params).all<{ id: string }>();
		expect(results.map((r) => r.id)).toEqual(expected((j) => j.agent === "upsilon" && Date.parse(j.created_at) < Date.parse(until) - 60_000));
	});
});

describe("GET /v1/jobs/:id", () => {
	it("returns the full record from the agent's Durable Object", async () => {
		const record = transition(job(200, "delta"), "running", { reason: "claimed", at: new Date(T0 + 1) });
		await saveJob("delta", record);
		await upsertJobIndex(env.DB, [record]);
		const res = await call(`/v1/jobs/${record.id}`);
		expect(res.status).toBe(200);
		// With its hook calls: none while it runs (test/effects/job-hooks.test.ts has them).
		expect(await res.json()).toEqual({ ...record, hooks: [] });
	});

	it("gives YAML only when Accept weights it above JSON, honouring q=0 as refused", async () => {
		const record = transition(job(201, "delta"), "running", { reason: "claimed", at: new Date(T0 + 1) });
		await saveJob("delta", record);
		await upsertJobIndex(env.DB, [record]);
		for (const [accept, yaml] of [
			["application/yaml", true],
			["application/yaml;q=0", false],
			["application/yaml;q=0, */*", false],
			["application/json;q=0.5, application/yaml;q=0.9", true],
			["application/yaml;q=0.5, application/json", false],
			["text/html, */*;q=0.1", false],
			["text/yaml", true],
			["application/x-yaml;q=0.8, application/json;q=0.7", true],
		] as const) {
			const res = await call(`/v1/jobs/${record.id}`, { headers: { accept } });
			expect(res.status, accept).toBe(200);
			expect(res.headers.get("vary"), accept).toMatch(/accept/i);
			if (yaml) {
				expect(res.headers.get("content-type"), accept).toMatch(/^application\/yaml/);
				expect(await res.text(), accept).toContain(`id: ${record.id}`);
			} else {
				expect(res.headers.get("content-type"), accept).toMatch(/^application\/json/);
				expect(await res.json(), accept).toEqual({ ...record, hooks: [] });
			}
		}
	});

	it("answers 404 for a well-formed id nobody has", async () => {
		// Today's day: an id within the retention is simply unknown.
		const id = `job-${new Date().toISOString().slice(0, 10)}-zzzzzz`;
		const res = await call(`/v1/jobs/${id}`);
		expect(res.status).toBe(404);
		expect(await errorOf(res)).toMatchObject({ code: "not_found", message: `no job ${id}` });
	});

	it("says, on every job route, that retention may have removed an unknown id from before RETENTION_DAYS, and nothing of it for one within them", async () => {
		// RETENTION_DAYS is 30 (wrangler.toml). The day 31 days back began more than 30 days ago; the
		// day 29 days back did not. Read by day, not by the clock's hour: each holds at any time of day.
		const dayBack = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
		const gone = `job-${dayBack(31)}-zzzzzz`;
		const kept = `job-${dayBack(29)}-zzzzzz`;
		for (const [method, path, as] of [
			["GET", "", "read"],
			["GET", "/output", "read"],
			["GET", "/stream", "read"],
			["GET", "/output.log", "read"],
			["GET", "/tool-calls", "read"],
			["GET", "/manifest", "read"],
			["POST", "/cancel", "operate"],
			["POST", "/approval", "operate"],
			["POST", "/continue", "operate"],
			["POST", "/fork", "operate"],
		] as const) {
			const body = method === "POST" ? { body: path === "/approval" ? { decision: "approve" } : path === "/continue" || path === "/fork" ? { prompt: "again" } : {} } : {};
			const old = await call(`/v1/jobs/${gone}${path}`, { method, as, ...body });
			expect(old.status, `${method} ${path}`).toBe(404);
			expect(await errorOf(old), `${method} ${path}`).toMatchObject({
				code: "not_found",
				message: `no job ${gone}: its id is from ${dayBack(31)}, and a job is kept 30 days after it ends (RETENTION_DAYS; less where its agent sets retention_days), so retention may have removed it`,
			});
			const recent = await call(`/v1/jobs/${kept}${path}`, { method, as, ...body });
			expect(recent.status, `${method} ${path}`).toBe(404);
			expect(await errorOf(recent), `${method} ${path}`).toMatchObject({ code: "not_found", message: `no job ${kept}` });
		}
	});

	for (const id of ["job-2026-11-30-ZZZZZZ", "..%2F..%2Fetc", "job-2026-11-30-a'--x", "job-2026-13-01-abcdef", "%E2%98%83", "job-2026-02-30-abcdef", "job-2025-02-29-abcdef"]) {
		it(`answers 400, never a lookup, for the id ${decodeURIComponent(id)}`, async () => {
			const res = await call(`/v1/jobs/${id}`);
			expect(res.status).toBe(400);
			expect((await errorOf(res)).message).toMatch(/job id must be job-YYYY-MM-DD-xxxxxx/);
		});
	}

	it("answers 400 naming the impossible date on every job route, before any lookup", async () => {
		const id = "job-2026-02-30-abcdef";
		for (const [method, path, as] of [
			["GET", "", "read"],
			["GET", "/output", "read"],
			["GET", "/stream", "read"],
			["POST", "/cancel", "operate"],
			["POST", "/fork", "operate"],
		] as const) {
			const res = await call(`/v1/jobs/${id}${path}`, { method, as, ...(method === "POST" ? { body: {} } : {}) });
			expect(res.status, `${method} ${path}`).toBe(400);
			expect(await errorOf(res), `${method} ${path}`).toMatchObject({ code: "bad_request", message: expect.stringContaining("2026-02-30 is not a date") });
		}
	});
});
