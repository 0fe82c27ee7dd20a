import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { FinalStatus, JobRecord } from "../../src/jobs/model.ts";
import { countRegisteredAgents } from "../../src/store/agent-registry.ts";
import { countJobsByStatus, deleteFromJobIndex, upsertJobIndex } from "../../src/store/job-index.ts";
import { call } from "../helpers/http.ts";
import { endedRecord, lifecycleRecords, numberedRecord } from "../helpers/jobs.ts";

const T0 = Date.parse("2026-11-01T00:00:00Z");

/**
 * A job's successive records: pending, then running, then `final`. Its id's suffix is `i` (base 36):
 * drawn at random, two of this file's 2,000 a day meet about once in 115 runs, and the index keeps
 * one row for the two (and counts a final status of each).
 */
function lifecycle(i: number, final: FinalStatus = "completed"): JobRecord[] {
	const { pending, running, ended } = lifecycleRecords(`counts-${i % 3}`, new Date(T0 + i * 60_000), final);
	const id = `${pending.id.slice(0, -6)}${i.toString(36).padStart(6, "0")}`;
	return [pending, running, ended].map((r) => ({ ...r, id }));
}

/** What GET /v1/status says, and what counting the whole index says. */
async function statusAndTruth(): Promise<{ status: Record<string, number>; truth: Record<string, number> }> {
	const res = await call("/v1/status");
	expect(res.status).toBe(200);
	const { jobs } = (await res.json()) as { jobs: Record<string, number> };
	const { results } = await env.DB.prepare("SELECT status, count(*) AS n FROM jobs GROUP BY status").all<{ status: string; n: number }>();
	return { status: jobs, truth: Object.fromEntries(results.map((r) => [r.status, r.n])) };
}

describe("GET /v1/status: indexed jobs by status", () => {
	it("stays equal to a count of the index through every way a row changes: created, moved on, delivered twice, late, pruned", async () => {
		const [a, b, c, d] = [lifecycle(1), lifecycle(2, "failed"), lifecycle(3), lifecycle(4, "cancelled")];
		// Each job's records as the outbox can send them: in order, coalesced (a job seen first when
		// already final), a final record sent again after a lost acknowledgement, a late older one.
		await upsertJobIndex(env.DB, [a[0]!, b[0]!]);
		await upsertJobIndex(env.DB, [a[1]!, b[2]!, c[2]!]);
		await upsertJobIndex(env.DB, [a[2]!, b[2]!, d[1]!]);
		await upsertJobIndex(env.DB, [a[1]!, c[2]!]);
		let seen = await statusAndTruth();
		expect(seen.truth).toEqual({ completed: 2, failed: 1, running: 1 });
		expect(seen.status).toEqual(seen.truth);

		// A final job saved again later (a higher revision, the same status) is not counted twice.
		const resaved = { ...c[2]!, revision: c[2]!.revision + 1, summary: "delivered" };
		await upsertJobIndex(env.DB, [resaved, d[2]!]);
		seen = await statusAndTruth();
		expect(seen.truth).toEqual({ completed: 2, failed: 1, cancelled: 1 });
		expect(seen.status).toEqual(seen.truth);

		// Retention drops jobs from the index (and an id the index never had changes nothing).
		await deleteFromJobIndex(env.DB, a[0]!.agent, [a[0]!.id, "job-2026-01-01-absent"]);
		await deleteFromJobIndex(env.DB, b[0]!.agent, [b[0]!.id]);
		seen = await statusAndTruth();
		expect(seen.truth).toEqual({ completed: 1, cancelled: 1 });
		expect(seen.status).toEqual(seen.truth);
	});

	it("prunes by the ids it is given, reading their rows and not the agent's whole index, and only the agent's own", async () => {
		// Numbered ids: 1,500 drawn at random meet about once in 130 runs, and the index keeps one row for the two.
		const mine = Array.from({ length: 1_500 }, (_, i) => numberedRecord("prune-many", new Date(T0 + (10_000 + i) * 60_000), i, i % 5 === 0 ? "failed" : "completed"));
		for (let i = 0; i < mine.length; i += 250) await upsertJobIndex(env.DB, mine.slice(i, i + 250));
		const others = [endedRecord("prune-other", new Date(T0 + 20_000 * 60_000), "cancelled"), endedRecord("prune-other", new Date(T0 + 20_001 * 60_000), "failed")];
		await upsertJobIndex(env.DB, others);

		let rowsRead = 0;
		const db = new Proxy(env.DB, {
			get(target, prop) {
				if (prop === "prepare") return (query: string) => target.prepare(query);
				if (prop !== "batch") return Reflect.get(target, prop);
				return async (statements: D1PreparedStatement[]) => {
					const results = await target.batch(statements);
					for (const r of results) rowsRead += r.meta.rows_read;
					return results;
				};
			},
		});
		// Two failed and three completed of the agent's, another agent's two, and an id nobody has.
		const gone = [mine[0]!, mine[5]!, mine[1]!, mine[2]!, mine[3]!].map((j) => j.id);
		await deleteFromJobIndex(db, "prune-many", [...gone, ...others.map((j) => j.id), "job-2026-01-01-absent"]);

		const seen = await statusAndTruth();
		expect(seen.status).toEqual(seen.truth);
		const { results } = await env.DB.prepare("SELECT agent, count(*) AS n FROM jobs WHERE agent LIKE 'prune-%' GROUP BY agent ORDER BY agent").all();
		expect(results).toEqual([
			{ agent: "prune-many", n: 1_495 },
			{ agent: "prune-other", n: 2 },
		]);
		// Each id's row, a few times over: by the agent's index it read all 1,500 of its rows, twice.
		expect(rowsRead).toBeGreaterThan(0);
		expect(rowsRead).toBeLessThan(100);
	});

	it("reads a few rows, not the whole index, however many jobs it holds", async () => {
		const jobs = Array.from({ length: 2_000 }, (_, i) => lifecycle(100 + i, i % 10 === 0 ? "failed" : "completed")[2]!);
		for (let i = 0; i < jobs.length; i += 250) await upsertJobIndex(env.DB, jobs.slice(i, i + 250));
		await upsertJobIndex(env.DB, [lifecycle(5_000)[1]!]);

		let rowsRead = 0;
		const db = new Proxy(env.DB, {
			get(target, prop) {
				if (prop !== "prepare") return Reflect.get(target, prop);
				return (query: string) => {
					const statement = target.prepare(query);
					return new Proxy(statement, {
						get(s, p) {
							if (p === "bind") return (...values: unknown[]) => countingAll(s.bind(...values));
							return Reflect.get(s, p);
						},
					});
				};
			},
		});
		const countingAll = (s: D1PreparedStatement) =>
			new Proxy(s, {
				get(target, p) {
					if (p !== "all") return Reflect.get(target, p);
					return async () => {
						const result = await target.all();
						rowsRead += result.meta.rows_read;
						return result;
					};
				},
			});

		const { results } = await env.DB.prepare("SELECT status, count(*) AS n FROM jobs GROUP BY status").all<{ status: string; n: number }>();
		const truth = Object.fromEntries(results.map((r) => [r.status, r.n]));
		expect(truth.completed).toBeGreaterThanOrEqual(1_800);
		expect(await countJobsByStatus(db)).toEqual(truth);
		// The final statuses' rows of job_counts and the one running job's index entry: counting the
		// table, as GET /v1/status did before, read every one of the 2,001 rows.
		expect(rowsRead).toBeGreaterThan(0);
		expect(rowsRead).toBeLessThan(20);
	});
});

describe("GET /v1/status: registered agents", () => {
	it("counts the live agents from an index of their names, not by reading every definition", async () => {
		const t = Date.parse("2026-10-01T00:00:00Z");
		const add = env.DB.prepare("INSERT INTO agents (name, definition, definition_revision, created_by, created_at, updated_at, deleted_at) VALUES (?, '{}', 'r', 'root', ?, ?, ?)");
		const before = await countRegisteredAgents(env.DB);
		await env.DB.batch(Array.from({ length: 30 }, (_, i) => add.bind(`live-count-${i}`, t, t, i % 3 === 0 ? t + 1 : null)));
		expect(await countRegisteredAgents(env.DB)).toBe(before + 20);
		// Each row holds its whole definition (kilobytes): a SCAN of the table read 10,000 of them at
		// 10,000 agents for this one number, every 10 s a dashboard is open.
		const { results } = await env.DB.prepare("EXPLAIN QUERY PLAN SELECT count(*) AS n FROM agents WHERE deleted_at IS NULL").all<{ detail: string }>();
		expect(results.map((r) => r.detail)).toEqual(["SCAN agents USING INDEX agents_live"]);
	});
});
