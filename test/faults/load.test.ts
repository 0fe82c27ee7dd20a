import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import type { JobRecord } from "../../src/jobs/model.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { trigger } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { readEvents } from "../helpers/sse.ts";
import { dayFromToday, minuteOn, tick } from "../helpers/ticks.ts";

const AGENTS = 50;
const ROUNDS = 4;
// A week ahead of the real clock, as the literal 2026-12-07 it replaces was when it was written: a
// literal day comes due, then passes, and more than three days past its shard no longer deals its ids.
const T0 = minuteOn(dayFromToday(7), "10:00");

async function doRecords(agent: string): Promise<{ jobs: JobRecord[]; ledgerJobIds: string[]; lines: number }> {
	return runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) => {
		const sql = state.storage.sql;
		return {
			jobs: sql.exec<{ record: string }>("SELECT record FROM jobs").toArray().map((r) => JSON.parse(r.record) as JobRecord),
			ledgerJobIds: sql.exec<{ job_id: string }>("SELECT job_id FROM occurrences WHERE job_id IS NOT NULL").toArray().map((r) => r.job_id),
			lines: sql.exec<{ n: number }>("SELECT count(*) AS n FROM output_lines").one().n,
		};
	});
}

describe("load: 50 agents, ticks and manual triggers together, with live subscribers", () => {
	it("finishes every job, and the ledger, the agents' records, the D1 index and R2 agree exactly", async () => {
		// The ticks also claim the bundled fleet's site-watch (due at T0), whose alarm may fire, seconds
		// later, while this test still runs: its demo run fetches its allowlisted page.
		fake("https://example.com", () => new Response("<html>Example Domain</html>", { headers: { "content-type": "text/html" } }));
		const names = Array.from({ length: AGENTS }, (_, i) => `load-${String(i).padStart(2, "0")}`);
		for (const name of names) await createAgent({ name, max_concurrent: 3, schedules: { minute: { interval: "1m" } } });

		const streams: Promise<{ id: string; ids: number[]; last: string }>[] = [];
		for (let round = 0; round < ROUNDS; round++) {
			await tick(T0 + round * 60_000);
			for (const name of names.filter((_, i) => (i + round) % 5 === 0)) {
				const job = await trigger(name, `Round ${round}: report.`);
				if (streams.length < 10) {
					const res = await call(`/v1/jobs/${job.id}/stream`);
					streams.push(readEvents(res).then((events) => ({ id: job.id, ids: events.filter((e) => e.event === "line").map((e) => Number(e.id)), last: events.at(-1)!.event })));
				}
			}
			await Promise.all(names.map((n) => settle(n)));
		}

		let jobs = 0;
		let checks = 0;
		const { results: indexed } = await env.DB.prepare("SELECT id, agent, status, revision FROM jobs WHERE agent LIKE 'load-%'").all<{ id: string; agent: string; status: string; revision: number }>();
		const index = new Map(indexed.map((r) => [r.id, r]));
		for (const name of names) {
			const { jobs: records, ledgerJobIds, lines } = await doRecords(name);
			jobs += records.length;
			// Every job finished; none is left running or pending.
			expect(records.map((r) => r.status).filter((s) => s !== "completed")).toEqual([]);
			// One ledger row per job, and no row without its job.
			expect([...ledgerJobIds].sort()).toEqual(records.map((r) => r.id).sort());
			// The index holds exactly the agent's records, at the same revision.
			for (const r of records) {
				expect(index.get(r.id)).toEqual({ id: r.id, agent: name, status: r.status, revision: r.revision });
				index.delete(r.id);
				const object = await env.OUTPUT.get(r.output_file!);
				const text = await object!.text();
				const parsed = text.trimEnd().split("\n").map((l) => JSON.parse(l) as { type: string; subtype?: string });
				expect(parsed[0]).toMatchObject({ type: "system", subtype: "init" });
				expect(parsed.at(-1)).toMatchObject({ type: "system", subtype: "result" });
				checks += 3;
			}
			// Every line went to R2; none is left behind in the agent's SQLite.
			expect(lines).toBe(0);
		}
		expect(index.size).toBe(0);
		expect(jobs).toBe(AGENTS * ROUNDS + ROUNDS * (AGENTS / 5));

		for (const s of await Promise.all(streams)) {
			expect(s.ids).toEqual(Array.from({ length: s.ids.length }, (_, i) => i + 1));
			expect(s.last).toBe("end");
			checks++;
		}
		console.log(`load: ${AGENTS} agents, ${jobs} jobs, ${streams.length} live subscribers, ${checks} cross-store checks passed, 0 failed`);
	}, 120_000);
});
