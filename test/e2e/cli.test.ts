// The real `drover` binary (a child process, as a person or a script runs it) against the real
// Worker bundle running locally, with jobs answered by the Messages API emulator.
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { shellWord } from "../../cli/format.ts";
import type { JobRecord } from "../../src/jobs/schema.ts";
import { SCRATCH, scratchDir } from "./cli-process.ts";

const { url, emulatorUrl, tokens } = inject("drover");
const CLI = path.resolve(import.meta.dirname, "../../cli/drover.mjs");
const ROOT = path.resolve(import.meta.dirname, "../..");

// The Worker is shared by every e2e file: everything this file creates has a unique name.
const suffix = Math.random().toString(36).slice(2, 8);
const agents = {
	ok: `cli-ok-${suffix}`,
	fail: `cli-fail-${suffix}`,
	slow: `cli-slow-${suffix}`,
	approval: `cli-appr-${suffix}`,
	long: `cli-long-${suffix}`,
};
/**
 * Each agent's model: an id of its own, so the emulator's standing answer for it (modelStep) is this
 * agent's alone, and a Claude id, which the emulator serves (another, such as gpt-4, is its 404).
 */
const models = Object.fromEntries(Object.entries(agents).map(([key, name]) => [key, `claude-test-${name}`])) as typeof agents;

interface Run {
	status: number | null;
	stdout: string;
	stderr: string;
}

interface RunOptions {
	/** null: no DROVER_TOKEN at all. */
	token?: string | null;
	url?: string;
	stdin?: string;
	env?: Record<string, string>;
	/** Run as this user (and its group of the same id). */
	uid?: number;
}

// The Worker's Env types widen NodeJS.ProcessEnv; a child's environment is plain strings.
function cliEnv(options: RunOptions): NodeJS.ProcessEnv {
	// Run as another user, it could not write in the scratch directory (the run's own, mode 0700).
	const temp: Record<string, string> = options.uid === undefined ? { TMPDIR: SCRATCH } : {};
	const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", DROVER_URL: options.url ?? url, ...temp, ...options.env };
	const token = options.token === undefined ? tokens.admin : options.token;
	if (token !== null) env.DROVER_TOKEN = token;
	return env as unknown as NodeJS.ProcessEnv;
}

/** Starts the binary; `done` resolves when it exits (killed after 45 s so a hang fails, not stalls, the run). */
function start(args: string[], options: RunOptions = {}) {
	const child = spawn(process.execPath, [CLI, ...args], { env: cliEnv(options), stdio: ["pipe", "pipe", "pipe"], ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.uid }) });
	let stdout = "";
	let stderr = "";
	child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
	child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
	child.stdin.end(options.stdin ?? "");
	const timer = setTimeout(() => child.kill("SIGKILL"), 45_000);
	const done = new Promise<Run>((resolve) =>
		child.on("close", (status) => {
			clearTimeout(timer);
			resolve({ status, stdout, stderr });
		}),
	);
	return { child, done, stdout: () => stdout, stderr: () => stderr };
}

const drover = (args: string[], options: RunOptions = {}) => start(args, options).done;

/** The command a "more:" line on stderr offers, run as a person would paste it into a shell. */
function runHint(stderr: string, options: RunOptions = {}): Promise<Run> {
	const hint = /^more: (drover .*)$/m.exec(stderr)?.[1];
	expect(hint, stderr).toBeDefined();
	const child = spawn("sh", ["-c", `drover() { ${shellWord(process.execPath)} ${shellWord(CLI)} "$@"; }\n${hint}`], { env: cliEnv(options), stdio: ["ignore", "pipe", "pipe"] });
	let stdout = "";
	let stderrOut = "";
	child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
	child.stderr.setEncoding("utf8").on("data", (d: string) => (stderrOut += d));
	return new Promise((resolve) => child.on("close", (status) => resolve({ status, stdout, stderr: stderrOut })));
}

async function api<T = unknown>(pathname: string, init: { method?: string; body?: unknown; token?: string } = {}): Promise<{ status: number; body: T }> {
	const res = await fetch(`${url}${pathname}`, {
		method: init.method ?? "GET",
		headers: { authorization: `Bearer ${init.token ?? tokens.admin}`, ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
		body: init.body === undefined ? undefined : JSON.stringify(init.body),
	});
	const text = await res.text();
	return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 20_000): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await probe();
		if (value) return value;
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 100));
	}
}

const getJob = async (id: string) => (await api<JobRecord>(`/v1/jobs/${id}`)).body;
const jobIn = (id: string, statuses: string[]) => until(`${id} in ${statuses.join("|")}`, async () => {
	const job = await getJob(id);
	return statuses.includes(job.status) ? job : null;
});

/** A standing emulator answer for one model: only this file's agents use these models. */
async function modelStep(model: string, step: unknown): Promise<void> {
	const res = await fetch(`${emulatorUrl}/__emulator/model_errors`, { method: "POST", body: JSON.stringify({ [model]: step }) });
	expect(res.status).toBe(200);
}

async function createAgent(definition: Record<string, unknown>): Promise<void> {
	const res = await api("/v1/agents", { method: "POST", body: definition });
	expect(res.status, JSON.stringify(res.body)).toBe(201);
}

const lines = (text: string) => text.split("\n").filter((l) => l.trim() !== "");
/** The job id a trigger (fork, continue) prints first on stdout; with --wait its final answer follows. */
const idOf = (r: Run) => r.stdout.split("\n")[0]!;
/** A final answer of many lines, longer than a job's summary keeps (2,000 characters). */
const LONG_ANSWER = Array.from({ length: 60 }, (_, i) => `Line ${i + 1} of the long answer, written out in full for the CLI test.`).join("\n");

beforeAll(async () => {
	await createAgent({ name: agents.ok, model: models.ok, prompt: "Say hello." });
	await modelStep(models.ok, { text: "All good from the CLI test." });
	await createAgent({ name: agents.fail, model: models.fail, prompt: "This will fail." });
	await modelStep(models.fail, { error: 400, message: "emulated bad request for the CLI test" });
	await createAgent({ name: agents.slow, model: models.slow, prompt: "Take your time." });
	await modelStep(models.slow, { delay_ms: 15_000, then: { text: "too late" } });
	await createAgent({ name: agents.long, model: models.long, prompt: "Write it all out." });
	await modelStep(models.long, { text: LONG_ANSWER });
	// The emulator's demo calls the first tool, then answers; a .local host is refused before any
	// request leaves, so nothing goes over the network.
	await createAgent({
		name: agents.approval,
		model: models.approval,
		prompt: "Fetch the page.",
		// Jobs wait for a decision side by side.
		max_concurrent: 3,
		tools: [{ type: "http_fetch", allow_hosts: ["drover-cli.local"], requires_approval: true }],
	});
	await modelStep(models.approval, { delay_ms: 100 });
});

afterAll(async () => {
	for (const model of Object.values(models)) await modelStep(model, null);
});

describe("drover trigger --wait: the exit code is the job's outcome", () => {
	let okJob = "";

	it("exits 0 for a completed job, printing its id and then its final answer on stdout, and progress on stderr", async () => {
		const r = await drover(["trigger", agents.ok, "--wait"]);
		expect(r.status, r.stderr).toBe(0);
		okJob = idOf(r);
		expect(okJob).toMatch(/^job-\d{4}-\d{2}-\d{2}-[a-z0-9]{6}$/);
		expect(r.stdout).toBe(`${okJob}\nAll good from the CLI test.\n`);
		expect(r.stderr).toMatch(new RegExp(`✓ ${okJob} completed in .* · 1 turn · \\d+ in / \\d+ out tokens · 0 tool calls`));
		// A job that has taken a turn is not pending, whatever the order the stream told things in.
		expect(r.stderr).not.toMatch(/ pending · [1-9]\d* turn/);
		expect((await getJob(okJob)).status).toBe("completed");
	});

	it("exits 1 for a failed job, with the error on stderr", async () => {
		const r = await drover(["trigger", agents.fail, "--wait", "--prompt", "fail, please"]);
		expect(r.status).toBe(1);
		const job = await getJob(idOf(r));
		expect(job.status).toBe("failed");
		expect(job.prompt).toBe("fail, please");
		// No final answer to print: the id alone.
		expect(r.stdout).toBe(`${job.id}\n`);
		expect(r.stderr).toMatch(/✗ .* failed/);
		expect(r.stderr).toContain(job.error!.message);
	});

	it("prints the whole final answer, past the 2,000 characters of the job's summary, its lines as the model wrote them", async () => {
		const r = await drover(["trigger", agents.long, "--wait"]);
		expect(r.status, r.stderr).toBe(0);
		const job = await getJob(idOf(r));
		expect(job.summary!.length).toBeLessThan(LONG_ANSWER.length);
		expect(r.stdout).toBe(`${job.id}\n${LONG_ANSWER}\n`);
		// --json is the record alone (its summary carries the answer).
		const json = await drover(["trigger", agents.long, "--wait", "--json"]);
		expect((JSON.parse(json.stdout) as JobRecord).summary).toBe(job.summary);
	});

	it("exits 2 for a cancelled job; cancel refuses without --yes when stdin is not a terminal", async () => {
		const wait = start(["trigger", agents.slow, "--wait"]);
		const id = await until("the job id on stdout", async () => /job-\S+/.exec(wait.stdout())?.[0]);
		await jobIn(id, ["running"]);
		await until("progress showing the job running", async () => wait.stderr().includes("running"));

		// A usage error: --yes is missing.
		const refused = await drover(["cancel", id]);
		expect(refused.status).toBe(2);
		expect(refused.stderr).toContain(`drover: not cancelling job ${id} without confirmation`);
		expect(refused.stderr).toContain("--yes");
		expect((await getJob(id)).status).toBe("running");

		const cancelled = await drover(["cancel", id, "--yes", "--reason", "cli test"]);
		expect(cancelled.status, cancelled.stderr).toBe(0);
		expect(cancelled.stdout).toMatch(new RegExp(`cancell(ed|ing) ${id}`));
		const r = await wait.done;
		expect(r.status).toBe(2);
		expect(r.stderr).toMatch(/■ .* cancelled/);
		expect((await getJob(id)).status).toBe("cancelled");
	});

	it("trigger --json prints the API's job; --idempotency-key returns the same job", async () => {
		const first = await drover(["trigger", agents.ok, "--json", "--idempotency-key", `cli-${suffix}`]);
		expect(first.status, first.stderr).toBe(0);
		const job = JSON.parse(first.stdout) as JobRecord;
		expect(job).toMatchObject({ agent: agents.ok, trigger_type: "manual", owner: "root" });
		expect(first.stderr).toBe("");
		const again = await drover(["trigger", agents.ok, "--idempotency-key", `cli-${suffix}`]);
		expect(again.stdout.trim()).toBe(job.id);
		// The API's 200 (not 201): the key's job, started by the first; said, so a replay is not taken for a new run.
		expect(again.stderr).toMatch(new RegExp(`^drover: ${job.id} is the job idempotency key cli-${suffix} already started \\((pending|running|completed)\\); no new job was started\n$`));
		await jobIn(job.id, ["completed"]);
	});

	describe("reading jobs", () => {
		it("jobs: an aligned table, and --json is the API's page", async () => {
			const human = await drover(["jobs", "--agent", agents.ok]);
			expect(human.status, human.stderr).toBe(0);
			const [header, ...rows] = lines(human.stdout);
			expect(header).toMatch(/^ID\s+AGENT\s+STATUS\s+TRIGGER\s+STARTED\s+DURATION\s+SUMMARY$/);
			const row = rows.find((l) => l.startsWith(okJob))!;
			// STARTED is relative: okJob started a few tests ago, over a minute before on a loaded machine.
			expect(row).toMatch(new RegExp(`^${okJob}\\s+${agents.ok}\\s+completed\\s+manual\\s+(now|\\d+[sm] ago)\\s+[\\d.]+m?s\\s+All good from the CLI test\\.$`));
			// Columns line up: every row's STATUS starts where the header's does.
			const at = header!.indexOf("STATUS");
			for (const l of rows) expect(l.slice(at)).toMatch(/^(completed|failed|running|pending)/);
			expect(human.stdout).not.toContain("\x1b[");

			const json = await drover(["jobs", "--agent", agents.ok, "--json", "--limit", "5"]);
			expect(JSON.parse(json.stdout)).toEqual((await api(`/v1/jobs?agent=${agents.ok}&limit=5`)).body);
			const failed = await drover(["jobs", "--status", "failed", "--agent", agents.fail, "--json"]);
			const page = JSON.parse(failed.stdout) as { jobs: { id: string; status: string; error: { type: string; message: string } | null }[] };
			expect(page.jobs.length).toBeGreaterThan(0);
			expect(page.jobs.every((j) => j.status === "failed")).toBe(true);
			// A failed job has no answer: its row says what ended it, as drover job <id> does.
			const shown = await drover(["jobs", "--status", "failed", "--agent", agents.fail]);
			const [one] = page.jobs;
			const error = (await getJob(one!.id)).error!;
			// The record's type and message (its request id is the record's alone).
			expect(one!.error).toEqual({ type: error.type, message: error.message });
			expect(lines(shown.stdout).find((l) => l.startsWith(one!.id))).toContain(`  ${error.type}: ${error.message}`.slice(0, 40));
		});

		it("jobs: the more: hint keeps every filter and the limit; run in a shell, it gives the next page of the same", async () => {
			const since = new Date(Date.now() - 3_600_000).toISOString();
			const filters = ["--agent", agents.ok, "--status", "completed", "--trigger", "manual", "--since", since, "--until", "2099-01-01T00:00:00Z"];
			const first = await drover(["jobs", ...filters, "--limit", "1"]);
			expect(first.status, first.stderr).toBe(0);
			expect(first.stderr).toMatch(new RegExp(`^more: drover jobs ${filters.join(" ")} --limit 1 --cursor \\S+$`, "m"));
			const next = await runHint(first.stderr);
			expect(next.status, next.stderr).toBe(0);
			const [shown] = lines(first.stdout).slice(1);
			const rows = lines(next.stdout).slice(1);
			expect(rows).toHaveLength(1);
			expect(rows[0]).toMatch(new RegExp(`^job-\\S+\\s+${agents.ok}\\s+completed\\s+manual\\s`));
			expect(rows[0]!.split(/\s+/)[0]).not.toBe(shown!.split(/\s+/)[0]);
			// A --url given on the command line is part of it too (the token never is: it is a secret).
			const elsewhere = await drover(["jobs", "--url", url, "--agent", agents.ok, "-n", "1"], { url: "http://127.0.0.1:9" });
			expect(elsewhere.status, elsewhere.stderr).toBe(0);
			expect(elsewhere.stderr).toMatch(new RegExp(`^more: drover --url ${url} jobs --agent ${agents.ok} --limit 1 --cursor \\S+$`, "m"));
			expect(elsewhere.stderr).not.toContain(tokens.admin);
			const followed = await runHint(elsewhere.stderr, { url: "http://127.0.0.1:9" });
			expect(followed.status, followed.stderr).toBe(0);
			expect(lines(followed.stdout).slice(1)).toHaveLength(1);
		});

		it("the hints quote what a shell would split or expand", () => {
			const words = ["plain-word_1.2:3", "", "two words", "it's", "$HOME", "a\"b", "*", "~x", "back\\slash", "new\nline"];
			const echoed = spawnSync("sh", ["-c", `printf '%s\\0' ${words.map(shellWord).join(" ")}`], { encoding: "utf8" });
			expect(echoed.stdout.split("\0").slice(0, -1)).toEqual(words);
			expect(shellWord("job-2026-01-01-abcdef")).toBe("job-2026-01-01-abcdef");
		});

		it("job: key fields and usage per model; --json, --yaml and --logs", async () => {
			const human = await drover(["job", okJob]);
			expect(human.status, human.stderr).toBe(0);
			expect(human.stdout).toMatch(new RegExp(`^job\\s+${okJob}$`, "m"));
			expect(human.stdout).toMatch(/^status\s+completed$/m);
			expect(human.stdout).toMatch(/^summary\s+All good from the CLI test\.$/m);
			expect(human.stdout).toMatch(new RegExp(`^MODEL\\s+INPUT\\s+OUTPUT\\s+CACHE WRITE\\s+CACHE READ\\n${models.ok}\\s+\\d+\\s+\\d+\\s+\\d+\\s+\\d+$`, "m"));

			const json = await drover(["job", okJob, "--json"]);
			expect(JSON.parse(json.stdout)).toEqual(await getJob(okJob));

			const yaml = await drover(["job", okJob, "--yaml"]);
			expect(yaml.status).toBe(0);
			const res = await fetch(`${url}/v1/jobs/${okJob}`, { headers: { authorization: `Bearer ${tokens.read}`, accept: "application/yaml" } });
			expect(yaml.stdout.trimEnd()).toBe((await res.text()).trimEnd());
			expect(yaml.stdout).toMatch(new RegExp(`^id: ${okJob}$`, "m"));

			const logs = await drover(["job", okJob, "--logs"]);
			expect(logs.stdout).toMatch(/^\[system:init\] job started with /m);
			expect(logs.stdout).toMatch(/^All good from the CLI test\.$/m);
			expect(logs.stdout).toMatch(/^\[system:result\] .*\(completed, success\)$/m);

			const both = JSON.parse((await drover(["job", okJob, "--logs", "--json"])).stdout) as { job: JobRecord; output: { type: string }[] };
			expect(both.job.id).toBe(okJob);
			expect(both.output.map((l) => l.type)).toEqual(["system", "assistant", "system"]);
		});

		it("usage: an agent's ended jobs by day, summed from their records; --json is the API's", async () => {
			const { jobs } = (await api<{ jobs: { id: string; status: string; created_at: string }[] }>(`/v1/jobs?agent=${agents.ok}&limit=200`)).body;
			const endedJobs = jobs.filter((j) => !["pending", "running", "approval_pending"].includes(j.status));
			// The UTC day most of them were created on: a run of this file across midnight splits them
			// over two days (okJob's day then held one of them, where this asked for at least two).
			const perDay = new Map<string, number>();
			for (const j of endedJobs) perDay.set(j.created_at.slice(0, 10), (perDay.get(j.created_at.slice(0, 10)) ?? 0) + 1);
			const day = [...perDay].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]![0];
			const ended = endedJobs.filter((j) => j.created_at.startsWith(day));
			const sum = { jobs: ended.length, input_tokens: 0, output_tokens: 0 };
			for (const j of ended) {
				for (const u of Object.values((await getJob(j.id)).usage.per_model)) {
					sum.input_tokens += u.input_tokens;
					sum.output_tokens += u.output_tokens;
				}
			}
			expect(sum.jobs).toBeGreaterThanOrEqual(1);

			const json = await drover(["usage", "--agent", agents.ok, "--since", day, "--until", day, "--json"]);
			expect(json.status, json.stderr).toBe(0);
			const page = JSON.parse(json.stdout) as { days: { day: string; agent: string; jobs: number; input_tokens: number; output_tokens: number }[] };
			expect(page).toEqual((await api(`/v1/usage?agent=${agents.ok}&since=${day}&until=${day}`)).body);
			expect(page.days).toEqual([expect.objectContaining({ day, agent: agents.ok, ...sum })]);

			const human = await drover(["usage", "--agent", agents.ok, "--since", day, "--until", day]);
			expect(human.status, human.stderr).toBe(0);
			const [header, row] = lines(human.stdout);
			expect(header).toMatch(/^DAY\s+AGENT\s+JOBS\s+INPUT\s+OUTPUT\s+CACHE WRITE\s+CACHE READ\s+COST$/);
			const n = (v: number) => v.toLocaleString("en-US");
			expect(row).toMatch(new RegExp(`^${day}\\s+${agents.ok}\\s+${sum.jobs}\\s+${n(sum.input_tokens)}\\s+${n(sum.output_tokens)}\\s+[\\d,]+\\s+[\\d,]+\\s+(\\$[\\d.]+|-)`));
			expect(human.stderr).toContain(`${day} (UTC)`);

			// --by-day: the same day as group=day sums it, the agent's alone here.
			const byDay = await drover(["usage", "--by-day", "--agent", agents.ok, "--since", day, "--until", day]);
			expect(byDay.status, byDay.stderr).toBe(0);
			const [dayHeader, dayRow, ...more] = lines(byDay.stdout);
			expect(dayHeader).toMatch(/^DAY\s+AGENTS\s+JOBS\s+INPUT\s+OUTPUT\s+CACHE WRITE\s+CACHE READ\s+COST$/);
			expect(dayRow).toMatch(new RegExp(`^${day}\\s+1\\s+${sum.jobs}\\s+${n(sum.input_tokens)}\\s+${n(sum.output_tokens)}\\s+[\\d,]+\\s+[\\d,]+\\s+(\\$[\\d.]+|-)`));
			expect(more).toEqual([]);
			const dayJson = await drover(["usage", "--by-day", "--agent", agents.ok, "--since", day, "--until", day, "--json"]);
			expect(dayJson.status, dayJson.stderr).toBe(0);
			expect(JSON.parse(dayJson.stdout)).toEqual((await api(`/v1/usage?agent=${agents.ok}&since=${day}&until=${day}&group=day`)).body);
		});

		it("logs: an agent's recent jobs' last lines, each under a mark naming the job, or --job's; --json gives the raw JSONL", async () => {
			const output = lines(await (await fetch(`${url}/v1/jobs/${okJob}/output`, { headers: { authorization: `Bearer ${tokens.read}` } })).text());
			const byJob = await drover(["logs", "--job", okJob, "--json"]);
			expect(lines(byJob.stdout)).toEqual(output);
			const last = await drover(["logs", "--job", okJob, "--lines", "1", "--json"]);
			expect(lines(last.stdout)).toEqual(output.slice(-1));
			// --from: lines by their numbers, --lines of them; with --follow, from there to the end.
			expect(output.length).toBeGreaterThanOrEqual(3);
			const part = await drover(["logs", "--job", okJob, "--from", "2", "--lines", "2", "--json"]);
			expect([part.status, lines(part.stdout)]).toEqual([0, output.slice(1, 3)]);
			const followed = await drover(["logs", "--job", okJob, "--from", "2", "--follow", "--json"]);
			expect([followed.status, lines(followed.stdout)]).toEqual([0, output.slice(1)]);
			// Past the last line: said in --from's terms (the API's `after` is one less), naming the last line.
			const beyond = output.length + 2;
			for (const follow of [[], ["--follow"]]) {
				const past = await drover(["logs", "--job", okJob, "--from", String(beyond), ...follow]);
				expect([past.status, past.stdout, past.stderr], follow.join("")).toEqual([1, "", expect.stringContaining(`drover: --from ${beyond} is past job ${okJob}'s last line so far (${output.length}): give a line up to ${output.length + 1}`)]);
			}
			// Just after it: nothing to print, and why.
			const end = await drover(["logs", "--job", okJob, "--from", String(output.length + 1)]);
			expect([end.status, end.stdout, end.stderr]).toEqual([0, "", expect.stringContaining(`no lines from line ${output.length + 1}: job ${okJob}'s last line is ${output.length} so far`)]);
			for (const args of [[agents.ok, "--from", "2"], ["--job", okJob, "--from", "2", "--lines", "1", "--follow"], ["--job", okJob, "--from", "0"]]) {
				expect((await drover(["logs", ...args])).status, args.join(" ")).toBe(2);
			}

			// Two more completed jobs: the agent's view reaches back across them, oldest first.
			const more = [idOf(await drover(["trigger", agents.ok, "--wait"])), idOf(await drover(["trigger", agents.ok, "--wait"]))];
			const perJob = lines((await drover(["logs", "--job", more[1]!])).stdout);
			const byAgent = await drover(["logs", agents.ok, "--lines", String(perJob.length + 2)]);
			expect(byAgent.status, byAgent.stderr).toBe(0);
			expect(lines(byAgent.stdout)).toEqual([
				`==> ${more[0]} (manual, completed) <==`,
				...lines((await drover(["logs", "--job", more[0]!, "--lines", "2"])).stdout),
				`==> ${more[1]} (manual, completed) <==`,
				...perJob,
			]);
			const raw = await drover(["logs", agents.ok, "--lines", String(perJob.length + 2), "--json"]);
			expect(lines(raw.stdout)).toEqual([...lines((await drover(["logs", "--job", more[0]!, "--lines", "2", "--json"])).stdout), ...lines((await drover(["logs", "--job", more[1]!, "--json"])).stdout)]);

			const none = await drover(["logs", `cli-none-${suffix}`]);
			expect(none.status).toBe(4);
			expect(none.stderr).toContain(`no agent named cli-none-${suffix}`);
			// An agent yet to run is not an error; once deleted with none, it says so, not "yet".
			const fresh = `cli-fresh-${suffix}`;
			await createAgent({ name: fresh, prompt: "Not yet." });
			const idle = await drover(["logs", fresh]);
			expect(idle.status, idle.stderr).toBe(0);
			expect(idle.stdout).toBe("");
			expect(idle.stderr).toContain(`no jobs yet for agent ${fresh}: drover trigger ${fresh} starts one`);
			expect((await api(`/v1/agents/${fresh}`, { method: "DELETE" })).status).toBe(200);
			const gone = await drover(["logs", fresh]);
			expect(gone.status, gone.stderr).toBe(0);
			expect(gone.stderr).toContain(`no jobs for agent ${fresh}, which was deleted`);
		});

		it("logs --follow of a job that has ended prints it all and exits with its outcome", async () => {
			const ok = await drover(["logs", "--job", okJob, "--follow"]);
			expect(ok.status).toBe(0);
			expect(ok.stdout).toContain("All good from the CLI test.");
			const failedJob = (await api<{ jobs: { id: string }[] }>(`/v1/agents/${agents.fail}/jobs?limit=1`)).body.jobs[0]!.id;
			const failed = await drover(["logs", "--job", failedJob, "--follow"]);
			expect(failed.status).toBe(1);
			expect(failed.stdout).toMatch(/^error.*: /m);
			const n = await drover(["logs", "--job", failedJob, "--follow", "--lines", "1", "--json"]);
			expect(lines(n.stdout)).toHaveLength(1);
		});

		it("logs <agent> --follow goes on to the jobs the agent starts after it, each whole, until interrupted", async () => {
			const follow = start(["logs", agents.ok, "--follow", "--lines", "1"]);
			await until("the recent line", async () => follow.stdout().includes("==> job-"));
			const next = (await drover(["trigger", agents.ok, "--prompt", "once more"])).stdout.trim();
			await until(`${next}'s end`, async () => follow.stdout().includes(`==> ${next} completed <==`));
			follow.child.kill("SIGINT");
			await follow.done;
			const shown = lines(follow.stdout());
			// Its mark says its status only if it had ended when the agent's jobs were next listed.
			const from = shown.findIndex((l) => l === `==> ${next} (manual) <==` || l === `==> ${next} (manual, completed) <==`);
			expect(from, follow.stdout()).toBeGreaterThan(0);
			// Every line of the new job, in order, between its two marks.
			expect(shown.slice(from + 1, shown.indexOf(`==> ${next} completed <==`))).toEqual(lines((await drover(["logs", "--job", next, "--lines", "1000"])).stdout));
		});

		it("fork and continue start new jobs from a finished one", async () => {
			const fork = await drover(["fork", okJob, "--prompt", "Again, differently.", "--wait"]);
			expect(fork.status, fork.stderr).toBe(0);
			const forked = await getJob(idOf(fork));
			expect(forked).toMatchObject({ trigger_type: "fork", forked_from: okJob, status: "completed", prompt: "Again, differently." });

			const cont = await drover(["continue", okJob, "--prompt", "And then?", "--json"]);
			expect(cont.status, cont.stderr).toBe(0);
			const next = JSON.parse(cont.stdout) as JobRecord;
			expect(next).toMatchObject({ trigger_type: "continue", prompt: "And then?" });
			const followed = await drover(["logs", "--job", next.id, "--follow"]);
			expect(followed.status).toBe(0);
			expect(followed.stdout).toContain("All good from the CLI test.");
		});

		it("runs: the agent's ledger as a table, and --json is the API's page", async () => {
			const human = await drover(["runs", agents.ok, "--limit", "3"]);
			expect(human.status, human.stderr).toBe(0);
			const [header, ...rows] = lines(human.stdout);
			expect(header).toMatch(/^INSTANT\s+SCHEDULE\s+DISPATCH\s+STATUS\s+DELIVERY\s+JOB\s+REASON$/);
			expect(rows).toHaveLength(3);
			expect(rows.join("\n")).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z \((now|\d+s ago)\)\s+manual\s+manual\s+completed\s+-\s+job-/m);
			const json = await drover(["runs", agents.ok, "--json"]);
			expect(JSON.parse(json.stdout)).toEqual((await api(`/v1/agents/${agents.ok}/runs?limit=20`)).body);

			// The hint keeps the agent and the limit: the next page has 1 row, not the default 20.
			const one = await drover(["runs", agents.ok, "-n", "1"]);
			expect(one.stderr).toMatch(new RegExp(`^more: drover runs ${agents.ok} --limit 1 --cursor \\S+$`, "m"));
			const next = await runHint(one.stderr);
			expect(next.status, next.stderr).toBe(0);
			expect(lines(next.stdout).slice(1)).toHaveLength(1);
			expect(lines(next.stdout)[1]).not.toBe(lines(one.stdout)[1]);
		});

		it("incidents lists the failed agent's incident; incidents close closes it", async () => {
			const list = await drover(["incidents", "--agent", agents.fail, "--json"]);
			const page = JSON.parse(list.stdout) as { incidents: { id: string; state: string; error: string }[] };
			expect(page).toEqual((await api(`/v1/incidents?agent=${agents.fail}`)).body);
			const incident = page.incidents[0]!;
			expect(incident.error).toContain("emulated bad request");

			const human = await drover(["incidents", "--agent", agents.fail]);
			expect(lines(human.stdout)[0]).toMatch(/^ID\s+AGENT\s+CLASS\s+STATE\s+COUNT\s+FAILING\s+ALERTED\s+LAST SEEN\s+LAST JOB\s+ERROR$/);
			// Open, it names what it waits on to run clean: the failed run was a manual trigger.
			expect(lines(human.stdout).find((l) => l.startsWith(incident.id))).toMatch(/\s(detected|alerted)\s+\d+\s+manual\s/);

			const closed = await drover(["incidents", "close", incident.id]);
			expect(closed.status, closed.stderr).toBe(0);
			expect(closed.stdout).toMatch(new RegExp(`^closed\\s+${incident.id}$`, "m"));
			const after = JSON.parse((await drover(["incidents", "--state", "closed", "--agent", agents.fail, "--json"])).stdout) as { incidents: { id: string; closed_by: string }[] };
			expect(after.incidents.map((i) => i.id)).toContain(incident.id);
			expect(after.incidents.find((i) => i.id === incident.id)!.closed_by).toBe("root");
		});

		it("incidents: the more: hint keeps --state, --agent and --limit; close --json prints the API's JSON", async () => {
			// Two more errors of the failing agent: two more incidents, open, beside the closed one.
			for (const message of ["emulated failure two", "emulated failure three"]) {
				await modelStep(models.fail, { error: 400, message });
				expect((await drover(["trigger", agents.fail, "--wait"])).status).toBe(1);
			}
			await modelStep(models.fail, { error: 400, message: "emulated bad request for the CLI test" });
			const incidentsOf = async () => (await api<{ incidents: { id: string; state: string }[] }>(`/v1/incidents?agent=${agents.fail}`)).body.incidents;
			const open = await until("two open incidents", async () => {
				const found = (await incidentsOf()).filter((i) => i.state !== "closed");
				return found.length === 2 && found[0]!.state === found[1]!.state ? found : null;
			});
			const state = open[0]!.state;

			const first = await drover(["incidents", "--state", state, "--agent", agents.fail, "--limit", "1"]);
			expect(first.status, first.stderr).toBe(0);
			expect(first.stderr).toMatch(new RegExp(`^more: drover incidents --state ${state} --agent ${agents.fail} --limit 1 --cursor \\S+$`, "m"));
			const next = await runHint(first.stderr);
			expect(next.status, next.stderr).toBe(0);
			const ids = [first, next].map((r) => lines(r.stdout).slice(1).map((l) => l.split(/\s+/)[0]));
			expect(ids.flat().sort()).toEqual(open.map((i) => i.id).sort());

			// The subcommand's own --json, not the list's.
			const closed = await drover(["incidents", "close", open[0]!.id, "--json"]);
			expect(closed.status, closed.stderr).toBe(0);
			expect(JSON.parse(closed.stdout)).toMatchObject({ id: open[0]!.id, state: "closed", closed_by: "root" });
			// The list's filters mean nothing to close: said so, not ignored.
			const stray = await drover(["incidents", "close", open[1]!.id, "--state", "closed"]);
			expect(stray.status).toBe(2);
			expect(stray.stderr).toMatch(/^drover: option '-s, --state <state>' does not apply to incidents close$/m);
			expect((await incidentsOf()).find((i) => i.id === open[1]!.id)!.state).toBe(state);
		});
	});
});

describe("approvals", () => {
	it("approve (with edited input) and deny the tool call a job waits on", async () => {
		const approveId = (await drover(["trigger", agents.approval])).stdout.trim();
		const denyId = (await drover(["trigger", agents.approval])).stdout.trim();
		for (const id of [approveId, denyId]) await jobIn(id, ["approval_pending"]);

		const shown = await drover(["job", approveId]);
		const said = new RegExp(`^approval\\s+http_fetch .*drover approve\\|deny ${approveId} --call (\\S+)\\)$`, "m").exec(shown.stdout);
		expect(said, shown.stdout).not.toBeNull();

		const bad = await drover(["approve", approveId, "--call", said![1]!, "--input", "[1]"]);
		expect(bad.status).toBe(2);
		const approved = await drover(["approve", approveId, "--call", said![1]!, "--input", JSON.stringify({ url: "https://drover-cli.local/edited", method: "GET" })]);
		expect(approved.status, approved.stderr).toBe(0);
		expect(approved.stdout).toMatch(new RegExp(`^approved the tool call ${said![1]!} of ${approveId};`));
		const denied = await drover(["deny", denyId, "--json"]);
		expect(denied.status, denied.stderr).toBe(0);
		expect(JSON.parse(denied.stdout)).toMatchObject({ id: denyId });

		await jobIn(approveId, ["completed"]);
		await jobIn(denyId, ["completed"]);
		const approvedLog = (await drover(["logs", "--job", approveId])).stdout;
		expect(approvedLog).toMatch(/^→ http_fetch \{"url":"https:\/\/drover-cli\.local\/","method":"GET"\}$/m);
		// The input that was run, edited, beside the model's above.
		expect(approvedLog).toMatch(/^\[system:approval_decided\] http_fetch approved by root with edited input \{"url":"https:\/\/drover-cli\.local\/edited","method":"GET"\}$/m);
		expect(approvedLog).toMatch(/^← error .*drover-cli\.local/m);
		const again = await drover(["approve", approveId]);
		expect(again.status).toBe(1);
		expect(again.stderr).toMatch(/^drover: /);
	});
});

describe("logs --follow through a connection cut mid-stream", () => {
	let proxy: Server | null = null;
	afterAll(() => {
		proxy?.closeAllConnections();
		proxy?.close();
	});

	/**
	 * A pass-through HTTP proxy in front of the Worker that breaks the first event stream after
	 * `cutAfter` line events, the way a flaky network or a load balancer's idle timeout would.
	 */
	async function cuttingProxy(cutAfter: number) {
		const streams: (string | null)[] = [];
		proxy = createServer((req, res) => {
			void (async () => {
				const isStream = /\/stream$/.test(req.url ?? "");
				const connection = isStream ? streams.push((req.headers["last-event-id"] as string | undefined) ?? null) - 1 : -1;
				const headers: Record<string, string> = {};
				for (const name of ["authorization", "accept", "last-event-id", "content-type", "idempotency-key"]) {
					const v = req.headers[name];
					if (typeof v === "string") headers[name] = v;
				}
				const upstream = await fetch(`${url}${req.url}`, { method: req.method, headers });
				const out: Record<string, string> = {};
				upstream.headers.forEach((v, k) => {
					if (!["content-length", "content-encoding", "transfer-encoding", "connection"].includes(k)) out[k] = v;
				});
				res.writeHead(upstream.status, out);
				res.flushHeaders();
				const decoder = new TextDecoder();
				let buffer = "";
				let sent = 0;
				for await (const chunk of upstream.body as unknown as AsyncIterable<Uint8Array>) {
					if (connection !== 0) {
						res.write(chunk);
						continue;
					}
					buffer += decoder.decode(chunk, { stream: true });
					for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
						const frame = buffer.slice(0, end + 2);
						buffer = buffer.slice(end + 2);
						res.write(frame);
						if (/^event: line$/m.test(frame) && ++sent >= cutAfter) {
							await new Promise((r) => setTimeout(r, 50));
							res.socket?.destroy();
							return;
						}
					}
				}
				res.end();
			})().catch(() => res.socket?.destroy());
		});
		proxy.listen(0, "127.0.0.1");
		await once(proxy, "listening");
		return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, streams };
	}

	it("resumes with Last-Event-ID: no line repeated, none lost, across a pause for approval", async () => {
		const id = (await drover(["trigger", agents.approval])).stdout.trim();
		const via = await cuttingProxy(2);
		const follow = start(["logs", "--job", id, "--follow", "--json"], { url: via.url });
		// Cut after line 2; the reconnect picks up from there and sits through the approval wait.
		await until("the resumed stream", async () => via.streams.length >= 2);
		await jobIn(id, ["approval_pending"]);
		expect((await drover(["approve", id])).status).toBe(0);
		const r = await follow.done;
		expect(r.status, r.stderr).toBe(0);
		expect(via.streams).toEqual([null, "2"]);
		expect(r.stderr).toMatch(/resuming after line 2/);
		const output = lines(await (await fetch(`${url}/v1/jobs/${id}/output`, { headers: { authorization: `Bearer ${tokens.read}` } })).text());
		expect(output.length).toBeGreaterThan(4);
		expect(lines(r.stdout).map((l) => JSON.parse(l) as unknown)).toEqual(output.map((l) => JSON.parse(l) as unknown));
	});
});

describe("agents: status, pause, resume, notepad", () => {
	it("status <agent> shows the state; pause and resume change it", async () => {
		// Its own last job, not one an earlier test of the file left.
		const ran = await drover(["trigger", agents.ok, "--wait"]);
		expect(ran.status, ran.stderr).toBe(0);
		const last = idOf(ran);
		const paused = await drover(["pause", agents.ok, "--reason", "maintenance window"]);
		expect(paused.status, paused.stderr).toBe(0);
		expect(paused.stdout.trim()).toBe(`paused ${agents.ok}: maintenance window`);
		const human = await drover(["status", agents.ok]);
		// The pause names the token that made it: the CLI runs with the admin token ("root").
		expect(human.stdout).toMatch(/^state\s+paused (now|\d+s ago) by root: maintenance window$/m);
		expect(human.stdout).toMatch(new RegExp(`^last job\\s+${last} completed`, "m"));
		expect(human.stdout).toContain("no schedules");
		const json = await drover(["status", agents.ok, "--json"]);
		expect(JSON.parse(json.stdout)).toEqual((await api(`/v1/agents/${agents.ok}`)).body);

		const resumed = await drover(["resume", agents.ok, "--json"]);
		expect(JSON.parse(resumed.stdout)).toMatchObject({ name: agents.ok, paused: null });
		expect((await drover(["status", agents.ok])).stdout).toMatch(/^state\s+active$/m);
	});

	it("agents lists every agent with its source, model, next run and state; status names the paused ones", async () => {
		expect((await drover(["pause", agents.ok, "--reason", "agents list test"])).status).toBe(0);
		try {
			const r = await drover(["agents"], { token: tokens.read });
			expect(r.status, r.stderr).toBe(0);
			expect(r.stdout).toMatch(/^NAME\s+SOURCE\s+MODEL\s+NEXT RUN\s+JOBS\s+LAST\s+STATE$/m);
			// LAST: the newest job that ended, by status (and why, for one that did not succeed).
			expect(r.stdout).toMatch(new RegExp(`^${agents.ok}\\s+API\\s+${models.ok}\\s+on trigger only\\s+-\\s+(?:-|completed|failed \\(\\w+\\)|cancelled \\(\\w+\\))\\s+paused (now|\\d+s ago) by root: agents list test$`, "m"));
			expect(r.stdout).toMatch(new RegExp(`^${agents.fail}\\s+API\\s+${models.fail}\\s+on trigger only\\s+-\\s+(?:-|completed|failed \\(\\w+\\)|cancelled \\(\\w+\\))\\s+active$`, "m"));
			expect(r.stdout).toMatch(/^triage\s+fleet\.yaml\s+.*paused (now|\d+[smhd] ago) automatically: secret TICKETS_WEBHOOK_URL/m);
			expect(r.stdout).toMatch(/^daily-digest\s+fleet\.yaml\s+\S+\s+\d{4}-\d{2}-\d{2} \d{2}:00:00Z \((?:in \d+[smhd]|now|\d+s ago), (?:weekday-morning|weekly-recap)\)\s/m);
			// --json: the API's agents, every one of them.
			const json = JSON.parse((await drover(["agents", "--json"])).stdout) as { agents: { name: string }[]; next_cursor: null };
			const fromApi = (await api<{ agents: { name: string }[] }>("/v1/agents?limit=200")).body;
			expect(json.next_cursor).toBeNull();
			expect(json.agents.map((a) => a.name)).toEqual(fromApi.agents.map((a) => a.name));
			expect(json.agents.find((a) => a.name === agents.ok)).toMatchObject({ source: "api", paused: { by: "root", reason: "agents list test" } });
			// --prefix: only the agents whose name starts with it, as the API's prefix lists them.
			const tri = await drover(["agents", "--prefix", "tri"], { token: tokens.read });
			expect(tri.status, tri.stderr).toBe(0);
			expect(tri.stdout.split("\n").filter((l) => l && !l.startsWith("NAME")).map((l) => l.split(/\s+/)[0])).toEqual(["triage"]);
			const none = await drover(["agents", "--prefix", "no-such-prefix"], { token: tokens.read });
			expect(none.status, none.stderr).toBe(0);
			expect(none.stdout).toBe("no agents whose name starts with no-such-prefix\n");
			const bad = await drover(["agents", "--prefix", "Tri"], { token: tokens.read });
			expect(bad.status).not.toBe(0);
			expect(bad.stderr).toContain("prefix: must be an agent name");

			const status = await drover(["status"], { token: tokens.read });
			expect(status.status, status.stderr).toBe(0);
			expect(status.stdout).toMatch(/^paused\s+\S+: paused /m);
			expect(status.stdout).toMatch(new RegExp(`^(paused)?\\s+${agents.ok}: paused (now|\\d+s ago) by root: agents list test$`, "m"));
			expect(status.stdout).toMatch(/^(paused)?\s+triage: paused (now|\d+[smhd] ago) automatically: secret TICKETS_WEBHOOK_URL/m);
			expect(status.stdout).not.toMatch(new RegExp(`${agents.fail}: paused`));
		} finally {
			expect((await drover(["resume", agents.ok])).status).toBe(0);
		}
	});

	it("status <agent> of an agent drover paused itself gives the reason once", async () => {
		const r = await drover(["status", "triage"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toMatch(/^state\s+paused (now|\d+[smhd] ago) automatically: secret TICKETS_WEBHOOK_URL .*is not set/m);
		expect(r.stdout).not.toContain("auto:");
	});

	it("status <agent> lists schedules with their next run", async () => {
		const r = await drover(["status", "daily-digest"]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toMatch(/^SCHEDULE\s+WHEN\s+TIMEZONE\s+CATCH-UP\s+NEXT RUN\s+LAST RUN$/m);
		// Its last run: none yet, or its newest slot's and what became of it.
		expect(r.stdout).toMatch(/^weekday-morning\s+0 9 \* \* 1-5\s+Europe\/Berlin\s+yes\s+\d{4}-\d{2}-\d{2} \d{2}:00:00Z \((?:in \d+[smhd]|now|\d+s ago)\)\s+(?:-|\d{4}-\d{2}-\d{2} \d{2}:00:00Z [a-z]+.*)$/m);
	});

	it("notepad set, get, list and delete", async () => {
		expect((await drover(["notepad", agents.ok, "set", "tone", "terse, please"])).status).toBe(0);
		const value = await drover(["notepad", agents.ok, "get", "tone"]);
		expect(value.stdout).toBe("terse, please\n");
		const fromStdin = await drover(["notepad", agents.ok, "set", "multi", "-"], { stdin: "line one\nline two\n" });
		expect(fromStdin.status, fromStdin.stderr).toBe(0);
		const list = await drover(["notepad", agents.ok, "list", "--json"]);
		expect(JSON.parse(list.stdout)).toEqual({ tone: "terse, please", multi: "line one\nline two" });
		expect(JSON.parse(list.stdout)).toEqual((await api(`/v1/agents/${agents.ok}/notepad`)).body);
		expect((await drover(["notepad", agents.ok])).stdout).toMatch(/^KEY\s+VALUE\nmulti\s+line one line two\ntone\s+terse, please$/m);
		expect((await drover(["notepad", agents.ok, "delete", "tone"])).status).toBe(0);
		expect((await drover(["notepad", agents.ok, "delete", "multi"])).status).toBe(0);
		const gone = await drover(["notepad", agents.ok, "get", "tone"]);
		expect(gone.status).toBe(4);
		expect(gone.stderr).toContain(`drover: no notepad key "tone" for agent ${agents.ok}`);
		expect((await drover(["notepad", agents.ok, "frobnicate"])).status).toBe(2);
		expect((await drover(["notepad", agents.ok, "set", "only-key"])).status).toBe(2);
	});

	it("notepad set warns on stderr when the value was stored redacted, not as sent", async () => {
		const secret = `sk-ant-api03-${"A".repeat(48)}`;
		const r = await drover(["notepad", agents.ok, "set", "creds", `token ${secret} end`]);
		expect(r.status, r.stderr).toBe(0);
		expect(r.stdout).toMatch(new RegExp(`^set creds on ${agents.ok}'s notepad`));
		expect(r.stderr).toBe("drover: warning: creds was stored redacted (it looked like a secret), not as sent: token sk-ant-api03-[REDACTED] end\n");
		expect(r.stderr).not.toContain(secret);
		expect((await drover(["notepad", agents.ok, "get", "creds"])).stdout).toBe("token sk-ant-api03-[REDACTED] end\n");
		// A value stored as sent: no warning.
		const plain = await drover(["notepad", agents.ok, "set", "creds", "nothing secret"]);
		expect(plain.status, plain.stderr).toBe(0);
		expect(plain.stderr).toBe("");
		expect((await drover(["notepad", agents.ok, "delete", "creds"])).status).toBe(0);
	});

	it("notepad: an empty key (or . or ..) is a usage error, found before any request", async () => {
		for (const [args, message] of [
			[["notepad", agents.ok, "set", "", "v"], "command-argument value '' is invalid for argument 'key'. must not be empty"],
			[["notepad", agents.ok, "get", ""], "command-argument value '' is invalid for argument 'key'. must not be empty"],
			[["notepad", agents.ok, "delete", ".."], `command-argument value '..' is invalid for argument 'key'. cannot be "..": a URL path cannot carry it`],
			[["notepad", "", "list"], "command-argument value '' is invalid for argument 'agent'. must not be empty"],
		] as const) {
			// Not even a token is needed: nothing is sent.
			const r = await drover([...args], { token: null });
			expect(r.status, `drover ${args.join(" ")}`).toBe(2);
			expect(r.stderr).toContain(`drover: ${message}\n`);
			expect(r.stderr).not.toContain("no route");
		}
	});
});

describe("defining agents: apply and delete", () => {
	const a = `cli-def-a-${suffix}`;
	const b = `cli-def-b-${suffix}`;
	const dir = scratchDir("apply-");
	const file = (name: string, text: string) => {
		const at = path.join(dir, name);
		writeFileSync(at, text);
		return at;
	};
	const definitionOf = async (name: string) => (await api<{ definition: { prompt?: string; max_turns?: number } }>(`/v1/agents/${name}`)).body.definition;

	it("apply creates the agents a file lists, leaves them unchanged when applied again, and replaces one read from stdin", async () => {
		const fleet = file("fleet.yaml", `version: 1\nagents:\n  - name: ${a}\n    model: ${models.ok}\n    prompt: First.\n  - name: ${b}\n    model: ${models.ok}\n    prompt: Second.\n`);
		const created = await drover(["apply", fleet]);
		expect(created.stderr).toBe("");
		expect(created.status).toBe(0);
		expect(lines(created.stdout)).toEqual([expect.stringMatching(new RegExp(`^created ${a} \\(revision \\S+\\)$`)), expect.stringMatching(new RegExp(`^created ${b} \\(revision \\S+\\)$`))]);
		expect((await definitionOf(b)).prompt).toBe("Second.");

		const again = await drover(["apply", fleet]);
		expect(again.status).toBe(0);
		expect(lines(again.stdout).map((l) => l.split(" ")[0])).toEqual(["unchanged", "unchanged"]);

		const revision = /revision (\S+)\)/.exec(lines(created.stdout)[0]!)![1];
		const json = JSON.stringify({ name: a, model: models.ok, prompt: "First, changed.", max_turns: 3 });
		const updated = await drover(["apply", "-"], { stdin: json });
		expect(updated.status).toBe(0);
		expect(updated.stdout).toMatch(new RegExp(`^updated ${a} \\(revision ${revision} → (?!${revision})\\S+\\)\n$`));
		expect(await definitionOf(a)).toMatchObject({ prompt: "First, changed.", max_turns: 3 });

		// What definition prints applies back as it is.
		const shown = await drover(["definition", a]);
		expect(shown.status).toBe(0);
		expect(shown.stdout).toMatch(/^# defined through the API; revision \S+\n/);
		expect(shown.stdout).toContain("prompt: First, changed.\n");
		const back = await drover(["apply", "-"], { stdin: shown.stdout });
		expect(back.stdout).toMatch(new RegExp(`^unchanged ${a} `));
		expect(JSON.parse((await drover(["definition", a, "--json"])).stdout)).toEqual(await definitionOf(a));

		const asJson = await drover(["apply", "--json", "-"], { stdin: `- ${json}\n` });
		expect(asJson.status).toBe(0);
		const answers = JSON.parse(asJson.stdout) as { name: string; definition_revision: string; definition: { prompt: string } }[];
		expect(answers).toEqual([expect.objectContaining({ name: a, definition: expect.objectContaining({ prompt: "First, changed." }) })]);
	});

	it("apply --dry-run says what apply would do, with the YAML lines a change changes, and changes nothing", async () => {
		const c = `cli-plan-c-${suffix}`;
		const d = `cli-plan-d-${suffix}`;
		expect((await drover(["apply", file("plan-1.yaml", `name: ${c}\nmodel: ${models.ok}\nprompt: First.\nmax_turns: 3\n`)])).status).toBe(0);
		const r1 = (await api<{ definition_revision: string }>(`/v1/agents/${c}`)).body.definition_revision;
		const both = file("plan-2.yaml", `- name: ${c}\n  model: ${models.ok}\n  prompt: First, planned.\n  max_turns: 3\n- name: ${d}\n  model: ${models.ok}\n  prompt: New.\n`);
		const planned = await drover(["apply", "--dry-run", both]);
		expect(planned.status, planned.stderr).toBe(0);
		const out = lines(planned.stdout);
		const r2 = new RegExp(`^would update ${c} \\(revision ${r1} → (\\S+)\\)$`).exec(out[0]!)?.[1];
		expect(r2, planned.stdout).toBeDefined();
		expect(planned.stdout).toContain("\n  -prompt: First.\n  +prompt: First, planned.\n");
		expect(out[1]).toMatch(/^ {2}@@ -\d+,\d+ \+\d+,\d+ @@$/);
		const r3 = new RegExp(`^would create ${d} \\(revision (\\S+)\\)$`).exec(out.at(-1)!)?.[1];
		expect(r3, planned.stdout).toBeDefined();
		// Nothing changed: c as it was, d not there.
		expect((await definitionOf(c)).prompt).toBe("First.");
		expect((await api(`/v1/agents/${d}`)).status).toBe(404);
		// The real apply does what the plan said, to the revision.
		const applied = await drover(["apply", both]);
		expect(lines(applied.stdout)).toEqual([`updated ${c} (revision ${r1} → ${r2})`, `created ${d} (revision ${r3})`]);
		const again = await drover(["apply", "--dry-run", "--json", both]);
		expect(again.status).toBe(0);
		expect((JSON.parse(again.stdout) as { name: string; action: string }[]).map((a) => [a.name, a.action])).toEqual([[c, "unchanged"], [d, "unchanged"]]);
		// A refusal is said with its agent, as apply says it, nothing changed.
		const refused = await drover(["apply", "--dry-run", file("plan-3.yaml", `name: ${c}\nmodel: ${models.ok}\nprompt: First.\nmax_turns: -1\n`)]);
		expect(refused.status).toBe(1);
		expect(refused.stderr).toMatch(new RegExp(`^drover: ${c}: invalid body: max_turns: `));
		expect((await definitionOf(c)).max_turns).toBe(3);
	});

	it("apply --dry-run says each schedule's next run, in UTC and on its timezone's clock, so a translated schedule is checked before it is applied", async () => {
		const e = `cli-plan-e-${suffix}`;
		const text = `name: ${e}\nmodel: ${models.ok}\nprompt: Go.\nschedules:\n  morning: { cron: "0 9 * * *", timezone: Europe/Berlin }\n  often: { interval: 15m }\n  off: { interval: 1h, enabled: false }\n`;
		const planned = await drover(["apply", "--dry-run", file("plan-4.yaml", text)]);
		expect(planned.status, planned.stderr).toBe(0);
		const out = lines(planned.stdout);
		expect(out[0]).toMatch(new RegExp(`^would create ${e} `));
		// 09:00 in Berlin is 08:00Z in winter, 07:00Z in summer.
		expect(out[1]).toMatch(/^ {2}schedule morning: next run \d{4}-\d\d-\d\d 0[78]:00:00Z \(in [^)]+\), \d{4}-\d\d-\d\d 09:00 Europe\/Berlin$/);
		expect(out[2]).toMatch(/^ {2}schedule often: next run \d{4}-\d\d-\d\d \d\d:(00|15|30|45):00Z \(in [^)]+\)$/);
		expect(out[3]).toBe("  schedule off: disabled");
		expect(out).toHaveLength(4);
		expect((await api(`/v1/agents/${e}`)).status).toBe(404);
		// A disabled agent's schedules run at no time: said so, not as a cron that never fires.
		const off = await drover(["apply", "--dry-run", file("plan-5.yaml", `name: ${e}\nmodel: ${models.ok}\nprompt: Go.\nenabled: false\nschedules:\n  morning: { cron: "0 9 * * *" }\n`)]);
		expect(off.status, off.stderr).toBe(0);
		expect(lines(off.stdout).slice(1)).toEqual(["  schedule morning: disabled (the agent is)"]);
	});

	it("definition writes control and bidirectional characters as YAML escapes, and apply takes it back unchanged", async () => {
		const name = `cli-def-ctl-${suffix}`;
		const prompt = "DEL\x7f NEL\x85 CSI\x9b2J ESC\x1b[2J BEL\x07\nsecond line\x7f";
		// The injection scan refuses bidi controls in a prompt, a system prompt and a tool's description, but
		// for a right-to-left mark beside right-to-left letters, which orders them.
		const description = "Files \u05ea\u05d9\u05e7\u200f tickets.";
		const tool = { type: "webhook", name: "file_it", description, url_secret: "E2E_TICKETS_URL" };
		await createAgent({ name, model: models.ok, prompt, system_prompt: "plain \x9b", tools: [tool] });
		try {
			const shown = await drover(["definition", name]);
			expect(shown.status, shown.stderr).toBe(0);
			expect(shown.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
			expect(shown.stdout).toContain(String.raw`DEL\x7f NEL\x85 CSI\x9b2J ESC\e[2J BEL\a`);
			expect(shown.stdout).toContain(String.raw`Files תיק\u200f tickets.`);
			const back = await drover(["apply", "-"], { stdin: shown.stdout });
			expect(back.status, back.stderr).toBe(0);
			expect(back.stdout).toMatch(new RegExp(`^unchanged ${name} `));
			expect((await definitionOf(name)).prompt).toBe(prompt);
			expect(((await definitionOf(name)) as { tools?: { description: string }[] }).tools?.[0]?.description).toBe(description);
		} finally {
			await api(`/v1/agents/${name}`, { method: "DELETE" });
		}
	});

	it("apply checks every agent before it writes one: a file one agent of which the API refuses changes nothing, naming it and its field", async () => {
		const c = `cli-def-c-${suffix}`;
		const d = `cli-def-d-${suffix}`;
		const mixed = file("mixed.yaml", `- name: ${c}\n  model: ${models.ok}\n  prompt: Fine.\n- name: ${d}\n  model: ${models.ok}\n  max_turns: lots\n`);
		const r = await drover(["apply", mixed]);
		expect(r.status).toBe(1);
		expect(r.stdout).toBe("");
		expect(r.stderr).toMatch(new RegExp(`^drover: ${d} \\(nothing was applied\\): .*max_turns`, "s"));
		expect((await api(`/v1/agents/${c}`)).status).toBe(404);
		expect((await api(`/v1/agents/${d}`)).status).toBe(404);
		// --json: nothing applied, an empty array on stdout; the refusal on stderr, still exit 1.
		const asJson = await drover(["apply", "--json", mixed]);
		expect(asJson.status).toBe(1);
		expect(JSON.parse(asJson.stdout)).toEqual([]);
		expect(asJson.stderr).toMatch(new RegExp(`^drover: ${d} \\(nothing was applied\\): .*max_turns`, "s"));
		expect((await api(`/v1/agents/${c}`)).status).toBe(404);
		const firstRefused = await drover(["apply", "--json", "-"], { stdin: `name: ${d}\nmodel: ${models.ok}\nmax_turns: lots\n` });
		expect(firstRefused.status).toBe(1);
		expect(JSON.parse(firstRefused.stdout)).toEqual([]);
		// Each field the API refuses is said with where the file wrote it (the API was sent JSON): in a
		// fleet.yaml-shaped file, in a list, on stdin, in --dry-run.
		const fleetShaped = file("placed.yaml", `agents:\n  - name: ${c}\n    model: ${models.ok}\n    prompt: Fine.\n  - name: ${d}\n    model: ${models.ok}\n    prompt: Go.\n    max_turns: 0\n    schedules:\n      daily: { cron: "0 9 * * *", timezon: UTC }\n`);
		const placedRefusal = await drover(["apply", fleetShaped]);
		expect(placedRefusal.status).toBe(1);
		expect(placedRefusal.stderr).toContain(`max_turns: must be at least 1, got 0 (${fleetShaped} line 8:16)`);
		expect(placedRefusal.stderr).toContain(`schedules.daily.timezon: unknown key (did you mean "timezone"?) (${fleetShaped} line 10:35)`);
		const planRefusal = await drover(["apply", "--dry-run", fleetShaped]);
		expect(planRefusal.stderr).toContain(`(${fleetShaped} line 8:16)`);
		const piped = await drover(["apply", "-"], { stdin: `- name: ${d}\n  model: ${models.ok}\n  prompt: Go.\n  max_turns: 0\n` });
		expect(piped.stderr).toContain("max_turns: must be at least 1, got 0 (stdin line 4:14)");
		// A schedule's name is placed at the name; a "$" in what the API says is kept as written.
		const named = await drover(["apply", "-"], { stdin: `name: ${d}\nmodel: "x$'y"\nprompt: Go.\nschedules:\n  Daily:\n    cron: "0 9 * * *"\n` });
		expect(named.stderr).toContain(`schedules.Daily: schedule names are 1-63 lowercase letters, digits, _ or - (stdin line 5:3)`);
		expect(named.stderr).toContain(`model "x$'y"`);
		expect((await api(`/v1/agents/${d}`)).status).toBe(404);

		const e = `cli-def-e-${suffix}`;
		const refused: [string, RegExp][] = [
			[path.join(dir, "missing.yaml"), /^drover: cannot read .*missing\.yaml: no such file\n$/],
			[dir, /^drover: cannot read .*\/apply-\w+: it is a directory\n$/],
			// An unclosed bracket or quote is said where it was opened, as the API says it.
			[file("broken.yaml", `name: ${e}\nmodel: [unclosed\n`), /^drover: .*broken\.yaml is not valid YAML or JSON: line 2:8: Flow sequence .*: opened here and still open at the end of the text\n$/],
			[file("quote.yaml", `name: ${e}\nprompt: "Stay.\nmodel: x\n`), /^drover: .*quote\.yaml is not valid YAML or JSON: line 2:9: Missing closing "quote: opened here and still open at the end of the text\n$/],
			[file("pricing.yaml", `pricing: {}\nagents:\n  - name: ${e}\n    model: x\n`), /^drover: .*pricing\.yaml: `pricing` is fleet\.yaml's alone; apply takes agents\n$/],
			[file("twice.yaml", `- { name: ${e}, model: x }\n- { name: ${e}, model: y }\n`), new RegExp(`^drover: .*twice\\.yaml defines ${e} twice\\n$`)],
			[file("nameless.yaml", `- { name: ${e}, model: x }\n- { model: y }\n`), /^drover: agent 2 of .*nameless\.yaml has no name\n$/],
			[file("empty.yaml", ""), /^drover: .*empty\.yaml holds no agent: /],
		];
		for (const [at, message] of refused) {
			const bad = await drover(["apply", at]);
			expect(bad.status, at).toBe(1);
			expect(bad.stderr).toMatch(message);
		}
		expect((await api(`/v1/agents/${e}`)).status).toBe(404);

		// A file its user may not read (root reads any: the CLI then runs as nobody).
		const locked = file("locked.yaml", `name: ${e}\n`);
		chmodSync(locked, 0o000);
		const denied = await drover(["apply", locked], process.getuid?.() === 0 ? { uid: 65534 } : {});
		expect(denied.status).toBe(1);
		expect(denied.stderr).toMatch(/^drover: cannot read .*locked\.yaml: permission denied\n$/);
	});

	it("apply refuses a fleet.yaml agent and a token below admin, saying what to do", async () => {
		const fileAgent = await drover(["apply", "-"], { stdin: "name: daily-digest\nmodel: claude-haiku-5-5\n" });
		expect(fileAgent.status).toBe(1);
		expect(fileAgent.stderr).toMatch(/^drover: daily-digest: agent daily-digest is defined in fleet\.yaml; change it there and deploy\n$/);
		const reader = await drover(["apply", "-"], { stdin: `name: ${a}\nmodel: x\n`, token: tokens.read });
		expect(reader.status).toBe(1);
		expect(reader.stderr).toMatch(/stronger role/);
		// What the Worker logged the refusal under, as every other command prints it after a 403.
		expect(reader.stderr).toMatch(/^drover: request id: [0-9a-f-]{36} \(the Worker's logs name the request by it\)$/m);
		expect((await definitionOf(a)).prompt).toBe("First, changed.");
	});

	it("delete asks first (--yes without a terminal), deletes, and an unknown agent is an error", async () => {
		const unconfirmed = await drover(["delete", b]);
		expect(unconfirmed.status).toBe(2);
		expect(unconfirmed.stderr).toMatch(new RegExp(`^drover: not deleting agent ${b} without confirmation\n`));
		expect((await api(`/v1/agents/${b}`)).status).toBe(200);
		const deleted = await drover(["delete", b, "--yes"]);
		expect(deleted.status).toBe(0);
		expect(deleted.stdout).toBe(`deleted ${b}; its jobs and runs stay readable\n`);
		expect((await api(`/v1/agents/${b}`)).status).toBe(404);
		const again = await drover(["delete", b, "--yes"]);
		expect(again.status).toBe(4);
		expect(again.stderr).toMatch(new RegExp(`^drover: no agent named ${b}: it was deleted at [^;]+; nothing was changed\n$`));
		// Its history stays readable: a filtered list with nothing in it is empty, not "no agent named".
		for (const command of [["jobs", "--agent", b, "--status", "failed"], ["usage", "--agent", b], ["incidents", "--agent", b]]) {
			const r = await drover(command);
			expect(r.status, `${command.join(" ")}: ${r.stderr}`).toBe(0);
			expect(r.stdout, command.join(" ")).toMatch(/^no (jobs|ended jobs|incidents)/);
		}
	});
});

describe("editing an agent's definition: edit", () => {
	const dir = scratchDir("edit-test-");
	// A stand-in for the person at the editor: each time it is opened it takes the next step (the
	// text's replacements, a write, a change made through the API meanwhile, an exit status) and keeps
	// what it was shown.
	const editor = path.join(dir, "editor.mjs");
	writeFileSync(
		editor,
		`import { existsSync, readFileSync, writeFileSync } from "node:fs";
const file = process.argv[2];
const dir = process.env.EDIT_DIR;
const count = existsSync(dir + "/count") ? Number(readFileSync(dir + "/count", "utf8")) : 0;
writeFileSync(dir + "/count", String(count + 1));
let text = readFileSync(file, "utf8");
writeFileSync(dir + "/seen-" + count, text);
const step = JSON.parse(process.env.EDIT_STEPS)[count];
if (step.meanwhile) {
	const res = await fetch(process.env.DROVER_URL + step.meanwhile.path, { method: "PUT", headers: { authorization: "Bearer " + process.env.DROVER_TOKEN, "content-type": "application/json" }, body: JSON.stringify(step.meanwhile.body) });
	if (res.status !== 200) process.exit(9);
}
for (const [from, to] of step.replace ?? []) text = text.replace(from, to);
if (step.write !== undefined) text = step.write;
writeFileSync(file, text);
process.exit(step.exit ?? 0);
`,
	);
	let runs = 0;
	/** drover edit with the editor taking these steps; what the editor was shown each time it opened. */
	async function edit(agent: string | string[], steps: unknown[]) {
		const at = path.join(dir, `run-${++runs}`);
		mkdirSync(at);
		const run = await drover(typeof agent === "string" ? ["edit", agent] : agent, { env: { EDITOR: `${shellWord(process.execPath)} ${shellWord(editor)}`, EDIT_DIR: at, EDIT_STEPS: JSON.stringify(steps) } });
		const shown = steps.map((_, i) => (existsSync(path.join(at, `seen-${i}`)) ? readFileSync(path.join(at, `seen-${i}`), "utf8") : null));
		return { ...run, shown };
	}
	const stored = async (name: string) => (await api<{ definition: Record<string, unknown> & { max_turns: number }; definition_revision: string }>(`/v1/agents/${name}`)).body;

	it("saves what was changed in the editor, and opens a refused edit again with its problems above it", async () => {
		const agent = `cli-edit-${suffix}`;
		await createAgent({ name: agent, model: models.ok, prompt: "Watch db-1.", max_turns: 7 });
		const before = (await stored(agent)).definition_revision;
		const run = await edit(agent, [{ replace: [["max_turns: 7", "max_turns: lots"]] }, { replace: [["max_turns: lots", "max_turns: 9"]] }]);
		expect(run.status, run.stderr).toBe(0);
		const after = await stored(agent);
		expect(after.definition.max_turns).toBe(9);
		expect(run.stdout).toBe(`updated ${agent} (revision ${before} → ${after.definition_revision})\n`);
		// Opened on the definition as `drover definition` prints it, under a comment saying what to do.
		const definition = await drover(["definition", agent]);
		expect(run.shown[0]).toBe(`# Editing ${agent} (revision ${before}). Save and close to apply it; leave it empty to cancel.\n# Lines at the top starting with # are left out.\n${definition.stdout.replace(/^#.*\n/, "").replace("max_turns: 9", "max_turns: 7")}`);
		// Refused: said, and opened again on the text sent, the problem (with its line) above it. Its
		// line is the one in the file the editor showed, header and all (the API counts the text sent,
		// without the header); above the text opened again, the one in that file, whose header is longer.
		const lineIn = (shown: string, text: string) => shown.split("\n").indexOf(text) + 1;
		const problem = (line: number) => `invalid body: line ${line}:12: max_turns: Invalid input: expected number, received string`;
		expect(run.stderr).toBe(`drover: not saved: ${problem(lineIn(run.shown[0]!, "max_turns: 7"))}\n`);
		expect(run.shown[1]).toContain(`# It was not saved:\n# ${problem(lineIn(run.shown[1]!, "max_turns: lots"))}\nname: ${agent}\n`);
		expect(run.shown[1]).toContain("max_turns: lots\n");
		// --json, as every command has: the API's answer for the agent saved.
		const asJson = await edit(["edit", agent, "--json"], [{ replace: [["max_turns: 9", "max_turns: 10"]] }]);
		expect(asJson.status, asJson.stderr).toBe(0);
		const answer = JSON.parse(asJson.stdout) as { name: string; definition: { max_turns: number }; definition_revision: string };
		expect(answer).toMatchObject({ name: agent, definition: { max_turns: 10 }, definition_revision: (await stored(agent)).definition_revision });
		expect(answer.definition_revision).not.toBe(after.definition_revision);
	});

	it("counts an unclosed bracket's two lines in the file shown", async () => {
		const agent = `cli-edit-open-${suffix}`;
		await createAgent({ name: agent, model: models.ok, prompt: "Watch db-4.", max_turns: 7 });
		const run = await edit(agent, [{ replace: [["prompt: Watch db-4.", "prompt: [Watch db-4."]] }, { write: "" }]);
		expect(run.status, run.stderr).toBe(0);
		const lines = run.shown[0]!.split("\n");
		const at = lines.indexOf("prompt: Watch db-4.") + 1;
		// The bracket's line and column, and the line where the parser met the next key, both in the file shown.
		expect(lines[at], "a key follows the prompt").toMatch(/^[a-z_]+:/);
		expect(run.stderr).toContain(`drover: not saved: invalid body: not valid YAML: line ${at}:9: Flow sequence`);
		expect(run.stderr).toContain(`: opened here and still open at line ${at + 1}\n`);
	});

	it("sends nothing for a file left unchanged or emptied, or an editor that failed, and refuses a fleet.yaml agent without opening one", async () => {
		const agent = `cli-edit-none-${suffix}`;
		await createAgent({ name: agent, model: models.ok, prompt: "Watch db-2.", max_turns: 7 });
		const revision = (await stored(agent)).definition_revision;
		const unchanged = await edit(agent, [{}]);
		expect([unchanged.status, unchanged.stdout, unchanged.stderr]).toEqual([0, "", `${agent} unchanged: nothing was sent\n`]);
		const emptied = await edit(agent, [{ write: "" }]);
		expect([emptied.status, emptied.stdout, emptied.stderr]).toEqual([0, "", "edit cancelled: the file was left empty; nothing changed\n"]);
		const failed = await edit(agent, [{ exit: 3 }]);
		expect(failed.status).toBe(1);
		expect(failed.stderr).toContain("exited with status 3; nothing was sent\n");
		expect((await stored(agent)).definition_revision).toBe(revision);
		const file = await edit("triage", [{ replace: [["max_turns", "max_turn"]] }]);
		expect([file.status, file.stderr, file.shown]).toEqual([1, "drover: triage is defined in fleet.yaml; change it there and deploy\n", [null]]);
	});

	it("refuses an edit made while the agent was changed by someone else, keeping the edit in its file", async () => {
		const agent = `cli-edit-race-${suffix}`;
		await createAgent({ name: agent, model: models.ok, prompt: "Watch db-3.", max_turns: 7 });
		const read = await stored(agent);
		const run = await edit(agent, [{ meanwhile: { path: `/v1/agents/${agent}`, body: { ...read.definition, max_turns: 11 } }, replace: [["max_turns: 7", "max_turns: 12"]] }]);
		expect(run.status).toBe(1);
		const now = await stored(agent);
		expect(now.definition.max_turns).toBe(11);
		expect(run.stderr).toContain(`drover: agent ${agent} has changed since revision ${read.definition_revision}: it is at revision ${now.definition_revision} now; read it again and make the change there\n`);
		const kept = /your edit is kept in (\S+)$/m.exec(run.stderr)?.[1];
		expect(kept, run.stderr).toBeDefined();
		expect(readFileSync(kept!, "utf8")).toContain("max_turns: 12\n");
	});

	it("notepad edit: a key's value in the editor, saved only on the value it was read at, a new key created only while unset", async () => {
		const agent = `cli-note-edit-${suffix}`;
		await createAgent({ name: agent, model: models.ok, prompt: "Watch db-4." });
		const notes = async () => (await api<Record<string, string>>(`/v1/agents/${agent}/notepad`)).body;
		await api(`/v1/agents/${agent}/notepad/cursor`, { method: "PUT", body: { value: "page 7\nof 9" } });
		// Opened on the value and one newline; saved, the newline an editor leaves is dropped again.
		const saved = await edit(["notepad", agent, "edit", "cursor"], [{ replace: [["page 7", "page 8"]] }]);
		expect([saved.status, saved.stdout, saved.stderr]).toEqual([0, `set cursor on ${agent}'s notepad (1 key)\n`, ""]);
		expect(saved.shown).toEqual(["page 7\nof 9\n"]);
		expect(await notes()).toEqual({ cursor: "page 8\nof 9" });
		// A key not set yet opens empty and is created.
		const created = await edit(["notepad", agent, "edit", "owner"], [{ write: "alice\n" }]);
		expect([created.status, created.shown]).toEqual([0, ["\n"]]);
		expect(await notes()).toEqual({ cursor: "page 8\nof 9", owner: "alice" });
		// Unchanged or emptied, nothing is sent.
		const unchanged = await edit(["notepad", agent, "edit", "owner"], [{}]);
		expect([unchanged.status, unchanged.stderr]).toEqual([0, "owner unchanged: nothing was sent\n"]);
		const emptied = await edit(["notepad", agent, "edit", "owner"], [{ write: "" }]);
		expect([emptied.status, emptied.stderr]).toEqual([0, `edit cancelled: the file was left empty; nothing changed (to delete the key: drover notepad ${agent} delete owner)\n`]);
		// Changed by someone else while it was open: refused, theirs kept, the edit kept in its file.
		const raced = await edit(["notepad", agent, "edit", "owner"], [{ meanwhile: { path: `/v1/agents/${agent}/notepad/owner`, body: { value: "bob" } }, write: "carol\n" }]);
		expect(raced.status).toBe(1);
		expect(raced.stderr).toContain(`drover: notepad key "owner" was changed since it was read: it is at version "`);
		const kept = /your edit is kept in (\S+)$/m.exec(raced.stderr)?.[1];
		expect(kept, raced.stderr).toBeDefined();
		expect(readFileSync(kept!, "utf8")).toBe("carol\n");
		// Set meanwhile while a new key was being written: refused too.
		const racedNew = await edit(["notepad", agent, "edit", "lock"], [{ meanwhile: { path: `/v1/agents/${agent}/notepad/lock`, body: { value: "job 1" } }, write: "job 2\n" }]);
		expect(racedNew.status).toBe(1);
		expect(racedNew.stderr).toContain('drover: notepad key "lock" is already set (If-None-Match: *)');
		expect(await notes()).toEqual({ cursor: "page 8\nof 9", lock: "job 1", owner: "bob" });
		// An agent that does not exist is said before any editor opens.
		const missing = await edit(["notepad", `${agent}-none`, "edit", "owner"], [{ write: "x" }]);
		expect([missing.status, missing.shown]).toEqual([4, [null]]);
		expect(missing.stderr).toContain(`no agent named ${agent}-none`);
	});
});

describe("notepad set and delete on a condition: --if-value, --if-unset", () => {
	it("writes or deletes only while the key holds the value named, or is unset; refused, nothing changes and the exit is 1", async () => {
		const agent = `cli-note-cas-${suffix}`;
		await createAgent({ name: agent, model: models.ok, prompt: "Watch db-5." });
		const notes = async () => (await api<Record<string, string>>(`/v1/agents/${agent}/notepad`)).body;
		expect((await drover(["notepad", agent, "set", "lock", "job 1", "--if-unset"])).status).toBe(0);
		const taken = await drover(["notepad", agent, "set", "lock", "job 2", "--if-unset"]);
		expect([taken.status, taken.stdout]).toEqual([1, ""]);
		expect(taken.stderr).toContain('notepad key "lock" is already set');
		const stale = await drover(["notepad", agent, "set", "lock", "job 3", "--if-value", "job 2"]);
		expect(stale.status).toBe(1);
		// Said of the value given, not of the versions the API compares (digests of values).
		expect(stale.stderr).toContain(`drover: notepad key "lock" of ${agent} does not hold the value given to --if-value (it holds another); nothing was changed\n`);
		expect(stale.stderr).toContain(`drover: hint: drover notepad ${agent} get lock shows what it holds\n`);
		expect(stale.stderr).not.toContain("version");
		expect(await notes()).toEqual({ lock: "job 1" });
		expect((await drover(["notepad", agent, "set", "lock", "job 3", "--if-value", "job 1"])).status).toBe(0);
		expect((await drover(["notepad", agent, "delete", "lock", "--if-value", "job 1"])).status).toBe(1);
		expect(await notes()).toEqual({ lock: "job 3" });
		expect((await drover(["notepad", agent, "delete", "lock", "--if-value", "job 3"])).status).toBe(0);
		expect(await notes()).toEqual({});
		const unset = await drover(["notepad", agent, "set", "lock", "job 4", "--if-value", "job 3"]);
		expect([unset.status, unset.stderr.split("\n")[0]]).toEqual([1, `drover: notepad key "lock" of ${agent} does not hold the value given to --if-value (it is not set); nothing was changed`]);
		for (const args of [["get", "lock", "--if-unset"], ["list", "--if-value", "x"], ["set", "lock", "x", "--if-unset", "--if-value", "y"]]) {
			const refused = await drover(["notepad", agent, ...args]);
			expect(refused.status, args.join(" ")).toBe(2);
		}
		expect(await notes()).toEqual({});
	});
});

describe("a persistent session, end to end", () => {
	const name = `cli-keep-${suffix}`;

	it("apply, two runs, the second continuing the first; sessions current, status, job --manifest and logs say so; reset starts anew", async () => {
		const applied = await drover(["apply", "-"], { stdin: JSON.stringify({ name, model: models.ok, prompt: "Go on.", session: { mode: "persistent", idle_timeout: "24h" } }) });
		expect(applied.status, applied.stderr).toBe(0);
		const first = await drover(["trigger", name, "--wait", "--prompt", "Remember: 3 endpoints."]);
		expect(first.status, first.stderr).toBe(0);
		const firstId = idOf(first);
		const second = await drover(["trigger", name, "--wait", "--prompt", "What did you note?"]);
		expect(second.status, second.stderr).toBe(0);
		const secondId = idOf(second);
		expect(await getJob(secondId)).toMatchObject({ session_id: `ses-${firstId}`, continued_from: firstId });

		const current = await drover(["sessions", "current", name]);
		expect(current.status, current.stderr).toBe(0);
		expect(current.stdout).toMatch(new RegExp(`^session\\s+ses-${firstId}$`, "m"));
		expect(current.stdout).toMatch(new RegExp(`^next run\\s+continues ${secondId}$`, "m"));
		expect((await drover(["status", name])).stdout).toMatch(new RegExp(`^session\\s+persistent: ses-${firstId}, continuing ${secondId}, expires in (23h|24h|1d)$`, "m"));
		expect((await drover(["sessions", name])).stdout).toMatch(new RegExp(`^ses-${firstId} \\*\\s+${name}\\s+2\\s+${secondId}\\s+completed`, "m"));
		expect((await drover(["job", secondId, "--manifest"])).stdout).toMatch(new RegExp(`^session mode\\s+persistent, carrying the session on from ${firstId}$`, "m"));
		expect((await drover(["logs", "--job", secondId])).stdout).toContain(`[system:session] persistent session ses-${firstId} continued from ${firstId} (2 messages carried)`);

		const reset = await drover(["sessions", "reset", name, "--yes"]);
		expect(reset.stdout).toBe(`forgot ses-${firstId}: agent ${name}'s next run starts a new session\n`);
		const third = await drover(["trigger", name, "--wait"]);
		expect(third.status, third.stderr).toBe(0);
		const thirdId = idOf(third);
		expect(await getJob(thirdId)).toMatchObject({ session_id: `ses-${thirdId}`, continued_from: null });
		expect((await drover(["delete", name, "--yes"])).status).toBe(0);
	});
});

describe("the fleet: status and doctor", () => {
	it("doctor passes once the scheduler has ticked (auto-paused agents are warnings)", async () => {
		// Pause the fleet's scheduled agents around the tick so it claims no run of theirs (site-watch
		// would fetch a public host), then put them back as they were.
		const pausedHere: string[] = [];
		for (const name of ["daily-digest", "site-watch"]) {
			const state = JSON.parse((await drover(["status", name, "--json"])).stdout) as { paused: unknown };
			if (state.paused !== null) continue;
			expect((await drover(["pause", name, "--reason", "cli e2e: a tick without runs"])).status).toBe(0);
			pausedHere.push(name);
		}
		try {
			const tick = await fetch(`${url}/cdn-cgi/local/scheduled?cron=*+*+*+*+*&time=${Date.now()}`);
			expect(tick.status).toBe(200);
			await tick.text();
		} finally {
			for (const name of pausedHere) expect((await drover(["resume", name])).status).toBe(0);
		}

		const r = await drover(["doctor"]);
		expect(r.status, r.stdout + r.stderr).toBe(0);
		expect(r.stdout).toMatch(/^✓ reachable\s+http:\/\/.* answers \(drover /m);
		expect(r.stdout).toMatch(/^✓ config\s+fleet\.yaml loads: 3 agents$/m);
		expect(r.stdout).toMatch(/^✓ d1\s+every migration this release needs is applied$/m);
		expect(r.stdout).toMatch(/^✓ auth\s+the token is accepted: root \(admin role\)$/m);
		expect(r.stdout).toMatch(/^✓ scheduler\s+last tick (now|\d+s ago) \(ok\)$/m);
		expect(r.stdout).toMatch(/^! agents\s+triage is paused automatically: secret TICKETS_WEBHOOK_URL/m);
		// Its hooks' URLs are not set here either: their calls would be given up.
		expect(r.stdout).toMatch(/^! agents\s+triage: secret TRIAGE_AUDIT_HOOK_URL \(after_run hook\) is not set: its calls are given up$/m);

		const json = JSON.parse((await drover(["doctor", "--json"], { token: tokens.read })).stdout) as { ok: boolean; checks: { check: string; status: string }[] };
		expect(json.ok).toBe(true);
		expect(json.checks.filter((c) => c.status === "fail")).toEqual([]);
	});

	it("doctor fails (exit 1) with a wrong token, without a token, and against nothing", async () => {
		const wrong = await drover(["doctor"], { token: "not-a-real-token-000000" });
		expect(wrong.status).toBe(1);
		expect(wrong.stdout).toMatch(/^✓ reachable/m);
		expect(wrong.stdout).toMatch(/^✗ auth\s+invalid token/m);
		const none = await drover(["doctor"], { token: null });
		expect(none.status).toBe(1);
		expect(none.stdout).toMatch(/^✗ auth\s+no token/m);
		const nowhere = await drover(["doctor"], { url: "http://127.0.0.1:9" });
		expect(nowhere.status).toBe(1);
		expect(nowhere.stdout).toMatch(/^✗ reachable\s+cannot reach http:\/\/127\.0\.0\.1:9/m);
	});

	it("status: heartbeat, jobs by status and agents; --json is the API's", async () => {
		const human = await drover(["status"], { token: tokens.read });
		expect(human.status, human.stderr).toBe(0);
		expect(human.stdout).toMatch(/^scheduler\s+ok, last tick (now|\d+[sm] ago) \((1 agent|\d+ agents) called, \d+ claimed, \d+ skipped\)$/m);
		expect(human.stdout).toMatch(/^jobs\s+.*completed \d+.*failed \d+/m);
		expect(human.stdout).toMatch(/^agents\s+\d+ \(3 from fleet\.yaml, \d+ from the API\)$/m);
		const json = JSON.parse((await drover(["status", "--json"])).stdout) as { agents: unknown; scheduler: { last_tick_at: string } };
		const fromApi = (await api<typeof json>("/v1/status")).body;
		expect(json.agents).toEqual(fromApi.agents);
		expect(json.scheduler.last_tick_at).toBe(fromApi.scheduler.last_tick_at);
		// Every field of the API's answer, and the agents besides (added, so a script reading it still works).
		expect(Object.keys(json).sort()).toEqual([...Object.keys(fromApi), "agent_list", "agent_list_omitted"].sort());
		expect(human.stdout).toMatch(/^NAME\s+NEXT RUN\s+LAST\s+STATE$/m);
		expect(human.stdout).toMatch(/^daily-digest\s+\d{4}-\d{2}-\d{2} \d{2}:00:00Z \((?:in \d+[smhd]|now|\d+s ago), (?:weekday-morning|weekly-recap)\)\s/m);
	});
});

describe("errors and usage", () => {
	it("an unknown job exits 4 (not found) with the API's message on stderr (one from before the retention saying it may have been removed)", async () => {
		const r = await drover(["job", "job-2020-01-01-aaaaaa"]);
		expect(r.status).toBe(4);
		expect(r.stdout).toBe("");
		expect(r.stderr).toBe("drover: no job job-2020-01-01-aaaaaa: its id is from 2020-01-01, and a job is kept 30 days after it ends (RETENTION_DAYS; less where its agent sets retention_days), so retention may have removed it\n");
		// A malformed id is the CLI's usage error (exit 2), before any request.
		const bad = await drover(["job", "not-a-job"]);
		expect(bad.status).toBe(2);
		expect(bad.stderr).toMatch(/not a job id: a job id is job-YYYY-MM-DD-xxxxxx/);
	});

	it("jobs --agent with an agent that does not exist exits 4 (not found) saying so; one with no jobs yet lists none", async () => {
		const r = await drover(["jobs", "--agent", "no-such-agent-here"]);
		expect(r.status).toBe(4);
		expect(r.stdout).toBe("");
		expect(r.stderr).toBe("drover: no agent named no-such-agent-here\n");
		await createAgent({ name: "cli-no-jobs-yet", model: models.ok, prompt: "Never run." });
		const none = await drover(["jobs", "--agent", "cli-no-jobs-yet"]);
		expect(none.status).toBe(0);
		expect(none.stdout).toBe("no jobs\n");
	});

	it("usage and incidents --agent with an agent that does not exist exit 4 as jobs does; the scheduler's incidents are no agent's", async () => {
		for (const command of ["usage", "incidents", "jobs"]) {
			// --json too: a script reading it must see the typo, not an empty list.
			for (const json of [[], ["--json"]]) {
				const r = await drover([command, "--agent", "no-such-agent-here", ...json]);
				expect(r.status, `${command} ${json}`).toBe(4);
				expect(r.stdout, `${command} ${json}`).toBe("");
				expect(r.stderr, `${command} ${json}`).toBe("drover: no agent named no-such-agent-here\n");
			}
		}
		// An agent with nothing to show (cli-no-jobs-yet, above) lists nothing, as before.
		const usage = await drover(["usage", "--agent", "cli-no-jobs-yet"]);
		expect(usage.status, usage.stderr).toBe(0);
		expect(usage.stdout).toMatch(/^no ended jobs /);
		const incidents = await drover(["incidents", "--agent", "cli-no-jobs-yet"]);
		expect(incidents.status, incidents.stderr).toBe(0);
		expect(incidents.stdout).toBe("no incidents\n");
		const scheduler = await drover(["incidents", "--agent", "scheduler"]);
		expect(scheduler.status, scheduler.stderr).toBe(0);
	});

	it("trigger of an agent with no default prompt says to pass --prompt", async () => {
		const name = `cli-noprompt-${suffix}`;
		await createAgent({ name, model: models.ok });
		try {
			const r = await drover(["trigger", name]);
			expect(r.status).toBe(1);
			expect(r.stdout).toBe("");
			expect(r.stderr).toBe(`drover: agent ${name} has no default prompt; pass one with --prompt "…"\n`);
			const given = await drover(["trigger", name, "--prompt", "Now this.", "--wait"]);
			expect(given.status, given.stderr).toBe(0);
		} finally {
			await api(`/v1/agents/${name}`, { method: "DELETE" });
		}
	});

	it("bad usage exits 2", async () => {
		for (const args of [
			["jobs", "--bogus"],
			["job"],
			["jobs", "--limit", "0"],
			["jobs", "--status", "nope"],
			["continue", "job-2020-01-01-aaaaaa"],
			["logs"],
			["logs", agents.ok, "--job", "job-2020-01-01-aaaaaa"],
			["frobnicate"],
			["job", "job-2020-01-01-aaaaaa", "--json", "--yaml"],
			["usage", "--since", "2026-1-1"],
			["usage", "--until", "2026-02-30"],
			["usage", "--days", "3", "--since", "2026-11-01"],
			["usage", "--days", "0"],
			// Empty (or dot) path segments: caught before a request, not a "no route" from the Worker.
			["job", ""],
			["status", ""],
			["runs", ".."],
			["trigger", ""],
			["cancel", "", "--yes"],
			["approve", "."],
			["fork", ""],
			["pause", ""],
			["resume", ".."],
			["logs", ""],
			["logs", "--job", ""],
			["incidents", "close", ""],
			["incidents", "close", "x_000000000000", "--agent", agents.fail],
		]) {
			const r = await drover(args);
			expect(r.status, `drover ${args.join(" ")}: ${r.stderr}`).toBe(2);
			expect(r.stderr).toMatch(/^drover: /m);
		}
		// 28 processes one after another: 25 s on a 2-core machine running the workers tests beside it,
		// too near the e2e project's 60 s for a slower CI machine.
	}, 120_000);

	it("401 and 403 say what to do about DROVER_TOKEN; no token at all is refused before any request", async () => {
		const unauthorized = await drover(["jobs"], { token: "not-a-real-token-000000" });
		expect(unauthorized.status).toBe(1);
		expect(unauthorized.stderr).toContain("drover: invalid token");
		expect(unauthorized.stderr).toContain("DROVER_TOKEN");
		// The id the Worker logged the refusal under, for its operator to find it by.
		expect(unauthorized.stderr).toMatch(/drover: request id: [0-9a-f-]{36} \(the Worker's logs name the request by it\)/);
		const forbidden = await drover(["trigger", agents.ok], { token: tokens.read });
		expect(forbidden.status).toBe(1);
		expect(forbidden.stderr).toMatch(/drover: this route needs the operate role/);
		expect(forbidden.stderr).toMatch(/hint: .*stronger role.*DROVER_TOKEN/);
		expect(forbidden.stderr).toMatch(/drover: request id: [0-9a-f-]{36} /);
		const missing = await drover(["jobs"], { token: null });
		expect(missing.status).toBe(1);
		expect(missing.stderr).toMatch(/drover: no API token\n.*DROVER_TOKEN/);
		const viaFlag = await drover(["jobs", "--token", tokens.read, "--limit", "1", "--json"], { token: null });
		expect(viaFlag.status, viaFlag.stderr).toBe(0);
	});

	it("an unreachable Worker is an error (exit 5, unavailable) that names the URL", async () => {
		const r = await drover(["jobs", "--url", "http://127.0.0.1:9"]);
		expect(r.status).toBe(5);
		expect(r.stderr).toMatch(/^drover: cannot reach http:\/\/127\.0\.0\.1:9: /);
	});

	it("--help works on every command", async () => {
		const commands = [["jobs"], ["job"], ["logs"], ["status"], ["runs"], ["incidents"], ["incidents", "close"], ["trigger"], ["cancel"], ["approve"], ["deny"], ["fork"], ["continue"], ["pause"], ["resume"], ["notepad"], ["doctor"], ["agents"], ["apply"], ["definition"], ["delete"]];
		const runs = await Promise.all(commands.map((c) => drover([...c, "--help"], { token: null })));
		for (const [i, r] of runs.entries()) {
			expect(r.status, commands[i]!.join(" ")).toBe(0);
			expect(r.stdout).toMatch(new RegExp(`^Usage: drover ${commands[i]!.join(" ")} `));
		}
		const top = await drover(["--help"], { token: null });
		for (const c of commands) if (c.length === 1) expect(top.stdout).toMatch(new RegExp(`^  ${c[0]} `, "m"));
	});
});

// A pseudo-terminal from util-linux's `script`, so the CLI sees a TTY as it would in a person's shell.
const hasScript = spawnSync("script", ["--version"]).status === 0;

describe.skipIf(!hasScript)("on a terminal", () => {
	function inPty(args: string[], stdin: string, env: Record<string, string> = {}): Promise<Run> {
		const command = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
		const child = spawn("script", ["-qefc", command, "/dev/null"], { cwd: ROOT, env: { ...cliEnv({}), TERM: "xterm", ...env } as NodeJS.ProcessEnv, stdio: ["pipe", "pipe", "pipe"] });
		let stdout = "";
		child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
		// Answer only once the question is on the screen, as a person would.
		const answer = setInterval(() => {
			if (stdout.includes("[y/N]")) {
				clearInterval(answer);
				child.stdin.end(stdin);
			}
		}, 20);
		const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
		return new Promise((resolve) =>
			child.on("close", (status) => {
				clearInterval(answer);
				clearTimeout(timer);
				resolve({ status, stdout, stderr: "" });
			}),
		);
	}

	it("colours the table, and NO_COLOR turns colour off", async () => {
		const coloured = await inPty(["jobs", "--agent", agents.ok, "--limit", "2"], "");
		expect(coloured.status).toBe(0);
		expect(coloured.stdout).toContain("\x1b[1mID");
		expect(coloured.stdout).toContain("\x1b[32mcompleted");
		const plain = await inPty(["jobs", "--agent", agents.ok, "--limit", "2"], "", { NO_COLOR: "1" });
		expect(plain.stdout).not.toContain("\x1b[");
	});

	it("cancel asks first: n keeps the job, y cancels it", async () => {
		const id = (await drover(["trigger", agents.slow])).stdout.trim();
		await jobIn(id, ["running"]);
		const kept = await inPty(["cancel", id], "n\n");
		expect(kept.stdout).toContain(`Cancel job ${id}? [y/N]`);
		expect(kept.status).toBe(1);
		expect((await getJob(id)).status).toBe("running");
		const yes = await inPty(["cancel", id], "y\n");
		expect(yes.status).toBe(0);
		await jobIn(id, ["cancelled"]);
	});
});
