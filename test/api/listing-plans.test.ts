import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { listIncidents } from "../../src/store/incidents.ts";
import { listUsage } from "../../src/store/usage.ts";

// D1 runs no ANALYZE: these plans are production's, whatever the tables hold.

/** env.DB, keeping each statement it is asked to run (its SQL and parameters) and what D1 says it read. */
function recording(): { db: D1Database; runs: { sql: string; params: unknown[]; rowsRead: number }[] } {
	const runs: { sql: string; params: unknown[]; rowsRead: number }[] = [];
	const db = {
		prepare: (sql: string) => ({
			bind: (...params: unknown[]) => ({
				all: async () => {
					const result = await env.DB.prepare(sql).bind(...params).all();
					runs.push({ sql, params, rowsRead: result.meta.rows_read });
					return result;
				},
			}),
		}),
	} as unknown as D1Database;
	return { db, runs };
}

async function planOf(run: { sql: string; params: unknown[] }): Promise<string> {
	const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${run.sql}`).bind(...run.params).all<{ detail: string }>();
	return results.map((r) => r.detail).join(" | ");
}

const T0 = Date.parse("2026-06-01T00:00:00Z");

describe("GET /v1/incidents?agent=…", () => {
	it("seeks the agent's incidents newest first, with and without a cursor, in the order a sort gave", async () => {
		const states = ["detected", "alerted", "resolved", "closed"];
		const insert = env.DB.prepare(
			`INSERT INTO incidents (id, agent, signature, class, state, error, count, first_seen_at, last_seen_at) VALUES (?, ?, ?, 'error', ?, 'boom', 1, ?, ?)`,
		);
		await env.DB.batch(
			Array.from({ length: 60 }, (_, i) => {
				// Ties on last_seen_at, broken by id; another agent's between.
				const at = T0 + Math.floor(i / 3) * 1000;
				return insert.bind(`inc-${String(i).padStart(3, "0")}`, i % 4 === 3 ? "other" : "planned", `sig-${i}`, states[i % 4]!, at, at);
			}),
		);
		const { db, runs } = recording();
		const seen: string[] = [];
		let cursor: string | undefined;
		do {
			const page = await listIncidents(db, { agent: "planned" }, 7, cursor);
			seen.push(...page.incidents.map((i) => i.id));
			cursor = page.next_cursor ?? undefined;
		} while (cursor);
		const { results } = await env.DB.prepare("SELECT id FROM incidents WHERE agent = 'planned' ORDER BY last_seen_at DESC, id DESC").all<{ id: string }>();
		expect(seen).toEqual(results.map((r) => r.id));
		expect(runs.length).toBeGreaterThan(2);
		for (const run of runs) {
			const plan = await planOf(run);
			expect(plan).toMatch(/^SEARCH incidents USING INDEX incidents_by_agent_time \(agent=\?/);
			expect(plan).not.toMatch(/TEMP B-TREE|\|/);
			// The page, the row past it and the seek's edge, not the agent's rows before the cursor.
			expect(run.rowsRead).toBeLessThanOrEqual(9);
		}
		// With a state too, the index that leads with both.
		await listIncidents(db, { agent: "planned", state: "resolved" }, 7);
		expect(await planOf(runs.at(-1)!)).toMatch(/^SEARCH incidents USING INDEX incidents_by_agent \(agent=\? AND state=\?\)$/);
		// Open: each of its two states sought so, a page and the row past it read from each, not sorted whole.
		const before = runs.length;
		const open = await listIncidents(db, { agent: "planned", state: "open" }, 3);
		const { results: openIds } = await env.DB.prepare("SELECT id FROM incidents WHERE agent = 'planned' AND state IN ('detected', 'alerted') ORDER BY last_seen_at DESC, id DESC LIMIT 3").all<{ id: string }>();
		expect(open.incidents.map((i) => i.id)).toEqual(openIds.map((r) => r.id));
		expect(runs.length - before).toBe(2);
		for (const run of runs.slice(before)) {
			expect(await planOf(run)).toMatch(/^SEARCH incidents USING INDEX incidents_by_agent \(agent=\? AND state=\?\)$/);
			expect(run.rowsRead).toBeLessThanOrEqual(4);
		}
	});
});

describe("GET /v1/usage's cursor", () => {
	it("seeks to the row after it: a page reads its rows, not its day's rows before the cursor; the pages are the rows in order", async () => {
		const DAY = 86_400_000;
		const insert = env.DB.prepare(
			`INSERT INTO usage_daily (day, agent, jobs, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, cost_usd, priced_jobs) VALUES (?, ?, 1, 1, 1, 0, 0, 0, 0)`,
		);
		// Three days of 40 agents.
		await env.DB.batch(Array.from({ length: 120 }, (_, i) => insert.bind(T0 - Math.floor(i / 40) * DAY, `agent-${String(i % 40).padStart(2, "0")}`)));
		for (const agent of [undefined, "agent-07"]) {
			const { db, runs } = recording();
			const seen: string[] = [];
			let cursor: string | undefined;
			do {
				const page = await listUsage(db, { fromDay: T0 - 2 * DAY, toDay: T0, agents: agent ? [agent] : undefined }, 10, cursor);
				seen.push(...page.days.map((d) => `${d.day} ${d.agent}`));
				cursor = page.next_cursor ?? undefined;
			} while (cursor);
			const { results } = await env.DB.prepare(
				`SELECT day, agent FROM usage_daily WHERE day BETWEEN ? AND ?${agent ? " AND agent = ?" : ""} ORDER BY day DESC, agent ASC`,
			)
				.bind(T0 - 2 * DAY, T0, ...(agent ? [agent] : []))
				.all<{ day: number; agent: string }>();
			expect(seen).toEqual(results.map((r) => `${new Date(r.day).toISOString().slice(0, 10)} ${r.agent}`));
			for (const run of runs) {
				const plan = await planOf(run);
				expect(plan, run.sql).not.toMatch(/TEMP B-TREE/);
				// Each page reads its own rows and the one past them (a seek per side of the cursor's day), not the rows it skips.
				expect(run.rowsRead, `${agent} ${JSON.stringify(run.params)}`).toBeLessThanOrEqual(12);
			}
			if (agent) for (const run of runs) expect(await planOf(run)).toMatch(/USING INDEX usage_by_agent \(agent=\?/);
			if (!agent) {
				expect(runs.length).toBe(12);
				expect(await planOf(runs[3]!)).toMatch(/SEARCH usage_daily USING PRIMARY KEY \(day=\? AND agent>\?\)/);
			}
		}
	});
});
