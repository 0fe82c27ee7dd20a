import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { AgentDefinition } from "../../src/config/schema.ts";
import type { FinalStatus, JobRecord } from "../../src/jobs/model.ts";
import { countRegisteredAgents, forgetRegisteredAgent, markAgentDeleted, recountRegisteredAgents, upsertRegisteredAgent } from "../../src/store/agent-registry.ts";
import { countJobsByStatus, deleteFromJobIndex, upsertJobIndex } from "../../src/store/job-index.ts";
import { createAgent } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { endedRecord, lifecycleRecords, numberedRecord } from "../helpers/jobs.ts";
import { countingD1Reads } from "../helpers/sql.ts";
import { tick } from "../helpers/ticks.ts";

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

/** The counts `now` holds beyond `before`, by status (the file's other tests' jobs, whichever ran first, taken away). */
function added(now: Record<string, number>, before: Record<string, number>): Record<string, number> {
	return Object.fromEntries(Object.entries(now).map(([status, n]) => [status, n - (before[status] ?? 0)] as const).filter(([, n]) => n !== 0));
}

describe("GET /v1/status: indexed jobs by status", () => {
	it("stays equal to a count of the index through every way a row changes: created, moved on, delivered twice, late, pruned", async () => {
		const before = (await statusAndTruth()).truth;
		const [a, b, c, d] = [lifecycle(1), lifecycle(2, "failed"), lifecycle(3), lifecycle(4, "cancelled")];
		// Each job's records as the outbox can send them: in order, coalesced (a job seen first when
		// already final), a final record sent again after a lost acknowledgement, a late older one.
		await upsertJobIndex(env.DB, [a[0]!, b[0]!]);
		await upsertJobIndex(env.DB, [a[1]!, b[2]!, c[2]!]);
		await upsertJobIndex(env.DB, [a[2]!, b[2]!, d[1]!]);
		await upsertJobIndex(env.DB, [a[1]!, c[2]!]);
		let seen = await statusAndTruth();
		expect(added(seen.truth, before)).toEqual({ completed: 2, failed: 1, running: 1 });
		expect(seen.status).toEqual(seen.truth);

		// A final job saved again later (a higher revision, the same status) is not counted twice.
		const resaved = { ...c[2]!, revision: c[2]!.revision + 1, summary: "delivered" };
		await upsertJobIndex(env.DB, [resaved, d[2]!]);
		seen = await statusAndTruth();
		expect(added(seen.truth, before)).toEqual({ completed: 2, failed: 1, cancelled: 1 });
		expect(seen.status).toEqual(seen.truth);

		// Retention drops jobs from the index (and an id the index never had changes nothing).
		await deleteFromJobIndex(env.DB, a[0]!.agent, [a[0]!.id, "job-2026-01-01-absent"]);
		await deleteFromJobIndex(env.DB, b[0]!.agent, [b[0]!.id]);
		seen = await statusAndTruth();
		expect(added(seen.truth, before)).toEqual({ completed: 1, cancelled: 1 });
		expect(seen.status).toEqual(seen.truth);
	});

	it("prunes by the ids it is given, reading their rows and not the agent's whole index, and only the agent's own", async () => {
		// Numbered ids: 1,500 drawn at random meet about once in 130 runs, and the index keeps one row for the two.
		const mine = Array.from({ length: 1_500 }, (_, i) => numberedRecord("prune-many", new Date(T0 + (10_000 + i) * 60_000), i, i % 5 === 0 ? "failed" : "completed"));
		for (let i = 0; i < mine.length; i += 250) await upsertJobIndex(env.DB, mine.slice(i, i + 250));
		const others = [endedRecord("prune-other", new Date(T0 + 20_000 * 60_000), "cancelled"), endedRecord("prune-other", new Date(T0 + 20_001 * 60_000), "failed")];
		await upsertJobIndex(env.DB, others);

		const { db, rowsRead } = countingD1Reads(env.DB);
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
		expect(rowsRead()).toBeGreaterThan(0);
		expect(rowsRead()).toBeLessThan(100);
	});

	it("reads a few rows, not the whole index, however many jobs it holds", async () => {
		const jobs = Array.from({ length: 2_000 }, (_, i) => lifecycle(100 + i, i % 10 === 0 ? "failed" : "completed")[2]!);
		for (let i = 0; i < jobs.length; i += 250) await upsertJobIndex(env.DB, jobs.slice(i, i + 250));
		await upsertJobIndex(env.DB, [lifecycle(5_000)[1]!]);

		const { db, rowsRead } = countingD1Reads(env.DB);

		const { results } = await env.DB.prepare("SELECT status, count(*) AS n FROM jobs GROUP BY status").all<{ status: string; n: number }>();
		const truth = Object.fromEntries(results.map((r) => [r.status, r.n]));
		expect(truth.completed).toBeGreaterThanOrEqual(1_800);
		expect(await countJobsByStatus(db)).toEqual(truth);
		// The final statuses' rows of job_counts and the one running job's index entry: counting the
		// table, as GET /v1/status did before, read every one of the 2,001 rows.
		expect(rowsRead()).toBeGreaterThan(0);
		expect(rowsRead()).toBeLessThan(20);
	});
});

describe("GET /v1/status: registered agents", () => {
	const definition = (name: string) => ({ name, prompt: "Do the thing." }) as unknown as AgentDefinition;
	/** What counting the registry's live rows says. */
	const truth = async () => (await env.DB.prepare("SELECT count(*) AS n FROM agents WHERE deleted_at IS NULL").first<{ n: number }>())!.n;
	const statusCount = async () => {
		const res = await call("/v1/status");
		expect(res.status).toBe(200);
		return ((await res.json()) as { agents: { api: number } }).agents.api;
	};

	it("counts the live agents as the registry's writes make and unmake them", async () => {
		const base = await truth();
		const t = Date.parse("2026-10-01T00:00:00Z");
		const steps: [what: string, write: () => Promise<void>, live: number][] = [
			["defined", () => upsertRegisteredAgent(env.DB, definition("count-a"), "r1", "root", t), 1],
			["defined again (a new revision)", () => upsertRegisteredAgent(env.DB, definition("count-a"), "r2", "root", t + 1), 1],
			["another defined", () => upsertRegisteredAgent(env.DB, definition("count-b"), "r1", "root", t + 2), 2],
			["deleted", () => markAgentDeleted(env.DB, "count-a", t + 3), 1],
			["deleted again", () => markAgentDeleted(env.DB, "count-a", t + 4), 1],
			["a name never defined deleted", () => markAgentDeleted(env.DB, "count-never", t + 5), 1],
			["its name defined again", () => upsertRegisteredAgent(env.DB, definition("count-a"), "r3", "root", t + 6), 2],
			["the other deleted", () => markAgentDeleted(env.DB, "count-b", t + 7), 1],
			["the other forgotten, its retention passed", () => forgetRegisteredAgent(env.DB, "count-b", t + 7), 1],
		];
		for (const [what, write, live] of steps) {
			await write();
			expect(await truth(), what).toBe(base + live);
			expect(await countRegisteredAgents(env.DB), what).toBe(base + live);
			expect(await statusCount(), what).toBe(base + live);
		}
	});

	it("counts agents defined and deleted through the API, their objects writing the registry", async () => {
		const base = await truth();
		for (const name of ["api-count-1", "api-count-2", "api-count-3"]) await createAgent({ name });
		expect(await statusCount()).toBe(base + 3);
		const res = await call("/v1/agents/api-count-2", { method: "DELETE", as: "admin" });
		expect(res.status, await res.clone().text()).toBeLessThan(300);
		expect([await statusCount(), await truth()]).toEqual([base + 2, base + 2]);
	});

	it("reads one row for it, however many agents there are", async () => {
		const t = Date.parse("2026-10-02T00:00:00Z");
		for (let i = 0; i < 300; i++) await upsertRegisteredAgent(env.DB, definition(`many-${i}`), "r1", "root", t);
		const { db, rowsRead } = countingD1Reads(env.DB);
		expect(await countRegisteredAgents(db)).toBe(await truth());
		// Counted from the agents_live index, it read a row an agent: 300 here, every 10 s a dashboard is open.
		expect(rowsRead()).toBe(1);
	});

	it("is counted again at each hour's tick, which says when it was behind", async () => {
		// Rows a Worker from before D1 0014 wrote, which do not move the count: one defined, one deleted.
		const before = await countRegisteredAgents(env.DB);
		const t = Date.parse("2037-10-03T00:00:00Z");
		await upsertRegisteredAgent(env.DB, definition("old-worker-deleted"), "r1", "root", t);
		await env.DB.batch([
			env.DB.prepare("INSERT INTO agents (name, definition, definition_revision, created_by, created_at, updated_at) VALUES ('old-worker-1', '{}', 'r', 'root', ?1, ?1)").bind(t),
			env.DB.prepare("INSERT INTO agents (name, definition, definition_revision, created_by, created_at, updated_at) VALUES ('old-worker-2', '{}', 'r', 'root', ?1, ?1)").bind(t),
			env.DB.prepare("UPDATE agents SET deleted_at = ?1 WHERE name = 'old-worker-deleted'").bind(t),
		]);
		const live = await truth();
		expect(await countRegisteredAgents(env.DB)).toBe(before + 1);
		expect(live).toBe(before + 2);
		// Minutes other than an hour's first leave it; that one counts again, and says what it counted.
		expect(await recounts("2037-10-03T10:07:00Z")).toEqual([]);
		expect(await countRegisteredAgents(env.DB)).toBe(before + 1);
		expect(await recounts("2037-10-03T11:00:00Z")).toEqual([{ event: "agents.recounted", level: "warn", minute: "2037-10-03T11:00:00.000Z", live }]);
		expect([await countRegisteredAgents(env.DB), await statusCount()]).toEqual([live, live]);
		// Right, it is left as it is, and nothing is said.
		expect(await recounts("2037-10-03T12:00:00Z")).toEqual([]);
		expect(await countRegisteredAgents(env.DB)).toBe(live);
		// One read of the live agents' index (a row each; the deleted one not among them) and a few more
		// for the count's row: reading the index twice would be twice as many.
		const recount = countingD1Reads(env.DB);
		expect(await recountRegisteredAgents(recount.db)).toBeNull();
		expect(recount.rowsRead()).toBeGreaterThanOrEqual(live);
		expect(recount.rowsRead()).toBeLessThanOrEqual(live + 5);
		// Its row gone (by hand, say), the count reads 0 until the hour's tick makes it again.
		await env.DB.prepare("DELETE FROM agent_counts").run();
		expect(await countRegisteredAgents(env.DB)).toBe(0);
		expect(await recounts("2037-10-03T13:00:00Z")).toEqual([{ event: "agents.recounted", level: "warn", minute: "2037-10-03T13:00:00.000Z", live }]);
		expect(await statusCount()).toBe(live);
	});
});

/**
 * The tick of `minute`, run a few seconds into it as the cron's are (the clock set so: the agents it
 * claims are due then); the `agents.recounted` lines it wrote: their level, minute and count.
 */
async function recounts(minute: string): Promise<Record<string, unknown>[]> {
	const lines: Record<string, unknown>[] = [];
	const keep = (line: unknown) => {
		if (typeof line !== "string" || !line.startsWith("{")) return;
		const parsed = JSON.parse(line) as Record<string, unknown>;
		if (parsed.event === "agents.recounted" || parsed.event === "tick.agent_recount_failed") lines.push({ event: parsed.event, level: parsed.level, minute: parsed.minute, live: parsed.live });
	};
	const spies = (["log", "warn", "error"] as const).map((method) => vi.spyOn(console, method).mockImplementation(keep));
	vi.useFakeTimers({ toFake: ["Date"], now: Date.parse(minute) + 5_000 });
	try {
		await tick(minute);
	} finally {
		vi.useRealTimers();
		for (const spy of spies) spy.mockRestore();
	}
	return lines;
}
