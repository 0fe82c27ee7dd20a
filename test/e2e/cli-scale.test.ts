// How many requests the drover binary makes at fleet scale: a fake API (node:http) that answers as
// a fleet of 1,000 agents and 100,000 jobs would, generated on demand, recording every request. A
// command that asks once per agent or per job, where a page would tell, fails here.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliProcess } from "./cli-process.ts";

const TOKEN = "fake-token-0123456789";
const AGENTS = 1_000;
const JOBS = 100_000;
/** Job i is agent i % 1000's, made i × 26 s before the newest: 30 days of hourly runs. */
const SPACING_MS = 26_000;
const NEWEST_AT = Date.parse("2030-06-30T12:00:00Z");

const agentName = (k: number) => `scale-${String(k).padStart(4, "0")}`;
const jobId = (i: number) => `job-2030-06-30-${i.toString(36).padStart(6, "0")}`;
const createdAt = (i: number) => new Date(NEWEST_AT - i * SPACING_MS).toISOString();
const job = (i: number) => ({ id: jobId(i), agent: agentName(i % AGENTS), status: "completed", trigger_type: "schedule", created_at: createdAt(i), started_at: createdAt(i) });
/** Every job is its own session (fresh_per_job, the default). */
const session = (i: number) => {
	const ref = { id: jobId(i), status: "completed", created_at: createdAt(i) };
	return { session_id: `ses-${jobId(i)}`, agent: agentName(i % AGENTS), job_count: 1, first_job: ref, last_job: ref, updated_at: createdAt(i), persistent: false };
};
const agentView = (k: number) => ({
	name: agentName(k),
	source: "api",
	enabled: true,
	model: "claude-sonnet-4-5",
	fallback_models: [],
	schedules: [{ name: "hourly", kind: "cron", expression: `${k % 60} * * * *`, timezone: null, enabled: true, next_run: null }],
	paused: null,
	running_jobs: [],
	queued_jobs: 0,
	last_job: { id: jobId(k), status: "completed" },
});

/** Page `limit` items of `count` from the offset its cursor names. */
function page<T>(url: URL, count: number, item: (n: number) => T, key: string, defaultLimit: number) {
	const limit = Number(url.searchParams.get("limit") ?? defaultLimit);
	const from = Number(url.searchParams.get("cursor") ?? 0);
	const to = Math.min(count, from + limit);
	return { [key]: Array.from({ length: to - from }, (_, n) => item(from + n)), next_cursor: to < count ? String(to) : null };
}

function answer(url: URL): { status: number; body: unknown } | { text: string; headers: Record<string, string> } {
	const path = url.pathname;
	if (path === "/v1/status") {
		return { status: 200, body: { scheduler: { last_tick_at: new Date().toISOString(), stalled: false, outcome: "ok", agents_called: 17, claimed: 17, skipped: 0, error: null }, jobs: { completed: JOBS }, agents: { file: 0, api: AGENTS } } };
	}
	if (path === "/v1/agents") return { status: 200, body: page(url, AGENTS, agentView, "agents", 50) };
	if (path === "/v1/jobs") return { status: 200, body: page(url, JOBS, job, "jobs", 20) };
	let m = /^\/v1\/agents\/scale-(\d{4})\/(jobs|sessions)$/.exec(path);
	if (m) {
		const k = Number(m[1]);
		// The agent's items: its jobs (or their sessions) k, k + 1000, k + 2000, …
		const of = (n: number) => k + n * AGENTS;
		return { status: 200, body: m[2] === "jobs" ? page(url, JOBS / AGENTS, (n) => job(of(n)), "jobs", 20) : page(url, JOBS / AGENTS, (n) => session(of(n)), "sessions", 20) };
	}
	m = /^\/v1\/jobs\/(job-[\w-]+)\/output$/.exec(path);
	if (m) {
		// Ten lines a job: a tail of N gives the last min(N, 10), numbered from the first.
		const n = Math.min(10, Number(url.searchParams.get("lines") ?? 10));
		const lines = Array.from({ length: n }, (_, i) => JSON.stringify({ type: "assistant", timestamp: createdAt(0), message: { content: [{ type: "text", text: `line ${11 - n + i}` }] } }));
		return { text: lines.map((l) => `${l}\n`).join(""), headers: { "x-drover-first-line": String(11 - n) } };
	}
	return { status: 404, body: { error: { code: "not_found", message: `no route for ${path}` } } };
}

let server: Server;
let base: string;
const seen: string[] = [];

beforeAll(async () => {
	server = createServer((req, res) => {
		seen.push(`${req.method} ${req.url}`);
		const a = answer(new URL(req.url ?? "/", "http://fake"));
		if ("text" in a) res.writeHead(200, { "content-type": "application/x-ndjson", ...a.headers }).end(a.text);
		else res.writeHead(a.status, { "content-type": "application/json" }).end(JSON.stringify(a.body));
	});
	server.listen(0, "127.0.0.1");
	await once(server, "listening");
	base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
	server.closeAllConnections();
	await new Promise((resolve) => server.close(resolve));
});

/** Runs the CLI against the fake fleet: its exit status, stdout, and the requests it made. */
async function drover(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string; requests: string[] }> {
	const from = seen.length;
	const r = await runCliProcess(args, { DROVER_URL: base, DROVER_TOKEN: TOKEN });
	return { ...r, requests: seen.slice(from) };
}

describe(`the CLI over ${AGENTS.toLocaleString("en-US")} agents and ${JOBS.toLocaleString("en-US")} jobs`, () => {
	it("sessions (the fleet's newest) asks the agents that can have one of the newest sessions, not one per agent of the newest 200 jobs", async () => {
		const r = await drover(["sessions", "--json"]);
		expect(r.status, r.stderr).toBe(0);
		// The newest 20 sessions are those of the newest 20 jobs, whichever agents ran them.
		expect((JSON.parse(r.stdout) as { sessions: { session_id: string }[] }).sessions.map((s) => s.session_id)).toEqual(Array.from({ length: 20 }, (_, i) => `ses-${jobId(i)}`));
		// The newest 200 jobs are of 200 agents: asking each made 201 requests. Agents go 8 at a time,
		// and past the 24th none can have a session newer than the 20th found.
		expect(r.requests[0]).toBe("GET /v1/jobs?limit=200");
		expect(r.requests.length).toBe(1 + 24);
		// The table shows the same sessions.
		const table = await drover(["sessions"]);
		expect(table.stdout.trimEnd().split("\n").slice(1).map((l) => l.split(/\s+/)[0])).toEqual(Array.from({ length: 20 }, (_, i) => `ses-${jobId(i)}`));
	});

	it("sessions --limit 100 asks on until the 100th newest is found", async () => {
		const r = await drover(["sessions", "--limit", "100", "--json"]);
		expect(r.status, r.stderr).toBe(0);
		expect((JSON.parse(r.stdout) as { sessions: { session_id: string }[] }).sessions.map((s) => s.session_id)).toEqual(Array.from({ length: 100 }, (_, i) => `ses-${jobId(i)}`));
		expect(r.requests.length).toBe(1 + 104);
	});

	it("status and agents read the agents a page of 200 at a time; jobs, logs <agent> a page", async () => {
		// Each page of agents is 200 Durable Object calls on the Worker (GET /v1/agents reads each
		// agent's state from its object): the fleet's 1,000 are 5 pages.
		expect((await drover(["agents"])).requests).toEqual(["GET /v1/agents?limit=200", ...[200, 400, 600, 800].map((c) => `GET /v1/agents?limit=200&cursor=${c}`)]);
		expect((await drover(["status"])).requests).toHaveLength(1 + 5);
		expect((await drover(["jobs"])).requests).toEqual(["GET /v1/jobs?limit=20"]);
		// The last 50 lines from the newest 5 jobs of ten lines each: a tail of each, not the 20 listed.
		const logs = await drover(["logs", agentName(7)]);
		expect(logs.status, logs.stderr).toBe(0);
		expect(logs.requests).toEqual([`GET /v1/agents/${agentName(7)}/jobs?limit=20`, ...[50, 40, 30, 20, 10].map((n, i) => `GET /v1/jobs/${jobId(7 + i * AGENTS)}/output?lines=${n}`)]);
	});
});
