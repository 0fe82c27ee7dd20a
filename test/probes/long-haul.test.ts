import { createScheduledController, env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import type { JobRecord } from "../../src/jobs/model.ts";
import worker from "../../src/index.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { fake } from "../helpers/outbound.ts";
import { dayFromToday } from "../helpers/ticks.ts";
import { agentWithVars } from "../helpers/vars.ts";

// A long-haul walk (a probe, left out of `npm test`: some 14 minutes on a shared 2-core machine; run
// it with `npm run probe`, vitest.config.mts's `probes` project). Seven
// API agents (hourly, every 15 minutes, a persistent session, one failing three hours in six so its
// incident opens and resolves, one paused for three days, one deleted midway, one whose schedule
// and retention a PUT changes) and fleet.yaml's, ticked every 15 minutes for five simulated days
// with a two-day retention (retention_days, or RETENTION_DAYS in the agent's object). At each day:
// one ledger row per slot (no gap, none twice, none past retention), each job with its ledger row,
// D1 row and R2 output, neither D1 nor R2 holding a job its object does not; the agent's jobs, runs
// and sessions lists as its object holds them; every job kept readable (record and output), every
// pruned one a 404; job_counts as D1's final jobs; /v1/usage equal to the sum of every job's usage,
// pruned or not. At the end the deleted agent is forgotten (no table, no alarm, no registry row).
// Each day's row counts of every agent's tables are printed.
const DAY = 86_400_000;
const STEP = 15 * 60_000;
const DAYS = 5;
const RET = 2;
const T0 = dayFromToday(1);
const DELETED_AT = T0 + 2 * DAY + 12 * 3_600_000;
const CHANGED_AT = T0 + 3 * DAY + 6 * 3_600_000;
const INTERVAL: Record<string, number> = { h: 3_600_000, q: 15 * 60_000, h2: 30 * 60_000 };

/** Days agent `n` keeps its runs at `t`: haul-changed's PUT shortens its retention to a day. */
const retOf = (n: string, t: number) => (n === "haul-changed" && t >= CHANGED_AT ? 1 : RET);

async function pages<T>(path: string, key: string, limit = 200): Promise<{ status: number; items: T[] }> {
	const items: T[] = [];
	let cursor: string | null = null;
	for (let i = 0; i < 100; i++) {
		const res = await call(`${path}${path.includes("?") ? "&" : "?"}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
		if (res.status !== 200) return { status: res.status, items };
		const body = (await res.json()) as Record<string, unknown>;
		items.push(...(body[key] as T[]));
		cursor = body.next_cursor as string | null;
		if (!cursor) break;
	}
	return { status: 200, items };
}

afterEach(() => vi.useRealTimers());

const agents = [
	// No retention_days: the deployment's RETENTION_DAYS (given to its object below).
	{ name: "haul-hourly", schedules: { h: { interval: "1h" } } },
	// Paused from day 1 to day 4: its slots are skips in the ledger.
	{ name: "haul-paused", schedules: { q: { interval: "15m" } } },
	{ name: "haul-quarter", schedules: { q: { interval: "15m" } } },
	{ name: "haul-session", schedules: { h: { interval: "1h" } }, session: { mode: "persistent" } },
	{ name: "haul-flaky", prompt: "FLAKY run.", schedules: { q: { interval: "15m" } } },
	{ name: "haul-deleted", schedules: { h: { interval: "1h" } } },
	{ name: "haul-changed", schedules: { h: { interval: "1h" } } },
];

async function tickAt(at: number): Promise<void> {
	await worker.scheduled(createScheduledController({ scheduledTime: at, cron: "* * * * *" }), { ...env, RETENTION_DAYS: String(RET) } as Env);
}

function storageOf(name: string) {
	return runInDurableObject(env.AGENT.getByName(name), async (_i: AgentDO, state) => {
		const sql = state.storage.sql;
		const names = sql
			.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY name")
			.toArray()
			.map((r) => r.name);
		const tables = Object.fromEntries(names.map((t) => [t, sql.exec<{ n: number }>(`SELECT count(*) AS n FROM "${t}"`).one().n]));
		const jobs = names.includes("jobs") ? sql.exec<{ record: string }>("SELECT record FROM jobs").toArray().map((r) => JSON.parse(r.record) as JobRecord) : [];
		const ledger = names.includes("occurrences")
			? sql.exec<{ schedule: string | null; scheduled_instant: number | null; job_id: string | null; status: string }>("SELECT schedule, scheduled_instant, job_id, status FROM occurrences").toArray()
			: [];
		return { tables, jobs, ledger, alarm: await state.storage.getAlarm() };
	});
}

async function runDueAlarm(name: string, now: number): Promise<void> {
	const stub = env.AGENT.getByName(name);
	for (let i = 0; i < 20; i++) {
		const at = await runInDurableObject(stub, (_i: AgentDO, s) => s.storage.getAlarm());
		if (at === null || at > now) return;
		await runDurableObjectAlarm(stub);
	}
}

describe("long haul", () => {
	it("keeps what is within retention and lets go of what is past it", async () => {
		const emulator = useEmulator();
		fake("https://example.com", () => new Response("<html>Example</html>", { headers: { "content-type": "text/html" } }));
		fake("https://api.anthropic.com", async (req) => {
			const body = await req.clone().text();
			const hour = new Date(Date.now()).getUTCHours();
			if (body.includes("FLAKY") && hour % 6 < 3) {
				return Response.json({ type: "error", error: { type: "invalid_request_error", message: "flaky says no" } }, { status: 400 });
			}
			return emulator.handle(req);
		});
		vi.useFakeTimers({ toFake: ["Date"], now: T0 - 60_000 });
		for (const a of agents) await createAgent(a.name === "haul-hourly" ? a : { retention_days: RET, ...a });
		await agentWithVars("haul-hourly", { RETENTION_DAYS: String(RET) });
		const everJob = new Map<string, { agent: string; usage: JobRecord["usage"]; created: string; status: string }>();
		const gone = new Set<string>();
		const names = agents.map((a) => a.name);
		const figures: string[] = [];
		const faults: string[] = [];
		const note = (s: string) => {
			if (faults.length < 200) faults.push(s);
		};

		for (let t = T0; t <= T0 + DAYS * DAY; t += STEP) {
			vi.setSystemTime(t);
			await tickAt(t);
			vi.setSystemTime(t + 60_000);
			for (const n of [...names, "site-watch", "daily-digest"]) {
				await runDueAlarm(n, t + 60_000);
				// A deleted agent wakes by its alarms alone (settle would make a forgotten object's schema again).
				if (n !== "haul-deleted" || t < DELETED_AT) await settle(n);
			}
			if (t === DELETED_AT) {
				expect((await call("/v1/agents/haul-deleted", { method: "DELETE", as: "admin" })).status).toBe(200);
				await settle("haul-deleted");
			}
			if (t === T0 + DAY + 3_600_000) expect((await call("/v1/agents/haul-paused/pause", { method: "POST", as: "operate", body: { reason: "walk" } })).status).toBe(200);
			if (t === T0 + 4 * DAY + 3_600_000) expect((await call("/v1/agents/haul-paused/resume", { method: "POST", as: "operate" })).status).toBe(200);
			if (t === CHANGED_AT) {
				const res = await call("/v1/agents/haul-changed", { method: "PUT", as: "admin", body: { name: "haul-changed", prompt: "Changed.", retention_days: 1, schedules: { h2: { interval: "30m" } } } });
				expect(res.status, await res.clone().text()).toBe(200);
			}
			if ((t - T0) % DAY !== 0 || t === T0) continue;
			// A day's check.
			const now = t + 60_000;
			const day = (t - T0) / DAY;
			const row: string[] = [];
			for (const n of names) {
				const s = await storageOf(n);
				row.push(`${n}: ${JSON.stringify(s.tables)}`);
				const held = new Set(s.jobs.map((j) => j.id));
				for (const j of s.jobs) if (["completed", "failed", "cancelled", "indeterminate"].includes(j.status)) everJob.set(j.id, { agent: n, usage: j.usage, created: j.created_at, status: j.status });
				// Ledger: one row per slot, contiguous, each job with one row.
				const bySched = new Map<string, number[]>();
				for (const l of s.ledger) if (l.schedule && l.scheduled_instant !== null) bySched.set(l.schedule, [...(bySched.get(l.schedule) ?? []), l.scheduled_instant]);
				for (const [sched, instants] of bySched) {
					instants.sort((a, b) => a - b);
					if (new Set(instants).size !== instants.length) note(`day ${day} ${n}/${sched}: duplicate ledger instants`);
					const every = INTERVAL[sched]!;
					for (let i = 1; i < instants.length; i++) if (instants[i]! - instants[i - 1]! !== every) note(`day ${day} ${n}/${sched}: ledger gap ${new Date(instants[i - 1]!).toISOString()} .. ${new Date(instants[i]!).toISOString()}`);
					const current = (n === "haul-changed" ? (t >= CHANGED_AT ? "h2" : "h") : sched) === sched && !(n === "haul-deleted" && t >= DELETED_AT);
					if (current && instants.at(-1) !== Math.floor(t / every) * every) note(`day ${day} ${n}/${sched}: last slot ${new Date(instants.at(-1)!).toISOString()} at ${new Date(t).toISOString()}`);
					if (instants[0]! < now - retOf(n, t) * DAY - 2 * every - 3_600_000) note(`day ${day} ${n}/${sched}: first slot ${new Date(instants[0]!).toISOString()} past retention`);
				}
				const ledgerJobs = s.ledger.filter((l) => l.job_id).map((l) => l.job_id!);
				if (new Set(ledgerJobs).size !== ledgerJobs.length) note(`day ${day} ${n}: a job with two ledger rows`);
				for (const j of s.jobs) if (!ledgerJobs.includes(j.id)) note(`day ${day} ${n}: job ${j.id} without ledger row`);
				for (const id of ledgerJobs) if (!held.has(id)) note(`day ${day} ${n}: ledger row for missing job ${id}`);
				// Oldest kept: no older than retention (+ an hour's prune and a job's run).
				for (const j of s.jobs) {
					const fin = j.finished_at ? Date.parse(j.finished_at) : null;
					if (fin !== null && fin < now - retOf(n, t) * DAY - 2 * 3_600_000) note(`day ${day} ${n}: job ${j.id} finished ${j.finished_at} kept past retention`);
				}
				// D1 and R2 agree with the object.
				const { results } = await env.DB.prepare("SELECT id FROM jobs WHERE agent = ?").bind(n).all<{ id: string }>();
				const d1 = new Set(results.map((r) => r.id));
				const r2 = new Set<string>();
				let cursor: string | undefined;
				do {
					const page = await env.OUTPUT.list({ prefix: `jobs/${n}/`, cursor });
					for (const o of page.objects) r2.add(o.key.slice(`jobs/${n}/`.length).split(/[/.]/)[0]!);
					cursor = page.truncated ? page.cursor : undefined;
				} while (cursor);
				for (const id of d1) if (!held.has(id)) note(`day ${day} ${n}: D1 row ${id} without DO job`);
				for (const id of r2) if (!held.has(id)) note(`day ${day} ${n}: R2 object ${id} without DO job`);
				for (const j of s.jobs) {
					if (!d1.has(j.id)) note(`day ${day} ${n}: job ${j.id} (${j.status}) not in D1`);
					if (j.output_file && !r2.has(j.id)) note(`day ${day} ${n}: job ${j.id} output not in R2`);
				}
			}
			// The lists: an agent's jobs and runs as its object holds them; its sessions.
			for (const n of names) {
				const s = await storageOf(n);
				const forgotten = n === "haul-deleted" && Object.keys(s.tables).length === 0;
				const jobsList = await pages<{ id: string }>(`/v1/agents/${n}/jobs`, "jobs");
				const runsList = await pages<{ id: string }>(`/v1/agents/${n}/runs`, "runs");
				const sessions = await pages<{ session_id: string; job_count: number }>(`/v1/agents/${n}/sessions`, "sessions", 100);
				if (forgotten) {
					for (const [what, l] of [["jobs", jobsList], ["runs", runsList], ["sessions", sessions]] as const) if (l.status !== 404) note(`day ${day} ${n}: forgotten, its ${what} answer ${l.status}`);
					continue;
				}
				if (jobsList.status !== 200 || runsList.status !== 200 || sessions.status !== 200) note(`day ${day} ${n}: lists answer ${jobsList.status}/${runsList.status}/${sessions.status}`);
				const listed = jobsList.items.map((j) => j.id).sort();
				const heldIds = s.jobs.map((j) => j.id).sort();
				if (JSON.stringify(listed) !== JSON.stringify(heldIds)) note(`day ${day} ${n}: jobs list ${listed.length}, object ${heldIds.length}`);
				if (runsList.items.length !== s.ledger.length) note(`day ${day} ${n}: runs list ${runsList.items.length}, ledger ${s.ledger.length}`);
				const counted = sessions.items.reduce((a, x) => a + x.job_count, 0);
				if (counted !== s.tables.job_setup) note(`day ${day} ${n}: sessions count ${counted} jobs, ${s.tables.job_setup} started`);
			}
			const counts = await env.DB.prepare("SELECT (SELECT coalesce(sum(n), 0) FROM job_counts) AS counted, (SELECT count(*) FROM jobs WHERE status IN ('completed','failed','cancelled','indeterminate')) AS indexed").first<{ counted: number; indexed: number }>();
			if (counts!.counted !== counts!.indexed) note(`day ${day}: job_counts ${counts!.counted}, final jobs indexed ${counts!.indexed}`);
			// The API: every kept job reads, every pruned one is a 404.
			const kept = new Set<string>();
			for (const n of names) for (const j of (await storageOf(n)).jobs) kept.add(j.id);
			for (const [id, info] of everJob) {
				if (kept.has(id)) {
					if (gone.has(id)) note(`day ${day}: job ${id} came back`);
					const r = await call(`/v1/jobs/${id}`);
					if (r.status !== 200) note(`day ${day}: kept job ${id} of ${info.agent} answers ${r.status}`);
					const o = await call(`/v1/jobs/${id}/output`);
					if (o.status !== 200) note(`day ${day}: kept job ${id} output answers ${o.status}`);
					await o.arrayBuffer();
				} else {
					gone.add(id);
					for (const path of [`/v1/jobs/${id}`, `/v1/jobs/${id}/output`]) {
						const r = await call(path);
						if (r.status !== 404) note(`day ${day}: pruned job ${id} ${path} answers ${r.status}`);
						await r.arrayBuffer();
					}
				}
			}
			// Usage over the whole walk equals the sum of every job seen.
			const since = new Date(T0 - DAY).toISOString().slice(0, 10);
			const until = new Date(now + DAY).toISOString().slice(0, 10);
			const u = (await (await call(`/v1/usage?since=${since}&until=${until}&group=agent&agent=${names.join(",")}&limit=1000`)).json()) as {
				agents: { agent: string; jobs: number; input_tokens: number; output_tokens: number }[];
			};
			for (const n of names) {
				const mine = [...everJob.values()].filter((j) => j.agent === n);
				const sum = mine.reduce((acc, j) => acc + Object.values(j.usage.per_model).reduce((a, m) => a + (m as { input_tokens: number }).input_tokens, 0), 0);
				const got = u.agents.find((a) => a.agent === n);
				if ((got?.jobs ?? 0) !== mine.length || (got?.input_tokens ?? 0) !== sum)
					note(`day ${day} ${n}: usage says ${got?.jobs} jobs / ${got?.input_tokens} input tokens, jobs seen ${mine.length} / ${sum}`);
			}
			const incidents = await env.DB.prepare("SELECT state, count(*) AS n FROM incidents WHERE agent LIKE 'haul-%' GROUP BY state").all();
			figures.push(`day ${day}: ${row.join(" | ")} | incidents ${JSON.stringify(incidents.results)} | jobs seen ${everJob.size}, gone ${gone.size}`);
			console.log(figures.at(-1));
		}
		// The deleted agent is forgotten: no tables, no alarm, no registry row.
		const last = await storageOf("haul-deleted");
		if (Object.keys(last.tables).length !== 0 || last.alarm !== null) note(`end: haul-deleted keeps ${JSON.stringify(last.tables)} alarm ${last.alarm}`);
		const reg = await env.DB.prepare("SELECT deleted_at FROM agents WHERE name = 'haul-deleted'").first();
		if (reg) note(`end: haul-deleted registry row kept ${JSON.stringify(reg)}`);
		console.log(faults.join("\n"));
		expect(faults).toEqual([]);
	}, 3_600_000);
});
