// The drover binary on an 80-column terminal, against a fake API: each list fitted to the width (its
// free text and long names cut with "…", its ids, statuses and times whole), and the same list in a
// pipe as wide as its rows, for scripts. Also what `drover sessions`' time column says.
import { spawnSync } from "node:child_process";
import type { IncomingMessage, ServerResponse } from "node:http";
import stringWidth from "string-width";
import { describe, expect, it } from "vitest";
import { runCliProcess, runOnTerminal } from "./cli-process.ts";
import { serversClosedAfterEach } from "./test-servers.ts";

const TOKEN = "fake-token-0123456789";
const { listen } = serversClosedAfterEach();

const NOW = Date.now();
const ago = (minutes: number) => new Date(NOW - minutes * 60_000).toISOString();

// What a fleet's lists hold: names of 12 to 20 characters, errors and answers of a sentence or two.
const AGENTS = ["daily-digest", "release-notes-writer"] as const;
const ERROR = "Anthropic API answered 529 overloaded_error after 5 attempts over 2 minutes";
const SUMMARY = "Summarised 14 new issues; three need a maintainer";
// What drover jobs shows of a failed job: shorter than its column's 60, so a pipe shows it whole.
const JOB_ERROR = "529 overloaded_error after 5 attempts";
const JOB_IDS = ["job-2026-12-07-k2x9qa", "job-2026-12-07-m4p7rt", "job-2026-12-07-z8c3vb"];

const listedJob = (i: number, status: string, extra: Record<string, unknown> = {}) => ({
	id: JOB_IDS[i],
	agent: AGENTS[i % 2],
	status,
	trigger_type: "schedule",
	schedule: "nightly-digest",
	created_at: ago(10 + i),
	started_at: ago(10 + i),
	duration_seconds: 83.2,
	summary: SUMMARY,
	error: null,
	tool_calls: { made: 5, failed: 0 },
	...extra,
});
const JOBS = [
	listedJob(0, "completed", { tool_calls: { made: 5, failed: 2 } }),
	listedJob(1, "failed", { summary: null, error: { type: "api_error", message: JOB_ERROR } }),
	listedJob(2, "approval_pending", { duration_seconds: null, summary: null }),
];

const agentView = (name: string, extra: Record<string, unknown> = {}) => ({
	name,
	source: "file",
	enabled: true,
	model: "claude-sonnet-4-5-20250929",
	fallback_models: [],
	schedules: [{ name: "nightly-digest", kind: "cron", expression: "0 3 * * *", timezone: "UTC", enabled: true, next_run: ago(-48), catch_up: false }],
	paused: null,
	running_jobs: [{ id: JOB_IDS[2], status: "running" }],
	queued_jobs: 2,
	last_job: { id: JOB_IDS[0], status: "failed", exit_reason: "max_turns", delivery: "failed" },
	...extra,
});

const INCIDENT_IDS = ["daily-_0123456789ab", "releas_0123456789cd"];
const incident = (i: number, state: string) => ({
	id: INCIDENT_IDS[i],
	agent: AGENTS[i],
	class: "rate_limit",
	state,
	error: ERROR,
	count: 12,
	first_seen_at: ago(120),
	last_seen_at: ago(5),
	alerted_at: state === "alerted" ? ago(110) : null,
	last_job_id: JOB_IDS[1],
	failing: ["nightly-digest", "manual"],
});

const run = (i: number, extra: Record<string, unknown>) => ({
	scheduled_instant: ago(60 * (i + 1)),
	claimed_at: ago(60 * (i + 1)),
	schedule: "nightly-digest",
	source: "schedule",
	dispatch: "catch_up",
	status: "failed",
	delivery_outcome: "failed",
	job_id: JOB_IDS[i],
	error: ERROR,
	skip_reason: null,
	skipped_count: null,
	skipped_from: null,
	...extra,
});

const SESSION_IDS = ["ses-job-2026-12-01-k2x9qa", "ses-job-2026-12-02-m4p7rt"];
const ref = (id: string, status: string, created_at: string) => ({ id, status, created_at });
const session = (i: number, lastCreated: string, updated: string) => ({
	session_id: SESSION_IDS[i],
	agent: AGENTS[1],
	persistent: i === 0,
	job_count: 14,
	first_job: ref(JOB_IDS[i]!.replace("12-07", `12-0${i + 1}`), "completed", ago(3000)),
	last_job: ref(JOB_IDS[i]!, "completed", lastCreated),
	updated_at: updated,
});

const usageDay = (day: string, agent: string) => ({
	day,
	agent,
	jobs: 1234,
	input_tokens: 12_345_678,
	output_tokens: 1_234_567,
	cache_creation_input_tokens: 2_345_678,
	cache_read_input_tokens: 123_456_789,
	cost_usd: 123.4567,
	priced_jobs: 1200,
});

/** A fake API answering by path, whatever the query. */
type Handler = (req: IncomingMessage, res: ServerResponse) => void;
async function fakeApi(routes: Record<string, object | Handler>): Promise<string> {
	return listen((req, res) => {
		const path = new URL(req.url!, "http://x").pathname;
		const route = routes[`${req.method} ${path}`];
		if (typeof route === "function") return void (route as Handler)(req, res);
		res.writeHead(route === undefined ? 404 : 200, { "content-type": "application/json" });
		res.end(JSON.stringify(route ?? { error: { code: "not_found", message: `no route for ${req.method} ${path}` } }));
	});
}

const LISTS = {
	"GET /v1/jobs": { jobs: JOBS, next_cursor: null },
	"GET /v1/agents": { agents: [agentView(AGENTS[0]), agentView(AGENTS[1], { paused: { at: ago(2), by: "root", reason: "maintenance of the upstream tracker until Friday" } })], next_cursor: null },
	"GET /v1/incidents": { incidents: [incident(0, "alerted"), incident(1, "detected")], next_cursor: null },
	[`GET /v1/agents/${AGENTS[1]}/runs`]: { runs: [run(0, {}), run(1, { status: "skipped", skip_reason: "overlap: the previous run was still running", skipped_count: 3, skipped_from: ago(150), job_id: null, delivery_outcome: null, error: null })], next_cursor: null },
	[`GET /v1/agents/${AGENTS[1]}/sessions`]: { sessions: [session(0, ago(3), ago(2)), session(1, ago(40), ago(39))], next_cursor: null },
	"GET /v1/usage": { since: "2026-12-06", until: "2026-12-07", days: [usageDay("2026-12-06", AGENTS[0]), usageDay("2026-12-07", AGENTS[1])], next_cursor: null },
};

/** Each list, and what of it must show whole on any terminal: its ids and statuses. */
const WHOLE: [string[], string[]][] = [
	[["jobs"], [...JOB_IDS, "completed", "failed", "approval_pending"]],
	[["agents"], ["active", "paused", "failed"]],
	// COUNT too: resolve --count names it.
	[["incidents"], [...INCIDENT_IDS, "alerted", "detected", "COUNT"]],
	[["runs", AGENTS[1]], [JOB_IDS[0]!, "failed", "skipped"]],
	[["sessions", AGENTS[1]], [...SESSION_IDS, "completed"]],
	[["usage", "--since", "2026-12-06", "--until", "2026-12-07"], ["2026-12-06", "2026-12-07", "2,468", "24,691,356"]],
];

const widest = (text: string) => Math.max(...text.trimEnd().split("\n").map((l) => stringWidth(l)));
const env = (url: string) => ({ DROVER_URL: url, DROVER_TOKEN: TOKEN, NO_COLOR: "1" });

describe("lists on an 80-column terminal and in a pipe", () => {
	it.skipIf(spawnSync("script", ["--version"]).status !== 0)("fit the terminal, cutting text and names with …, never an id or a status; a pipe gets every row whole", async () => {
		const url = await fakeApi(LISTS);
		for (const [args, whole] of WHOLE) {
			const what = `drover ${args.join(" ")}`;
			const piped = await runCliProcess(args, env(url));
			expect(piped.status, `${what}: ${piped.stderr}`).toBe(0);
			// Wider than 80 as it is, so the terminal's fitting is what is checked.
			expect(widest(piped.stdout), what).toBeGreaterThan(80);
			expect(piped.stdout, what).not.toContain("…");
			const shown = await runOnTerminal(args, env(url), 80);
			expect(shown.status, what).toBe(0);
			expect(widest(shown.stdout), `${what}:\n${shown.stdout}`).toBeLessThanOrEqual(80);
			expect(shown.stdout, what).toContain("…");
			for (const word of whole) expect(shown.stdout, `${what}: ${word}`).toMatch(new RegExp(`(^|\\s)${word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(\\s|…|$)`, "m"));
		}
	});

	it.skipIf(spawnSync("script", ["--version"]).status !== 0)("a wider terminal shows more of the text; the pipe shows it all", async () => {
		const url = await fakeApi(LISTS);
		const piped = await runCliProcess(["jobs"], env(url));
		expect(piped.stdout).toContain(`api_error: ${JOB_ERROR}`);
		expect(piped.stdout).toContain(`schedule:nightly-digest`);
		const narrow = (await runOnTerminal(["jobs"], env(url), 80)).stdout;
		const wide = (await runOnTerminal(["jobs"], env(url), 140)).stdout;
		expect(widest(wide)).toBeLessThanOrEqual(140);
		expect(widest(wide)).toBeGreaterThan(widest(narrow));
		// At 80 the trigger column is left out (`drover job <id>` has it); at 140 it is back.
		expect(narrow).not.toContain("TRIGGER");
		expect(wide).toContain("TRIGGER");
		expect(wide).toContain(AGENTS[1]);
	});
});

describe("drover sessions' time", () => {
	it("is the last job's creation, the order the list is in, not the last change", async () => {
		// The older session's last job ended later: its updated_at is the newer one, its place second.
		const url = await fakeApi({
			[`GET /v1/agents/${AGENTS[1]}/sessions`]: { sessions: [session(0, ago(30), ago(29)), session(1, ago(50), ago(2))], next_cursor: null },
		});
		const r = await runCliProcess(["sessions", AGENTS[1]], env(url));
		expect(r.status, r.stderr).toBe(0);
		const lines = r.stdout.split("\n");
		expect(lines[0]).toMatch(/^SESSION\s+AGENT\s+JOBS\s+LAST JOB\s+STATUS\s+CREATED$/);
		expect(lines[1]).toMatch(new RegExp(`^${SESSION_IDS[0]} \\*\\s.*\\s30m ago$`));
		expect(lines[2]).toMatch(new RegExp(`^${SESSION_IDS[1]}\\s.*\\s50m ago$`));
	});
});
