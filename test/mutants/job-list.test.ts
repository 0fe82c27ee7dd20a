// The job list at its page edges, which a mutation walk found unchecked: a list that ends exactly at a
// page's end must say so (no cursor to an empty page), and a cursor at until's own instant must not
// let in a job created at until; and since equal to until is refused as since after it is.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createJob, type JobRecord, type JobSummary } from "../../src/jobs/model.ts";
import { buildListQuery, upsertJobIndex } from "../../src/store/job-index.ts";
import { call, errorOf } from "../helpers/http.ts";

const T0 = Date.parse("2026-10-01T00:00:00Z");

function job(agent: string, minute: number): JobRecord {
	return createJob({ agent, trigger_type: "manual", definition_revision: "rev1", schedule: null }, new Date(T0 + minute * 60_000));
}

async function page(query: string): Promise<{ jobs: JobSummary[]; next_cursor: string | null }> {
	const res = await call(`/v1/jobs${query}`);
	expect(res.status).toBe(200);
	return res.json();
}

describe("GET /v1/jobs at a page's edge", () => {
	it("gives no next_cursor on a page that holds the list's last job, when the list fills it exactly", async () => {
		await upsertJobIndex(env.DB, [job("edge-exact", 1), job("edge-exact", 2), job("edge-exact", 3), job("edge-exact", 4)]);
		const first = await page("?agent=edge-exact&limit=2");
		expect(first.jobs).toHaveLength(2);
		expect(first.next_cursor).not.toBeNull();
		const last = await page(`?agent=edge-exact&limit=2&cursor=${first.next_cursor}`);
		expect(last.jobs).toHaveLength(2);
		// The list is done: a client that follows cursors stops here, not after an empty page.
		expect(last.next_cursor).toBeNull();
		const whole = await page("?agent=edge-exact&limit=4");
		expect(whole.jobs).toHaveLength(4);
		expect(whole.next_cursor).toBeNull();
	});

	it("keeps a job created at until out, with a cursor at until's own instant", async () => {
		const at = job("edge-until", 10);
		const before = job("edge-until", 9);
		await upsertJobIndex(env.DB, [at, before]);
		const until = Date.parse(at.created_at);
		// A cursor whose position is until itself, with an id above the job's: until still bounds the list.
		const { sql, params } = buildListQuery({ agent: "edge-until", until }, 10, { at: until, id: "job-2026-10-01-zzzzzz" });
		const { results } = await env.DB.prepare(sql).bind(...params).all<{ id: string }>();
		expect(results.map((r) => r.id)).toEqual([before.id]);
	});

	it("refuses since equal to until, an empty window, as a 400 naming since", async () => {
		const res = await call("/v1/jobs?since=2026-10-01T00:10:00Z&until=2026-10-01T00:10:00Z");
		expect(res.status).toBe(400);
		const error = await errorOf(res);
		expect(error.message).toContain("since must be before until");
		expect(error.details).toMatchObject({ issues: [{ path: "since" }] });
	});
});
