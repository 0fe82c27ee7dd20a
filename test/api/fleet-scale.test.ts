// What each read route costs at fleet scale: 1,000 agents, 100,000 indexed jobs, 5,000 incidents and
// 30 days of usage, seeded straight into D1. The Worker's bindings are wrapped (never replaced) to
// count the Durable Object calls a request makes and the D1 statements it runs and the rows D1 says
// they read, so a route that starts asking every agent's object, or reading every job, fails here.
import { createExecutionContext, env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { app } from "../../src/app.ts";
import { AgentSchema } from "../../src/config/schema.ts";
import { recountRegisteredAgents } from "../../src/store/agent-registry.ts";
import { TOKENS } from "../helpers/tokens.ts";

const AGENTS = 1_000;
const JOBS = 100_000;
const INCIDENTS = 5_000;
const DAYS = 30;
const DAY_MS = 86_400_000;
const NOW = Date.now();
const TODAY = Math.floor(NOW / DAY_MS) * DAY_MS;

const name = (i: number) => `scale-${String(i).padStart(4, "0")}`;

interface Cost {
	doCalls: number;
	statements: number;
	rowsRead: number;
	bytes: number;
	status: number;
}

/**
 * env with its AGENT namespace and D1 wrapped: every object a request addresses is a call (each
 * agentRpc or forward gets its own stub), every statement run is counted with the rows D1 read for it.
 */
function metered(cost: Cost): Env {
	const pass = <T extends object>(target: T, prop: string | symbol) => {
		const value: unknown = Reflect.get(target, prop, target);
		return typeof value === "function" ? value.bind(target) : value;
	};
	const real = new WeakMap<object, D1PreparedStatement>();
	const statement = (stmt: D1PreparedStatement): D1PreparedStatement => {
		const wrapped = new Proxy(stmt, {
			get(target, prop) {
				if (prop === "bind") return (...values: unknown[]) => statement(target.bind(...values));
				// first() and raw() give no meta: run as all() to learn what D1 read, and answered the same.
				if (prop === "all" || prop === "first" || prop === "run") {
					return async (column?: string) => {
						cost.statements++;
						const result = await target.all<Record<string, unknown>>();
						cost.rowsRead += result.meta.rows_read;
						if (prop !== "first") return result;
						const row = result.results[0] ?? null;
						return column === undefined || row === null ? row : row[column];
					};
				}
				return pass(target, prop);
			},
		});
		real.set(wrapped, stmt);
		return wrapped;
	};
	const DB = new Proxy(env.DB, {
		get(target, prop) {
			if (prop === "prepare") return (sql: string) => statement(target.prepare(sql));
			if (prop === "batch") {
				return async (stmts: D1PreparedStatement[]) => {
					cost.statements += stmts.length;
					const results = await target.batch(stmts.map((s) => real.get(s) ?? s));
					for (const r of results) cost.rowsRead += r.meta.rows_read;
					return results;
				};
			}
			return pass(target, prop);
		},
	});
	const AGENT = new Proxy(env.AGENT, {
		get(target, prop) {
			if (prop === "getByName" || prop === "get") return (...args: unknown[]) => (cost.doCalls++, (Reflect.get(target, prop, target) as (...a: unknown[]) => unknown).apply(target, args));
			return pass(target, prop);
		},
	});
	return { ...env, DB, AGENT } as Env;
}

async function measure(path: string): Promise<Cost> {
	const cost: Cost = { doCalls: 0, statements: 0, rowsRead: 0, bytes: 0, status: 0 };
	const res = await app.fetch(new Request(`https://drover.test${path}`, { headers: { authorization: `Bearer ${TOKENS.read}` } }), metered(cost), createExecutionContext());
	cost.status = res.status;
	cost.bytes = (await res.arrayBuffer()).byteLength;
	return cost;
}

beforeAll(async () => {
	const definition = (i: number) => JSON.stringify(AgentSchema.parse({ name: name(i), system_prompt: "Scale.", prompt: "Go.", schedules: { hourly: { cron: `${i % 60} * * * *` } } }));
	const register = env.DB.prepare("INSERT INTO agents (name, definition, definition_revision, created_by, created_at, updated_at) VALUES (?, ?, 'r1', 'root', ?, ?)");
	for (let i = 0; i < AGENTS; i += 100) await env.DB.batch(Array.from({ length: 100 }, (_, k) => register.bind(name(i + k), definition(i + k), NOW, NOW)));
	// Rows written straight in, as a Worker from before D1 0014 would have: counted as an hour's tick would.
	await recountRegisteredAgents(env.DB);
	// 100,000 jobs over 30 days, newest first by i: 50 running and 50 pending among the newest, the
	// rest ended, each agent's spread through the whole range.
	await env.DB.prepare(
		`INSERT INTO jobs (id, agent, schedule, trigger_type, status, exit_reason, created_at, started_at, summary, revision, updated_at)
		 WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1 - 1)
		 SELECT 'job-' || strftime('%Y-%m-%d', (?2 - i * ?3) / 1000, 'unixepoch') || '-' || printf('%06d', i), printf('scale-%04d', i % ?4), 'hourly', 'schedule',
		   CASE WHEN i < 50 THEN 'running' WHEN i < 100 THEN 'pending' WHEN i % 10 = 0 THEN 'failed' ELSE 'completed' END,
		   CASE WHEN i < 100 THEN NULL WHEN i % 10 = 0 THEN 'error' ELSE 'success' END,
		   ?2 - i * ?3, CASE WHEN i < 50 OR i >= 100 THEN '2020-01-01T00:00:00Z' END, 'Done.', 3, ?2 FROM n`,
	)
		.bind(JOBS, NOW, Math.floor((DAYS * DAY_MS) / JOBS), AGENTS)
		.run();
	await env.DB.prepare("INSERT OR REPLACE INTO job_counts (status, n) SELECT status, count(*) FROM jobs WHERE status IN ('completed', 'failed') GROUP BY status").run();
	await env.DB.prepare(
		`INSERT INTO incidents (id, agent, signature, class, state, error, count, first_seen_at, last_seen_at)
		 WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1 - 1)
		 SELECT printf('scale_%012x', i), printf('scale-%04d', i % ?2), printf('sig-%d', i), 'error',
		   CASE i % 4 WHEN 0 THEN 'detected' WHEN 1 THEN 'alerted' WHEN 2 THEN 'resolved' ELSE 'closed' END, 'boom', 1, ?3 - i * 1000, ?3 - i * 1000 FROM n`,
	)
		.bind(INCIDENTS, AGENTS, NOW)
		.run();
	// D1 binds a number as a REAL: i / ?2 without the cast was a fraction, every row a day of its own.
	await env.DB.prepare(
		`INSERT INTO usage_daily (day, agent, jobs, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, cost_usd, priced_jobs, tokenless_priced_jobs)
		 WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1 * ?2 - 1)
		 SELECT ?3 - (i / CAST(?2 AS INTEGER)) * ?4, printf('scale-%04d', i % ?2), 3, 100, 10, 0, 0, 0.01, 3, 0 FROM n`,
	)
		.bind(DAYS, AGENTS, TODAY, DAY_MS)
		.run();
	await env.DB.prepare(
		"INSERT OR REPLACE INTO scheduler_heartbeat (id, tick_at, scheduled_time, outcome, shards_ok, shards_failed, agents_called, claimed, skipped, last_ok_at) VALUES (1, ?1, ?1, 'ok', 16, 0, 17, 17, 0, ?1)",
	)
		.bind(NOW)
		.run();
}, 120_000);

describe(`read routes over ${AGENTS.toLocaleString("en-US")} agents and ${JOBS.toLocaleString("en-US")} jobs`, () => {
	const newest = `job-${new Date(NOW).toISOString().slice(0, 10)}-000000`;
	// The agents and jobs are D1's alone (their objects hold none of them), so a job's record, its
	// session and an agent's persistent session answer 404: after the same reads and the same call.
	const routes: [path: string, bound: Partial<Cost>][] = [
		["/healthz", { doCalls: 0, statements: 2 }],
		// The live agents' count is one row (counting them read 1,000 here); the rest, the live jobs, at
		// most 21 of the 1,250 open incidents not paged and 21 of them open (counting them all read 1,374
		// rows in all; about 210 read with both counts bounded), and the definition_secret look through
		// the registry: a page of 10 names and the definitions this isolate has not read at their
		// revision, all 10 on its first pass (30 here; reading the registry whole read 1,212).
		["/v1/status", { doCalls: 0, rowsRead: 260 }],
		["/v1/agents", { doCalls: 50 }],
		["/v1/agents?limit=200", { doCalls: 200 }],
		["/v1/agents?view=names&limit=200", { doCalls: 0, statements: 1 }],
		[`/v1/agents/${name(7)}`, { doCalls: 1 }],
		["/v1/jobs", { doCalls: 0, statements: 1 }],
		["/v1/jobs?limit=200", { doCalls: 0, statements: 1 }],
		[`/v1/jobs?agent=${name(7)}&status=completed`, { doCalls: 0, statements: 1 }],
		["/v1/jobs?status=running", { doCalls: 0, statements: 1 }],
		[`/v1/jobs/${newest}`, { doCalls: 1 }],
		[`/v1/agents/${name(7)}/jobs?limit=50`, { doCalls: 0, statements: 1 }],
		[`/v1/agents/${name(7)}/runs`, { doCalls: 1 }],
		[`/v1/agents/${name(7)}/sessions`, { doCalls: 1 }],
		[`/v1/agents/${name(7)}/sessions/current`, { doCalls: 1 }],
		[`/v1/sessions/ses-${newest}`, { doCalls: 1 }],
		["/v1/incidents", { doCalls: 0, statements: 1 }],
		[`/v1/incidents?agent=${name(7)}`, { doCalls: 0, statements: 1 }],
		["/v1/usage", { doCalls: 0, statements: 1 }],
		[`/v1/usage?since=${new Date(TODAY - (DAYS - 1) * DAY_MS).toISOString().slice(0, 10)}&limit=1000`, { doCalls: 0, statements: 1 }],
		// The week's days summed in D1: its 7,000 agent-days read there, 7 rows answered.
		["/v1/usage?group=day", { doCalls: 0, statements: 1, rowsRead: 7_100 }],
		// The week's agents summed in D1, the busiest 8 answered with the count of them all: the 7,000
		// agent-days read, then again from SQLite's sort into agents (the key leads with the day), the
		// 1,000 agents counted and sorted by tokens (17,002 rows). Then those 8's days, a seek each.
		["/v1/usage?group=agent&limit=8", { doCalls: 0, statements: 1, rowsRead: 17_100 }],
		[`/v1/usage?agent=${Array.from({ length: 8 }, (_, i) => name(i)).join(",")}&limit=56`, { doCalls: 0, statements: 1, rowsRead: 200 }],
	];
	it("each asks at most its page of agents' objects, and reads its page of rows, not the fleet's", async () => {
		const table: Record<string, Cost> = {};
		for (const [path, bound] of routes) {
			const cost = await measure(path);
			table[path] = cost;
			expect(cost.status, path).toBeLessThan(500);
			if (bound.doCalls !== undefined) expect(cost.doCalls, `${path}: Durable Object calls`).toBeLessThanOrEqual(bound.doCalls);
			if (bound.statements !== undefined) expect(cost.statements, `${path}: D1 statements`).toBeLessThanOrEqual(bound.statements);
			// No read route reads a tenth of the jobs, incidents or usage rows to answer a page (but the sums).
			expect(cost.rowsRead, `${path}: rows read`).toBeLessThan(bound.rowsRead ?? 5_000);
		}
		// The figures, for an audit to quote (npx vitest run … test/api/fleet-scale.test.ts).
		console.log(Object.entries(table).map(([path, c]) => `${path}  ${c.status}  DO ${c.doCalls}  D1 ${c.statements} stmts / ${c.rowsRead} rows  ${c.bytes} B`).join("\n"));
	}, 120_000);
});
