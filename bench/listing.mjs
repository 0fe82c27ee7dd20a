// Job listing with a large index: GET /v1/jobs latency over HTTP when the D1 `jobs` table holds
// N rows (default 1,000,000).
//
//   seed     before any load, the D1 table is filled directly through Miniflare's D1 binding with
//            multi-row INSERT … SELECT statements over a generated sequence (50,000 rows each):
//            12 agents with skewed shares, 5 trigger types, final statuses with realistic shares
//            and exit reasons, schedules, dispatch kinds, ISO timestamps, a summary, and strictly
//            increasing created_at (one job every ~30 s), then the counts of final statuses the way
//            migration 0004 fills them for an existing index. Timed and reported.
//   measure  sequential GETs with an admin token, the cases interleaved round-robin so machine noise
//            falls on all of them alike:
//              first     /v1/jobs                       (newest page, no filter)
//              filtered  /v1/jobs?agent=triage&status=failed
//              deep      /v1/jobs?cursor=<row 0.9·N>    (a page 900,000 rows deep at N = 1M)
//              deep-f    the filtered listing, 90 % into its rows
//              status    /v1/status                     (jobs by status: what the dashboard loads first)
//              usage     /v1/usage?since=…&until=…&limit=1000  (a page of the dashboard's usage view:
//                        the 7 days before the newest job, over a usage_daily table seeded apart with
//                        a fleet of USAGE_AGENTS agents × USAGE_DAYS days, the last 1,000 of 7,000
//                        rows in the window; each day's tokens are made up, not the seeded jobs')
//              usage-agent  one of those agents' last 30 days
//              usage-days, usage-busiest, usage-busiest-days, usage-rows  the usage view's four reads
//                        (group=day; group=agent&limit=8; those 8 agents' days; a table page of 200)
//            The deep cursors are built by src/shared/cursor.ts itself (imported: a copy of its
//            encoding went stale once a cursor carried its list's tag) from the last row seen, found
//            by a direct SQL OFFSET query, each tagged with its page's filters; the bench checks
//            that the API's own next_cursor matches and that the deep page starts at the expected row.
// Goal: p99 ≤ 25 ms for first and deep pages (and, read the same way, for /v1/status).
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { unstable_splitSqlQuery } from "wrangler";
import { cursorScope, encodeCursor as encodeProductCursor } from "../src/shared/cursor.ts";
import { bundle, ROOT } from "./lib/local-worker.mjs";
import { logCounter, machineInfo, printMachine, printTable, progress, recordFailure, round, scratch, startBenchWorker, summary, verdict, writeResult } from "./lib/common.mjs";

export const title = "job listing: GET /v1/jobs p50/p99 over a 1,000,000-row D1 index (first, filtered and deep keyset pages)";
export const usage = `    --rows=1000000    index size (default 1,000,000; --full is the same)
    --iterations=300  timed requests per case (after 20 warm-up requests each)
    --limit=20        page size asked for (the API's default is 20, its maximum 200)
    --keep            keep the temp directory
`;

const GOAL_P99_MS = 25;
const CHUNK = 50_000;
const USAGE_AGENTS = 1_000;
const USAGE_DAYS = 92;
const DAY_MS = 86_400_000;
const AGENTS = [
	["daily-digest", 22],
	["site-watch", 18],
	["triage", 15],
	["release-notes", 9],
	["oncall-summary", 8],
	["pr-review", 7],
	["metrics-report", 6],
	["changelog", 5],
	["security-scan", 4],
	["cost-watch", 3],
	["docs-sync", 2],
	["backup-check", 1],
];
const TRIGGERS = [
	["schedule", 75],
	["manual", 15],
	["webhook", 7],
	["continue", 2],
	["fork", 1],
];
const STATUSES = [
	["completed", 88],
	["failed", 7],
	["cancelled", 3],
	["indeterminate", 2],
];

export async function run(argv) {
	const { values } = parseArgs({
		args: argv,
		options: {
			rows: { type: "string" },
			full: { type: "boolean", default: false },
			iterations: { type: "string", default: "300" },
			limit: { type: "string", default: "20" },
			keep: { type: "boolean", default: false },
		},
	});
	const rows = Number((values.rows ?? "1000000").replace(/_/g, ""));
	const iterations = Number(values.iterations);
	const limit = Number(values.limit);
	const machine = machineInfo();
	printMachine(machine);
	console.log(`index size: ${rows.toLocaleString("en")} rows, ${iterations} timed requests per case, limit ${limit}\n`);

	const tmp = scratch("listing", values.keep);
	const logs = logCounter();
	const result = { rows, iterations, limit };
	try {
		const scriptPath = bundle(path.join(tmp.dir, "bundle"));
		const w = await startBenchWorker({ scriptPath, persistDir: path.join(tmp.dir, "state"), onLog: logs.onLog });
		tmp.onCleanup(() => w.dispose());
		// Seeding goes through Miniflare's Node-side D1 proxy while the Worker is idle (no logging).
		const db = await w.mf.getD1Database("DB");
		const t0 = performance.now();
		for (let start = 0; start < rows; start += CHUNK) {
			await db.prepare(seedSql(start, Math.min(start + CHUNK, rows) - 1, rows)).run();
			progress(`seeded ${Math.min(start + CHUNK, rows).toLocaleString("en")} rows (${round((performance.now() - t0) / 1000, 1)} s)`);
		}
		// The seed bypasses the Worker's index writes, which keep the counts of final statuses: fill
		// them as the migration that introduced them did for an index that already held jobs.
		for (const statement of unstable_splitSqlQuery(readFileSync(path.join(ROOT, "migrations", "0004_count_final_jobs.sql"), "utf8"))) {
			if (statement.trimStart().startsWith("INSERT INTO job_counts")) await db.prepare(statement).run();
		}
		// usage_daily is kept by the index writes too: a fleet's quarter of it (92,000 rows), made up.
		const lastDay = Math.floor((Date.UTC(2026, 0, 1) - 1) / DAY_MS) * DAY_MS;
		await db
			.prepare(
				`WITH RECURSIVE a(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM a WHERE i < ${USAGE_AGENTS - 1}),
				 d(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM d WHERE k < ${USAGE_DAYS - 1})
				 INSERT INTO usage_daily (day, agent, jobs, input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, cost_usd, priced_jobs)
				 SELECT ${lastDay} - k * ${DAY_MS}, 'fleet-' || substr('000' || i, -4), 1 + (i * 7 + k) % 40, 1200 * (1 + (i * 7 + k) % 40), 300 * (1 + i % 9),
				   2000 * (1 + k % 5), 9000 * (1 + (i + k) % 40), 0.012 * (1 + (i * 7 + k) % 40), 1 + (i * 7 + k) % 40
				 FROM a CROSS JOIN d`,
			)
			.run();
		result.seed_s = round((performance.now() - t0) / 1000, 1);
		const count = (await db.prepare("SELECT count(*) AS n FROM jobs").first()).n;
		if (count !== rows) throw new Error(`seeded ${count} rows, expected ${rows}`);
		result.sample_row = await db.prepare("SELECT * FROM jobs ORDER BY created_at DESC LIMIT 1 OFFSET 1000").first();
		result.status_shares = (await db.prepare("SELECT status, count(*) AS n FROM jobs GROUP BY status ORDER BY n DESC").all()).results;
		console.log(`\nseeded ${rows.toLocaleString("en")} rows in ${result.seed_s} s (${Math.round(rows / result.seed_s).toLocaleString("en")} rows/s, INSERT … SELECT, ${CHUNK.toLocaleString("en")} rows a statement)`);

		// The cursors: the row just before the page we want, encoded as src/shared/cursor.ts does.
		const rowAt = async (where, params, offset) =>
			db.prepare(`SELECT created_at, id FROM jobs ${where} ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ?`).bind(...params, offset).first();
		const deepOffset = Math.floor(rows * 0.9);
		const deepBefore = await rowAt("", [], deepOffset - 1);
		const deepFirst = await rowAt("", [], deepOffset);
		const filteredCount = (await db.prepare("SELECT count(*) AS n FROM jobs WHERE agent = ? AND status = ?").bind("triage", "failed").first()).n;
		const deepFOffset = Math.floor(filteredCount * 0.9);
		const deepFBefore = await rowAt("WHERE agent = ? AND status = ?", ["triage", "failed"], deepFOffset - 1);
		const deepFFirst = await rowAt("WHERE agent = ? AND status = ?", ["triage", "failed"], deepFOffset);
		const pageEnd = await rowAt("", [], limit - 1);

		const cases = [
			{ name: "first", path: `/v1/jobs?limit=${limit}`, expectFirst: (await rowAt("", [], 0)).id },
			{ name: "filtered", path: `/v1/jobs?agent=triage&status=failed&limit=${limit}`, expectFirst: (await rowAt("WHERE agent = ? AND status = ?", ["triage", "failed"], 0)).id },
			{ name: "deep", path: `/v1/jobs?limit=${limit}&cursor=${encodeCursor(deepBefore)}`, expectFirst: deepFirst.id, depth: deepOffset },
			{ name: "deep-filtered", path: `/v1/jobs?agent=triage&status=failed&limit=${limit}&cursor=${encodeCursor(deepFBefore, FILTERED)}`, expectFirst: deepFFirst.id, depth: deepFOffset },
		];
		// Correctness first: the API's own cursor has our encoding, each page starts where it should.
		const first = await w.api("GET", cases[0].path);
		if (first.status !== 200) throw new Error(`GET ${cases[0].path}: ${first.status} ${first.text.slice(0, 300)}`);
		if (first.json.next_cursor !== encodeCursor(pageEnd)) throw new Error(`next_cursor ${first.json.next_cursor} differs from the bench's encoding ${encodeCursor(pageEnd)}`);
		// GET /v1/status counts the index by status: what the dashboard loads first and `drover status` shows.
		const status = await w.api("GET", "/v1/status");
		const truth = Object.fromEntries(result.status_shares.map((r) => [r.status, r.n]));
		if (status.status !== 200 || JSON.stringify(sortedKeys(status.json?.jobs ?? {})) !== JSON.stringify(sortedKeys(truth))) {
			throw new Error(`GET /v1/status: ${status.status}, jobs ${JSON.stringify(status.json?.jobs)}, the index holds ${JSON.stringify(truth)}`);
		}
		for (const c of cases) {
			const r = await w.api("GET", c.path);
			if (r.status !== 200) throw new Error(`GET ${c.path}: ${r.status} ${r.text.slice(0, 300)}`);
			if (r.json.jobs.length !== limit || r.json.jobs[0].id !== c.expectFirst) {
				throw new Error(`${c.name}: page starts at ${r.json.jobs[0]?.id} with ${r.json.jobs.length} jobs, expected ${c.expectFirst} and ${limit}`);
			}
		}
		console.log(`checked: next_cursor matches the bench's encoding; each page starts at the expected row (filtered set: ${filteredCount.toLocaleString("en")} rows); /v1/status counts each status right`);
		cases.push({ name: "status", path: "/v1/status" });
		// The usage view's first page: 1,000 of the window's 7,000 agent-days, each a row D1 reads.
		const isoDay = (ms) => new Date(ms).toISOString().slice(0, 10);
		const usagePath = `/v1/usage?since=${isoDay(lastDay - 6 * DAY_MS)}&until=${isoDay(lastDay)}&limit=1000`;
		const usage = await w.api("GET", usagePath);
		const usageTruth = (await db.prepare("SELECT day, agent, jobs FROM usage_daily WHERE day >= ? ORDER BY day DESC, agent LIMIT 1000").bind(lastDay - 6 * DAY_MS).all()).results;
		const seen = (usage.json?.days ?? []).map((d) => `${d.day} ${d.agent} ${d.jobs}`);
		if (usage.status !== 200 || JSON.stringify(seen) !== JSON.stringify(usageTruth.map((r) => `${isoDay(r.day)} ${r.agent} ${r.jobs}`)) || !usage.json.next_cursor) {
			throw new Error(`GET ${usagePath}: ${usage.status}, ${seen.length} rows (${seen[0]}), not the table's first 1,000 of the window`);
		}
		// Timed in a round of their own: a 1,000-row page is ~250 KB of JSON, and interleaved with the
		// listing's requests on workerd's one thread it put 30–40 ms pauses into theirs (p99 7–11 → 26–35 ms).
		const usageCases = [{ name: "usage", path: usagePath }];
		// What the dashboard's usage view reads since it stopped reading every agent-day of its week
		// (usage.client.js): the days' totals, the eight busiest agents, their days, a table page of 200.
		const week = `since=${isoDay(lastDay - 6 * DAY_MS)}&until=${isoDay(lastDay)}`;
		const busiest = await w.api("GET", `/v1/usage?${week}&group=agent&limit=8`);
		const top = (busiest.json?.agents ?? []).map((a) => a.agent);
		if (busiest.status !== 200 || top.length !== 8 || busiest.json.total !== USAGE_AGENTS) {
			throw new Error(`GET /v1/usage?group=agent: ${busiest.status}, ${top.length} agents of ${busiest.json?.total}, not the 8 busiest of ${USAGE_AGENTS}`);
		}
		usageCases.push(
			{ name: "usage-days", path: `/v1/usage?${week}&group=day&limit=7` },
			{ name: "usage-busiest", path: `/v1/usage?${week}&group=agent&limit=8` },
			{ name: "usage-busiest-days", path: `/v1/usage?${week}&agent=${top.join(",")}&limit=56` },
			{ name: "usage-rows", path: `/v1/usage?${week}&limit=200` },
		);
		// One agent's last 30 days, as `drover usage --agent` asks.
		usageCases.push({ name: "usage-agent", path: `/v1/usage?agent=fleet-0420&since=${isoDay(lastDay - 29 * DAY_MS)}&until=${isoDay(lastDay)}` });

		// Warm-up, then timed requests, round-robin over the cases.
		const times = Object.fromEntries(cases.map((c) => [c.name, []]));
		const once = async (c) => {
			const t = performance.now();
			const res = await w.fetch(c.path, { headers: w.auth });
			const body = await res.arrayBuffer();
			const ms = performance.now() - t;
			if (res.status !== 200 || body.byteLength < 100) throw new Error(`GET ${c.path}: ${res.status}`);
			return ms;
		};
		for (const round of [cases, usageCases]) {
			for (const c of round) times[c.name] = [];
			for (let i = 0; i < 20; i++) for (const c of round) await once(c);
			for (let i = 0; i < iterations; i++) {
				for (const c of round) times[c.name].push(await once(c));
				if ((i + 1) % 50 === 0) progress(`timed ${i + 1}/${iterations} rounds${round === usageCases ? " of /v1/usage" : ""}`);
			}
		}
		cases.push(...usageCases);
		console.log();
		result.cases = cases.map((c) => ({ name: c.name, path: c.path.replace(/cursor=[^&]+/, "cursor=…"), depth: c.depth ?? 0, ms: summary(times[c.name]) }));
		result.filtered_rows = filteredCount;
	} catch (err) {
		recordFailure(result, err);
	} finally {
		await tmp.done();
	}

	const by = Object.fromEntries((result.cases ?? []).map((c) => [c.name, c]));
	const goalOk = by.first && by.deep ? by.first.ms.p99 <= GOAL_P99_MS && by.deep.ms.p99 <= GOAL_P99_MS : null;
	result.goal = { text: `p99 ≤ ${GOAL_P99_MS} ms for first and deep pages (N = 1,000,000)`, met: goalOk };
	if (result.cases) {
		console.log(`\nGET /v1/jobs over ${rows.toLocaleString("en")} rows (ms, over HTTP through Miniflare, ${iterations} requests each):`);
		printTable(
			["case", "depth", "p50", "p90", "p99", "max"],
			result.cases.map((c) => [c.name, c.depth.toLocaleString("en"), c.ms.p50, c.ms.p90, c.ms.p99, c.ms.max]),
		);
		console.log(`goal: ${result.goal.text}: ${verdict(goalOk)}${rows < 1_000_000 ? " (smaller index than the goal's)" : ""}`);
	}
	result.logs = logs.summary();
	writeResult("listing", { machine, ...result });
}

/** The filters of the filtered cases, as the API reads them for a cursor's tag. */
const FILTERED = { agent: "triage", status: "failed" };

/** The API's cursor for the row `row` of /v1/jobs with `filters`. */
function encodeCursor(row, filters = {}) {
	return encodeProductCursor({ at: row.created_at, id: row.id }, cursorScope("jobs", filters));
}

/** CASE over a 0..99 bucket picking from [value, percent] pairs. */
function pick(bucket, table) {
	let acc = 0;
	const arms = table.map(([value, pct], i) => {
		acc += pct;
		return i === table.length - 1 ? `ELSE '${value}'` : `WHEN ${bucket} < ${acc} THEN '${value}'`;
	});
	return `CASE ${arms.join(" ")} END`;
}

/** An object with its keys in order, to compare two by JSON. */
const sortedKeys = (o) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));

/**
 * Rows start..end (inclusive) of `total`. Per-row choices come from the high bits of independent
 * multiplicative hashes of n (reproducible, and uncorrelated across fields), not random(): SQLite may
 * evaluate a random() once per reference, which would mix up a row's fields.
 */
function seedSql(start, end, total) {
	const base = Date.UTC(2026, 0, 1) - total * 30_000;
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
	const suffix = Array.from({ length: 6 }, (_, k) => `substr('${alphabet}', ((h_id / ${36 ** k}) % 36) + 1, 1)`).join(" || ");
	const iso = (ms) => `strftime('%Y-%m-%dT%H:%M:%fZ', (${ms}) / 1000.0, 'unixepoch')`;
	return `
WITH RECURSIVE seq(n) AS (SELECT ${start} UNION ALL SELECT n + 1 FROM seq WHERE n < ${end}),
h AS (
  SELECT n,
    ${base} + n * 30000 + ((n * 7919) % 29000) AS created_at,
    (n * 2654435761) % 2176782336 AS h_id,
    ((n * 2654435761) % 4294967296 / 65536) % 100 AS h_agent,
    ((n * 2246822519) % 4294967296 / 65536) % 100 AS h_trigger,
    ((n * 3266489917) % 4294967296 / 4096) % 1000 AS h_status,
    ((n * 668265263) % 4294967296 / 65536) % 100 AS h_misc,
    ((n * 374761393) % 4294967296 / 65536) % 600 + 1 AS dur
  FROM seq
),
r AS (
  SELECT *,
    ${pick("h_agent", AGENTS)} AS agent,
    ${pick("h_trigger", TRIGGERS)} AS trigger_type,
    CASE WHEN n > ${total - 20} THEN 'running' ELSE ${pick("h_status / 10", STATUSES)} END AS status
  FROM h
)
INSERT INTO jobs (id, agent, schedule, trigger_type, status, exit_reason, dispatch, scheduled_instant, created_at,
                  started_at, finished_at, duration_seconds, summary, revision, updated_at)
SELECT
  'job-' || strftime('%Y-%m-%d', created_at / 1000, 'unixepoch') || '-' || ${suffix},
  agent,
  CASE WHEN trigger_type = 'schedule' THEN CASE WHEN h_misc < 60 THEN 'every-15m' ELSE 'weekday-morning' END END,
  trigger_type,
  status,
  CASE status WHEN 'completed' THEN 'success' WHEN 'cancelled' THEN 'cancelled' WHEN 'indeterminate' THEN 'error'
    WHEN 'failed' THEN CASE WHEN h_misc < 55 THEN 'error' WHEN h_misc < 75 THEN 'timeout' WHEN h_misc < 90 THEN 'max_turns' ELSE 'usage_limit' END END,
  CASE trigger_type WHEN 'schedule' THEN CASE WHEN h_misc < 90 THEN 'on_time' WHEN h_misc < 98 THEN 'late' ELSE 'catch_up' END WHEN 'manual' THEN 'manual' END,
  CASE WHEN trigger_type = 'schedule' THEN ${iso("(created_at / 60000) * 60000")} END,
  created_at,
  ${iso("created_at + 40")},
  CASE WHEN status = 'running' THEN NULL ELSE ${iso("created_at + dur * 1000")} END,
  CASE WHEN status = 'running' THEN NULL ELSE dur + 0.25 END,
  CASE WHEN status = 'completed' THEN 'Summarized ' || (n % 97) || ' changes across ' || (n % 13 + 1) || ' repositories; ' || (n % 7) || ' need attention, nothing blocking the release.' END,
  CASE WHEN status = 'running' THEN 2 ELSE 4 + (n % 4) END,
  created_at + dur * 1000
FROM r`;
}

/** The usage view's reads, as the table names them. */
const USAGE_VIEW_READS = {
	"usage-days": "day totals (group=day)",
	"usage-busiest": "eight busiest agents (group=agent)",
	"usage-busiest-days": "busiest agents' 56 days (agent=8 names)",
	"usage-rows": "table page of 200 agent-days",
};

/** Rows for `npm run bench`'s one table. */
export function tableRows(doc) {
	return doc.cases.map((c) => ({
		figure:
			c.name === "status"
				? `GET /v1/status, jobs by status over ${doc.rows.toLocaleString("en")}, p50 / p99`
				: c.name === "usage"
					? `GET /v1/usage, a page of 1,000 agent-days (${USAGE_AGENTS.toLocaleString("en")} agents × 7 days), p50 / p99`
					: c.name === "usage-agent"
						? `GET /v1/usage, one agent's 30 days of ${USAGE_AGENTS.toLocaleString("en")} agents × ${USAGE_DAYS} days, p50 / p99`
					: USAGE_VIEW_READS[c.name]
						? `GET /v1/usage, the usage view's ${USAGE_VIEW_READS[c.name]} (${USAGE_AGENTS.toLocaleString("en")} agents × 7 days), p50 / p99`
					: `${c.name} page of ${doc.rows.toLocaleString("en")}${c.depth ? `, ${c.depth.toLocaleString("en")} rows deep` : ""}, p50 / p99`,
		measured: `${c.ms.p50} / ${c.ms.p99} ms`,
		goal: "p99 ≤ 25 ms",
		met: c.ms.p99 <= 25,
	}));
}
