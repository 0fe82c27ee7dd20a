// The drover binary reading answers the real Worker gives only in rare states (a cancelled follow-up,
// a line cut to fit storage, a 409 over a changed definition, a later page of usage), served by
// a fake API (node:http) so each is there on demand.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { Document, parse } from "yaml";
import { paint, renderLine, table } from "../../cli/format.ts";
import { HERDCTL_FIELDS, toHerdctlYaml } from "../../src/jobs/yaml.ts";
import { d1StorageWarning } from "../../src/config/storage.ts";
import type { JobRecord } from "../../src/jobs/schema.ts";
import { jobRecord } from "../helpers/job-record.ts";
import { childEnv, CLI, runCliProcess, runOnTerminal, scratchDir } from "./cli-process.ts";
import { serversClosedAfterEach } from "./test-servers.ts";

const JOB = "job-2026-01-01-abcdef";
const TOKEN = "fake-token-0123456789";

type Routes = Record<string, (req: IncomingMessage, res: ServerResponse, body: string) => void>;

const { servers } = serversClosedAfterEach();

/** A fake API: `routes` keyed by "METHOD /path?query"; anything else is a 404. Records every request. */
async function fakeApi(routes: Routes): Promise<{ url: string; seen: { route: string; body: string }[] }> {
	const seen: { route: string; body: string }[] = [];
	const server = createServer((req, res) => {
		let body = "";
		req.setEncoding("utf8").on("data", (d: string) => (body += d));
		req.on("end", () => {
			const route = `${req.method} ${req.url}`;
			seen.push({ route, body });
			const handler = routes[route];
			if (req.headers.authorization !== `Bearer ${TOKEN}`) json(res, 401, { error: { code: "unauthorized", message: "invalid token" } });
			else if (handler) handler(req, res, body);
			else json(res, 404, { error: { code: "not_found", message: `no route for ${route}` } });
		});
	});
	servers.push(server);
	server.listen(0, "127.0.0.1");
	await once(server, "listening");
	return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function json(res: ServerResponse, status: number, body: unknown): void {
	res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

function runCli(url: string, args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
	return runCliProcess(args, { DROVER_URL: url, DROVER_TOKEN: TOKEN });
}

const DEFINITION_CHANGED = "agent fake's definition changed while this continue waited (r1 → r2); continue the job again, with allow_definition_change to run it under the new definition";

/** A continue's job record as the API gives it, with what a test changes. */
const record = (overrides: Record<string, unknown> = {}) => jobRecord({ trigger_type: "continue", prompt: "Go on.", ...overrides });

const cancelled = () =>
	record({
		status: "cancelled",
		exit_reason: "cancelled",
		started_at: null,
		finished_at: "2026-01-01T00:00:00.500Z",
		duration_seconds: null,
		summary: null,
		usage: { num_turns: 0, total_cost_usd: null, per_model: {} },
		transitions: [{ from: "pending", to: "cancelled", at: "2026-01-01T00:00:00.500Z", reason: DEFINITION_CHANGED }],
	});

describe("--wait on a job an idempotency key already started", () => {
	it("shows no progress of its own before the stream has replayed what the job did", async () => {
		const answer = JSON.stringify({ type: "assistant", timestamp: "2026-01-01T00:00:01.000Z", content: "Went on.", usage: { input_tokens: 120, output_tokens: 30 } });
		const api = await fakeApi({
			"POST /v1/jobs/job-2025-12-31-source/continue": (_req, res) => json(res, 200, record()),
			[`GET /v1/jobs/${JOB}/stream`]: (_req, res) => {
				res.writeHead(200, { "content-type": "text/event-stream" });
				res.end(`event: line\nid: 1\ndata: ${answer}\n\nevent: status\ndata: {"status":"completed","revision":3}\n\nevent: end\ndata: {"status":"completed"}\n\n`);
			},
			[`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 200, record()),
		});
		const r = await runCli(api.url, ["continue", "job-2025-12-31-source", "--prompt", "Go on.", "--idempotency-key", "k-1", "--wait"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stderr).toContain(`drover: ${JOB} is the job idempotency key k-1 already started (completed); no new job was started`);
		// Its first progress line counts what the stream replayed: none said 0 turns of a completed job.
		expect(r.stderr).not.toContain("0 turns");
		expect(r.stderr).toContain(`${JOB} completed · 1 turn · 120 in / 30 out tokens`);
	});
});

describe("commands a new operator tries that drover names otherwise", () => {
	it("approvals lists nothing and approves nothing: it names jobs --status approval_pending; diff and plan name apply --dry-run (exit 2, nothing asked)", async () => {
		const api = await fakeApi({});
		const approvals = await runCli(api.url, ["approvals"]);
		expect(approvals.status).toBe(2);
		expect(approvals.stderr).toContain("drover: unknown command 'approvals': the jobs waiting on an approval: drover jobs --status approval_pending; drover approve|deny <id> decides one");
		expect(approvals.stderr).not.toContain("Did you mean approve?");
		for (const name of ["diff", "plan"]) {
			const r = await runCli(api.url, [name, "agents.yaml"]);
			expect(r.status, name).toBe(2);
			expect(r.stderr).toContain(`drover: unknown command '${name}': what apply would change, as a diff of each agent's YAML: drover apply --dry-run <file>`);
		}
		expect(api.seen).toEqual([]);
	});
});

describe("--wait stopped by Ctrl-C", () => {
	it("says the job goes on, and how to follow it again or cancel it; exits 130, cancelling nothing", async () => {
		const api = await fakeApi({
			"POST /v1/agents/fake/jobs": (_req, res) => json(res, 201, jobRecord({ status: "pending", exit_reason: null, summary: null, transitions: [] })),
			// The job runs on: its stream says so and stays open.
			[`GET /v1/jobs/${JOB}/stream`]: (_req, res) => {
				res.writeHead(200, { "content-type": "text/event-stream" });
				res.write(`event: status\ndata: {"status":"running","revision":2}\n\n`);
			},
		});
		const child = spawn(process.execPath, [CLI, "trigger", "fake", "--wait"], { env: childEnv({ DROVER_URL: api.url, DROVER_TOKEN: TOKEN }), stdio: ["ignore", "pipe", "pipe"] });
		let stdout = "";
		let stderr = "";
		child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
		const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
		const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
		await new Promise<void>((resolve) => {
			child.stderr.setEncoding("utf8").on("data", (d: string) => {
				stderr += d;
				if (stderr.includes(`${JOB} running ·`)) resolve();
			});
			void closed.then(() => resolve());
		});
		child.kill("SIGINT");
		const status = await closed;
		clearTimeout(timer);
		expect(status, stderr).toBe(130);
		expect(stdout).toBe(`${JOB}\n`);
		expect(stderr.split("\n").slice(-3)).toEqual([
			`drover: stopped waiting for ${JOB}, which goes on (running)`,
			`drover: hint: drover logs --job ${JOB} --follow follows it again; drover cancel ${JOB} stops it`,
			"",
		]);
		expect(api.seen.map((s) => s.route)).toEqual(["POST /v1/agents/fake/jobs", `GET /v1/jobs/${JOB}/stream`]);
	});
});

describe("why a cancelled job was cancelled", () => {
	it("continue --wait says it on its last line", async () => {
		const api = await fakeApi({
			"POST /v1/jobs/job-2025-12-31-source/continue": (_req, res) => json(res, 201, record({ status: "pending", exit_reason: null, transitions: [] })),
			[`GET /v1/jobs/${JOB}/stream`]: (_req, res) => {
				res.writeHead(200, { "content-type": "text/event-stream" });
				res.end(`event: status\ndata: {"status":"cancelled","revision":2}\n\nevent: end\ndata: {"status":"cancelled"}\n\n`);
			},
			[`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 200, cancelled()),
		});
		const r = await runCli(api.url, ["continue", "job-2025-12-31-source", "--prompt", "Go on.", "--wait"]);
		expect(r.status, r.stderr).toBe(2);
		const last = r.stderr.trim().split("\n").at(-1)!;
		expect(last).toMatch(new RegExp(`^■ ${JOB} cancelled \\(`));
		expect(last).toContain(DEFINITION_CHANGED);
	});

	it("drover job shows it; a job that was not cancelled has no such row", async () => {
		const api = await fakeApi({
			[`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 200, cancelled()),
			"GET /v1/jobs/job-2026-01-01-zzzzzz": (_req, res) => json(res, 200, record({ id: "job-2026-01-01-zzzzzz" })),
		});
		const r = await runCli(api.url, ["job", JOB]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toMatch(/^cancelled\s+agent fake's definition changed while this continue waited/m);
		const done = await runCli(api.url, ["job", "job-2026-01-01-zzzzzz"]);
		expect(done.stdout).not.toMatch(/^cancelled/m);
	});
});

describe("drover job", () => {
	it("says why a delivery that did not get through did not, and nothing more for one delivered or from an older server", async () => {
		const failed = { target: "webhook", outcome: "failed", error: "delivery target answered 500; 6 attempts" };
		const api = await fakeApi({
			[`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 200, record({ delivery: failed })),
			"GET /v1/jobs/job-2026-01-01-zzzzzz": (_req, res) => json(res, 200, record({ id: "job-2026-01-01-zzzzzz", delivery: { target: "webhook", outcome: "delivered" } })),
		});
		const r = await runCli(api.url, ["job", JOB]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toMatch(/^delivery\s+webhook: failed \(delivery target answered 500; 6 attempts\)$/m);
		const done = await runCli(api.url, ["job", "job-2026-01-01-zzzzzz"]);
		expect(done.stdout).toMatch(/^delivery\s+webhook: delivered$/m);
	});

	it("says what became of each hook call, and nothing of hooks where there are none or from an older server", async () => {
		const next = new Date(Date.now() + 125_000).toISOString();
		const hooks = [
			{ hook: "after_run", url_secret: "HOOK_URL", outcome: "delivered", attempts: 1 },
			{ hook: "after_run", url_secret: "AUDIT_URL", outcome: "pending", attempts: 1, error: "hook target answered 503", next_attempt_at: next },
			// Held for the job's delivery: a bare `pending` said nothing of why it was not sent.
			{ hook: "after_run", url_secret: "ARCHIVE_URL", outcome: "pending", attempts: 0, waiting_for: "delivery" },
			{ hook: "on_error", url_secret: "PAGER_URL", outcome: "failed", attempts: 6, error: "hook target answered 404" },
		];
		const api = await fakeApi({
			[`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 200, { ...record(), hooks }),
			"GET /v1/jobs/job-2026-01-01-zzzzzz": (_req, res) => json(res, 200, { ...record({ id: "job-2026-01-01-zzzzzz" }), hooks: [] }),
			"GET /v1/jobs/job-2026-01-01-yyyyyy": (_req, res) => json(res, 200, record({ id: "job-2026-01-01-yyyyyy" })),
		});
		const r = await runCli(api.url, ["job", JOB]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toMatch(
			new RegExp(
				`^hooks\\s+after_run \\(HOOK_URL\\): delivered · after_run \\(AUDIT_URL\\): pending \\(1 attempt, hook target answered 503, next ${next.slice(0, 19).replace("T", " ")}Z \\(in 2m\\)\\) · after_run \\(ARCHIVE_URL\\): pending \\(waiting for the job's delivery\\) · on_error \\(PAGER_URL\\): failed \\(6 attempts, hook target answered 404\\)$`,
				"m",
			),
		);
		expect((await runCli(api.url, ["job", "job-2026-01-01-zzzzzz"])).stdout).not.toMatch(/^hooks/m);
		expect((await runCli(api.url, ["job", "job-2026-01-01-yyyyyy"])).stdout).not.toMatch(/^hooks/m);
	});

	it("names a hook call that is not what drover sends, rather than failing inside the command", async () => {
		const api = await fakeApi({
			[`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 200, { ...record(), hooks: [null] }),
			"GET /v1/jobs/job-2026-01-01-zzzzzz": (_req, res) => json(res, 200, { ...record({ id: "job-2026-01-01-zzzzzz" }), hooks: "none" }),
		});
		const r = await runCli(api.url, ["job", JOB]);
		expect(r.status).toBe(1);
		expect(r.stderr).toBe(`drover: ${api.url} does not answer as a drover API (GET /v1/jobs/${JOB}: \`hooks[0]\` is not an object)\n`);
		const text = await runCli(api.url, ["job", "job-2026-01-01-zzzzzz"]);
		expect(text.stderr).toBe(`drover: ${api.url} does not answer as a drover API (GET /v1/jobs/job-2026-01-01-zzzzzz: \`hooks\` is not an array)\n`);
	});

	it("says until when a running job waits out a rate limit, and nothing of it otherwise", async () => {
		const until = new Date(Date.now() + 125_000).toISOString();
		const api = await fakeApi({
			[`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 200, record({ status: "running", rate_limited_until: until })),
			"GET /v1/jobs/job-2026-01-01-zzzzzz": (_req, res) => json(res, 200, record({ id: "job-2026-01-01-zzzzzz", status: "running", rate_limited_until: null })),
		});
		const r = await runCli(api.url, ["job", JOB]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toMatch(new RegExp(`^rate limited\\s+waiting: the next model call at ${until.slice(0, 19).replace("T", " ")}Z \\(in 2m\\)$`, "m"));
		const other = await runCli(api.url, ["job", "job-2026-01-01-zzzzzz"]);
		expect(other.stdout).not.toContain("rate limited");
	});

	it("shows a cost too small for four decimals with the API's six, and says when a job's models have no price", async () => {
		const api = await fakeApi({
			[`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 200, record({ usage: { num_turns: 1, total_cost_usd: 0.000029, per_model: { "claude-haiku-5-5": {} } } })),
			"GET /v1/jobs/job-2026-01-01-zzzzzz": (_req, res) => json(res, 200, record({ id: "job-2026-01-01-zzzzzz", usage: { num_turns: 1, total_cost_usd: null, per_model: { "claude-opus-5-5": {} } } })),
			"GET /v1/jobs/job-2026-01-01-yyyyyy": (_req, res) => json(res, 200, record({ id: "job-2026-01-01-yyyyyy", usage: { num_turns: 2, total_cost_usd: 0.0123, per_model: { "claude-haiku-5-5": {} } } })),
		});
		expect((await runCli(api.url, ["job", JOB])).stdout).toMatch(/^usage\s+1 turn, \$0\.000029$/m);
		expect((await runCli(api.url, ["job", "job-2026-01-01-zzzzzz"])).stdout).toMatch(/^usage\s+1 turn, cost not priced$/m);
		expect((await runCli(api.url, ["job", "job-2026-01-01-yyyyyy"])).stdout).toMatch(/^usage\s+2 turns, \$0\.0123$/m);
	});

	it("says when a waiting approval expires, and nothing of it from an older server", async () => {
		const asked = new Date(Date.now() - 120_000).toISOString();
		const expires = new Date(Date.now() + 28 * 60_000 + 20_000).toISOString();
		const waiting = (id: string, pending: Record<string, unknown>) =>
			record({ id, status: "approval_pending", exit_reason: null, finished_at: null, duration_seconds: null, summary: null, pending_approval: { tool_use_id: "toolu_1", tool_name: "create_ticket", input: { title: "t" }, requested_at: asked, ...pending } });
		const api = await fakeApi({
			[`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 200, waiting(JOB, { expires_at: expires })),
			"GET /v1/jobs/job-2026-01-01-zzzzzz": (_req, res) => json(res, 200, waiting("job-2026-01-01-zzzzzz", {})),
		});
		const r = await runCli(api.url, ["job", JOB]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toContain(`create_ticket {"title":"t"} (asked 2m ago, expires in 28m; drover approve|deny ${JOB} --call toolu_1)`);
		const older = await runCli(api.url, ["job", "job-2026-01-01-zzzzzz"]);
		expect(older.stdout).toContain(`(asked 2m ago; drover approve|deny job-2026-01-01-zzzzzz --call toolu_1)`);
		// Past, before the alarm that records the expiry has run: said in the past tense.
		const late = await fakeApi({ [`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 200, waiting(JOB, { expires_at: new Date(Date.now() - 65_000).toISOString() })) });
		expect((await runCli(late.url, ["job", JOB])).stdout).toContain("(asked 2m ago, expired 1m ago;");
	});

	it("leaves out an empty summary as it does a missing one", async () => {
		const api = await fakeApi({ [`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 200, record({ summary: "" })) });
		const r = await runCli(api.url, ["job", JOB]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toMatch(/^prompt\s+Go on\.$/m);
		expect(r.stdout).not.toMatch(/^summary/m);
	});

	it("--yaml with --logs is a usage error, sent nowhere: the output is JSONL, not YAML", async () => {
		const api = await fakeApi({ [`GET /v1/jobs/${JOB}`]: (_req, res) => res.writeHead(200, { "content-type": "application/yaml" }).end(`id: ${JOB}\n`) });
		const r = await runCli(api.url, ["job", JOB, "--yaml", "--logs"]);
		expect(r.status).toBe(2);
		expect(r.stdout).toBe("");
		expect(r.stderr).toBe(`drover: --logs does not go with --yaml: a job's output is JSONL lines, not YAML\ndrover: hint: drover job ${JOB} --yaml for the job; drover logs --job ${JOB} for its output (--json: the raw JSONL)\n`);
		expect(api.seen).toEqual([]);
	});

	it("--logs marks a line cut to fit storage, and only that line", async () => {
		const lines = [
			{ type: "assistant", content: "A very long answer…", truncated: { field: "content", bytes: 3_145_728 } },
			{ type: "tool_result", success: true, result: "a big page…", truncated: { field: "result", bytes: 2_500_000 } },
			{ type: "assistant", content: "A short one." },
		];
		const api = await fakeApi({
			[`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 200, record()),
			[`GET /v1/jobs/${JOB}/output`]: (_req, res) => res.writeHead(200, { "content-type": "application/x-ndjson" }).end(`${lines.map((l) => JSON.stringify(l)).join("\n")}\n`),
		});
		const r = await runCli(api.url, ["job", JOB, "--logs"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toContain("A very long answer… [cut to fit: the line was 3,145,728 bytes]\n");
		expect(r.stdout).toContain("← ok a big page… [cut to fit: the line was 2,500,000 bytes]\n");
		expect(r.stdout).toMatch(/^A short one\.$/m);
	});
});

describe("an approval decided with edited input", () => {
	it("shows the input that was run beside the verdict: as JSON, printable, cut to the width as a tool call's", () => {
		const p = paint(false);
		const decided = (tool_input: unknown) => JSON.stringify({ type: "system", subtype: "approval_decided", content: "create_ticket approved by local with edited input", tool_use_id: "t1", decision: "approve", by: "local", tool_input });
		expect(renderLine(decided({ title: "Printer \u202eon fire\u202c", priority: 2 }), p)).toBe(
			String.raw`[system:approval_decided] create_ticket approved by local with edited input {"title":"Printer \u202eon fire\u202c","priority":2}`,
		);
		const long = renderLine(decided({ body: "x".repeat(500) }), p, 60)!;
		expect(long).toBe(`[system:approval_decided] create_ticket approved by local with edited input {"body":"${"x".repeat(50)}…`);
		// Approved as proposed, or denied: no input of its own.
		expect(renderLine(JSON.stringify({ type: "system", subtype: "approval_decided", content: "create_ticket denied by local" }), p)).toBe("[system:approval_decided] create_ticket denied by local");
	});
});

describe("approve and deny name the tool call they decide", () => {
	const pending = (tool_use_id: string, title: string) =>
		record({ status: "approval_pending", exit_reason: null, finished_at: null, duration_seconds: null, summary: null, pending_approval: { tool_use_id, tool_name: "create_ticket", input: { title }, requested_at: "2026-01-01T00:00:01.000Z" } });
	const running = () => record({ status: "running", exit_reason: null, finished_at: null, duration_seconds: null, summary: null });

	it("sends the tool_use_id of the call waiting when it runs, read from the job", async () => {
		const api = await fakeApi({
			[`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 200, pending("toolu_first", "first")),
			[`POST /v1/jobs/${JOB}/approval`]: (_req, res) => json(res, 200, running()),
		});
		// An edit names the call it was written for: without --call it is a usage error, and nothing is sent.
		const unnamed = await runCli(api.url, ["approve", JOB, "--input", `{"title":"first (edited)"}`]);
		expect(unnamed.status).toBe(2);
		expect(unnamed.stderr).toContain(`--input needs --call <tool_use_id>, the call it edits (drover job ${JOB} shows it)`);
		expect(api.seen).toEqual([]);
		const approved = await runCli(api.url, ["approve", JOB]);
		expect(approved.status, approved.stderr).toBe(0);
		expect(approved.stdout).toBe(`approved the create_ticket call toolu_first of ${JOB}; it is running\n`);
		const denied = await runCli(api.url, ["deny", JOB]);
		expect(denied.status, denied.stderr).toBe(0);
		const why = await runCli(api.url, ["deny", JOB, "--reason", "File it in the storage queue."]);
		expect(why.status, why.stderr).toBe(0);
		const posts = api.seen.filter((r) => r.route.startsWith("POST "));
		expect(posts.map((r) => JSON.parse(r.body))).toEqual([
			{ decision: "approve", tool_use_id: "toolu_first" },
			{ decision: "deny", tool_use_id: "toolu_first" },
			{ decision: "deny", tool_use_id: "toolu_first", reason: "File it in the storage queue." },
		]);
	});

	it("sends --call as it is given, without reading the job, and prints the API's 409 when another call waits", async () => {
		const message = `job ${JOB} is waiting on another tool call: create_ticket (toolu_second); create_ticket (toolu_first) was already approved by ops. Nothing was decided: read the job and decide the call waiting now`;
		const api = await fakeApi({ [`POST /v1/jobs/${JOB}/approval`]: (_req, res) => json(res, 409, { error: { code: "conflict", message } }) });
		const r = await runCli(api.url, ["approve", JOB, "--call", "toolu_first", "--input", `{"title":"first (edited)"}`]);
		expect(r.status).toBe(1);
		expect(r.stdout).toBe("");
		expect(r.stderr).toContain(`drover: ${message}`);
		expect(api.seen.map((x) => x.route)).toEqual([`POST /v1/jobs/${JOB}/approval`]);
		expect(JSON.parse(api.seen[0]!.body)).toEqual({ decision: "approve", tool_use_id: "toolu_first", tool_input: { title: "first (edited)" } });
	});

	it("decides nothing for a job that waits for no approval", async () => {
		const api = await fakeApi({ [`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 200, record()) });
		const r = await runCli(api.url, ["deny", JOB]);
		expect(r.status).toBe(1);
		expect(r.stderr).toBe(`drover: job ${JOB} is completed, not waiting for an approval\n`);
		expect(api.seen.map((x) => x.route)).toEqual([`GET /v1/jobs/${JOB}`]);
	});

	it("says whose cancel ended a job it was asked to decide, and why", async () => {
		const api = await fakeApi({
			[`GET /v1/jobs/${JOB}`]: (_req, res) =>
				json(res, 200, record({ status: "cancelled", exit_reason: "cancelled", transitions: [{ from: "approval_pending", to: "cancelled", at: "2026-01-01T00:00:01.000Z", reason: "cancelled by ops: wrong host" }] })),
		});
		const r = await runCli(api.url, ["approve", JOB]);
		expect(r.status).toBe(1);
		expect(r.stderr).toBe(`drover: job ${JOB} is cancelled (cancelled by ops: wrong host), not waiting for an approval\n`);
		expect(api.seen.map((x) => x.route)).toEqual([`GET /v1/jobs/${JOB}`]);
	});
});

describe("errors from the API", () => {
	it("a fork refused over a changed definition names --allow-definition-change", async () => {
		const message = `agent fake's definition changed since job ${JOB} ran (r1 → r2); send "allow_definition_change": true to fork anyway`;
		const api = await fakeApi({ [`POST /v1/jobs/${JOB}/fork`]: (_req, res) => json(res, 409, { error: { code: "conflict", message } }) });
		const r = await runCli(api.url, ["fork", JOB]);
		expect(r.status).toBe(1);
		expect(r.stderr).toContain(message);
		expect(r.stderr).toMatch(/^drover: hint: .*--allow-definition-change/m);
	});

	it("an approve refused over a changed definition says the job goes on with the definition it started with, not the new one", async () => {
		const message = `agent fake's definition changed since job ${JOB} started (r1 → r2); send "allow_definition_change": true to approve anyway, or deny`;
		const api = await fakeApi({ [`POST /v1/jobs/${JOB}/approval`]: (_req, res) => json(res, 409, { error: { code: "conflict", message } }) });
		const r = await runCli(api.url, ["approve", JOB, "--call", "toolu_first"]);
		expect(r.status).toBe(1);
		expect(r.stderr).toContain(message);
		expect(r.stderr).toContain("drover: hint: to approve it anyway, add --allow-definition-change: the job goes on with the definition it started with, its tools as they were then\n");
		expect(r.stderr).not.toContain("current definition");
	});

	it("prints details.issues one a line", async () => {
		const issues = [
			{ path: "prompt", message: "must not be empty" },
			{ path: "tools.0.url_secret", message: "is required" },
		];
		const api = await fakeApi({
			"POST /v1/agents/fake/jobs": (_req, res) =>
				json(res, 400, { error: { code: "bad_request", message: "invalid body: prompt: must not be empty; tools.0.url_secret: is required", details: { issues } } }),
		});
		const r = await runCli(api.url, ["trigger", "fake", "--prompt", " "]);
		expect(r.status).toBe(1);
		expect(r.stderr).toContain("drover: invalid body:\n  - prompt: must not be empty\n  - tools.0.url_secret: is required\n");
	});

	it("takes the prompt of trigger, fork and continue as an argument, as --prompt, and refuses it given both ways without asking the API", async () => {
		const SOURCE = "job-2026-01-01-source";
		const created = (_req: IncomingMessage, res: ServerResponse) => json(res, 201, jobRecord({ trigger_type: "manual", prompt: "Disk full on db-1." }));
		const api = await fakeApi({ "POST /v1/agents/fake/jobs": created, [`POST /v1/jobs/${SOURCE}/fork`]: created, [`POST /v1/jobs/${SOURCE}/continue`]: created });
		const posts = () => api.seen.filter((r) => r.route.startsWith("POST ")).map((r) => [r.route, JSON.parse(r.body) as unknown]);
		for (const args of [["trigger", "fake", "Disk full on db-1."], ["fork", SOURCE, "Disk full on db-1."], ["continue", SOURCE, "Disk full on db-1."]]) {
			const r = await runCli(api.url, args);
			expect(r.status, `${args.join(" ")}: ${r.stderr}`).toBe(0);
		}
		expect(posts()).toEqual([
			["POST /v1/agents/fake/jobs", { prompt: "Disk full on db-1." }],
			[`POST /v1/jobs/${SOURCE}/fork`, { prompt: "Disk full on db-1." }],
			[`POST /v1/jobs/${SOURCE}/continue`, { prompt: "Disk full on db-1." }],
		]);
		for (const args of [["trigger", "fake"], ["fork", SOURCE], ["continue", SOURCE]]) {
			const both = await runCli(api.url, [...args, "Disk full.", "--prompt", "Disk full on db-1."]);
			expect(both.status, args[0]).toBe(2);
			expect(both.stderr).toBe("drover: give the prompt once: as an argument or with --prompt\n");
		}
		// continue still needs one, said before any request.
		const none = await runCli(api.url, ["continue", SOURCE]);
		expect(none.status).toBe(2);
		expect(none.stderr).toContain("drover: continue needs a prompt: what to say next");
		expect(posts()).toHaveLength(3);
	});

	it("reads the prompt of trigger, fork and continue from stdin given as -, and stdin only then", async () => {
		const SOURCE = "job-2026-01-01-source";
		const created = (_req: IncomingMessage, res: ServerResponse) => json(res, 201, jobRecord({ trigger_type: "manual", prompt: "Disk full on db-1." }));
		const api = await fakeApi({ "POST /v1/agents/fake/jobs": created, [`POST /v1/jobs/${SOURCE}/fork`]: created, [`POST /v1/jobs/${SOURCE}/continue`]: created });
		const posts = () => api.seen.filter((r) => r.route.startsWith("POST ")).map((r) => [r.route, JSON.parse(r.body) as unknown]);
		const env = { DROVER_URL: api.url, DROVER_TOKEN: TOKEN };
		for (const args of [["trigger", "fake", "-"], ["fork", SOURCE, "--prompt", "-"], ["continue", SOURCE, "-"]]) {
			const r = await runCliProcess(args, env, async (stdin) => void stdin.end("Disk full\non db-1.\n"));
			expect(r.status, `${args.join(" ")}: ${r.stderr}`).toBe(0);
		}
		// The newline echo ends it with goes, as notepad set - drops a value's.
		expect(posts()).toEqual([
			["POST /v1/agents/fake/jobs", { prompt: "Disk full\non db-1." }],
			[`POST /v1/jobs/${SOURCE}/fork`, { prompt: "Disk full\non db-1." }],
			[`POST /v1/jobs/${SOURCE}/continue`, { prompt: "Disk full\non db-1." }],
		]);
		// An empty one is a usage error, before any request.
		const empty = await runCliProcess(["continue", SOURCE, "-"], env, async (stdin) => void stdin.end("\n"));
		expect(empty.status).toBe(2);
		expect(empty.stderr).toContain("drover: the prompt read from stdin (-) is empty");
		// Without -, a pipe left open (cron's, a CI step's) is not waited on: the agent's own prompt is run.
		const open = await runCliProcess(["trigger", "fake"], env, async (stdin) => void stdin.write("Not a prompt.\n"));
		expect(open.status, open.stderr).toBe(0);
		expect(open.stderr).toBe("");
		// A shell's pipe without -: said, where its text was dropped unsaid.
		const child = spawn("sh", ["-c", 'echo "Not a prompt either." | "$NODE" "$CLI" trigger fake'], { env: childEnv({ NODE: process.execPath, CLI, ...env }) });
		let piped = "";
		child.stderr.setEncoding("utf8").on("data", (d: string) => (piped += d));
		const [status] = (await once(child, "close")) as [number | null];
		expect(status, piped).toBe(0);
		expect(piped).toBe("drover: stdin is not read without -: the agent's own prompt runs (drover trigger <agent> - sends stdin as the prompt)\n");
		expect(posts()).toEqual([
			["POST /v1/agents/fake/jobs", { prompt: "Disk full\non db-1." }],
			[`POST /v1/jobs/${SOURCE}/fork`, { prompt: "Disk full\non db-1." }],
			[`POST /v1/jobs/${SOURCE}/continue`, { prompt: "Disk full\non db-1." }],
			["POST /v1/agents/fake/jobs", {}],
			["POST /v1/agents/fake/jobs", {}],
		]);
	});

	it("prints the issues of an invalid fleet.yaml once: its message already lists them one a line", async () => {
		const issues = [
			{ path: "agents.0.model", message: "required (string)" },
			{ path: "agents.1.schedules.0.expression", message: "not a cron expression" },
		];
		const message = `fleet.yaml is invalid:\n${issues.map((i) => `  - ${i.path}: ${i.message}`).join("\n")}`;
		const invalid = (_req: IncomingMessage, res: ServerResponse) => json(res, 500, { error: { code: "config_invalid", message, details: { issues } } });
		const api = await fakeApi({ "GET /v1/status": invalid, "GET /v1/agents?limit=200": invalid, "GET /v1/agents/fake": invalid, "POST /v1/agents/fake/jobs": invalid });
		for (const args of [["status"], ["agents"], ["status", "fake"], ["trigger", "fake"]]) {
			const r = await runCli(api.url, args);
			// A 500 config_invalid: the Worker's configuration, which only its operator mends, so a
			// refusal (exit 1), not the server failing (5: "worth retrying later").
			expect(r.status, args.join(" ")).toBe(1);
			expect(r.stderr, args.join(" ")).toBe(`drover: ${message}\n`);
		}
	});

	it("keeps a message with a single issue on its line", async () => {
		const message = "invalid param: id: job id must be job-YYYY-MM-DD-xxxxxx";
		const api = await fakeApi({
			[`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 400, { error: { code: "bad_request", message, details: { issues: [{ path: "id", message: "job id must be job-YYYY-MM-DD-xxxxxx" }] } } }),
		});
		const r = await runCli(api.url, ["job", JOB]);
		expect(r.status).toBe(1);
		expect(r.stderr.split("\n")).toContain(`drover: ${message}`);
	});
});

describe("a run refused by a paused or disabled agent", () => {
	it("says how to let it run", async () => {
		const refused = (code: string, message: string) => (_req: IncomingMessage, res: ServerResponse) => json(res, 409, { error: { code, message } });
		const api = await fakeApi({
			"POST /v1/agents/held/jobs": refused("agent_paused", "agent held is paused: maintenance"),
			"POST /v1/agents/broken/jobs": refused("agent_paused", "agent broken is paused: auto: secret X (delivery) is not set"),
			"POST /v1/agents/off/jobs": refused("agent_disabled", "agent off is disabled in its definition"),
		});
		const held = await runCli(api.url, ["trigger", "held"]);
		expect(held.status).toBe(1);
		expect(held.stderr).toContain("resume it with: drover resume held");
		expect((await runCli(api.url, ["trigger", "broken"])).stderr).toContain("it paused itself: fix what it names");
		expect((await runCli(api.url, ["trigger", "off"])).stderr).toContain("set enabled: true");
	});
});

describe("drover usage", () => {
	const day = (d: string, agent: string, jobs: number) => ({
		day: d,
		agent,
		jobs,
		input_tokens: 100 * jobs,
		output_tokens: 10 * jobs,
		cache_creation_input_tokens: 0,
		cache_read_input_tokens: 0,
		cost_usd: null,
		priced_jobs: 0,
	});
	const page = (nextCursor: string | null) => ({ since: "2026-01-01", until: "2026-01-07", days: [day("2026-01-02", "a", 1), day("2026-01-01", "b", 2)], next_cursor: nextCursor });

	it("calls the sum of any page but a lone one the total of this page", async () => {
		const api = await fakeApi({
			"GET /v1/usage?since=2026-01-01&until=2026-01-07&limit=2": (_req, res) => json(res, 200, page("c1")),
			"GET /v1/usage?since=2026-01-01&until=2026-01-07&limit=2&cursor=c1": (_req, res) => json(res, 200, page(null)),
			"GET /v1/usage?since=2026-01-01&until=2026-01-07&limit=500": (_req, res) => json(res, 200, page(null)),
		});
		const total = (stdout: string) => stdout.trim().split("\n").at(-1)!;
		const first = await runCli(api.url, ["usage", "--since", "2026-01-01", "--until", "2026-01-07", "--limit", "2"]);
		expect(first.status, first.stderr).toBe(0);
		expect(total(first.stdout)).toMatch(/^\s*total \(this page\)\s+3\s/);
		// The last page: nothing after it, but pages before it.
		const last = await runCli(api.url, ["usage", "--since", "2026-01-01", "--until", "2026-01-07", "--limit", "2", "--cursor", "c1"]);
		expect(last.status, last.stderr).toBe(0);
		expect(total(last.stdout)).toMatch(/^\s*total \(this page\)\s+3\s/);
		const lone = await runCli(api.url, ["usage", "--since", "2026-01-01", "--until", "2026-01-07"]);
		expect(lone.status, lone.stderr).toBe(0);
		expect(total(lone.stdout)).toMatch(/^\s*total\s+3\s/);
	});

	it("--by-day prints the fleet's days as group=day sums them, with their agents and a total; --json is the API's, and the next page keeps --by-day", async () => {
		const total = (d: string, agents: number, jobs: number, cost: number | null) => ({ ...day(d, "", jobs), agent: undefined, agents, cost_usd: cost, priced_jobs: cost === null ? 0 : jobs });
		const days = { since: "2026-01-01", until: "2026-01-07", days: [total("2026-01-02", 3, 4, 0.5), total("2026-01-01", 1000, 2, null)], next_cursor: "d1" };
		const api = await fakeApi({
			"GET /v1/usage?since=2026-01-01&until=2026-01-07&limit=2&group=day": (_req, res) => json(res, 200, days),
			"GET /v1/usage?since=2026-01-01&until=2026-01-07&agent=a&limit=500&group=day": (_req, res) => json(res, 200, { ...days, days: days.days.slice(0, 1), next_cursor: null }),
		});
		const r = await runCli(api.url, ["usage", "--by-day", "--since", "2026-01-01", "--until", "2026-01-07", "--limit", "2"]);
		expect(r.status, r.stderr).toBe(0);
		const lines = r.stdout.trimEnd().split("\n").map((l) => l.trimEnd().split(/\s{2,}/));
		expect(lines).toEqual([
			["DAY", "AGENTS", "JOBS", "INPUT", "OUTPUT", "CACHE WRITE", "CACHE READ", "COST"],
			["2026-01-02", "3", "4", "400", "40", "0", "0", "$0.5000"],
			["2026-01-01", "1,000", "2", "200", "20", "0", "0", "-"],
			["total (this page)", "6", "600", "60", "0", "0", "$0.5000 (4 of 6 priced)"],
		]);
		expect(r.stderr).toContain("more: drover usage --by-day --since 2026-01-01 --until 2026-01-07 --limit 2 --cursor d1");
		const asJson = await runCli(api.url, ["usage", "--by-day", "--since", "2026-01-01", "--until", "2026-01-07", "--limit", "2", "--json"]);
		expect(asJson.status, asJson.stderr).toBe(0);
		expect(JSON.parse(asJson.stdout)).toEqual(JSON.parse(JSON.stringify(days)));
		// One agent's days: a lone row, no total.
		const one = await runCli(api.url, ["usage", "--by-day", "--agent", "a", "--since", "2026-01-01", "--until", "2026-01-07"]);
		expect(one.status, one.stderr).toBe(0);
		expect(one.stdout.trimEnd().split("\n")).toHaveLength(2);
		expect(one.stdout).toMatch(/^2026-01-02\s+3\s+4\s/m);
	});

	it("--csv writes every page's rows as CSV, the API's fields, an unpriced cost empty; --by-day the days; with --json or --cursor it is a usage error", async () => {
		const priced = { ...day("2026-01-03", "c", 1), cost_usd: 0.25, priced_jobs: 1 };
		const api = await fakeApi({
			"GET /v1/usage?since=2026-01-01&until=2026-01-07&limit=1000": (_req, res) => json(res, 200, { ...page("c1"), days: [priced, day("2026-01-02", "a", 1)] }),
			"GET /v1/usage?since=2026-01-01&until=2026-01-07&limit=1000&cursor=c1": (_req, res) => json(res, 200, { ...page(null), days: [day("2026-01-01", "b", 2)] }),
			"GET /v1/usage?since=2026-01-01&until=2026-01-07&group=day&limit=1000": (_req, res) =>
				json(res, 200, { ...page(null), days: [{ ...day("2026-01-02", "", 3), agent: undefined, agents: 2 }] }),
		});
		const r = await runCli(api.url, ["usage", "--csv", "--since", "2026-01-01", "--until", "2026-01-07"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toBe(
			"day,agent,jobs,input_tokens,output_tokens,cache_creation_input_tokens,cache_read_input_tokens,cost_usd,priced_jobs\r\n" +
				"2026-01-03,c,1,100,10,0,0,0.25,1\r\n2026-01-02,a,1,100,10,0,0,,0\r\n2026-01-01,b,2,200,20,0,0,,0\r\n",
		);
		const byDay = await runCli(api.url, ["usage", "--csv", "--by-day", "--since", "2026-01-01", "--until", "2026-01-07"]);
		expect(byDay.status, byDay.stderr).toBe(0);
		expect(byDay.stdout).toBe("day,agents,jobs,input_tokens,output_tokens,cache_creation_input_tokens,cache_read_input_tokens,cost_usd,priced_jobs\r\n2026-01-02,2,3,300,30,0,0,,0\r\n");
		const seen = api.seen.length;
		for (const args of [["--json"], ["--cursor", "c1"], ["--limit", "5"]]) {
			const bad = await runCli(api.url, ["usage", "--csv", ...args]);
			expect(bad.status, args.join(" ")).toBe(2);
			expect(bad.stderr).toMatch(/cannot be used with/);
		}
		expect(api.seen.length).toBe(seen);
	});

	it("--agent with several names and no usage asks for each name alone, and says which is unknown", async () => {
		const api = await fakeApi({
			"GET /v1/usage?since=2026-01-01&until=2026-01-07&agent=a%2Cnope&limit=500": (_req, res) => json(res, 200, { since: "2026-01-01", until: "2026-01-07", days: [], next_cursor: null }),
			"GET /v1/agents/a/jobs?limit=1": (_req, res) => json(res, 200, { jobs: [], next_cursor: null }),
			"GET /v1/agents/nope/jobs?limit=1": (_req, res) => json(res, 404, { error: { code: "not_found", message: "no agent nope" } }),
		});
		const r = await runCli(api.url, ["usage", "--agent", "a,nope", "--since", "2026-01-01", "--until", "2026-01-07"]);
		expect(r.status).toBe(4);
		expect(r.stderr).toContain("no agent nope");
		expect(api.seen.map((s) => s.route)).toEqual([
			"GET /v1/usage?since=2026-01-01&until=2026-01-07&agent=a%2Cnope&limit=500",
			"GET /v1/agents/a/jobs?limit=1",
			"GET /v1/agents/nope/jobs?limit=1",
		]);
	});

	it("--agent with a name among several that has no row asks for that name alone: a mistyped one is exit 4, not left out unsaid", async () => {
		const q = "since=2026-01-01&until=2026-01-07&agent=a%2Cb%2Cnope";
		const api = await fakeApi({
			[`GET /v1/usage?${q}&limit=500`]: (_req, res) => json(res, 200, page(null)),
			[`GET /v1/usage?${q}&limit=1000`]: (_req, res) => json(res, 200, page(null)),
			[`GET /v1/usage?${q}&limit=500&group=day`]: (_req, res) => json(res, 200, { ...page(null), days: [{ ...day("2026-01-02", "", 3), agent: undefined, agents: 2 }] }),
			// A page of several: the names not on it may be on the next.
			[`GET /v1/usage?${q}&limit=2`]: (_req, res) => json(res, 200, page("c1")),
			"GET /v1/agents/nope/jobs?limit=1": (_req, res) => json(res, 404, { error: { code: "not_found", message: "no agent named nope" } }),
			"GET /v1/agents/a/jobs?limit=1": (_req, res) => json(res, 200, { jobs: [], next_cursor: null }),
			"GET /v1/agents/b/jobs?limit=1": (_req, res) => json(res, 200, { jobs: [], next_cursor: null }),
		});
		const base = ["usage", "--agent", "a,b,nope", "--since", "2026-01-01", "--until", "2026-01-07"];
		for (const args of [[], ["--json"], ["--csv"], ["--by-day"]]) {
			const before = api.seen.length;
			const r = await runCli(api.url, [...base, ...args]);
			expect(r.status, args.join(" ")).toBe(4);
			expect(r.stdout, args.join(" ")).toBe("");
			expect(r.stderr, args.join(" ")).toBe("drover: no agent named nope\n");
			// a and b have rows (by day, rows name no agent: each is asked for).
			const asked = api.seen.slice(before + 1).map((s) => s.route);
			expect(asked, args.join(" ")).toEqual(args[0] === "--by-day" ? ["GET /v1/agents/a/jobs?limit=1", "GET /v1/agents/b/jobs?limit=1", "GET /v1/agents/nope/jobs?limit=1"] : ["GET /v1/agents/nope/jobs?limit=1"]);
		}
		const paged = await runCli(api.url, [...base, "--limit", "2"]);
		expect(paged.status, paged.stderr).toBe(0);
		expect(api.seen.at(-1)!.route).toBe(`GET /v1/usage?${q}&limit=2`);
	});

	it("asks for --days N by both ends of its own clock's days, so a server a day off around midnight shows N days still", async () => {
		const api = await fakeApi({});
		const before = new Date().toISOString().slice(0, 10);
		await runCli(api.url, ["usage", "--days", "3"]);
		const after = new Date().toISOString().slice(0, 10);
		const query = new URL(`http://x${api.seen[0]!.route.slice("GET ".length)}`).searchParams;
		const until = query.get("until");
		// The day this test ran on (either side of a midnight it may straddle).
		expect([before, after]).toContain(until);
		expect(query.get("since")).toBe(new Date(Date.parse(until!) - 2 * 86_400_000).toISOString().slice(0, 10));
	});

	it("asks for --days N from 1970-01-01 at the earliest, the API's first day, rather than a since the user never typed", async () => {
		const api = await fakeApi({
			"GET /v1/usage?since=1970-01-01&until=1970-01-05&limit=500": (_req, res) => json(res, 200, { since: "1970-01-01", until: "1970-01-05", days: [], next_cursor: null }),
		});
		const r = await runCli(api.url, ["usage", "--until", "1970-01-05", "--days", "30"]);
		expect(r.status).toBe(0);
		expect(api.seen.map((s) => s.route)).toEqual(["GET /v1/usage?since=1970-01-01&until=1970-01-05&limit=500"]);
	});
});

/** An agent as GET /v1/agents lists it: an API agent, enabled, idle, with what `overrides` changes. */
function agentView(name: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
	return {
		name,
		source: "api",
		enabled: true,
		model: "claude-sonnet-4-5",
		fallback_models: [],
		max_concurrent: 1,
		overlap: "skip",
		schedules: [],
		paused: null,
		running_jobs: [],
		queued_jobs: 0,
		last_job: null,
		...overrides,
	};
}

describe("drover agents", () => {

	it("reads every page, and shows disabled, paused and running agents as such", async () => {
		const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
		const schedule = { name: "hourly", kind: "interval", expression: "1h", timezone: null, catch_up: false, enabled: true, next_run: inAnHour };
		const first = [agentView("a-off", { enabled: false, source: "file" }), agentView("b-busy", { schedules: [schedule], running_jobs: [{ id: JOB, status: "running", started_at: null, schedule: null }], queued_jobs: 2 })];
		const lastJob = { id: JOB, status: "completed", exit_reason: "success", finished_at: new Date().toISOString(), delivery: "failed" };
		const second = [
			agentView("c-held", { paused: { at: new Date().toISOString(), reason: null, by: "ops" } }),
			agentView("d-undelivered", { last_job: lastJob }),
			agentView("e-failed", { last_job: { ...lastJob, status: "failed", exit_reason: "timeout", delivery: null } }),
		];
		const api = await fakeApi({
			"GET /v1/agents?limit=200": (_req, res) => json(res, 200, { agents: first, next_cursor: "b-busy" }),
			"GET /v1/agents?limit=200&cursor=b-busy": (_req, res) => json(res, 200, { agents: second, next_cursor: null }),
		});
		const r = await runCli(api.url, ["agents"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout.trim().split("\n")).toHaveLength(6);
		expect(r.stdout).toMatch(/^NAME\s+SOURCE\s+MODEL\s+NEXT RUN\s+JOBS\s+LAST\s+STATE$/m);
		expect(r.stdout).toMatch(/^a-off\s+fleet\.yaml\s+claude-sonnet-4-5\s+on trigger only\s+-\s+-\s+disabled$/m);
		expect(r.stdout).toMatch(/^b-busy\s+API\s+claude-sonnet-4-5\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z \(in (59m|1h), hourly\)\s+1 running, 2 queued\s+-\s+active$/m);
		expect(r.stdout).toMatch(/^c-held\s+API\s+claude-sonnet-4-5\s+on trigger only\s+-\s+-\s+paused (now|\d+s ago) by ops$/m);
		// A completed run whose answer did not get through is not ok; a failed one says why.
		expect(r.stdout).toMatch(/^d-undelivered\s+API\s+claude-sonnet-4-5\s+on trigger only\s+-\s+completed, delivery failed\s+active$/m);
		expect(r.stdout).toMatch(/^e-failed\s+API\s+claude-sonnet-4-5\s+on trigger only\s+-\s+failed \(timeout\)\s+active$/m);
		const j = await runCli(api.url, ["agents", "--json"]);
		expect(JSON.parse(j.stdout)).toEqual({ agents: [...first, ...second], next_cursor: null });
	});

	it("stops at a server that never stops paging with an error, not a list cut short", async () => {
		let n = 0;
		const server = createServer((req, res) => {
			if (req.url?.startsWith("/v1/agents")) json(res, 200, { agents: [agentView(`a-${n++}`)], next_cursor: "again" });
			else json(res, 404, { error: { code: "not_found", message: "no route" } });
		});
		servers.push(server);
		server.listen(0, "127.0.0.1");
		await once(server, "listening");
		const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
		const r = await runCli(url, ["agents"]);
		expect(r.status).toBe(1);
		expect(r.stdout).toBe("");
		expect(r.stderr).toContain(`drover: ${url} listed more than 200000 agents and had more: is it drover?`);
		expect(n).toBe(1000);
	});
});

describe("drover runs", () => {
	const row = (over: Record<string, unknown>) => ({
		id: "occ-1", schedule: "digest", source: "schedule", scheduled_instant: "2026-01-01T09:00:00.000Z", dispatch: "on_time",
		claimed_at: "2026-01-01T09:00:00.500Z", started_at: "2026-01-01T09:00:01.000Z", finished_at: "2026-01-01T09:00:09.000Z",
		status: "completed", skip_reason: null, skipped_count: null, skipped_from: null, job_id: JOB, error: null, delivery_outcome: null, ...over,
	});

	it("shows each run's delivery outcome beside its status: a completed run whose answer did not get through is not ok", async () => {
		const api = await fakeApi({
			"GET /v1/agents/fake/runs?limit=20": (_req, res) =>
				json(res, 200, { runs: [row({ delivery_outcome: "failed" }), row({ id: "occ-2", delivery_outcome: "delivered" }), row({ id: "occ-3", status: "skipped", job_id: null, skip_reason: "paused: maintenance", started_at: null, finished_at: null })], next_cursor: null }),
		});
		const r = await runCli(api.url, ["runs", "fake"]);
		expect(r.status, r.stderr).toBe(0);
		const [header, ...rows] = r.stdout.trimEnd().split("\n");
		expect(header).toMatch(/^INSTANT\s+SCHEDULE\s+DISPATCH\s+STATUS\s+DELIVERY\s+JOB\s+REASON$/);
		expect(rows.map((l) => l.replace(/^.*?\)\s+/, "").split(/\s+/).slice(0, 4))).toEqual([
			["digest", "on_time", "completed", "failed"],
			["digest", "on_time", "completed", "delivered"],
			["digest", "on_time", "skipped", "-"],
		]);
	});
});

describe("drover incidents", () => {
	// Times as the fake API answers, which the CLI says against its own clock a moment later: from the
	// file's start, a test run minutes in read "5m ago" as "7m ago".
	const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
	const incident = (over: Record<string, unknown>) => ({
		id: "fake_000000000001", agent: "fake", signature: "000000000001", class: "agent", state: "detected", error: "boom", count: 1,
		first_seen_at: ago(30), last_seen_at: ago(5), last_job_id: null, alerted_at: null, resolved_at: null, closed_at: null, closed_by: null, failing: null, ...over,
	});

	it("says whether and when each incident was paged: ALERTED is when, or not paged while one open is detected", async () => {
		const api = await fakeApi({
			"GET /v1/incidents?limit=50": (_req, res) =>
				json(res, 200, {
					incidents: [
						incident({}),
						incident({ id: "fake_000000000002", state: "alerted", alerted_at: ago(29) }),
						incident({ id: "fake_000000000003", state: "resolved", alerted_at: ago(28), resolved_at: ago(10) }),
						incident({ id: "fake_000000000004", state: "resolved", resolved_at: ago(10) }),
					],
					next_cursor: null,
				}),
		});
		const r = await runCli(api.url, ["incidents"]);
		expect(r.status, r.stderr).toBe(0);
		const [header, ...rows] = r.stdout.trimEnd().split("\n");
		expect(header).toMatch(/^ID\s+AGENT\s+CLASS\s+STATE\s+COUNT\s+FAILING\s+ALERTED\s+LAST SEEN\s+LAST JOB\s+ERROR$/);
		// Each row's STATE, then ALERTED.
		expect(rows.map((l) => l.match(/^fake_\S+\s+fake\s+agent\s+(\S+)\s+1\s+-\s+(not paged|\S+ ago|-)\s+5m ago\s/)?.slice(1))).toEqual([
			["detected", "not paged"],
			["alerted", "29m ago"],
			["resolved", "28m ago"],
			["resolved", "-"],
		]);
	});

	it("close says when the incident was paged, or that it was not", async () => {
		const closed = { state: "closed", closed_at: ago(0), closed_by: "ops" };
		const api = await fakeApi({
			"POST /v1/incidents/fake_000000000001/close": (_req, res) => json(res, 200, incident({ ...closed, alerted_at: "2026-01-01T09:00:00.000Z" })),
			"POST /v1/incidents/fake_000000000002/close": (_req, res) => json(res, 200, incident({ ...closed, id: "fake_000000000002" })),
		});
		const paged = await runCli(api.url, ["incidents", "close", "fake_000000000001"]);
		expect(paged.status, paged.stderr).toBe(0);
		expect(paged.stdout).toMatch(/^alerted\s+2026-01-01 09:00:00Z \(\S+ ago\)$/m);
		const unpaged = await runCli(api.url, ["incidents", "close", "fake_000000000002"]);
		expect(unpaged.status, unpaged.stderr).toBe(0);
		expect(unpaged.stdout).toMatch(/^alerted\s+not paged$/m);
	});

	it("resolve posts to the incident's resolve and says it resolved, and that the same error pages again; still open when it failed again after the resolve was asked; a closed one's 409 is said", async () => {
		const api = await fakeApi({
			"POST /v1/incidents/fake_000000000001/resolve": (_req, res) => json(res, 200, incident({ state: "resolved", resolved_at: ago(0), alerted_at: "2026-01-01T09:00:00.000Z" })),
			"POST /v1/incidents/fake_000000000002/resolve": (_req, res) => json(res, 409, { error: { code: "conflict", message: "incident fake_000000000002 is closed: a closing is terminal for its signature, and the same error stays quiet" } }),
			// Seen failing after the request arrived: left open.
			"POST /v1/incidents/fake_000000000003/resolve": (_req, res) => json(res, 200, incident({ id: "fake_000000000003", state: "detected", count: 2, last_seen_at: ago(0) })),
		});
		const r = await runCli(api.url, ["incidents", "resolve", "fake_000000000001"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toMatch(/^resolved\s+fake_000000000001$/m);
		expect(r.stdout).toMatch(/^next\s+the same error again re-opens it and pages$/m);
		expect(r.stdout).not.toMatch(/^by\s/m);
		const closed = await runCli(api.url, ["incidents", "resolve", "fake_000000000002"]);
		expect(closed.status).toBe(1);
		expect(closed.stderr).toContain("is closed: a closing is terminal for its signature");
		const open = await runCli(api.url, ["incidents", "resolve", "fake_000000000003"]);
		expect(open.status, open.stderr).toBe(0);
		expect(open.stdout).toMatch(/^detected\s+fake_000000000003$/m);
		expect(open.stdout).toMatch(/^next\s+still open: it failed again \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(.+\), after the resolve was asked; resolve it again to resolve it$/m);
		expect(open.stdout).not.toContain("re-opens it and pages");
		expect(api.seen.map((s) => s.route)).toEqual(["POST /v1/incidents/fake_000000000001/resolve", "POST /v1/incidents/fake_000000000002/resolve", "POST /v1/incidents/fake_000000000003/resolve"]);
	});

	it("resolve --count names the count the operator saw: one that failed again since is said still open, with the count to resolve it by; a bad count is a usage error before any request", async () => {
		const api = await fakeApi({
			// Counted 3 by the time the resolve arrived, where the operator saw 1: left open.
			"POST /v1/incidents/fake_000000000004/resolve": (_req, res) => json(res, 200, incident({ id: "fake_000000000004", state: "alerted", count: 3, last_seen_at: ago(0) })),
		});
		const open = await runCli(api.url, ["incidents", "resolve", "fake_000000000004", "--count", "1"]);
		expect(open.status, open.stderr).toBe(0);
		expect(open.stdout).toMatch(/^alerted\s+fake_000000000004$/m);
		expect(open.stdout).toMatch(/^next\s+still open: it failed 2 more times since the 1 you saw, last \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(.+\); resolve it again with --count 3 to resolve it$/m);
		expect(api.seen).toEqual([{ route: "POST /v1/incidents/fake_000000000004/resolve", body: JSON.stringify({ count: 1 }) }]);
		for (const bad of ["0", "-1", "two", "1.5"]) {
			const r = await runCli(api.url, ["incidents", "resolve", "fake_000000000004", "--count", bad]);
			expect(r.status, bad).toBe(2);
			expect(r.stderr).toContain("--count");
		}
		expect(api.seen).toHaveLength(1);
	});

	it("incident <id>, the command an alert names, shows one incident whole: its error, counts, what it waits on, its last job, its paging and what to do next", async () => {
		const api = await fakeApi({
			"GET /v1/incidents/fake_000000000005": (_req, res) =>
				json(res, 200, incident({ id: "fake_000000000005", state: "alerted", count: 3, alerted_at: "2026-01-01T09:00:00.000Z", last_job_id: "job-2026-01-01-abcdef", failing: ["schedule:nightly", "delivery"], error: "delivery to slack failed: 404 no_service" })),
			"GET /v1/incidents/fake_000000000006": (_req, res) => json(res, 200, incident({ id: "fake_000000000006", state: "closed", closed_at: "2026-01-02T10:00:00.000Z", closed_by: "ops", failing: null })),
			"GET /v1/incidents/fake_000000000007": (_req, res) => json(res, 404, { error: { code: "not_found", message: "no incident fake_000000000007" } }),
		});
		const open = await runCli(api.url, ["incident", "fake_000000000005"]);
		expect(open.status, open.stderr).toBe(0);
		const lines = open.stdout.trimEnd().split("\n");
		expect(lines.map((l) => l.split(/\s{2,}/)[0])).toEqual(["alerted", "agent", "class", "error", "seen", "failing", "last job", "alerted", "next"]);
		expect(lines[0]).toMatch(/^alerted\s+fake_000000000005$/);
		expect(open.stdout).toMatch(/^error\s+delivery to slack failed: 404 no_service$/m);
		expect(open.stdout).toMatch(/^seen\s+3 times, first \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(30m ago\), last \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(5m ago\)$/m);
		expect(open.stdout).toMatch(/^failing\s+schedule:nightly, delivery \(it resolves once each has run clean\)$/m);
		expect(open.stdout).toMatch(/^last job\s+job-2026-01-01-abcdef \(drover job job-2026-01-01-abcdef --logs\)$/m);
		expect(open.stdout).toMatch(/^alerted\s+2026-01-01 09:00:00Z \(\S+ ago\)$/m);
		expect(open.stdout).toMatch(/^next\s+drover incidents resolve fake_000000000005 --count 3 once it is mended \(a failure after it re-opens it\); drover incidents close fake_000000000005 quiets it for good$/m);
		const closed = await runCli(api.url, ["incident", "fake_000000000006"]);
		expect(closed.status, closed.stderr).toBe(0);
		expect(closed.stdout).toMatch(/^seen\s+once, \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(30m ago\)$/m);
		expect(closed.stdout).toMatch(/^closed\s+2026-01-02 10:00:00Z \(\S+ ago\) by ops$/m);
		expect(closed.stdout).toMatch(/^alerted\s+-$/m);
		expect(closed.stdout).toMatch(/^next\s+closed: the same error again is counted, never paged$/m);
		expect(closed.stdout).not.toMatch(/^(failing|last job)\s/m);
		const asJson = await runCli(api.url, ["incident", "fake_000000000005", "--json"]);
		expect(JSON.parse(asJson.stdout)).toMatchObject({ id: "fake_000000000005", count: 3, failing: ["schedule:nightly", "delivery"] });
		const missing = await runCli(api.url, ["incident", "fake_000000000007"]);
		expect(missing.status).toBe(4);
		expect(missing.stderr).toContain("no incident fake_000000000007");
		// A malformed id is a usage error before any request.
		const seen = api.seen.length;
		expect((await runCli(api.url, ["incident", "nope"])).status).toBe(2);
		expect(api.seen).toHaveLength(seen);
	});
});

describe("drover tick", () => {
	it("runs one tick by POST /v1/tick and says what it did; --json prints the API's answer", async () => {
		const answer = { scheduled_time: "2026-01-01T09:07:00.000Z", outcome: "ok", agents_called: 1, claimed: 1, skipped: 0, shards_failed: 0 };
		const api = await fakeApi({ "POST /v1/tick": (_req, res) => json(res, 200, answer) });
		const r = await runCli(api.url, ["tick"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toBe("ticked 2026-01-01T09:07:00.000Z: ok, 1 agent called, 1 claimed, 0 skipped\n");
		const j = await runCli(api.url, ["tick", "--json"]);
		expect(JSON.parse(j.stdout)).toEqual(answer);
		expect(api.seen.map((s) => s.route)).toEqual(["POST /v1/tick", "POST /v1/tick"]);
	});

	it("says how many shards did not answer a partial tick, as drover status does after it", async () => {
		const answer = { scheduled_time: "2026-01-01T09:07:00.000Z", outcome: "partial", agents_called: 7, claimed: 5, skipped: 2, shards_failed: 1 };
		const now = new Date().toISOString();
		const scheduler = { last_tick_at: now, age_seconds: 5, stalled: false, outcome: "partial", last_ok_at: now, agents_called: 7, claimed: 5, skipped: 2, error: "shard 3 did not answer the tick", shards_ok: 15, shards_failed: 1 };
		const api = await fakeApi({
			"POST /v1/tick": (_req, res) => json(res, 200, answer),
			"GET /v1/status": (_req, res) => json(res, 200, { scheduler, jobs: {}, agents: { file: 0, api: 0 } }),
			"GET /v1/agents?limit=200": (_req, res) => json(res, 200, { agents: [], next_cursor: null }),
		});
		const r = await runCli(api.url, ["tick"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toBe("ticked 2026-01-01T09:07:00.000Z: partial: see drover status, 7 agents called, 5 claimed, 2 skipped, 1 shard of 16 did not answer\n");
		const s = await runCli(api.url, ["status"]);
		expect(s.stdout).toMatch(/^scheduler\s+partial, last tick (now|\d+s ago) \(7 agents called, 5 claimed, 2 skipped; 1 shard of 16 did not answer\)$/m);
		expect(s.stdout).toMatch(/^tick error\s+shard 3 did not answer the tick$/m);
	});

	it("says the API's refusal for a token below admin, exit 1", async () => {
		const api = await fakeApi({ "POST /v1/tick": (_req, res) => json(res, 403, { error: { code: "forbidden", message: "this route needs the admin role; token operator has operate" } }) });
		const r = await runCli(api.url, ["tick"]);
		expect(r.status).toBe(1);
		expect(r.stderr).toContain("this route needs the admin role; token operator has operate");
		expect(r.stdout).toBe("");
	});
});

describe("a scheduler shard behind its ticks", () => {
	const warning =
		"1 scheduler shard is behind: due agents still wait to be called for 2026-01-01T09:03:00.000Z, 4 minutes before the last tick, and 40 were left to follow-ups when it ended. None is dropped: each is called late and claims its slot once.";
	const now = new Date().toISOString();
	const scheduler = { last_tick_at: now, age_seconds: 5, stalled: false, outcome: "ok", last_ok_at: now, agents_called: 8, claimed: 8, skipped: 0, error: null, deferred: 40, oldest_deferred_minute: "2026-01-01T09:03:00.000Z", shards_behind: 1 };
	const status = { scheduler, jobs: {}, agents: { file: 0, api: 0 }, warnings: [warning] };

	it("drover status says how many agents wait in follow-ups, since when, and the warning", async () => {
		const api = await fakeApi({ "GET /v1/status": (_req, res) => json(res, 200, status), "GET /v1/agents?limit=200": (_req, res) => json(res, 200, { agents: [], next_cursor: null }) });
		const r = await runCli(api.url, ["status"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toMatch(/^deferred\s+40 agents left to follow-ups by the last tick, owed since /m);
		expect(r.stdout.split("\n").find((line) => line.startsWith("warnings"))).toMatch(/^warnings\s+1 scheduler shard is behind: .* claims its slot once\.$/);
	});

	it("drover tick says what it left to follow-ups, and that a shard is behind", async () => {
		const answer = { scheduled_time: "2026-01-01T09:07:00.000Z", outcome: "ok", agents_called: 8, claimed: 8, skipped: 0, shards_failed: 0, deferred: 40, oldest_deferred_minute: "2026-01-01T09:03:00.000Z", shards_behind: 1 };
		const api = await fakeApi({ "POST /v1/tick": (_req, res) => json(res, 200, answer) });
		const r = await runCli(api.url, ["tick"]);
		expect(r.stdout).toBe("ticked 2026-01-01T09:07:00.000Z: ok, 8 agents called, 8 claimed, 0 skipped, 40 left to follow-ups (1 shard behind: see drover status)\n");
	});

	it("drover doctor warns of it, without failing", async () => {
		const health = { status: "ok", version: "0.1.0", fleet: { ok: true, agents: 0 }, scheduler, variables: { ok: true }, api_tokens: { ok: true } };
		const answers: Record<string, unknown> = {
			"/healthz": health,
			"/v1/jobs?limit=1": { jobs: [], next_cursor: null },
			"/v1/me": { name: "ops", role: "read" },
			"/v1/status": status,
			"/v1/agents?limit=200": { agents: [], next_cursor: null },
		};
		// /healthz takes no token, which fakeApi would refuse: its own server.
		const server = createServer((req, res) => (req.url! in answers ? json(res, 200, answers[req.url!]) : json(res, 404, { error: { code: "not_found", message: "no route" } })));
		servers.push(server);
		server.listen(0, "127.0.0.1");
		await once(server, "listening");
		const r = await runCli(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, ["doctor", "--json"]);
		expect(r.status, r.stdout).toBe(0);
		expect((JSON.parse(r.stdout) as { checks: unknown[] }).checks).toContainEqual({ check: "scheduler", status: "warn", message: warning });
		// D1 filling up is said under d1, not the scheduler.
		// The server's own words for it, so a rewording is met here too.
		const full = d1StorageWarning(8_400_000_000)!;
		answers["/v1/status"] = { ...status, warnings: [full], d1_bytes: 8_400_000_000 };
		const d1 = await runCli(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, ["doctor", "--json"]);
		expect(d1.status, d1.stdout).toBe(0);
		expect((JSON.parse(d1.stdout) as { checks: unknown[] }).checks).toContainEqual({ check: "d1", status: "warn", message: full });
		// Open incidents nobody was paged for are said under alerts, not the scheduler.
		const unpaged = "alerts: 2 open incidents were not paged (the oldest opened 2026-01-01T09:00:00.000Z, 7 minutes ago; drover incidents --state detected lists them): ALERT_WEBHOOK_URL is not set, so no alert is sent";
		answers["/v1/status"] = { ...status, warnings: [unpaged] };
		const alerts = await runCli(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, ["doctor", "--json"]);
		expect(alerts.status, alerts.stdout).toBe(0);
		expect((JSON.parse(alerts.stdout) as { checks: unknown[] }).checks).toContainEqual({ check: "alerts", status: "warn", message: unpaged });
		// Read by a person, the check's name is not said twice ("! alerts  alerts: …").
		const read = await runCli(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, ["doctor"]);
		expect(read.stdout.split("\n").find((line) => line.startsWith("! alerts"))).toMatch(/^! alerts +2 open incidents were not paged \(/);
		// Those were a server's before warning_kinds, told by their text; a server that gives each
		// warning's kind is read by it, whatever the text says, and a kind this CLI does not know is said under its own name.
		answers["/v1/status"] = {
			...status,
			warnings: ["D1 is 84% full", "nobody was paged", "a shard lags", "a definition holds a secret", "something new"],
			warning_kinds: ["d1_storage", "incidents_unpaged", "scheduler_behind", "definition_secret", "quota_low"],
		};
		const kinds = await runCli(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, ["doctor", "--json"]);
		expect(kinds.status, kinds.stdout).toBe(0);
		expect((JSON.parse(kinds.stdout) as { checks: { check: string; status: string }[] }).checks.filter((c) => c.status === "warn")).toEqual([
			{ check: "d1", status: "warn", message: "D1 is 84% full" },
			{ check: "alerts", status: "warn", message: "nobody was paged" },
			{ check: "scheduler", status: "warn", message: "a shard lags" },
			// Agents whose definitions hold a secret's value: said with the agents' other warnings.
			{ check: "agents", status: "warn", message: "a definition holds a secret" },
			{ check: "quota_low", status: "warn", message: "something new" },
		]);
		// A kind is the server's text too: printed safe (no escape sequence reaches the terminal), and
		// one that is no string is read as a server's before kinds, by the warning's text.
		answers["/v1/status"] = { ...status, warnings: ["odd", "storage: D1 is full"], warning_kinds: ["\u001b[2Jquota\u009b", 7] };
		const odd = await runCli(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, ["doctor"]);
		expect(odd.status, odd.stderr).toBe(0);
		expect(odd.stdout).not.toMatch(/[\u001b\u009b]/);
		expect(odd.stdout).toMatch(/^! \\x1b\[2Jquota\\x9b +odd$/m);
		expect(odd.stdout).toMatch(/^! d1 +storage: D1 is full$/m);
	});
});

/** What `drover status` prints for a healthy scheduler's status with `extra` (d1, incidents) in it, and no agents. */
async function statusOut(extra: Record<string, unknown>): Promise<string> {
	const now = new Date().toISOString();
	const scheduler = { last_tick_at: now, age_seconds: 5, stalled: false, outcome: "ok", last_ok_at: now, agents_called: 0, claimed: 0, skipped: 0, error: null };
	const status = { scheduler, jobs: {}, agents: { file: 0, api: 0 }, warnings: [], ...extra };
	const api = await fakeApi({ "GET /v1/status": (_req, res) => json(res, 200, status), "GET /v1/agents?limit=200": (_req, res) => json(res, 200, { agents: [], next_cursor: null }) });
	const r = await runCli(api.url, ["status"]);
	expect(r.status, r.stderr).toBe(0);
	return r.stdout;
}

describe("drover status and D1's migrations", () => {
	const FIX = "npx wrangler d1 migrations apply DB --remote";
	const statusWith = (d1: unknown) => statusOut({ d1 });

	it("names the migrations D1 lacks and the command that applies them", async () => {
		expect(await statusWith({ ok: false, missing: ["0010_heartbeat_backlog.sql", "0011_live_agents_index.sql"], fix: FIX })).toMatch(
			/^d1\s+D1 migrations missing: 0010_heartbeat_backlog\.sql, 0011_live_agents_index\.sql; run npx wrangler d1 migrations apply DB --remote$/m,
		);
		expect(await statusWith({ ok: true, missing: ["0012_incidents_by_agent_time.sql"], fix: FIX })).toMatch(
			/^d1\s+D1 migrations missing: 0012_incidents_by_agent_time\.sql; run npx wrangler d1 migrations apply DB --remote \(they only add indexes: nothing fails meanwhile\)$/m,
		);
	});

	it("says nothing of D1 when it lacks none, or the server does not say", async () => {
		expect(await statusWith({ ok: true })).not.toMatch(/^d1\s/m);
		expect(await statusWith(undefined)).not.toMatch(/^d1\s/m);
	});
});

describe("drover status and open incidents", () => {
	const statusWith = (incidents: unknown) => statusOut({ incidents });

	it("says how many are open, paged or not, and where they are listed", async () => {
		expect(await statusWith({ open: 3, more: false })).toMatch(/^incidents\s+3 open \(drover incidents --state open lists them\)$/m);
		expect(await statusWith({ open: 20, more: true })).toMatch(/^incidents\s+more than 20 open \(drover incidents --state open lists them\)$/m);
		expect(await statusWith({ open: 0, more: false })).toMatch(/^incidents\s+none open$/m);
		expect(await statusWith(null)).toMatch(/^incidents\s+could not be read \(the Worker's logs say why\)$/m);
		// An older server's answer has no count: no row, rather than a wrong "none".
		expect(await statusWith(undefined)).not.toMatch(/^incidents\s/m);
	});
});

describe("drover status of a large fleet", () => {
	it("does not read every agent to name the paused ones, and says where to look", async () => {
		const scheduler = { last_tick_at: new Date().toISOString(), age_seconds: 5, stalled: false, outcome: "ok", last_ok_at: null, agents_called: 0, claimed: 0, skipped: 0, error: null };
		const api = await fakeApi({ "GET /v1/status": (_req, res) => json(res, 200, { scheduler, jobs: {}, agents: { file: 3, api: 4000 } }) });
		const r = await runCli(api.url, ["status"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toMatch(/^agents\s+4003 \(3 from fleet\.yaml, 4000 from the API\)$/m);
		expect(r.stdout).toMatch(/^paused\s+not looked up for 4003 agents: `drover agents` lists each one's state$/m);
		expect(r.stdout).toMatch(/^agents not listed: more than 1000; `drover agents` lists them all$/m);
		const j = await runCli(api.url, ["status", "--json"]);
		expect(JSON.parse(j.stdout)).toMatchObject({ agents: { file: 3, api: 4000 }, agent_list: null, agent_list_omitted: "not looked up for 4003 agents: `drover agents` lists each one's state" });
		expect(api.seen.map((s) => s.route)).toEqual(["GET /v1/status", "GET /v1/status"]);
	});

	it("still prints its summary when the agents cannot be listed, saying why", async () => {
		const scheduler = { last_tick_at: new Date().toISOString(), age_seconds: 5, stalled: false, outcome: "ok", last_ok_at: null, agents_called: 0, claimed: 0, skipped: 0, error: null };
		const api = await fakeApi({
			"GET /v1/status": (_req, res) => json(res, 200, { scheduler, jobs: { completed: 3 }, agents: { file: 3, api: 4 } }),
			"GET /v1/agents?limit=200": (_req, res) => json(res, 500, { error: { code: "internal", message: "internal error" } }),
		});
		const r = await runCli(api.url, ["status"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toMatch(/^agents\s+7 \(3 from fleet\.yaml, 4 from the API\)$/m);
		expect(r.stdout).toMatch(/^paused\s+could not be listed: internal error$/m);
	});
});

describe("terminal control sequences in text from outside", () => {
	// A model's answer that would clear the screen, colour what follows and set the window title; a
	// C1 CSI (U+009B) and DEL besides; and bidirectional controls that would show "evil.exe" as "exe.live".
	const HOSTILE = "\x1b[2J\x1b[31mRED\x1b[0m \x1b]0;pwned-title\x07 \x9b2J\x7f end \u202eevil.exe\u202c \u2066\u200f\u061c";
	const SHOWN = "\\x1b[2J\\x1b[31mRED\\x1b[0m \\x1b]0;pwned-title\\x07 \\x9b2J\\x7f end \\u202eevil.exe\\u202c \\u2066\\u200f\\u061c";
	const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
	const page = { jobs: [{ id: JOB, agent: "fake", status: "completed", trigger_type: "manual", schedule: null, started_at: "2026-01-01T00:00:01.000Z", duration_seconds: 1.5, summary: `ok ${HOSTILE}` }], next_cursor: null };
	const job = record({ prompt: HOSTILE, summary: HOSTILE, status: "failed", error: { type: "model_error", message: HOSTILE } });
	const output = [
		{ type: "assistant", content: HOSTILE },
		{ type: "tool_use", tool_name: `fetch${HOSTILE}`, input: { url: HOSTILE } },
		{ type: "tool_result", success: true, result: HOSTILE },
		{ type: "error", code: "x", message: HOSTILE },
		{ type: "system", subtype: "init", content: HOSTILE },
	];
	const jsonl = `${output.map((l) => JSON.stringify(l)).join("\n")}\nnot json ${HOSTILE}\n`;
	// A job whose prompt (a block scalar, several lines) and summary (a plain one) hold such characters.
	const hostileJob = record({ prompt: `Summarise.\nsafe \u202eevil.exe\u202c`, summary: `plain \u2067x\u2069 and ${HOSTILE}` }) as unknown as JobRecord;

	const hostileApi = () =>
		fakeApi({
			"GET /v1/jobs?limit=20": (_req, res) => json(res, 200, page),
			[`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 200, job),
			[`GET /v1/jobs/${JOB}/output?lines=50`]: (_req, res) => res.writeHead(200, { "content-type": "application/x-ndjson" }).end(jsonl),
			"GET /v1/agents/fake/notepad/k": (_req, res) => json(res, 200, { key: "k", value: HOSTILE }),
			"GET /v1/agents/fake/notepad": (_req, res) => json(res, 200, { k: HOSTILE }),
			"GET /v1/jobs/job-2026-01-01-zzzzzz": (_req, res) => json(res, 404, { error: { code: "not_found", message: `no job: ${HOSTILE}` } }),
		});

	it("is shown escaped (\\x1b…) in every human-readable output, errors included", async () => {
		const api = await hostileApi();
		for (const [args, status, shown] of [
			[["jobs"], 0, "ok \\x1b[2J\\x1b[31mRED"],
			[["job", JOB], 0, SHOWN],
			[["logs", "--job", JOB], 0, SHOWN],
			[["notepad", "fake", "get", "k"], 0, SHOWN],
			[["notepad", "fake", "list"], 0, "\\x1b[2J\\x1b[31mRED"],
			[["job", "job-2026-01-01-zzzzzz"], 4, `drover: no job: ${SHOWN}`],
		] as const) {
			const r = await runCli(api.url, [...args]);
			const label = `drover ${args.join(" ")}: ${JSON.stringify(r.stdout + r.stderr)}`;
			expect(r.status, label).toBe(status);
			expect(r.stdout + r.stderr, label).not.toMatch(CONTROL);
			expect(r.stdout + r.stderr, label).toContain(shown);
		}
		// Every kind of output line: the model's text, a tool's name, input and result, an error, a line that is not JSON.
		const logs = (await runCli(api.url, ["logs", "--job", JOB])).stdout.split("\n");
		expect(logs).toContain(SHOWN);
		expect(logs).toContain(`→ fetch${SHOWN} {"url":"\\u001b[2J\\u001b[31mRED\\u001b[0m \\u001b]0;pwned-title\\u0007 \\x9b2J\\x7f end \\u202eevil.exe\\u202c \\u2066\\u200f\\u061c"}`);
		expect(logs).toContain(`← ok ${SHOWN}`);
		expect(logs).toContain(`error [x]: ${SHOWN}`);
		expect(logs).toContain(`[system:init] ${SHOWN}`);
		expect(logs).toContain(`not json ${SHOWN}`);
		expect((await runCli(api.url, ["job", JOB])).stdout).toMatch(new RegExp(`^error\\s+model_error: ${SHOWN.replace(/[\\[\]]/g, "\\$&")}$`, "m"));
	});

	it("job --yaml shows it escaped and still means the same YAML: every such string double-quoted, where the escapes are YAML's", async () => {
		// Such a job's YAML as a drover before 2026-12 wrote it (the yaml library's own, as it still is
		// for other servers): the bidirectional controls raw in plain and block scalars.
		const yaml = new Document(Object.fromEntries(HERDCTL_FIELDS.map((f) => [f, hostileJob[f]]))).toString({ lineWidth: 0 });
		expect(yaml).toMatch(/\u202e/);
		const api = await fakeApi({ [`GET /v1/jobs/${JOB}`]: (_req, res) => res.writeHead(200, { "content-type": "application/yaml" }).end(yaml) });
		const r = await runCli(api.url, ["job", JOB, "--yaml"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).not.toMatch(CONTROL);
		expect(r.stdout).toContain(String.raw`safe \u202eevil.exe\u202c`);
		expect(parse(r.stdout)).toEqual(parse(yaml));
	});

	it("job --yaml prints today's server YAML as it came: it writes every such character as a YAML escape itself", async () => {
		const yaml = toHerdctlYaml(hostileJob);
		expect(yaml).not.toMatch(CONTROL);
		const api = await fakeApi({ [`GET /v1/jobs/${JOB}`]: (_req, res) => res.writeHead(200, { "content-type": "application/yaml" }).end(yaml) });
		const r = await runCli(api.url, ["job", JOB, "--yaml"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toBe(yaml);
		expect(parse(r.stdout)).toMatchObject({ prompt: hostileJob.prompt, summary: hostileJob.summary });
	});

	it("stays as the API sent it with --json", async () => {
		const api = await hostileApi();
		const jobs = await runCli(api.url, ["jobs", "--json"]);
		expect(jobs.stdout).toBe(`${JSON.stringify(page, null, 2)}\n`);
		expect((JSON.parse(jobs.stdout) as typeof page).jobs[0]!.summary).toBe(`ok ${HOSTILE}`);
		expect((await runCli(api.url, ["job", JOB, "--json"])).stdout).toBe(`${JSON.stringify(job, null, 2)}\n`);
		expect((await runCli(api.url, ["notepad", "fake", "get", "k", "--json"])).stdout).toBe(`${JSON.stringify({ key: "k", value: HOSTILE }, null, 2)}\n`);
		expect((await runCli(api.url, ["logs", "--job", JOB, "--json"])).stdout).toBe(jsonl);
	});

	it("is made printable before drover's own colours, which stay", () => {
		const p = paint(true);
		expect(renderLine(JSON.stringify({ type: "error", message: HOSTILE }), p)).toBe(`\x1b[31merror: ${SHOWN}\x1b[39m`);
		expect(renderLine(JSON.stringify({ type: "tool_result", success: false, error: HOSTILE }), p)).toBe(`\x1b[31m←\x1b[39m \x1b[31merror\x1b[39m ${SHOWN}`);
		const rows = table([{ status: "failed", summary: HOSTILE }], [{ header: "STATUS", value: (r) => r.status, style: () => p.red }, { header: "SUMMARY", value: (r) => r.summary }], p);
		expect(rows.split("\n")).toEqual([`\x1b[1mSTATUS\x1b[22m  \x1b[1mSUMMARY\x1b[22m`, `\x1b[31mfailed\x1b[39m  ${SHOWN}`]);
	});

	it.skipIf(spawnSync("script", ["--version"]).status !== 0)("on a terminal, drover's colours are there and the model's escapes are not", async () => {
		const api = await hostileApi();
		const { status, stdout } = await runOnTerminal(["jobs"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN });
		expect(status, stdout).toBe(0);
		expect(stdout).toContain("\x1b[1mID");
		expect(stdout).toContain("\x1b[32mcompleted");
		expect(stdout).toContain("ok \\x1b[2J\\x1b[31mRED");
		expect(stdout).not.toContain("\x1b[2J");
		expect(stdout).not.toContain("\x1b]0;");
	});
});

describe("cancel without --yes, stdin not a terminal", () => {
	it("is a usage error (exit 2) and sends nothing", async () => {
		const api = await fakeApi({ [`POST /v1/jobs/${JOB}/cancel`]: (_req, res) => json(res, 200, cancelled()) });
		const r = await runCli(api.url, ["cancel", JOB]);
		expect(r.status, r.stderr).toBe(2);
		expect(r.stderr).toBe(`drover: not cancelling job ${JOB} without confirmation\ndrover: hint: stdin is not a terminal to ask on: pass --yes\n`);
		expect(api.seen).toEqual([]);
	});
});

describe("cancel --force", () => {
	const forced = (reason: string) =>
		record({ status: "cancelled", exit_reason: "cancelled", summary: null, transitions: [{ from: "running", to: "cancelled", at: "2026-01-01T00:00:02.500Z", reason }] });

	it("sends force and says the call in flight was cut off, its effect unknown", async () => {
		const reason = "force-cancelled by root; tool call charge_card (toolu_1) was cut off, its effect unknown";
		const api = await fakeApi({ [`POST /v1/jobs/${JOB}/cancel`]: (_req, res) => json(res, 200, forced(reason)) });
		const r = await runCli(api.url, ["cancel", JOB, "--yes", "--force", "--reason", "gateway hung"]);
		expect(r.status, r.stderr).toBe(0);
		expect(api.seen).toEqual([{ route: `POST /v1/jobs/${JOB}/cancel`, body: JSON.stringify({ reason: "gateway hung", force: true }) }]);
		expect(r.stdout).toBe(`force-cancelled ${JOB}: its tool call in flight was cut off, and whether it took effect is unknown\n`);
	});

	it("says so when there was no call to cut off (a pending job: a plain cancel)", async () => {
		const api = await fakeApi({ [`POST /v1/jobs/${JOB}/cancel`]: (_req, res) => json(res, 200, forced("cancelled by root")) });
		const r = await runCli(api.url, ["cancel", JOB, "-y", "-f"]);
		expect(r.status, r.stderr).toBe(0);
		expect(api.seen.map((s) => s.body)).toEqual([JSON.stringify({ force: true })]);
		expect(r.stdout).toBe(`cancelled ${JOB} (forced, but no tool call was in flight here to cut off)\n`);
	});

	it("still asks first: without --yes and no terminal, a usage error that sends nothing", async () => {
		const api = await fakeApi({ [`POST /v1/jobs/${JOB}/cancel`]: (_req, res) => json(res, 200, forced("cancelled by root")) });
		const r = await runCli(api.url, ["cancel", JOB, "--force"]);
		expect(r.status, r.stderr).toBe(2);
		expect(r.stderr).toBe(`drover: not cancelling job ${JOB} without confirmation\ndrover: hint: stdin is not a terminal to ask on: pass --yes\n`);
		expect(api.seen).toEqual([]);
	});
});

describe("cancel's answer", () => {
	const answered = (job: ReturnType<typeof record>) => fakeApi({ [`POST /v1/jobs/${JOB}/cancel`]: (_req, res) => json(res, 200, job) });

	it("says the job is cancelled when the cancel ended it at once", async () => {
		const api = await answered(record({ status: "cancelled", exit_reason: "cancelled", summary: null, transitions: [{ from: "running", to: "cancelled", at: "2026-01-01T00:00:02.500Z", reason: "cancelled by root" }] }));
		const r = await runCli(api.url, ["cancel", JOB, "--yes"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toBe(`cancelled ${JOB}\n`);
	});

	it("says the cancel is under way while the job still runs (a tool call in flight is let finish)", async () => {
		const api = await answered(record({ status: "running", exit_reason: null, finished_at: null, summary: null }));
		const r = await runCli(api.url, ["cancel", JOB, "--yes"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toBe(`cancelling ${JOB}: it is running and stops as soon as its tool call in flight returns\n`);
	});

	// The job's last step can end it while the cancel waits for it (its final answer already in).
	it("says how the job ended when it ended otherwise, not that it is still stopping", async () => {
		const transitions = [{ from: "running", to: "completed", at: "2026-01-01T00:00:02.500Z", reason: "final answer" }];
		const completed = await runCli((await answered(record({ transitions }))).url, ["cancel", JOB, "--yes"]);
		expect(completed.status, completed.stderr).toBe(0);
		expect(completed.stdout).toBe(`${JOB} ended completed, not cancelled: final answer\n`);
		const failed = await runCli((await answered(record({ status: "failed", exit_reason: "error", transitions: [] }))).url, ["cancel", JOB, "-y", "-f"]);
		expect(failed.status, failed.stderr).toBe(0);
		expect(failed.stdout).toBe(`${JOB} ended failed, not cancelled\n`);
	});
});

describe("notepad set <key> - (the value from stdin)", () => {
	/** A fake notepad that stores what it is sent as is. */
	const notepadApi = () => fakeApi({ "PUT /v1/agents/fake/notepad/k": (_req, res, body) => json(res, 200, { k: (JSON.parse(body) as { value: string }).value }) });
	const sent = (api: { seen: { route: string; body: string }[] }) => api.seen.map((s) => (JSON.parse(s.body) as { value: string }).value);

	it("waits for a slow pipe: (sleep 1; echo hi) | drover notepad fake set k -", async () => {
		const api = await notepadApi();
		const child = spawn("sh", ["-c", '(sleep 1; echo hi) | "$NODE" "$CLI" notepad fake set k -'], {
			env: childEnv({ NODE: process.execPath, CLI, DROVER_URL: api.url, DROVER_TOKEN: TOKEN }),
		});
		let stderr = "";
		child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
		const [status] = (await once(child, "close")) as [number | null];
		expect(status, stderr).toBe(0);
		expect(stderr).toBe("");
		// echo's newline is not part of the value.
		expect(sent(api)).toEqual(["hi"]);
	});

	it("reads a large value that arrives in pieces, to its end", async () => {
		const api = await notepadApi();
		const value = Array.from({ length: 600 }, (_, i) => `line ${String(i).padStart(4, "0")} of a long note, with some text.`).join("\n");
		expect(value.length).toBeGreaterThan(20_000);
		const r = await runCliProcess(["notepad", "fake", "set", "k", "-"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN }, async (stdin) => {
			for (let at = 0; at < value.length; at += 7_000) {
				stdin.write(value.slice(at, at + 7_000));
				await new Promise((resolve) => setTimeout(resolve, 150));
			}
			stdin.end("\n");
		});
		expect(r.status, r.stderr).toBe(0);
		expect(sent(api)).toEqual([value]);
	});

	it("drops exactly one trailing newline, \\n or \\r\\n, and nothing else", async () => {
		const api = await notepadApi();
		for (const input of ["one\n", "two\r\n", "three\n\n", "four", "  five \n"]) {
			const r = await runCliProcess(["notepad", "fake", "set", "k", "-"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN }, async (stdin) => void stdin.end(input));
			expect(r.status, r.stderr).toBe(0);
		}
		expect(sent(api)).toEqual(["one", "two", "three\n", "four", "  five "]);
	});
});

describe("notepad keys", () => {
	it("are sent precomposed (NFC), as the API stores them, so a decomposed é sets, reads and deletes the key the API answers with", async () => {
		const NFC = "caf\u00e9";
		const path = `/v1/agents/fake/notepad/${encodeURIComponent(NFC)}`;
		const api = await fakeApi({
			[`PUT ${path}`]: (_req, res, body) => json(res, 200, { [NFC]: (JSON.parse(body) as { value: string }).value }),
			[`GET ${path}`]: (_req, res) => json(res, 200, { key: NFC, value: "espresso" }),
			[`DELETE ${path}`]: (_req, res) => json(res, 200, { deleted: 1 }),
		});
		const set = await runCli(api.url, ["notepad", "fake", "set", "cafe\u0301", "espresso"]);
		expect(set.status, set.stderr).toBe(0);
		expect(set.stdout).toBe(`set ${NFC} on fake's notepad (1 key)\n`);
		const got = await runCli(api.url, ["notepad", "fake", "get", "cafe\u0301"]);
		expect(got.stdout).toBe("espresso\n");
		expect((await runCli(api.url, ["notepad", "fake", "delete", "cafe\u0301"])).status).toBe(0);
		expect(api.seen.map((s) => s.route)).toEqual([`PUT ${path}`, `GET ${path}`, `DELETE ${path}`]);
	});
});

describe("the token hints", () => {
	it("say that only the token part of an API_TOKENS entry is DROVER_TOKEN, and notice a whole entry given", async () => {
		const api = await fakeApi({});
		const none = await runCliProcess(["jobs"], { DROVER_URL: api.url, DROVER_TOKEN: "" });
		expect(none.status).toBe(1);
		expect(none.stderr).toBe("drover: no API token\ndrover: hint: set DROVER_TOKEN or pass --token (the token part of a name:role:token entry of the Worker's API_TOKENS)\n");
		const wrong = await runCliProcess(["jobs"], { DROVER_URL: api.url, DROVER_TOKEN: "not-the-token-000000" });
		expect(wrong.status).toBe(1);
		expect(wrong.stderr).toBe("drover: invalid token\ndrover: hint: check DROVER_TOKEN (or --token): it must be the token part of one of the Worker's API_TOKENS entries (name:role:token)\n");
		for (const role of ["read", "operate", "admin"]) {
			const entry = await runCliProcess(["jobs"], { DROVER_URL: api.url, DROVER_TOKEN: `ops:${role}:${TOKEN}` });
			expect(entry.status).toBe(1);
			expect(entry.stderr).toBe("drover: invalid token\ndrover: hint: DROVER_TOKEN (or --token) looks like a whole API_TOKENS entry (name:role:token): set it to the token part alone, what follows the second colon\n");
		}
	});
});

describe("a URL with credentials", () => {
	it("is a usage error that names DROVER_TOKEN and never echoes the password; nothing is sent", async () => {
		const api = await fakeApi({ "GET /v1/jobs?limit=20": (_req, res) => json(res, 200, { jobs: [], next_cursor: null }) });
		const withCredentials = api.url.replace("http://", "http://user:s3cret-pw@");
		for (const run of [
			() => runCliProcess(["jobs", "--url", withCredentials], { DROVER_TOKEN: TOKEN }),
			() => runCliProcess(["jobs"], { DROVER_URL: withCredentials, DROVER_TOKEN: TOKEN }),
		]) {
			const r = await run();
			expect(r.status, r.stderr).toBe(2);
			expect(r.stdout).toBe("");
			expect(r.stderr).toContain("drover: --url/DROVER_URL must not carry credentials");
			expect(r.stderr).toMatch(/hint: .*DROVER_TOKEN or --token/);
			expect(r.stderr).not.toContain("s3cret-pw");
			expect(r.stderr).not.toContain("    at ");
		}
		expect(api.seen).toEqual([]);
		// Nor in a URL that does not parse.
		const bad = await runCliProcess(["jobs", "--url", "http://user:s3cret-pw@host:99999"], { DROVER_TOKEN: TOKEN });
		expect(bad.status).toBe(2);
		expect(bad.stderr).toContain('drover: --url/DROVER_URL is not a URL: "http://…@host:99999"');
		expect(bad.stderr).not.toContain("s3cret-pw");
		// A password holding a slash is what makes such a URL fail to parse.
		const slashed = await runCliProcess(["jobs", "--url", "https://admin:pa/ss@drover.example.com"], { DROVER_TOKEN: TOKEN });
		expect(slashed.status).toBe(2);
		expect(slashed.stderr).toContain('drover: --url/DROVER_URL is not a URL: "https://…@drover.example.com"');
		expect(slashed.stderr).not.toContain("pa/ss");
	});
});

describe("a URL with a query string or fragment", () => {
	it("is a usage error that never echoes the query; nothing is sent", async () => {
		const api = await fakeApi({ "GET /v1/jobs?limit=20": (_req, res) => json(res, 200, { jobs: [], next_cursor: null }) });
		for (const suffix of ["/?token=s3cret-q", "?token=s3cret-q", "/#s3cret-q", "/v1?", "#"]) {
			for (const [args, env] of [
				[["--url", `${api.url}${suffix}`, "jobs"], { DROVER_TOKEN: TOKEN }],
				[["jobs"], { DROVER_URL: `${api.url}${suffix}`, DROVER_TOKEN: TOKEN }],
			] as const) {
				const r = await runCliProcess([...args], env);
				const label = `${suffix}: ${r.stderr}`;
				expect(r.status, label).toBe(2);
				expect(r.stdout, label).toBe("");
				expect(r.stderr, label).toContain("drover: --url/DROVER_URL must not carry a query string or fragment");
				expect(r.stderr, label).toMatch(/hint: .*base URL/);
				expect(r.stderr, label).not.toContain("s3cret-q");
			}
		}
		expect(api.seen).toEqual([]);
		// Nor in a URL that does not parse.
		const bad = await runCliProcess(["jobs", "--url", "http://host:99999/?token=s3cret-q"], { DROVER_TOKEN: TOKEN });
		expect(bad.status).toBe(2);
		expect(bad.stderr).toContain('drover: --url/DROVER_URL is not a URL: "http://host:99999/?…"');
		expect(bad.stderr).not.toContain("s3cret-q");
	});
});

describe("a server that is not drover, answering 200 {} to everything", () => {
	async function emptyObjects(): Promise<{ url: string; seen: string[] }> {
		const seen: string[] = [];
		const server = createServer((req, res) => {
			seen.push(`${req.method} ${req.url}`);
			req.resume().on("end", () => json(res, 200, {}));
		});
		servers.push(server);
		server.listen(0, "127.0.0.1");
		await once(server, "listening");
		return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
	}

	it("every command says so in one line and exits 1: no stack trace, no undefined, no retries", async () => {
		const api = await emptyObjects();
		const cases: [string[], string][] = [
			[["jobs"], "GET /v1/jobs: missing `jobs`"],
			[["status"], "GET /v1/status: missing `scheduler`"],
			[["status", "fake"], "GET /v1/agents/fake: missing `name`"],
			[["runs", "fake"], "GET /v1/agents/fake/runs: missing `runs`"],
			[["usage"], "GET /v1/usage: missing `since`"],
			[["incidents"], "GET /v1/incidents: missing `incidents`"],
			[["incidents", "close", "x_000000000000"], "POST /v1/incidents/x_000000000000/close: missing `id`"],
			[["logs", "fake"], "GET /v1/agents/fake/jobs: missing `jobs`"],
			[["logs", "--job", JOB, "--follow"], `GET /v1/jobs/${JOB}/stream: answered application/json, not an event stream`],
			[["job", JOB], `GET /v1/jobs/${JOB}: missing \`id\``],
			[["job", JOB, "--yaml"], `GET /v1/jobs/${JOB}: answered application/json, not application/yaml`],
			[["logs", "--job", JOB], `GET /v1/jobs/${JOB}/output: answered application/json, not application/x-ndjson`],
			[["cancel", JOB, "--yes"], `POST /v1/jobs/${JOB}/cancel: missing \`id\``],
			[["approve", JOB], `GET /v1/jobs/${JOB}: missing \`id\``],
			[["approve", JOB, "--call", "toolu_1"], `POST /v1/jobs/${JOB}/approval: missing \`id\``],
			[["fork", JOB], `POST /v1/jobs/${JOB}/fork: missing \`id\``],
			[["trigger", "fake"], "POST /v1/agents/fake/jobs: missing `id`"],
			[["trigger", "fake", "--wait"], "POST /v1/agents/fake/jobs: missing `id`"],
			[["pause", "fake"], "POST /v1/agents/fake/pause: missing `name`"],
			[["notepad", "fake", "get", "k"], "GET /v1/agents/fake/notepad/k: missing `key`"],
			[["notepad", "fake", "set", "k", "v"], "PUT /v1/agents/fake/notepad/k: missing `k`"],
			[["notepad", "fake", "delete", "k"], "DELETE /v1/agents/fake/notepad/k: missing `deleted`"],
		];
		for (const [args, what] of cases) {
			const before = api.seen.length;
			const r = await runCli(api.url, args);
			const label = `drover ${args.join(" ")}: ${r.stderr}`;
			expect(r.status, label).toBe(1);
			expect(r.stdout, label).toBe("");
			expect(r.stderr, label).toBe(`drover: ${api.url} does not answer as a drover API (${what})\n`);
			// One request: trigger --wait does not go on to follow a job "undefined", --follow does not reconnect.
			expect(api.seen.length - before, label).toBe(1);
		}
	});

	it("answering 404 text (or any 4xx without drover's JSON error), or a 200 page that is not JSON, says so in the same line", async () => {
		const server = createServer((req, res) => {
			const at = req.url!.split("?")[0]!;
			if (at === "/v1/status") res.writeHead(200, { "content-type": "text/html" }).end("<html>a catch-all page</html>");
			else if (at === "/v1/agents/fake/pause") res.writeHead(405, { "content-type": "application/json" }).end(JSON.stringify({ message: "Method Not Allowed" }));
			else res.writeHead(404, { "content-type": "text/plain" }).end(`Not found: ${at}`);
		});
		servers.push(server);
		server.listen(0, "127.0.0.1");
		await once(server, "listening");
		const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
		for (const [args, what] of [
			[["jobs"], "GET /v1/jobs: answered 404 text/plain, not drover's JSON error"],
			[["job", JOB, "--yaml"], `GET /v1/jobs/${JOB}: answered 404 text/plain, not drover's JSON error`],
			[["logs", "--job", JOB, "--follow"], `GET /v1/jobs/${JOB}/stream: answered 404 text/plain, not drover's JSON error`],
			[["pause", "fake"], "POST /v1/agents/fake/pause: answered 405 application/json, not drover's JSON error"],
			[["status"], "GET /v1/status: answered 200 text/html, not JSON"],
		] as const) {
			const r = await runCli(url, [...args]);
			const label = `drover ${args.join(" ")}: ${r.stderr}`;
			expect(r.status, label).toBe(1);
			expect(r.stdout, label).toBe("");
			expect(r.stderr, label).toBe(`drover: ${url} does not answer as a drover API (${what})\n`);
		}
	});

	it("an error of another API in a like shape (the Anthropic API's, without drover's `code`) is not taken for drover's; doctor says the same", async () => {
		const server = createServer((req, res) => {
			const at = req.url!.split("?")[0]!;
			res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: `Not found: ${at}` } }));
		});
		servers.push(server);
		server.listen(0, "127.0.0.1");
		await once(server, "listening");
		const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
		const jobs = await runCli(url, ["jobs"]);
		expect(jobs.status).toBe(1);
		expect(jobs.stderr).toBe(`drover: ${url} does not answer as a drover API (GET /v1/jobs: answered 404 application/json, not drover's JSON error)\n`);
		const doctor = await runCli(url, ["doctor"]);
		expect(doctor.status).toBe(1);
		expect(doctor.stdout).toMatch(new RegExp(`^✗ reachable\\s+${url.replace(/[.]/g, "\\.")} does not answer as a drover API \\(GET /healthz: answered 404 application/json, not drover's JSON error\\)$`, "m"));
		expect(doctor.stdout).not.toContain("Not found: /healthz");
	});

	it("names the first field of a list's rows that is not what drover sends", async () => {
		const api = await fakeApi({ "GET /v1/jobs?limit=20": (_req, res) => json(res, 200, { jobs: [{ id: "job-1", agent: "a", status: "completed", trigger_type: "manual" }, { id: 2 }], next_cursor: null }) });
		const r = await runCli(api.url, ["jobs"]);
		expect(r.status).toBe(1);
		expect(r.stderr).toBe(`drover: ${api.url} does not answer as a drover API (GET /v1/jobs: \`jobs[1].id\` is not a string)\n`);
	});

	it("doctor fails its reachable check with the same line", async () => {
		const api = await emptyObjects();
		const r = await runCli(api.url, ["doctor"]);
		expect(r.status, r.stderr).toBe(1);
		expect(r.stdout).toMatch(new RegExp(`^✗ reachable\\s+${api.url.replace(/[.]/g, "\\.")} does not answer as a drover API \\(GET /healthz: missing \`version\`\\)$`, "m"));
		expect(r.stderr).toBe("drover: doctor found problems\n");
	});
});

describe("--since and --until", () => {
	it("take what the API takes, and anything else is a usage error (exit 2) before any request", async () => {
		const api = await fakeApi({});
		for (const args of [
			["jobs", "--since", "yesterday"],
			["jobs", "--until", "2026-11-30T09:00:00"],
			["jobs", "--since", "2026-02-30"],
			["jobs", "--since", "2026-11-30", "--until", "2026-11-01T00:00:00Z"],
			["usage", "--since", "2026-11-30", "--until", "2026-11-01"],
		]) {
			const r = await runCli(api.url, args);
			const label = `drover ${args.join(" ")}: ${r.stderr}`;
			expect(r.status, label).toBe(2);
			expect(r.stderr, label).toMatch(/^drover: .*(since|until)/);
		}
		expect(api.seen).toEqual([]);
		const bad = await runCli(api.url, ["jobs", "--since", "yesterday"]);
		expect(bad.stderr).toMatch(/^drover: option '--since <time>' argument 'yesterday' is invalid\. must be an ISO 8601 date-time with its offset, e\.g\. 2026-11-30T09:00:00Z or 2026-11-30T09:00\+01:00, or a date, 2026-11-30 \(its start, UTC\)$/m);
		// What the API takes is sent as given.
		const ok = await fakeApi({ "GET /v1/jobs?since=2026-11-30T09%3A00%3A00%2B01%3A00&until=2026-12-01&limit=20": (_req, res) => json(res, 200, { jobs: [], next_cursor: null }) });
		const good = await runCli(ok.url, ["jobs", "--since", "2026-11-30T09:00:00+01:00", "--until", "2026-12-01"]);
		expect(good.status, good.stderr).toBe(0);
		expect(good.stdout).toBe("no jobs\n");
		// ISO 8601 leaves the seconds out at will: a time to the minute is an instant too.
		const minutes = await fakeApi({ "GET /v1/jobs?since=2026-11-30T09%3A00Z&until=2026-11-30T10%3A30%2B01%3A00&limit=20": (_req, res) => json(res, 200, { jobs: [], next_cursor: null }) });
		const byMinute = await runCli(minutes.url, ["jobs", "--since", "2026-11-30T09:00Z", "--until", "2026-11-30T10:30+01:00"]);
		expect(byMinute.status, byMinute.stderr).toBe(0);
		expect(byMinute.stdout).toBe("no jobs\n");
	});
});

describe("logs of a job with no output yet", () => {
	it("says so on stderr instead of printing nothing", async () => {
		const api = await fakeApi({
			"GET /v1/agents/fake/jobs?limit=20": (_req, res) => json(res, 200, { jobs: [{ id: JOB, agent: "fake", status: "pending", trigger_type: "manual" }], next_cursor: null }),
			[`GET /v1/jobs/${JOB}/output?lines=50`]: (_req, res) => res.writeHead(200, { "content-type": "application/x-ndjson" }).end(""),
		});
		const r = await runCli(api.url, ["logs", "fake"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toBe("");
		expect(r.stderr).toBe(`no output yet (job ${JOB} is pending)\n`);
		const byId = await runCli(api.url, ["logs", "--job", JOB, "--json"]);
		expect(byId.status, byId.stderr).toBe(0);
		expect(byId.stdout).toBe("");
		expect(byId.stderr).toBe(`no output (job ${JOB})\n`);
	});

	it("logs --help gives indeterminate's exit code, as trigger --help does", async () => {
		const r = await runCliProcess(["logs", "--help"], {});
		expect(r.status).toBe(0);
		expect(r.stdout.replace(/\s+/g, " ")).toContain("exits 0 completed, 1 failed or indeterminate, 2 cancelled");
	});
});

describe("logs of an agent: its recent jobs, and --follow across the jobs it starts", () => {
	const A = "job-2026-01-01-aaaaaa";
	const B = "job-2026-01-01-bbbbbb";
	const C = "job-2026-01-01-cccccc";
	const summary = (id: string, status: string) => ({ id, agent: "fake", status, trigger_type: "schedule" });
	const text = (content: string) => JSON.stringify({ type: "assistant", timestamp: "2026-01-01T00:00:01.000Z", content });
	const ndjson = (res: ServerResponse, lines: string[]) => res.writeHead(200, { "content-type": "application/x-ndjson" }).end(lines.map((l) => `${l}\n`).join(""));
	/** `?lines=n` of a job whose output is `lines`, as the API answers it: the last n, and the number of the first in X-Drover-First-Line. */
	const tailOf = (lines: string[], n: number) => (_req: IncomingMessage, res: ServerResponse) =>
		res
			.writeHead(200, { "content-type": "application/x-ndjson", "x-drover-first-line": String(Math.max(1, lines.length - n + 1)) })
			.end(lines.slice(-n).map((l) => `${l}\n`).join(""));
	const sse = (res: ServerResponse, from: number, lines: string[], status: string) => {
		res.writeHead(200, { "content-type": "text/event-stream" });
		res.end(lines.map((l, i) => `event: line\nid: ${from + i}\ndata: ${l}\n\n`).join("") + `event: end\ndata: {"status":"${status}"}\n\n`);
	};

	it("shows the last N lines across its newest jobs, oldest first, each job under a mark; --json keeps stdout to the lines", async () => {
		const api = await fakeApi({
			"GET /v1/agents/fake/jobs?limit=20": (_req, res) => json(res, 200, { jobs: [summary(B, "completed"), summary(A, "failed")], next_cursor: null }),
			[`GET /v1/jobs/${B}/output?lines=3`]: (_req, res) => ndjson(res, [text("b1"), text("b2")]),
			[`GET /v1/jobs/${A}/output?lines=1`]: (_req, res) => ndjson(res, [text("a3")]),
		});
		const r = await runCli(api.url, ["logs", "fake", "--lines", "3"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toBe(`==> ${A} (schedule, failed) <==\na3\n==> ${B} (schedule, completed) <==\nb1\nb2\n`);
		const raw = await runCli(api.url, ["logs", "fake", "--lines", "3", "--json"]);
		expect(raw.stdout).toBe(`${text("a3")}\n${text("b1")}\n${text("b2")}\n`);
		// Two lines from the newest job leave one to ask of the one before it, and nothing of older ones.
		expect(api.seen.map((s) => s.route).slice(0, 3)).toEqual(["GET /v1/agents/fake/jobs?limit=20", `GET /v1/jobs/${B}/output?lines=3`, `GET /v1/jobs/${A}/output?lines=1`]);
	});

	it("reads past a queue of runs that have written nothing to the jobs that have output", async () => {
		const queued = Array.from({ length: 20 }, (_, i) => summary(`job-2026-01-02-q${String(i).padStart(5, "0")}`, "pending"));
		const api = await fakeApi({
			"GET /v1/agents/fake/jobs?limit=20": (_req, res) => json(res, 200, { jobs: queued, next_cursor: "c1" }),
			"GET /v1/agents/fake/jobs?limit=20&cursor=c1": (_req, res) => json(res, 200, { jobs: [summary(C, "pending"), summary(B, "approval_pending"), summary(A, "completed")], next_cursor: null }),
			[`GET /v1/jobs/${B}/output?lines=50`]: (_req, res) => ndjson(res, [text("b1")]),
			[`GET /v1/jobs/${A}/output?lines=49`]: (_req, res) => ndjson(res, [text("a1"), text("a2")]),
		});
		const r = await runCli(api.url, ["logs", "fake"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toBe(`==> ${A} (schedule, completed) <==\na1\na2\n==> ${B} (schedule) <==\nb1\n`);
		// No output asked of a queued run.
		expect(api.seen.filter((s) => s.route.includes("/output")).map((s) => s.route)).toEqual([`GET /v1/jobs/${B}/output?lines=50`, `GET /v1/jobs/${A}/output?lines=49`]);
	});

	// Having no jobs yet is where every agent starts, not an error; a name that is no agent is.
	it("an agent with no jobs yet says so and exits 0; a deleted one says it was deleted; a mistyped one is the API's 404, exit 4", async () => {
		const api = await fakeApi({
			"GET /v1/agents/idle/jobs?limit=20": (_req, res) => json(res, 200, { jobs: [], next_cursor: null }),
			"GET /v1/agents/idle": (_req, res) => json(res, 200, { ...AGENT, name: "idle" }),
			"GET /v1/agents/gone/jobs?limit=20": (_req, res) => json(res, 200, { jobs: [], next_cursor: null }),
			"GET /v1/agents/gone": (_req, res) => json(res, 404, { error: { code: "not_found", message: "no agent named gone" } }),
		});
		const idle = await runCli(api.url, ["logs", "idle"]);
		expect(idle.status, idle.stderr).toBe(0);
		expect(idle.stdout).toBe("");
		expect(idle.stderr).toBe("no jobs yet for agent idle: drover trigger idle starts one, drover logs idle --follow waits for it\n");
		const raw = await runCli(api.url, ["logs", "idle", "--json"]);
		expect(raw.status, raw.stderr).toBe(0);
		expect(raw.stdout).toBe("");
		const gone = await runCli(api.url, ["logs", "gone"]);
		expect(gone.status, gone.stderr).toBe(0);
		expect(gone.stderr).toBe("no jobs for agent gone, which was deleted\n");
		const typo = await runCli(api.url, ["logs", "nope"]);
		expect(typo.status).toBe(4);
		expect(typo.stderr).toContain("no route for GET /v1/agents/nope/jobs?limit=20");
		const typoFollowed = await runCli(api.url, ["logs", "nope", "--follow"]);
		expect(typoFollowed.status).toBe(4);
		expect(typoFollowed.stderr).toContain("no route for GET /v1/agents/nope/jobs?limit=20");
	});

	const AGENT = { name: "fake", source: "api", enabled: true, model: "m", fallback_models: [], schedules: [], paused: null, running_jobs: [], queued_jobs: 0, last_job: null };
	/** Runs `drover logs fake --follow …` until `done(stdout)` holds or it exits; then interrupts it. */
	async function follow(url: string, args: string[], done: (stdout: string) => boolean) {
		const child = spawn(process.execPath, [CLI, "logs", "fake", "--follow", ...args], { env: childEnv({ DROVER_URL: url, DROVER_TOKEN: TOKEN }), stdio: ["ignore", "pipe", "pipe"] });
		let stdout = "";
		let stderr = "";
		child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
		child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
		const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
		const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
		await new Promise<void>((resolve) => {
			child.stdout.on("data", () => (done(stdout) ? resolve() : undefined));
			void closed.then(() => resolve());
		});
		child.kill("SIGINT");
		const status = await closed;
		clearTimeout(timer);
		return { status, stdout, stderr };
	}
	/** The live jobs of each status the follow asks for at its start. */
	const live = (jobs: Record<string, ReturnType<typeof summary>[]>) =>
		Object.fromEntries(
			["pending", "running", "approval_pending"].map((status) => [
				`GET /v1/agents/fake/jobs?status=${status}&limit=200`,
				(_req: IncomingMessage, res: ServerResponse) => json(res, 200, { jobs: jobs[status] ?? [], next_cursor: null }),
			]),
		);

	it("--follow goes on from the live job's last line, then follows each job the agent starts, whole, until interrupted", async () => {
		let listed = 0;
		const streams: (string | null)[] = [];
		const api = await fakeApi({
			"GET /v1/agents/fake/jobs?limit=20": (_req, res) => json(res, 200, { jobs: [summary(A, "running")], next_cursor: null }),
			...live({ running: [summary(A, "running")] }),
			"GET /v1/agents/fake": (_req, res) => json(res, 200, AGENT),
			// Once A ends the agent's jobs are asked for at once: B and C are new, and may have ended already.
			"GET /v1/agents/fake/jobs?limit=50": (_req, res) => {
				listed++;
				const jobs = listed === 1 ? [summary(C, "running"), summary(B, "cancelled"), summary(A, "completed")] : [summary(C, "completed"), summary(B, "cancelled"), summary(A, "completed")];
				json(res, 200, { jobs, next_cursor: null });
			},
			[`GET /v1/jobs/${A}/output?lines=1`]: tailOf([text("a1"), text("a2")], 1),
			[`GET /v1/jobs/${A}/stream`]: (req, res) => (streams.push(`${A} ${req.headers["last-event-id"] ?? null}`), sse(res, 3, [text("a3")], "completed")),
			[`GET /v1/jobs/${B}/stream`]: (req, res) => (streams.push(`${B} ${req.headers["last-event-id"] ?? null}`), sse(res, 1, [text("b1"), text("b2")], "cancelled")),
			[`GET /v1/jobs/${C}/stream`]: (req, res) => (streams.push(`${C} ${req.headers["last-event-id"] ?? null}`), sse(res, 1, [text("c1")], "completed")),
		});
		const r = await follow(api.url, ["--lines", "1"], (out) => out.includes(`==> ${B} cancelled <==`) && out.includes(`==> ${C} completed <==`));
		expect(r.stderr).toBe("");
		const out = r.stdout.split("\n");
		expect(out.slice(0, 4)).toEqual([`==> ${A} (schedule) <==`, "a2", "a3", `==> ${A} completed <==`]);
		// B and C are followed side by side: each line under its job's mark, every line once.
		const of = (job: string) => out.filter((l, i) => /^[bc]\d$/.test(l) && out.slice(0, i).reverse().find((m) => m.startsWith("==> ")) === `==> ${job} (schedule${job === B ? ", cancelled" : ""}) <==`);
		expect(of(B)).toEqual(["b1", "b2"]);
		expect(of(C)).toEqual(["c1"]);
		expect(streams.sort()).toEqual([`${A} 2`, `${B} null`, `${C} null`]);
	});

	it("--follow also follows the live jobs older than the newest 20: a queue's oldest, which run first", async () => {
		const newest = Array.from({ length: 20 }, (_, i) => summary(`job-2026-01-02-q${String(i).padStart(5, "0")}`, "pending"));
		const api = await fakeApi({
			"GET /v1/agents/fake/jobs?limit=20": (_req, res) => json(res, 200, { jobs: newest, next_cursor: "older" }),
			...live({ pending: newest, running: [summary(A, "running")] }),
			"GET /v1/agents/fake": (_req, res) => json(res, 200, AGENT),
			"GET /v1/agents/fake/jobs?limit=50": (_req, res) => json(res, 200, { jobs: newest, next_cursor: null }),
			[`GET /v1/jobs/${A}/output?lines=50`]: tailOf([text("a1")], 50),
			[`GET /v1/jobs/${A}/stream`]: (_req, res) => sse(res, 2, [text("a2")], "completed"),
			// The queued ones have written nothing yet: their streams stay open.
			...Object.fromEntries(newest.map((j) => [`GET /v1/jobs/${j.id}/output?lines=50`, tailOf([], 50)])),
			...Object.fromEntries(newest.map((j) => [`GET /v1/jobs/${j.id}/stream`, (_req: IncomingMessage, res: ServerResponse) => void res.writeHead(200, { "content-type": "text/event-stream" }).write(": waiting\n\n")])),
		});
		const r = await follow(api.url, ["--json"], (out) => out.includes("a2"));
		expect(r.stderr).toBe("");
		expect(r.stdout).toBe(`${text("a1")}\n${text("a2")}\n`);
	});

	it("--follow of an agent with no jobs yet waits for its first and follows it as it does later ones", async () => {
		const streams: (string | null)[] = [];
		const api = await fakeApi({
			"GET /v1/agents/fake/jobs?limit=20": (_req, res) => json(res, 200, { jobs: [], next_cursor: null }),
			...live({}),
			"GET /v1/agents/fake": (_req, res) => json(res, 200, AGENT),
			// The first job starts after the follow began: the first poll finds it.
			"GET /v1/agents/fake/jobs?limit=50": (_req, res) => json(res, 200, { jobs: [summary(A, "running")], next_cursor: null }),
			[`GET /v1/jobs/${A}/stream`]: (req, res) => (streams.push(`${A} ${req.headers["last-event-id"] ?? null}`), sse(res, 1, [text("a1"), text("a2")], "completed")),
		});
		const r = await follow(api.url, [], (out) => out.includes(`==> ${A} completed <==`));
		expect(r.stderr).toBe("");
		expect(r.stdout).toBe(`==> ${A} (schedule) <==\na1\na2\n==> ${A} completed <==\n`);
		// Followed from its first line, as each new job is.
		expect(streams).toEqual([`${A} null`]);
	});

	it("--follow asks for an unchanged jobs list with its ETag and reads the 304 as that list: no job followed twice, a new one still picked up", async () => {
		const streams: string[] = [];
		const polls: { ifNoneMatch: string | null; status: number }[] = [];
		const list = (ids: string[]) => JSON.stringify({ jobs: ids.map((id) => summary(id, "completed")), next_cursor: null });
		const tagOf = (body: string) => `"${createHash("sha1").update(body).digest("base64url")}"`;
		const api = await fakeApi({
			"GET /v1/agents/fake/jobs?limit=20": (_req, res) => json(res, 200, { jobs: [], next_cursor: null }),
			...live({}),
			"GET /v1/agents/fake": (_req, res) => json(res, 200, AGENT),
			// As the Worker answers: tagged, and a 304 with no body when If-None-Match names the tag. The
			// first two polls find A (the second, asked at once when A ends, unchanged); later ones B too.
			"GET /v1/agents/fake/jobs?limit=50": (req, res) => {
				const body = list(polls.length < 2 ? [A] : [B, A]);
				const ifNoneMatch = (req.headers["if-none-match"] as string | undefined) ?? null;
				const status = ifNoneMatch === tagOf(body) ? 304 : 200;
				polls.push({ ifNoneMatch, status });
				if (status === 304) res.writeHead(304, { etag: tagOf(body) }).end();
				else res.writeHead(200, { "content-type": "application/json", etag: tagOf(body) }).end(body);
			},
			[`GET /v1/jobs/${A}/stream`]: (_req, res) => (streams.push(A), sse(res, 1, [text("a1")], "completed")),
			[`GET /v1/jobs/${B}/stream`]: (_req, res) => (streams.push(B), sse(res, 1, [text("b1")], "completed")),
		});
		const r = await follow(api.url, [], (out) => out.includes(`==> ${B} completed <==`));
		expect(r.stderr).toBe("");
		expect(r.stdout).toBe(`==> ${A} (schedule, completed) <==\na1\n==> ${A} completed <==\n==> ${B} (schedule, completed) <==\nb1\n==> ${B} completed <==\n`);
		expect(streams).toEqual([A, B]);
		expect(polls.slice(0, 3)).toEqual([
			{ ifNoneMatch: null, status: 200 },
			{ ifNoneMatch: tagOf(list([A])), status: 304 },
			{ ifNoneMatch: tagOf(list([A])), status: 200 },
		]);
	});

	it("--follow ends, exit 1, once the agent is deleted and its live jobs have ended", async () => {
		let deleted = false;
		const api = await fakeApi({
			"GET /v1/agents/fake/jobs?limit=20": (_req, res) => json(res, 200, { jobs: [summary(A, "running")], next_cursor: null }),
			...live({ running: [summary(A, "running")] }),
			"GET /v1/agents/fake": (_req, res) => (deleted ? json(res, 404, { error: { code: "not_found", message: "no agent named fake" } }) : json(res, 200, AGENT)),
			"GET /v1/agents/fake/jobs?limit=50": (_req, res) => json(res, 200, { jobs: [summary(A, "completed")], next_cursor: null }),
			[`GET /v1/jobs/${A}/output?lines=50`]: tailOf([text("a1")], 50),
			// The agent is deleted while its last job runs; the job still ends, and is shown to its end.
			[`GET /v1/jobs/${A}/stream`]: (_req, res) => ((deleted = true), sse(res, 2, [text("a2")], "completed")),
		});
		const r = await follow(api.url, [], () => false);
		expect(r.status).toBe(1);
		expect(r.stdout).toBe(`==> ${A} (schedule) <==\na1\na2\n==> ${A} completed <==\n`);
		expect(r.stderr).toBe("drover: agent fake was deleted: none of its jobs will start any more\ndrover: hint: its jobs stay readable: drover jobs --agent fake\n");
	});
});

describe("apply of a fleet.yaml-like file", () => {
	it("refuses a version fleet.yaml does not have, before any request", async () => {
		const api = await fakeApi({});
		const r = await runCliProcess(["apply", "-"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN }, async (stdin) => void stdin.end("version: 2\nagents:\n  - name: a\n    model: m\n"));
		expect(r.status).toBe(1);
		expect(r.stderr).toBe("drover: stdin: version 2 is not one apply reads: fleet.yaml's is version 1\n");
		expect(api.seen).toEqual([]);
	});

	it("reads YAML 1.2 as fleet.yaml does: refuses a merge key and a %YAML 1.1 directive at their lines, before any request", async () => {
		const api = await fakeApi({});
		const apply = (text: string) => runCliProcess(["apply", "-"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN }, async (stdin) => void stdin.end(text));
		const merged = await apply("- &base\n  name: a\n  prompt: Go.\n- <<: *base\n  name: b\n");
		expect(merged.status).toBe(1);
		expect(merged.stderr).toBe("drover: stdin: line 4:3: merge keys (<<) are not supported: write the keys out (anchors and aliases of whole values work)\n");
		const yaml11 = await apply("%YAML 1.1\n---\nname: a\nprompt: Go.\nenabled: no\n");
		expect(yaml11.status).toBe(1);
		expect(yaml11.stderr).toBe("drover: stdin: line 1:1: %YAML 1.1: drover reads YAML 1.2 only (under 1.1, no would be false, 010 eight and << a merge); remove the directive\n");
		expect(api.seen).toEqual([]);
	});
});

describe("--url/DROVER_URL that is not the Worker's base URL", () => {
	it("without a scheme, or ending in /v1, is a usage error saying what to give; nothing is sent", async () => {
		const api = await fakeApi({});
		const run = (url: string) => runCliProcess(["jobs"], { DROVER_URL: url, DROVER_TOKEN: TOKEN });
		const bare = await run("localhost:9210");
		expect(bare.status).toBe(2);
		expect(bare.stderr).toBe("drover: --url/DROVER_URL must include the scheme, http:// or https://\ndrover: hint: include the scheme, e.g. http://localhost:9210\n");
		// Anything but a bare host is not echoed: it may hold a secret.
		const odd = await run("ops:s3cret-pw@drover.example.com");
		expect(odd.status).toBe(2);
		expect(odd.stderr).not.toContain("s3cret-pw");
		for (const suffix of ["/v1", "/v1/"]) {
			const r = await run(`${api.url}${suffix}`);
			expect(r.status, suffix).toBe(2);
			expect(r.stderr, suffix).toBe(`drover: --url/DROVER_URL is the Worker's origin, without /v1: the CLI adds the API's paths itself\ndrover: hint: use ${api.url}\n`);
		}
		expect(api.seen).toEqual([]);
	});

	it("https:// to a server speaking plain HTTP (npm start's) says to use http://, not OpenSSL's error", async () => {
		const api = await fakeApi({});
		const https = api.url.replace(/^http:/, "https:");
		const cause = `drover: cannot reach ${https}: it does not speak TLS (ERR_SSL_WRONG_VERSION_NUMBER)`;
		const hint = `the server speaks plain HTTP, not HTTPS, as npm start's local drover does: use ${api.url}`;
		const jobs = await runCliProcess(["jobs"], { DROVER_URL: https, DROVER_TOKEN: TOKEN });
		expect(jobs.status).toBe(1);
		expect(jobs.stderr).toBe(`${cause}\ndrover: hint: ${hint}\n`);
		const doctor = await runCliProcess(["doctor"], { DROVER_URL: https, DROVER_TOKEN: TOKEN });
		expect(doctor.status).toBe(1);
		const reachable = doctor.stdout.split("\n").find((l) => l.startsWith("✗ reachable"));
		expect(reachable?.replace(/^✗ reachable\s+/, "")).toBe(`${cause.slice("drover: ".length)} (${hint})`);
		expect(doctor.stdout).not.toMatch(/SSL routines|openssl/);
	});
});

describe("drover status", () => {
	// herdctl's `status` shows all agents and their status; drover's fleet view did only the paused ones.
	it("lists every agent with its next run, last job and state after the summary; --json adds them as agent_list", async () => {
		const scheduler = { last_tick_at: new Date().toISOString(), age_seconds: 5, stalled: false, outcome: "ok", last_ok_at: null, agents_called: 2, claimed: 1, skipped: 0, error: null };
		const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
		const list = [
			agentView("a-hourly", {
				source: "file",
				schedules: [{ name: "hourly", kind: "interval", expression: "1h", timezone: null, catch_up: false, enabled: true, next_run: inAnHour }],
				last_job: { id: JOB, status: "failed", exit_reason: "timeout", finished_at: new Date().toISOString(), delivery: null },
			}),
			agentView("b-held", { paused: { at: new Date().toISOString(), reason: "maintenance", by: "ops" } }),
			agentView("c-off", { enabled: false }),
		];
		const status = { scheduler, jobs: { completed: 2, failed: 1 }, agents: { file: 1, api: 2 } };
		const api = await fakeApi({
			"GET /v1/status": (_req, res) => json(res, 200, status),
			"GET /v1/agents?limit=200": (_req, res) => json(res, 200, { agents: list, next_cursor: null }),
		});
		const r = await runCli(api.url, ["status"]);
		expect(r.status, r.stderr).toBe(0);
		// The summary as before, the paused named in it; then every agent.
		expect(r.stdout).toMatch(/^agents\s+3 \(1 from fleet\.yaml, 2 from the API\)$/m);
		expect(r.stdout).toMatch(/^paused\s+b-held: paused (now|\d+s ago) by ops: maintenance$/m);
		const table = r.stdout.slice(r.stdout.indexOf("\n\nNAME") + 2).trimEnd().split("\n");
		expect(table).toHaveLength(4);
		expect(table[0]).toMatch(/^NAME\s+NEXT RUN\s+LAST\s+STATE$/);
		expect(table[1]).toMatch(/^a-hourly\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z \(in (59m|1h), hourly\)\s+failed \(timeout\)\s+active$/);
		expect(table[2]).toMatch(/^b-held\s+on trigger only\s+-\s+paused (now|\d+s ago) by ops: maintenance$/);
		expect(table[3]).toMatch(/^c-off\s+on trigger only\s+-\s+disabled$/);
		// --json: the API's answer with every field it had, and the agents as `drover agents --json` has them.
		const j = await runCli(api.url, ["status", "--json"]);
		expect(j.status, j.stderr).toBe(0);
		expect(JSON.parse(j.stdout)).toEqual({ ...status, agent_list: list, agent_list_omitted: null });
	});

	it("counts one agent called as one agent", async () => {
		const scheduler = { last_tick_at: new Date().toISOString(), age_seconds: 5, stalled: false, outcome: "ok", last_ok_at: null, agents_called: 1, claimed: 1, skipped: 0, error: null };
		const api = await fakeApi({
			"GET /v1/status": (_req, res) => json(res, 200, { scheduler, jobs: {}, agents: { file: 0, api: 0 } }),
			"GET /v1/agents?limit=200": (_req, res) => json(res, 200, { agents: [], next_cursor: null }),
		});
		const r = await runCli(api.url, ["status"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toMatch(/^scheduler\s+ok, last tick (now|\d+s ago) \(1 agent called, 1 claimed, 0 skipped\)$/m);
	});
});

describe("drover sessions", () => {
	const SESSION = `ses-${JOB}`;
	const NEWEST = "job-2026-01-02-zzzzzz";
	const ref = (id: string, status = "completed", created_at = "2026-01-01T00:00:00.000Z") => ({ id, status, created_at });
	const summary = (overrides: Record<string, unknown> = {}) => ({
		session_id: SESSION,
		agent: "fake",
		job_count: 2,
		first_job: ref(JOB),
		last_job: ref(NEWEST, "completed", "2026-01-02T00:00:00.000Z"),
		updated_at: "2026-01-02T00:00:05.000Z",
		...overrides,
	});
	const session = () => ({ ...summary(), jobs: [record(), record({ id: NEWEST, continued_from: JOB, session_id: SESSION })] });
	const continued = () => record({ id: "job-2026-01-03-newjob", status: "pending", exit_reason: null, session_id: SESSION, continued_from: NEWEST, transitions: [] });

	it("resume of an agent's persistent session continues its last completed run, where the agent's next run goes on from", async () => {
		const FAILED = "job-2026-01-03-failed";
		const persistent = { ...session(), persistent: true, job_count: 3, last_job: ref(FAILED, "failed", "2026-01-03T00:00:00.000Z") };
		const api = await fakeApi({
			[`GET /v1/sessions/${SESSION}`]: (_req, res) => json(res, 200, persistent),
			"GET /v1/agents/fake/sessions/current": (_req, res) =>
				json(res, 200, { agent: "fake", mode: "persistent", session_id: SESSION, last_job: NEWEST, expires_at: null, expired: false, continues: true }),
			[`POST /v1/jobs/${NEWEST}/continue`]: (_req, res) => json(res, 201, continued()),
		});
		const r = await runCli(api.url, ["sessions", "resume", SESSION, "Where were we?"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stderr).toContain(`resuming ${SESSION} (agent fake, 3 jobs) from ${NEWEST}, its last completed run: the agent's persistent session goes on from there`);
		expect(api.seen.map((x) => x.route)).toEqual([`GET /v1/sessions/${SESSION}`, "GET /v1/agents/fake/sessions/current", `POST /v1/jobs/${NEWEST}/continue`]);
	});

	it("resume <job id> continues that job's session; an id in capitals is the same id", async () => {
		const api = await fakeApi({
			[`GET /v1/jobs/${NEWEST}`]: (_req, res) => json(res, 200, record({ id: NEWEST, session_id: SESSION, continued_from: JOB })),
			[`GET /v1/sessions/${SESSION}?agent=fake`]: (_req, res) => json(res, 200, session()),
			[`GET /v1/sessions/${SESSION}`]: (_req, res) => json(res, 200, session()),
			[`POST /v1/jobs/${NEWEST}/continue`]: (_req, res) => json(res, 201, continued()),
		});
		const byJob = await runCli(api.url, ["sessions", "resume", NEWEST.toUpperCase(), "What next?"]);
		expect(byJob.status, byJob.stderr).toBe(0);
		expect(byJob.stdout).toBe("job-2026-01-03-newjob\n");
		const bySession = await runCli(api.url, ["sessions", "resume", SESSION.toUpperCase(), "What next?"]);
		expect(bySession.status, bySession.stderr).toBe(0);
		expect(api.seen.map((s) => s.route)).toEqual([
			`GET /v1/jobs/${NEWEST}`,
			`GET /v1/sessions/${SESSION}?agent=fake`,
			`POST /v1/jobs/${NEWEST}/continue`,
			`GET /v1/sessions/${SESSION}`,
			`POST /v1/jobs/${NEWEST}/continue`,
		]);
		// A job that has not started has no session yet.
		const queued = await fakeApi({ [`GET /v1/jobs/${NEWEST}`]: (_req, res) => json(res, 200, record({ id: NEWEST, status: "pending", session_id: null })) });
		const none = await runCli(queued.url, ["sessions", "resume", NEWEST, "Go."]);
		expect(none.status).toBe(1);
		expect(none.stderr).toContain(`drover: job ${NEWEST} has no session: it has not started`);
	});

	it("lists an agent's sessions as a table, says how to get the next page, and prints the API's JSON with --json", async () => {
		const page = {
			sessions: [summary({ persistent: true }), summary({ session_id: "ses-job-2025-12-31-oldone", job_count: 1, last_job: ref("job-2025-12-31-oldone", "failed"), persistent: false })],
			next_cursor: "CURSOR1",
		};
		const api = await fakeApi({ "GET /v1/agents/fake/sessions?limit=2": (_req, res) => json(res, 200, page) });
		const r = await runCli(api.url, ["sessions", "fake", "--limit", "2"]);
		expect(r.status, r.stderr).toBe(0);
		const lines = r.stdout.trimEnd().split("\n");
		expect(lines[0]).toMatch(/^SESSION\s+AGENT\s+JOBS\s+LAST JOB\s+STATUS\s+CREATED$/);
		expect(lines[1]).toMatch(new RegExp(`^${SESSION} \\*\\s+fake\\s+2\\s+${NEWEST}\\s+completed\\s+`));
		expect(lines[2]).toMatch(/^ses-job-2025-12-31-oldone\s+fake\s+1\s+job-2025-12-31-oldone\s+failed\s+/);
		expect(lines[3]).toBe("* persistent: whether its next run continues it: drover sessions current <agent>");
		expect(r.stderr).toContain("more: drover sessions fake --limit 2 --cursor CURSOR1");
		const j = await runCli(api.url, ["sessions", "fake", "--limit", "2", "--json"]);
		expect(JSON.parse(j.stdout)).toEqual(page);
	});

	it("without an agent lists the newest sessions of the agents of the fleet's newest jobs, merged newest first", async () => {
		const job = (id: string, agent: string) => ({ id, agent, status: "completed", trigger_type: "manual", created_at: "2026-01-05T00:00:00.000Z" });
		const api = await fakeApi({
			"GET /v1/jobs?limit=200": (_req, res) => json(res, 200, { jobs: [job("job-2026-01-05-latest", "other"), job(NEWEST, "fake"), job("job-2026-01-01-zzzzzz", "other")], next_cursor: null }),
			"GET /v1/agents/fake/sessions?limit=20": (_req, res) => json(res, 200, { sessions: [summary()], next_cursor: null }),
			"GET /v1/agents/other/sessions?limit=20": (_req, res) =>
				json(res, 200, { sessions: [summary({ session_id: "ses-job-2026-01-05-latest", agent: "other", job_count: 1, last_job: ref("job-2026-01-05-latest", "running", "2026-01-05T00:00:00.000Z") })], next_cursor: null }),
		});
		const r = await runCli(api.url, ["sessions"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout.trimEnd().split("\n").slice(1).map((l) => l.split(/\s+/).slice(0, 2).join(" "))).toEqual(["ses-job-2026-01-05-latest other", `${SESSION} fake`]);
		// Each agent once, and no agent without a recent job.
		expect(api.seen.map((s) => s.route).sort()).toEqual(["GET /v1/agents/fake/sessions?limit=20", "GET /v1/agents/other/sessions?limit=20", "GET /v1/jobs?limit=200"]);
		const paged = await runCli(api.url, ["sessions", "--cursor", "x"]);
		expect(paged.status).toBe(2);
	});

	it("resume <session prefix> continues the session's newest job with the prompt given", async () => {
		const prefix = SESSION.slice(0, -2);
		const api = await fakeApi({
			[`GET /v1/sessions/${prefix}`]: (_req, res) => json(res, 200, session()),
			[`POST /v1/jobs/${NEWEST}/continue`]: (_req, res) => json(res, 201, continued()),
		});
		const r = await runCli(api.url, ["sessions", "resume", prefix, "What next?"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toBe("job-2026-01-03-newjob\n");
		expect(r.stderr).toContain(`resuming ${SESSION} (agent fake, 2 jobs) from ${NEWEST}`);
		expect(api.seen.map((s) => s.route)).toEqual([`GET /v1/sessions/${prefix}`, `POST /v1/jobs/${NEWEST}/continue`]);
		expect(JSON.parse(api.seen[1]!.body)).toEqual({ prompt: "What next?" });
	});

	it("resume <agent> continues the agent's newest session; --wait follows the new job to its end", async () => {
		const api = await fakeApi({
			"GET /v1/agents/fake/sessions?limit=1": (_req, res) => json(res, 200, { sessions: [summary()], next_cursor: "more" }),
			[`POST /v1/jobs/${NEWEST}/continue`]: (_req, res) => json(res, 201, continued()),
			"GET /v1/jobs/job-2026-01-03-newjob/stream": (_req, res) => {
				res.writeHead(200, { "content-type": "text/event-stream" });
				res.end(`event: status\ndata: {"status":"completed","revision":3}\n\nevent: end\ndata: {"status":"completed"}\n\n`);
			},
			"GET /v1/jobs/job-2026-01-03-newjob": (_req, res) => json(res, 200, record({ id: "job-2026-01-03-newjob", session_id: SESSION, continued_from: NEWEST })),
		});
		const r = await runCli(api.url, ["sessions", "resume", "fake", "--prompt", "Go on.", "--wait"]);
		expect(r.status, r.stderr).toBe(0);
		// Its id, then its final answer: the record's summary, where the stream carried no line of it.
		expect(r.stdout).toBe("job-2026-01-03-newjob\nAll done.\n");
		expect(r.stderr.trim().split("\n").at(-1)).toMatch(/^✓ job-2026-01-03-newjob completed in /);
		expect(JSON.parse(api.seen.find((s) => s.route.startsWith("POST"))!.body)).toEqual({ prompt: "Go on." });
	});

	it("resume with no argument takes the fleet's newest job that started, of an agent not deleted, and the prompt from stdin", async () => {
		const jobs = {
			jobs: [
				{ ...record({ id: "job-2026-01-05-gone00" }), agent: "gone" },
				{ ...record({ id: "job-2026-01-04-queued", status: "pending", started_at: null }), agent: "other" },
				{ ...record({ id: NEWEST }), agent: "fake" },
			],
			next_cursor: null,
		};
		const api = await fakeApi({
			"GET /v1/jobs?limit=50": (_req, res) => json(res, 200, jobs),
			"GET /v1/agents/gone": (_req, res) => json(res, 404, { error: { code: "not_found", message: "no agent named gone" } }),
			"GET /v1/agents/fake": (_req, res) => json(res, 200, { name: "fake", paused: null }),
			[`GET /v1/jobs/${NEWEST}`]: (_req, res) => json(res, 200, record({ id: NEWEST, session_id: SESSION })),
			[`GET /v1/sessions/${SESSION}?agent=fake`]: (_req, res) => json(res, 200, session()),
			[`POST /v1/jobs/${NEWEST}/continue`]: (_req, res) => json(res, 201, continued()),
		});
		const r = await runCliProcess(["sessions", "resume"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN }, async (stdin) => void stdin.end("From stdin.\n"));
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toBe("job-2026-01-03-newjob\n");
		// Without the newline echo ends it with, as `notepad set -` reads a value.
		expect(JSON.parse(api.seen.at(-1)!.body)).toEqual({ prompt: "From stdin." });
		// The deleted agent's job was passed over without reading it.
		expect(api.seen.map((x) => x.route)).not.toContain("GET /v1/jobs/job-2026-01-05-gone00");
		expect(api.seen.map((x) => x.route)).toContain("GET /v1/agents/gone");
	});

	it("passes on the API's refusal of an ambiguous prefix, and asks nothing without a prompt", async () => {
		const message = "session id prefix ses-job-2026-01 fits more than one session: ses-job-2026-01-01-abcdef (agent fake), ses-job-2026-01-02-zzzzzz (agent fake); give more of the id";
		const api = await fakeApi({ "GET /v1/sessions/ses-job-2026-01": (_req, res) => json(res, 409, { error: { code: "conflict", message } }) });
		const r = await runCli(api.url, ["sessions", "resume", "ses-job-2026-01", "Go."]);
		expect(r.status).toBe(1);
		expect(r.stderr).toContain(`drover: ${message}`);
		expect(api.seen.map((s) => s.route)).toEqual(["GET /v1/sessions/ses-job-2026-01"]);

		const none = await runCli(api.url, ["sessions", "resume", "ses-job-2026-01"]);
		expect(none.status).toBe(2);
		expect(none.stderr).toMatch(/^drover: sessions resume needs a prompt/);
		expect(api.seen).toHaveLength(1);
	});

	it("a name that is no agent: the hint says how a session is named (herdctl's short ids are not drover's)", async () => {
		const api = await fakeApi({
			"GET /v1/agents/m8hahr/sessions?limit=1": (_req, res) => json(res, 404, { error: { code: "not_found", message: "no agent named m8hahr" } }),
		});
		const r = await runCli(api.url, ["sessions", "resume", "m8hahr", "Go on."]);
		expect(r.status).toBe(4);
		expect(r.stderr).toContain("drover: no agent named m8hahr\n");
		expect(r.stderr).toContain("drover: hint: m8hahr was taken as an agent's name: a session is named by its id, ses-job-… or a prefix of one (drover sessions lists them), or by one of its jobs' ids");
		expect(api.seen.map((s) => s.route)).toEqual(["GET /v1/agents/m8hahr/sessions?limit=1"]);
	});

	it("an old ses-<uuid> id not found without its agent: the hint names --agent, which finds it", async () => {
		const legacy = "ses-0f8c2d4e-5b6a";
		const api = await fakeApi({
			[`GET /v1/sessions/${legacy}`]: (_req, res) => json(res, 404, { error: { code: "not_found", message: `no session ${legacy} found without its agent` } }),
			[`GET /v1/sessions/${legacy}?agent=fake`]: (_req, res) => json(res, 200, { ...session(), session_id: "ses-0f8c2d4e-5b6a-4c3d-9e8f-7a6b5c4d3e2f" }),
			[`POST /v1/jobs/${NEWEST}/continue`]: (_req, res) => json(res, 201, continued()),
		});
		const r = await runCli(api.url, ["sessions", "resume", legacy, "Go."]);
		expect(r.status).toBe(4);
		expect(r.stderr).toContain(`drover: hint: name its agent: drover sessions resume ${legacy} --agent <agent>`);
		const found = await runCli(api.url, ["sessions", "resume", legacy, "Go.", "--agent", "fake"]);
		expect(found.status, found.stderr).toBe(0);
		expect(found.stdout).toBe("job-2026-01-03-newjob\n");
	});
});

describe("sessions current and sessions reset (a persistent session)", () => {
	const CURRENT = {
		agent: "keeper",
		mode: "persistent",
		session_id: "ses-job-2026-01-01-abcdef",
		last_job: "job-2026-01-02-zzzzzz",
		started_at: "2026-01-01T00:00:01.000Z",
		active_at: "2026-01-02T00:00:05.000Z",
		expires_at: "2026-01-03T00:00:05.000Z",
		expired: true,
		continues: false,
		not_continued_because: "it expired at 2026-01-03T00:00:05.000Z (idle_timeout 24h, from its last completed run)",
		schedule_modes: { review: "fresh_per_job" },
		max_context_tokens: 50000,
	};

	it("shows what the next run continues and when the session expires; --json prints the answer", async () => {
		const api = await fakeApi({ "GET /v1/agents/keeper/sessions/current": (_req, res) => json(res, 200, CURRENT) });
		const r = await runCli(api.url, ["sessions", "current", "keeper"]);
		expect(r.status, r.stderr).toBe(0);
		const lines = r.stdout.trimEnd().split("\n");
		expect(lines[0]).toMatch(/^mode\s+persistent$/);
		expect(lines).toContainEqual(expect.stringMatching(/^session\s+ses-job-2026-01-01-abcdef$/));
		expect(lines).toContainEqual(expect.stringMatching(/^schedules\s+review: fresh_per_job$/));
		expect(lines).toContainEqual(expect.stringMatching(/^last run\s+job-2026-01-02-zzzzzz, completed 2026-01-02 00:00:05Z \(/));
		expect(lines).toContainEqual(expect.stringMatching(/^expires\s+2026-01-03 00:00:05Z \(.*\)$/));
		expect(lines).toContainEqual(
			expect.stringMatching(/^next run\s+starts a new session: it expired at 2026-01-03T00:00:05\.000Z \(idle_timeout 24h, from its last completed run\)$/),
		);
		const asJson = await runCli(api.url, ["sessions", "current", "keeper", "--json"]);
		expect(JSON.parse(asJson.stdout)).toEqual(CURRENT);
	});

	it("says how a session kept from persistent runs goes on once the agent's runs start fresh", async () => {
		const kept = {
			...CURRENT,
			mode: "fresh_per_job",
			schedule_modes: {},
			expires_at: null,
			expired: false,
			not_continued_because: "the agent's runs start fresh (session.mode fresh_per_job); a continue of the session's last completed run (last_job) carries it on",
		};
		const api = await fakeApi({ "GET /v1/agents/keeper/sessions/current": (_req, res) => json(res, 200, kept) });
		const r = await runCli(api.url, ["sessions", "current", "keeper"]);
		expect(r.status, r.stderr).toBe(0);
		const lines = r.stdout.trimEnd().split("\n");
		expect(lines).toContainEqual(expect.stringMatching(/^next run\s+starts its own session \(session\.mode fresh_per_job\)$/));
		expect(lines).toContainEqual(
			expect.stringMatching(
				/^note\s+kept from when the agent's runs were persistent; a continue of job-2026-01-02-zzzzzz carries it on: drover sessions resume ses-job-2026-01-01-abcdef "…"$/,
			),
		);
		expect(r.stdout).not.toMatch(/^context/m);
	});

	it("says so when there is none", async () => {
		const none = { ...CURRENT, mode: "fresh_per_job", session_id: null, last_job: null, started_at: null, active_at: null, expires_at: null, expired: false, schedule_modes: {} };
		const api = await fakeApi({ "GET /v1/agents/plain/sessions/current": (_req, res) => json(res, 200, { ...none, agent: "plain" }) });
		const r = await runCli(api.url, ["sessions", "current", "plain"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toMatch(/^session\s+none \(each run starts its own; set session\.mode: persistent to carry runs on\)$/m);
		// An agent whose runs start afresh but for one schedule's: that schedule's next run starts one.
		const hybrid = await fakeApi({ "GET /v1/agents/hybrid/sessions/current": (_req, res) => json(res, 200, { ...none, agent: "hybrid", schedule_modes: { work: "persistent" } }) });
		expect((await runCli(hybrid.url, ["sessions", "current", "hybrid"])).stdout).toMatch(/^session\s+none yet: the next persistent run starts one$/m);
	});

	it("status <agent> says how its runs share conversations, and stands without it from a server that cannot say", async () => {
		const agent = { name: "keeper", source: "api", enabled: true, model: "m", fallback_models: [], max_concurrent: 1, overlap: "skip", schedules: [], paused: null, running_jobs: [], queued_jobs: 0, last_job: null };
		const inADay = new Date(Date.now() + 86_400_000 - 60_000).toISOString();
		const seen = new Date().toISOString();
		const incidentOf = (name: string) => ({
			id: `${name.slice(0, 6)}_000000000001`, agent: name, signature: "000000000001", class: "agent", state: "alerted", error: "boom", count: 1,
			first_seen_at: seen, last_seen_at: seen, last_job_id: null, alerted_at: seen, resolved_at: null, closed_at: null, closed_by: null, failing: ["manual"],
		});
		const api = await fakeApi({
			"GET /v1/agents/keeper": (_req, res) => json(res, 200, agent),
			"GET /v1/agents/keeper/sessions/current": (_req, res) => json(res, 200, { ...CURRENT, expires_at: inADay, expired: false, continues: true, not_continued_because: null }),
			"GET /v1/agents/stale/sessions/current": (_req, res) => json(res, 200, { ...CURRENT, agent: "stale" }),
			"GET /v1/agents/stale": (_req, res) => json(res, 200, { ...agent, name: "stale" }),
			"GET /v1/agents/plain": (_req, res) => json(res, 200, { ...agent, name: "plain" }),
			"GET /v1/agents/plain/sessions/current": (_req, res) => json(res, 200, { ...CURRENT, agent: "plain", mode: "fresh_per_job", session_id: null, last_job: null }),
			"GET /v1/agents/older": (_req, res) => json(res, 200, { ...agent, name: "older" }),
			"GET /v1/incidents?agent=keeper&state=open&limit=20": (_req, res) => json(res, 200, { incidents: [incidentOf("keeper"), incidentOf("keeper")], next_cursor: null }),
			"GET /v1/incidents?agent=plain&state=open&limit=20": (_req, res) => json(res, 200, { incidents: [], next_cursor: null }),
			"GET /v1/incidents?agent=stale&state=open&limit=20": (_req, res) => json(res, 200, { incidents: Array.from({ length: 20 }, () => incidentOf("stale")), next_cursor: "more" }),
		});
		const keeper = await runCli(api.url, ["status", "keeper"]);
		expect(keeper.status, keeper.stderr).toBe(0);
		// Its open incidents, paged or not, and where they are listed; none, or more than a page.
		expect(keeper.stdout).toMatch(/^incidents\s+2 open \(drover incidents --agent keeper --state open lists them\)$/m);
		expect((await runCli(api.url, ["status", "plain"])).stdout).toMatch(/^incidents\s+none open$/m);
		expect((await runCli(api.url, ["status", "stale"])).stdout).toMatch(/^incidents\s+more than 20 open /m);
		expect(keeper.stdout).toMatch(/^session\s+persistent: ses-job-2026-01-01-abcdef, continuing job-2026-01-02-zzzzzz, expires in (23h|1d)$/m);
		expect((await runCli(api.url, ["status", "plain"])).stdout).toMatch(/^session\s+fresh per job$/m);
		expect((await runCli(api.url, ["status", "stale"])).stdout).toMatch(
			/^session\s+persistent: ses-job-2026-01-01-abcdef, last run job-2026-01-02-zzzzzz; the next run starts a new one: it expired at 2026-01-03T00:00:05\.000Z \(idle_timeout 24h, from its last completed run\)$/m,
		);
		// An older server answers 404 for the route: the rest of the status is shown as before.
		const older = await runCli(api.url, ["status", "older"]);
		expect(older.status, older.stderr).toBe(0);
		expect(older.stdout).toMatch(/^agent\s+older \(API\)$/m);
		expect(older.stdout).not.toMatch(/^session/m);
		expect(older.stdout).not.toMatch(/^incidents/m);
	});

	it("status <agent> gives each schedule's last run: its slot and status, a skip's reason, a delivery that did not get through", async () => {
		const schedule = (name: string, last_run: unknown) => ({ name, kind: "interval", expression: "1h", timezone: null, catch_up: false, enabled: true, next_run: null, last_run });
		const run = { job_id: JOB, finished_at: "2026-01-01T09:00:40.000Z", skip_reason: null, delivery_outcome: null };
		const agent = {
			name: "ledgered", source: "api", enabled: true, model: "m", fallback_models: [], max_concurrent: 1, overlap: "skip", paused: null, running_jobs: [], queued_jobs: 0, last_job: null,
			schedules: [
				schedule("done", { ...run, scheduled_instant: "2026-01-01T09:00:00.000Z", status: "completed" }),
				schedule("held", { ...run, job_id: null, finished_at: null, scheduled_instant: "2026-01-01T10:00:00.000Z", status: "skipped", skip_reason: "paused" }),
				schedule("lost", { ...run, scheduled_instant: "2026-01-01T11:00:00.000Z", status: "completed", delivery_outcome: "failed" }),
				schedule("fresh", null),
			],
		};
		// An older server's agents have no last_run.
		const older = { ...agent, name: "older", schedules: [{ ...schedule("done", null), last_run: undefined }] };
		const api = await fakeApi({
			"GET /v1/agents/ledgered": (_req, res) => json(res, 200, agent),
			"GET /v1/agents/older": (_req, res) => json(res, 200, older),
		});
		const r = await runCli(api.url, ["status", "ledgered"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toMatch(/^SCHEDULE\s+WHEN\s+TIMEZONE\s+CATCH-UP\s+NEXT RUN\s+LAST RUN$/m);
		expect(r.stdout).toMatch(/^done\s+every 1h\s+-\s+no\s+-\s+2026-01-01 09:00:00Z completed$/m);
		expect(r.stdout).toMatch(/^held\s+every 1h\s+-\s+no\s+-\s+2026-01-01 10:00:00Z skipped: paused$/m);
		expect(r.stdout).toMatch(/^lost\s+every 1h\s+-\s+no\s+-\s+2026-01-01 11:00:00Z completed, delivery failed$/m);
		expect(r.stdout).toMatch(/^fresh\s+every 1h\s+-\s+no\s+-\s+-$/m);
		const o = await runCli(api.url, ["status", "older"]);
		expect(o.status, o.stderr).toBe(0);
		expect(o.stdout).toMatch(/^done\s+every 1h\s+-\s+no\s+-\s+-$/m);
	});

	it("reset asks first (a usage error without a terminal or --yes), then forgets the session", async () => {
		const api = await fakeApi({ "DELETE /v1/agents/keeper/sessions/current": (_req, res) => json(res, 200, { agent: "keeper", forgotten: CURRENT.session_id }) });
		const refused = await runCli(api.url, ["sessions", "reset", "keeper"]);
		expect(refused.status).toBe(2);
		expect(refused.stderr).toContain("drover: not resetting agent keeper's session without confirmation");
		expect(api.seen).toEqual([]);

		const r = await runCli(api.url, ["sessions", "reset", "keeper", "--yes"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toBe("forgot ses-job-2026-01-01-abcdef: agent keeper's next run starts a new session\n");
		expect(api.seen.map((s) => s.route)).toEqual(["DELETE /v1/agents/keeper/sessions/current"]);
	});
});

describe("job --manifest", () => {
	const MANIFEST = {
		job_id: JOB,
		agent: "fake",
		status: "completed",
		session_id: `ses-${JOB}`,
		definition_revision: "r1",
		definition: { name: "fake", max_turns: 20, timeout: "30m", usage_limits: { max_tool_calls: 5 } },
		models: ["claude-sonnet-5-5", "claude-haiku-5-5"],
		max_tokens: 8192,
		system: [
			{ type: "text", text: "You check status pages." },
			{ type: "text", text: "You are running as a drover job." },
		],
		tools: [{ name: "http_fetch", input_schema: { type: "object" } }, { type: "web_search_20250305", name: "web_search" }],
		deadline: "2026-01-01T00:30:01.000Z",
		persistent_from: "job-2025-12-31-zzzzzz",
		continued_from: "job-2025-12-31-zzzzzz",
	};

	it("shows what the job runs with; --json prints the answer", async () => {
		const api = await fakeApi({ [`GET /v1/jobs/${JOB}/manifest`]: (_req, res) => json(res, 200, MANIFEST) });
		const r = await runCli(api.url, ["job", JOB, "--manifest"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toMatch(/^models\s+claude-sonnet-5-5 → claude-haiku-5-5$/m);
		// Ended: its deadline is a time, not "in 14m" as if it still ran.
		expect(r.stdout).toMatch(/^timeout\s+30m, deadline 2026-01-01 00:30:01Z$/m);
		expect(r.stdout).toMatch(/^limits\s+max_tool_calls 5$/m);
		expect(r.stdout).toMatch(/^tools\s+http_fetch, web_search$/m);
		expect(r.stdout).toMatch(/^session mode\s+persistent, carrying the session on from job-2025-12-31-zzzzzz$/m);
		expect(r.stdout.endsWith("system prompt\nYou check status pages.\n\nYou are running as a drover job.\n")).toBe(true);
		const asJson = await runCli(api.url, ["job", JOB, "--manifest", "--json"]);
		expect(JSON.parse(asJson.stdout)).toEqual(MANIFEST);
		// A persistent run that found a session it did not continue started a new one.
		const running = await fakeApi({ [`GET /v1/jobs/${JOB}/manifest`]: (_req, res) => json(res, 200, { ...MANIFEST, status: "running" }) });
		expect((await runCli(running.url, ["job", JOB, "--manifest"])).stdout).toMatch(/^timeout\s+30m, deadline 2026-01-01 00:30:01Z \(/m);
		const fresh = await fakeApi({ [`GET /v1/jobs/${JOB}/manifest`]: (_req, res) => json(res, 200, { ...MANIFEST, continued_from: null }) });
		expect((await runCli(fresh.url, ["job", JOB, "--manifest"])).stdout).toMatch(
			/^session mode\s+persistent, starting a new session \(it found the last one at job-2025-12-31-zzzzzz, not continued\)$/m,
		);
	});

	it("passes on a pending job's 409, and does not go with --logs or --yaml", async () => {
		const message = `job ${JOB} is pending: its manifest is saved when it starts`;
		const api = await fakeApi({ [`GET /v1/jobs/${JOB}/manifest`]: (_req, res) => json(res, 409, { error: { code: "conflict", message } }) });
		const r = await runCli(api.url, ["job", JOB, "--manifest"]);
		expect(r.status).toBe(1);
		expect(r.stderr).toContain(`drover: ${message}`);
		for (const other of ["--logs", "--yaml"]) {
			const both = await runCli(api.url, ["job", JOB, "--manifest", other]);
			expect(both.status, other).toBe(2);
		}
		expect(api.seen).toHaveLength(1);
	});
});

describe("job --output-log", () => {
	it("prints the job's plain-text log as the API gives it, controls made visible; passes on a 404 saying why", async () => {
		const log = "2026-01-01T00:00:01.000Z system:init job started\n2026-01-01T00:00:02.000Z assistant Done.\n    Second line \u001b[2J.\n";
		const api = await fakeApi({
			[`GET /v1/jobs/${JOB}/output.log`]: (_req, res) => {
				res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
				res.end(log);
			},
		});
		const r = await runCli(api.url, ["job", JOB, "--output-log"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toBe(log.replace("\u001b", "\\x1b"));

		const message = `job ${JOB} keeps no plain-text log (output_to_file was not set on its schedule or agent when it started); its JSONL output is at /v1/jobs/${JOB}/output`;
		const none = await fakeApi({ [`GET /v1/jobs/${JOB}/output.log`]: (_req, res) => json(res, 404, { error: { code: "not_found", message } }) });
		const missing = await runCli(none.url, ["job", JOB, "--output-log"]);
		expect(missing.status).toBe(4);
		expect(missing.stderr).toContain(`drover: ${message}`);
		// The API names its own route; the CLI says the command that reads it.
		expect(missing.stderr).toContain(`drover logs --job ${JOB} prints its output`);
		for (const other of ["--logs", "--manifest", "--json", "--yaml"]) {
			const both = await runCli(none.url, ["job", JOB, "--output-log", other]);
			expect(both.status, other).toBe(2);
		}
		expect(none.seen).toHaveLength(1);
	});
});

describe("a job's exit reason beside its status", () => {
	it("is said where it adds to the status, not repeated (cancelled (cancelled))", async () => {
		const cancelled = record({ status: "cancelled", exit_reason: "cancelled" });
		const limited = record({ id: "job-2026-01-01-bbbbbb", status: "failed", exit_reason: "usage_limit" });
		const api = await fakeApi({
			[`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 200, cancelled),
			"GET /v1/jobs/job-2026-01-01-bbbbbb": (_req, res) => json(res, 200, limited),
		});
		expect((await runCli(api.url, ["job", JOB])).stdout).toMatch(/^status\s+cancelled$/m);
		expect((await runCli(api.url, ["job", "job-2026-01-01-bbbbbb"])).stdout).toMatch(/^status\s+failed \(usage_limit\)$/m);
	});
});

describe("job --tool-calls", () => {
	const call = (n: number, extra: Record<string, unknown>) => ({
		tool_use_id: `toolu_${n}`,
		name: "http_fetch",
		input: { url: `https://status.example.test/${n}` },
		status: "completed",
		decision: null,
		decided_by: null,
		is_error: false,
		result: `page ${n}`,
		result_chars: 6,
		started_at: "2026-01-01T00:00:01.000Z",
		finished_at: "2026-01-01T00:00:03.500Z",
		...extra,
	});
	const page = (calls: unknown[], next: string | null) => ({ job_id: JOB, agent: "fake", status: "indeterminate", tool_calls: calls, next_cursor: next });

	it("lists every page's calls: status, approval, time, input and result, controls escaped; --json is one page of them all", async () => {
		const api = await fakeApi({
			[`GET /v1/jobs/${JOB}/tool-calls?limit=200`]: (_req, res) => json(res, 200, page([call(1, {}), call(2, { name: "create_ticket", input: { title: "Disk\u001b[2J full" }, status: "failed", is_error: true, result: "webhook answered 404", decision: "approve", decided_by: "operator" })], "c2")),
			[`GET /v1/jobs/${JOB}/tool-calls?limit=200&cursor=c2`]: (_req, res) => json(res, 200, page([call(3, { status: "executing", result: null, result_chars: null, finished_at: null })], null)),
		});
		const r = await runCli(api.url, ["job", JOB, "--tool-calls"]);
		expect(r.status, r.stderr).toBe(0);
		const lines = r.stdout.trimEnd().split("\n");
		expect(lines[0]).toMatch(/^#\s+TOOL\s+STATUS\s+APPROVAL\s+TOOK\s+INPUT → RESULT$/);
		expect(lines[1]).toMatch(/^1\s+http_fetch\s+completed\s+-\s+2\.5s\s+\{"url":"https:\/\/status\.example\.test\/1"\} → page 1$/);
		expect(lines[2]).toMatch(/^2\s+create_ticket\s+failed\s+approved by operator\s+2\.5s\s+\{"title":"Disk\\u001b\[2J full"\} → webhook answered 404$/);
		// Left executing by a job that has ended: cut off, its effect unknown.
		expect(lines[3]).toMatch(/^3\s+http_fetch\s+effect unknown\s+-\s+-\s+\{"url":"https:\/\/status\.example\.test\/3"\}$/);
		expect(lines).toHaveLength(4);

		const asJson = await runCli(api.url, ["job", JOB, "--tool-calls", "--json"]);
		expect(asJson.status, asJson.stderr).toBe(0);
		const all = JSON.parse(asJson.stdout) as { tool_calls: { tool_use_id: string }[]; next_cursor: null };
		expect(all.tool_calls.map((t) => t.tool_use_id)).toEqual(["toolu_1", "toolu_2", "toolu_3"]);
		expect(all.next_cursor).toBeNull();
		for (const other of ["--logs", "--manifest", "--output-log", "--yaml"]) {
			const both = await runCli(api.url, ["job", JOB, "--tool-calls", other]);
			expect(both.status, other).toBe(2);
		}
		expect(api.seen).toHaveLength(4);
	});

	it("says beside a job's status how many of its calls failed: in jobs and in job", async () => {
		const failing = record({ tool_calls: { made: 3, failed: 1 } });
		const clean = record({ id: "job-2026-01-01-bbbbbb", tool_calls: { made: 2, failed: 0 } });
		const api = await fakeApi({
			"GET /v1/jobs?limit=20": (_req, res) => json(res, 200, { jobs: [failing, clean], next_cursor: null }),
			[`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 200, failing),
			"GET /v1/jobs/job-2026-01-01-bbbbbb": (_req, res) => json(res, 200, clean),
		});
		const list = await runCli(api.url, ["jobs"]);
		expect(list.status, list.stderr).toBe(0);
		expect(list.stdout).toMatch(new RegExp(`^${JOB}\\s+fake\\s+completed \\(1/3 calls failed\\)\\s`, "m"));
		expect(list.stdout).toMatch(/^job-2026-01-01-bbbbbb\s+fake\s+completed\s+continue\s/m);
		const one = await runCli(api.url, ["job", JOB]);
		expect(one.stdout).toMatch(new RegExp(`^tool calls\\s+3 ran, 1 failed \\(drover job ${JOB} --tool-calls\\)$`, "m"));
		expect((await runCli(api.url, ["job", "job-2026-01-01-bbbbbb"])).stdout).toMatch(/^tool calls\s+2 ran, none failed \(/m);
	});

	it("shows a call still pending in a job that has ended as not run, saying how the job ended; --json keeps the API's pending", async () => {
		const gated = call(2, { name: "create_ticket", status: "pending", result: null, result_chars: null, started_at: null, finished_at: null });
		let status = "cancelled";
		const api = await fakeApi({ [`GET /v1/jobs/${JOB}/tool-calls?limit=200`]: (_req, res) => json(res, 200, { ...page([call(1, {}), gated], null), status }) });
		const ended = await runCli(api.url, ["job", JOB, "--tool-calls"]);
		expect(ended.status, ended.stderr).toBe(0);
		expect(ended.stdout.trimEnd().split("\n")[2]).toMatch(/^2\s+create_ticket\s+not run \(job cancelled\)\s+-\s+-\s+\{"url":"https:\/\/status\.example\.test\/2"\}$/);
		const asJson = await runCli(api.url, ["job", JOB, "--tool-calls", "--json"]);
		expect((JSON.parse(asJson.stdout) as { tool_calls: { status: string }[] }).tool_calls.map((t) => t.status)).toEqual(["completed", "pending"]);
		// While the job waits for its approval, the call is pending: it may still run.
		status = "approval_pending";
		const waiting = await runCli(api.url, ["job", JOB, "--tool-calls"]);
		expect(waiting.stdout.trimEnd().split("\n")[2]).toMatch(/^2\s+create_ticket\s+pending\s+-\s+-\s/);
	});

	it("words the tally's failed calls as what they may be: a call cut off (effect unknown) is counted among them", async () => {
		const unknown = record({ status: "indeterminate", tool_calls: { made: 1, failed: 1 } });
		const forced = record({ id: "job-2026-01-01-bbbbbb", status: "cancelled", tool_calls: { made: 2, failed: 1 } });
		const several = record({ id: "job-2026-01-01-cccccc", status: "indeterminate", tool_calls: { made: 3, failed: 2 } });
		const api = await fakeApi({
			"GET /v1/jobs?limit=20": (_req, res) => json(res, 200, { jobs: [unknown, forced, several], next_cursor: null }),
			[`GET /v1/jobs/${JOB}`]: (_req, res) => json(res, 200, unknown),
			"GET /v1/jobs/job-2026-01-01-bbbbbb": (_req, res) => json(res, 200, forced),
		});
		const list = await runCli(api.url, ["jobs"]);
		expect(list.status, list.stderr).toBe(0);
		expect(list.stdout).toMatch(new RegExp(`^${JOB}\\s+fake\\s+indeterminate \\(1/1 calls cut off, effect unknown\\)\\s`, "m"));
		expect(list.stdout).toMatch(/^job-2026-01-01-bbbbbb\s+fake\s+cancelled \(1\/2 calls failed or cut off\)\s/m);
		expect(list.stdout).toMatch(/^job-2026-01-01-cccccc\s+fake\s+indeterminate \(2\/3 calls failed or cut off\)\s/m);
		expect((await runCli(api.url, ["job", JOB])).stdout).toMatch(new RegExp(`^tool calls\\s+1 ran, 1 cut off, effect unknown \\(drover job ${JOB} --tool-calls\\)$`, "m"));
		expect((await runCli(api.url, ["job", "job-2026-01-01-bbbbbb"])).stdout).toMatch(/^tool calls\s+2 ran, 1 failed or cut off \(/m);
	});

	it("says so when a job made no calls, or has not started", async () => {
		const api = await fakeApi({ [`GET /v1/jobs/${JOB}/tool-calls?limit=200`]: (_req, res) => json(res, 200, { ...page([], null), status: "pending" }) });
		const r = await runCli(api.url, ["job", JOB, "--tool-calls"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toBe(`no tool calls: job ${JOB} has not started\n`);
	});
});

describe("doctor and the Worker's numeric vars", () => {
	it("warns of a var /healthz lists as not valid, without failing on it", async () => {
		const message = 'RETENTION_DAYS "30d" is not a whole number of days (1..3650); the default 30 is used';
		const now = new Date().toISOString();
		const health = {
			status: "ok",
			version: "0.1.0",
			fleet: { ok: true, agents: 1 },
			scheduler: { last_tick_at: now, age_seconds: 5, stalled: false, outcome: "ok", last_ok_at: now },
			variables: { ok: false, issues: [{ path: "RETENTION_DAYS", message }] },
		};
		// /healthz takes no token, which fakeApi would refuse: its own server.
		const server = createServer((req, res) => (req.url === "/healthz" ? json(res, 200, health) : json(res, 401, { error: { code: "unauthorized", message: "invalid token" } })));
		servers.push(server);
		server.listen(0, "127.0.0.1");
		await once(server, "listening");
		const r = await runCli(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, ["doctor"]);
		expect(r.stdout).toMatch(/^✓ reachable /m);
		expect(r.stdout).toMatch(new RegExp(`^! variables\\s+${message.replace(/[.()]/g, "\\$&")}$`, "m"));
	});

	it("warns of an API_TOKENS entry /healthz lists as refused, and fails on a secret that does not load", async () => {
		const now = new Date().toISOString();
		const refused = { path: "API_TOKENS[1]", message: "token holds characters no token has: a space, a line break or a character beyond ASCII; this entry is refused, the others work" };
		const health = (apiTokens: unknown) => ({
			status: "ok",
			version: "0.1.0",
			fleet: { ok: true, agents: 1 },
			scheduler: { last_tick_at: now, age_seconds: 5, stalled: false, outcome: "ok", last_ok_at: now },
			variables: { ok: true },
			api_tokens: apiTokens,
		});
		let answer = health({ ok: true, issues: [refused] });
		const server = createServer((req, res) => (req.url === "/healthz" ? json(res, 200, answer) : json(res, 401, { error: { code: "unauthorized", message: "invalid token" } })));
		servers.push(server);
		server.listen(0, "127.0.0.1");
		await once(server, "listening");
		const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
		const warned = await runCli(url, ["doctor", "--json"]);
		expect((JSON.parse(warned.stdout) as { checks: unknown[] }).checks).toContainEqual({ check: "api_tokens", status: "warn", message: `${refused.path}: ${refused.message}` });
		answer = health({ ok: false, issues: [{ path: "API_TOKENS[0]", message: "token is shorter than 16 characters" }] });
		const failed = await runCli(url, ["doctor"]);
		expect(failed.status).toBe(1);
		expect(failed.stdout).toMatch(/^✗ api_tokens\s+the API_TOKENS secret does not load: API_TOKENS\[0\]: token is shorter than 16 characters$/m);
	});
});

describe("doctor and the scheduler's heartbeat", () => {
	/** `scheduler` as a function is made when /healthz is asked, so the ages it names count from the answer, not from the CLI's start. */
	const doctorWith = async (scheduler: unknown, fleet: unknown = { ok: true, agents: 1 }) => {
		const health = () => ({ status: "ok", version: "0.1.0", fleet, scheduler: typeof scheduler === "function" ? scheduler() : scheduler, variables: { ok: true } });
		// /healthz takes no token, which fakeApi would refuse: its own server.
		const server = createServer((req, res) => (req.url === "/healthz" ? json(res, 200, health()) : json(res, 401, { error: { code: "unauthorized", message: "invalid token" } })));
		servers.push(server);
		server.listen(0, "127.0.0.1");
		await once(server, "listening");
		return runCli(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, ["doctor"]);
	};

	it("says since when no good tick came when ticks arrive but every one fails, not how old the last tick is", async () => {
		let lastOk = "";
		const r = await doctorWith(() => {
			lastOk = new Date(Date.now() - 600_000).toISOString();
			return { last_tick_at: new Date(Date.now() - 4_000).toISOString(), age_seconds: 4, stalled: true, outcome: "failed", last_ok_at: lastOk };
		});
		expect(r.status).toBe(1);
		const line = r.stdout.split("\n").find((l) => l.startsWith("✗ scheduler"));
		expect(line).toMatch(/^✗ scheduler\s+stalled: no good tick since \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(10m ago\), longer than HEARTBEAT_STALE_SECONDS \(last tick [45]s ago, failed; is the cron trigger firing\? see drover status\)$/);
		expect(line).toContain(`${lastOk.slice(0, 19).replace("T", " ")}Z`);
	});

	it("puts failing ticks down to an invalid fleet.yaml when the config check fails, not to drover status (which fails with it)", async () => {
		const fleet = { ok: false, agents: 0, issues: [{ path: "agents.0.schedules.daily.cron", message: "invalid cron" }] };
		const now = Date.now();
		const failing = await doctorWith({ last_tick_at: new Date(now - 4_000).toISOString(), age_seconds: 4, stalled: false, outcome: "failed", last_ok_at: new Date(now - 60_000).toISOString() }, fleet);
		expect(failing.stdout).toMatch(/^✗ config\s+fleet\.yaml is invalid: agents\.0\.schedules\.daily\.cron: invalid cron$/m);
		expect(failing.stdout).toMatch(/^! scheduler\s+last tick \d+s ago, outcome failed \(fleet\.yaml is invalid \(see config above\): fix it, and the next tick runs\)$/m);
		const stalled = await doctorWith({ last_tick_at: new Date(now - 4_000).toISOString(), age_seconds: 4, stalled: true, outcome: "failed", last_ok_at: null }, fleet);
		expect(stalled.stdout).toMatch(/^✗ scheduler\s+stalled: no good tick yet, longer than HEARTBEAT_STALE_SECONDS \(last tick \d+s ago, failed; fleet\.yaml is invalid \(see config above\): fix it, and the next tick runs\)$/m);
		expect(failing.stdout + stalled.stdout).not.toContain("see drover status");
		// No tick for 10 minutes: the cron trigger stopped, whatever the file says.
		const silent = await doctorWith({ last_tick_at: new Date(now - 600_000).toISOString(), age_seconds: 600, stalled: true, outcome: "failed", last_ok_at: null }, fleet);
		expect(silent.stdout).toMatch(/^✗ scheduler\s+stalled: no good tick yet, .*is the cron trigger firing\? see drover status\)$/m);
	});

	it("warns of a partial tick (some agent not reached), without failing", async () => {
		const now = new Date().toISOString();
		const r = await doctorWith({ last_tick_at: now, age_seconds: 4, stalled: false, outcome: "partial", last_ok_at: now });
		expect(r.stdout).toMatch(/^! scheduler\s+last tick (now|\d+s ago), outcome partial: some agents could not be reached \(see drover status and drover incidents --agent scheduler\)$/m);
		expect(r.stdout).not.toMatch(/^✗ scheduler/m);
	});
});

describe("doctor and D1's migrations", () => {
	it("fails on migrations /healthz says D1 lacks, naming them and how to apply them", async () => {
		const now = new Date().toISOString();
		const missing = ["0010_heartbeat_backlog.sql", "0011_live_agents_index.sql"];
		const health = {
			status: "degraded",
			version: "0.2.0",
			fleet: { ok: true, agents: 1 },
			scheduler: { last_tick_at: now, age_seconds: 5, stalled: false, outcome: "ok", last_ok_at: now },
			d1: { ok: false, missing, fix: "npx wrangler d1 migrations apply DB --remote" },
			variables: { ok: true },
			api_tokens: { ok: true },
		};
		const server = createServer((req, res) => (req.url === "/healthz" ? json(res, 503, health) : json(res, 401, { error: { code: "unauthorized", message: "invalid token" } })));
		servers.push(server);
		server.listen(0, "127.0.0.1");
		await once(server, "listening");
		const r = await runCli(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, ["doctor"]);
		expect(r.status).toBe(1);
		expect(r.stdout).toMatch(/^✓ reachable /m);
		expect(r.stdout).toContain(
			"✗ d1         D1 lacks 2 migrations this release needs (0010_heartbeat_backlog.sql, 0011_live_agents_index.sql): run npx wrangler d1 migrations apply DB --remote; npm run deploy applies them before it deploys, a bare wrangler deploy or a Git build does not\n",
		);
	});

	it("warns, without failing, when D1 lacks only a migration that adds an index", async () => {
		const now = new Date().toISOString();
		const health = {
			status: "ok",
			version: "0.2.0",
			fleet: { ok: true, agents: 1 },
			scheduler: { last_tick_at: now, age_seconds: 5, stalled: false, outcome: "ok", last_ok_at: now },
			d1: { ok: true, missing: ["0011_live_agents_index.sql"], fix: "npx wrangler d1 migrations apply DB --remote" },
			variables: { ok: true },
			api_tokens: { ok: true },
		};
		const server = createServer((req, res) => (req.url === "/healthz" ? json(res, 200, health) : json(res, 401, { error: { code: "unauthorized", message: "invalid token" } })));
		servers.push(server);
		server.listen(0, "127.0.0.1");
		await once(server, "listening");
		const r = await runCli(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, ["doctor", "--json"]);
		expect((JSON.parse(r.stdout) as { checks: unknown[] }).checks).toContainEqual({
			check: "d1",
			status: "warn",
			message: "D1 lacks a migration that only adds an index (0011_live_agents_index.sql): nothing fails, but some reads scan where they would seek; run npx wrangler d1 migrations apply DB --remote",
		});
	});

	it("warns, without failing, when D1 keeps no record of its migrations to check", async () => {
		const now = new Date().toISOString();
		const health = {
			status: "ok",
			version: "0.2.0",
			fleet: { ok: true, agents: 1 },
			scheduler: { last_tick_at: now, age_seconds: 5, stalled: false, outcome: "ok", last_ok_at: now },
			d1: { ok: true, recorded: false },
			variables: { ok: true },
			api_tokens: { ok: true },
		};
		const server = createServer((req, res) => (req.url === "/healthz" ? json(res, 200, health) : json(res, 401, { error: { code: "unauthorized", message: "invalid token" } })));
		servers.push(server);
		server.listen(0, "127.0.0.1");
		await once(server, "listening");
		const r = await runCli(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, ["doctor", "--json"]);
		expect((JSON.parse(r.stdout) as { checks: unknown[] }).checks).toContainEqual({
			check: "d1",
			status: "warn",
			message: "D1 keeps no record of its migrations (no d1_migrations table): its schema is not checked",
		});
	});
});

describe("input that is not UTF-8", () => {
	it("is refused before any request, saying where, as the API refuses such a body; never sent as U+FFFD", async () => {
		const api = await fakeApi({});
		const dir = scratchDir("latin1-");
		const file = path.join(dir, "agents.yaml");
		writeFileSync(file, Buffer.from('name: latin\nprompt: "caf\xe9 au lait"\n', "latin1"));
		const applied = await runCli(api.url, ["apply", file]);
		expect(applied.status).toBe(1);
		expect(applied.stderr).toBe(`drover: ${file} is not valid UTF-8: bytes e9 20 at offset 24 are no UTF-8 character\ndrover: hint: save it as UTF-8 (iconv -f latin1 -t utf-8 converts a Latin-1 file)\n`);
		// A UTF-16 file (Windows' "Unicode", PowerShell's `>`) is said to be one, and converted from UTF-16.
		const wide = path.join(dir, "wide.yaml");
		writeFileSync(wide, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("name: wide\nprompt: go\n", "utf16le")]));
		const widened = await runCli(api.url, ["apply", wide]);
		expect(widened.status).toBe(1);
		expect(widened.stderr).toBe(`drover: ${wide} is UTF-16, not UTF-8 (it begins with ff fe, UTF-16's byte order mark)\ndrover: hint: save it as UTF-8 (iconv -f utf-16 -t utf-8 converts a UTF-16 file)\n`);
		const noted = await runCliProcess(["notepad", "fake", "set", "k", "-"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN }, async (stdin) => void stdin.end(Buffer.from([0x63, 0x61, 0x66, 0xe9])));
		expect(noted.status).toBe(1);
		expect(noted.stderr).toContain("drover: stdin is not valid UTF-8: byte e9 at offset 3 ends stdin inside a UTF-8 character\n");
		expect(api.seen).toEqual([]);
		// UTF-8 (a BOM included) still reads as it did.
		const good = await runCliProcess(["notepad", "fake", "set", "k", "-"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN }, async (stdin) => void stdin.end(Buffer.from("\ufeffcafé", "utf8")));
		expect(good.stderr).toContain("no route for PUT /v1/agents/fake/notepad/k");
		expect(JSON.parse(api.seen[0]!.body)).toEqual({ value: "café" });
	});
});

describe("a token with characters no token has", () => {
	it("is said so, without echoing it, before any request: not taken for the network failing", async () => {
		const api = await fakeApi({});
		for (const token of [`${TOKEN}\nsecond-line`, `${TOKEN}\u2019`, `${TOKEN} `]) {
			const r = await runCliProcess(["jobs"], { DROVER_URL: api.url, DROVER_TOKEN: token });
			expect(r.status).toBe(1);
			expect(r.stderr).toContain("drover: DROVER_TOKEN (or --token) holds characters no token has: a space, a line break or a character beyond ASCII\n");
			expect(r.stderr).not.toContain(TOKEN);
			expect(r.stderr).not.toContain("cannot reach");
		}
		expect(api.seen).toEqual([]);
	});
});

describe("a job id the API would refuse as malformed", () => {
	it("is a usage error (exit 2) naming the format, before any request, for every command that takes one", async () => {
		const api = await fakeApi({});
		for (const args of [["job", "badid"], ["cancel", "badid", "--yes"], ["approve", "job-2026-02-30-abcdef"], ["deny", "JOB-2026-01-01-ABCDEF"], ["fork", "job-1"], ["continue", "x", "--prompt", "Go on."], ["logs", "--job", "badid"]]) {
			const r = await runCli(api.url, args);
			expect(r.status, args.join(" ")).toBe(2);
			expect(r.stderr, args.join(" ")).toContain("not a job id: a job id is job-YYYY-MM-DD-xxxxxx (a UTC date, then 6 characters from a-z and 0-9)");
		}
		expect(api.seen).toEqual([]);
	});
});

describe("drover apply of several agents", () => {
	it("stops at a write refused after every check passed (an agent created meanwhile), saying what was applied before it", async () => {
		const definitions = [
			{ name: "first-agent", prompt: "One." },
			{ name: "second-agent", prompt: "Two." },
		];
		const file = path.join(scratchDir("apply-"), "agents.yaml");
		writeFileSync(file, `${definitions.map((d) => `- name: ${d.name}\n  prompt: ${d.prompt}\n`).join("")}`);
		const detail = (name: string) => ({ ...agentView(name), definition: definitions.find((d) => d.name === name), definition_revision: `rev-${name}` });
		const api = await fakeApi({
			"GET /v1/agents/first-agent": (_req, res) => json(res, 404, { error: { code: "not_found", message: "no agent named first-agent" } }),
			"GET /v1/agents/second-agent": (_req, res) => json(res, 404, { error: { code: "not_found", message: "no agent named second-agent" } }),
			"POST /v1/agents?dry_run=true": (_req, res, body) => {
				const { name } = JSON.parse(body) as { name: string };
				json(res, 200, { dry_run: true, name, action: "create", definition: JSON.parse(body), definition_revision: `rev-${name}`, previous_revision: null, schedules: [], warnings: [] });
			},
			// Between apply's checks and its writes, someone else created the second agent.
			"POST /v1/agents": (_req, res, body) => {
				const { name } = JSON.parse(body) as { name: string };
				if (name === "first-agent") json(res, 201, detail(name));
				else json(res, 409, { error: { code: "conflict", message: `agent ${name} already exists; PUT /v1/agents/${name} changes it` } });
			},
		});
		const r = await runCli(api.url, ["apply", file]);
		expect(r.status).toBe(1);
		expect(r.stdout).toBe("created first-agent (revision rev-first-agent)\n");
		expect(r.stderr).toContain("drover: second-agent: agent second-agent already exists; PUT /v1/agents/second-agent changes it (1 before it applied)");
		expect(api.seen.map((s) => s.route)).toEqual([
			"GET /v1/agents/first-agent",
			"POST /v1/agents?dry_run=true",
			"GET /v1/agents/second-agent",
			"POST /v1/agents?dry_run=true",
			"GET /v1/agents/first-agent",
			"POST /v1/agents",
			"GET /v1/agents/second-agent",
			"POST /v1/agents",
		]);

		// --json: the answers of what was applied before the refusal, for a script; the refusal on stderr.
		const scripted = await runCli(api.url, ["apply", file, "--json"]);
		expect(scripted.status).toBe(1);
		expect((JSON.parse(scripted.stdout) as { name: string }[]).map((a) => a.name)).toEqual(["first-agent"]);
		expect(scripted.stderr).toContain("second-agent: agent second-agent already exists");
	});
});

describe("a pause of an agent with runs held back", () => {
	it("says the queued runs wait for the resume and the running jobs go on, where it said only that the agent was paused", async () => {
		const status = (queued: number, running: number) => ({
			name: "held",
			source: "api",
			deleted: false,
			paused: { at: "2026-01-01T00:00:00.000Z", reason: "maintenance", by: "root" },
			running_jobs: Array.from({ length: running }, (_, i) => ({ id: `job-2026-01-01-runs0${i}`, status: "running", started_at: "2026-01-01T00:00:00.000Z", schedule: null })),
			queued_jobs: queued,
			last_job: null,
			index_backlog: 0,
			storage_bytes: 0,
		});
		let answer = status(2, 1);
		const api = await fakeApi({ "POST /v1/agents/held/pause": (_req, res) => json(res, 200, answer) });
		const both = await runCli(api.url, ["pause", "held", "--reason", "maintenance"]);
		expect(both.status, both.stderr).toBe(0);
		expect(both.stdout.trim()).toBe("paused held: maintenance (2 queued runs wait for the resume; 1 running job goes on)");
		answer = status(1, 0);
		expect((await runCli(api.url, ["pause", "held"])).stdout.trim()).toBe("paused held: maintenance (1 queued run waits for the resume)");
		answer = status(0, 0);
		expect((await runCli(api.url, ["pause", "held"])).stdout.trim()).toBe("paused held: maintenance");
	});
});
