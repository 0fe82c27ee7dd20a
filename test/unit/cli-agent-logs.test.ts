import { describe, expect, it } from "vitest";
import { agentSink, followAgent, jobTail, lastLines, recentAndActiveJobs, recentJobs, recentJobsWithOutput } from "../../cli/agent-logs.ts";
import { ApiClient, CliError } from "../../cli/client.ts";
import type { Context } from "../../cli/context.ts";
import { paint } from "../../cli/format.ts";
import type { JobSummary } from "../../cli/types.ts";
import { fake, outboundLog } from "../helpers/outbound.ts";

// `drover logs <agent>` and its --follow (cli/agent-logs.ts): which of an agent's jobs it reads, the
// last lines across them, the marks between jobs, and the follow's polls, waits and end. The e2e
// files (cli.test.ts, cli-follow.test.ts) run it against a local drover; here against a fake server,
// an injected sleep recording each wait.

const URL_ = "http://drover.example.test";
const AGENT = "site-watch";

function contextFor(options: { stderrIsTTY?: boolean } = {}) {
	const out: string[] = [];
	const err: string[] = [];
	const ctx: Context = {
		client: new ApiClient({ url: URL_, token: "tok-0123" }),
		p: paint(false),
		ep: paint(false),
		width: undefined,
		stdoutIsTTY: false,
		stderrIsTTY: options.stderrIsTTY ?? false,
		stdinIsTTY: false,
		globalArgs: [],
		out: (t) => void out.push(t),
		err: (t) => void err.push(t),
		json: (v) => void out.push(JSON.stringify(v)),
	};
	return { ctx, out, err };
}
const job = (id: string, status = "completed", created_at = "2026-12-07T10:00:00Z") => ({ id, agent: AGENT, status, trigger_type: "schedule", created_at }) as unknown as JobSummary;
const page = (jobs: JobSummary[], next_cursor: string | null = null) => Response.json({ jobs, next_cursor });
const requests = () => outboundLog.map((r) => decodeURIComponent(r.url.slice(URL_.length)));
const ndjson = (...lines: string[]) => new Response(lines.map((l) => `${l}\n`).join(""), { headers: { "content-type": "application/x-ndjson" } });

describe("an agent's jobs", () => {
	it("the newest 20", async () => {
		const { ctx } = contextFor();
		fake(URL_, () => page([job("j1")]));
		expect((await recentJobs(ctx, AGENT)).map((j) => j.id)).toEqual(["j1"]);
		expect(requests()).toEqual([`/v1/agents/${AGENT}/jobs?limit=20`]);
	});

	it("with output: the newest 20 not pending, read past a queue", async () => {
		const { ctx } = contextFor();
		const first = [...Array.from({ length: 15 }, (_, i) => job(`q${i}`, "pending")), ...Array.from({ length: 5 }, (_, i) => job(`a${i}`))];
		const second = Array.from({ length: 20 }, (_, i) => job(`b${i}`, "failed"));
		fake(URL_, (req) => (new URL(req.url).searchParams.get("cursor") === "c1" ? page(second, "c2") : page(first, "c1")));
		const jobs = await recentJobsWithOutput(ctx, AGENT);
		expect(jobs.map((j) => j.id)).toEqual([...first.slice(15), ...second.slice(0, 15)].map((j) => j.id));
	});

	it("with every live one, of each live status and every page of it, newest first, ties by id", async () => {
		const { ctx } = contextFor();
		fake(URL_, (req) => {
			const q = new URL(req.url).searchParams;
			if (q.get("status") === null) return page([job("j3", "completed", "2026-12-07T10:00:00Z"), job("j2", "running", "2026-12-07T09:00:00Z")]);
			if (q.get("status") === "running") return q.get("cursor") === "r2" ? page([job("jb", "running", "2026-12-07T07:00:00Z")]) : page([job("j2", "running", "2026-12-07T09:00:00Z"), job("ja", "running", "2026-12-07T08:00:00Z")], "r2");
			if (q.get("status") === "approval_pending") return page([job("jc", "approval_pending", "2026-12-07T06:00:00Z"), job("jd", "approval_pending", "2026-12-07T06:00:00Z")]);
			return page([]);
		});
		expect((await recentAndActiveJobs(ctx, AGENT)).map((j) => j.id)).toEqual(["j3", "j2", "ja", "jb", "jd", "jc"]);
	});
});

describe("a job's tail", () => {
	it("ends at the line X-Drover-First-Line places it at", async () => {
		const { ctx } = contextFor();
		fake(URL_, () => {
			const res = ndjson("l5", "l6", "l7");
			res.headers.set("x-drover-first-line", "5");
			return res;
		});
		expect(await jobTail(ctx, "j1", 3)).toEqual({ lines: ["l5", "l6", "l7"], last: 7 });
	});

	it("from a server without the header is counted from the whole output, its last lines kept; blank lines are none", async () => {
		const { ctx } = contextFor();
		fake(URL_, (req) => (new URL(req.url).searchParams.has("lines") ? ndjson("l9", "l10") : ndjson("l1", " ", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10")));
		expect(await jobTail(ctx, "j1", 2)).toEqual({ lines: ["l9", "l10"], last: 10 });
	});
});

describe("the last lines across jobs", () => {
	it("are the last N of the newest jobs, oldest job first; a live job is counted to follow on from, with no lines when none are wanted", async () => {
		const { ctx } = contextFor();
		fake(URL_, (req) => {
			const url = new URL(req.url);
			const id = url.pathname.split("/")[3];
			const res = id === "live" ? ndjson("L3") : id === "e1" ? ndjson("E4", "E5") : ndjson("X");
			res.headers.set("x-drover-first-line", id === "live" ? "3" : "4");
			return res;
		});
		const recent = [job("live", "approval_pending"), job("e1"), job("e2")];
		const parts = await lastLines(ctx, recent, 3, true);
		expect(parts.map((p) => [p.job.id, p.lines, p.total])).toEqual([
			["e1", ["E4", "E5"], null],
			["live", ["L3"], 3],
		]);
		outboundLog.length = 0;
		const none = await lastLines(ctx, recent, 0, true);
		expect(none.map((p) => [p.job.id, p.lines, p.total])).toEqual([["live", [], 3]]);
		expect(requests()).toEqual(["/v1/jobs/live/output?lines=1"]);
	});
});

describe("the marks between jobs", () => {
	it("name a job when its lines begin, its status only once it ended, and its end", () => {
		const { ctx, out } = contextFor();
		const sink = agentSink(ctx, false, (raw) => out.push(raw));
		sink.line(job("j1", "running"), "a");
		sink.line(job("j1", "running"), "b");
		sink.ended(job("j1", "running"), "completed");
		sink.header(job("j0", "failed"));
		expect(out).toEqual(["==> j1 (schedule) <==", "a", "b", "==> j1 completed <==", "==> j0 (schedule, failed) <=="]);
	});

	it("with --json go to a terminal's stderr only, stdout kept to the lines", () => {
		const piped = contextFor();
		const sink = agentSink(piped.ctx, true, (raw) => piped.out.push(raw));
		sink.line(job("j1", "running"), "a");
		sink.ended(job("j1", "running"), "completed");
		expect([piped.out, piped.err]).toEqual([["a"], []]);
		const tty = contextFor({ stderrIsTTY: true });
		const ttySink = agentSink(tty.ctx, true, (raw) => tty.out.push(raw));
		ttySink.line(job("j1", "running"), "a");
		ttySink.ended(job("j1", "running"), "completed");
		expect([tty.out, tty.err]).toEqual([["a"], ["==> j1 (schedule) <==", "==> j1 completed <=="]]);
	});
});

describe("following an agent", () => {
	const sse = (...events: string[]) => new Response(events.join(""), { headers: { "content-type": "text/event-stream" } });

	it("asks for its jobs every 2 s; while the list fails, waits twice as long each time up to 30 s, saying so once each way; asks whether the agent exists every 5th poll, and ends once it is deleted", async () => {
		const { ctx, out, err } = contextFor();
		let lists = 0;
		let listed = false;
		fake(URL_, (req) => {
			const path = new URL(req.url).pathname;
			if (path === `/v1/agents/${AGENT}`) return listed && lists >= 10 ? Response.json({ error: { code: "not_found", message: `no agent named ${AGENT}` } }, { status: 404 }) : Response.json({ name: AGENT, paused: null });
			lists++;
			if (lists <= 5) return Response.json({ error: { code: "unavailable", message: `answered ${lists === 3 ? 500 : 503}` } }, { status: lists === 3 ? 500 : 503 });
			listed = true;
			return page([]);
		});
		const sleeps: number[] = [];
		const sink = agentSink(ctx, false, (raw) => out.push(raw));
		const err_ = await followAgent(ctx, AGENT, [], [], sink, { sleep: async (ms) => void sleeps.push(ms) }).catch((e: unknown) => e);
		expect(err_).toBeInstanceOf(CliError);
		expect(err_).toMatchObject({ exitCode: 1, message: `agent ${AGENT} was deleted: none of its jobs will start any more` });
		expect(sleeps).toEqual([2000, 4000, 8000, 16000, 30000, 30000, 2000, 2000, 2000, 2000]);
		expect(err).toEqual([
			`drover: listing agent ${AGENT}'s jobs: answered 503; trying again until the server answers, at most 30s apart (Ctrl-C to stop)`,
			"drover: the server answers again; following on",
		]);
		expect(requests().filter((r) => r === `/v1/agents/${AGENT}`).length).toBe(3);
	});

	it("ends at a 500 config_invalid (the Worker's configuration unusable) rather than polling on as through a restart", async () => {
		const { ctx, out } = contextFor();
		// A follow that polls on through it meets the agent deleted at its tenth request, and ends so instead.
		let asked = 0;
		fake(URL_, () =>
			++asked < 10
				? Response.json({ error: { code: "config_invalid", message: "API_TOKENS is invalid" } }, { status: 500 })
				: Response.json({ error: { code: "not_found", message: `no agent named ${AGENT}` } }, { status: 404 }),
		);
		const err_ = await followAgent(ctx, AGENT, [], [], agentSink(ctx, false, (raw) => out.push(raw)), { sleep: async () => {} }).catch((e: unknown) => e);
		expect(err_).toMatchObject({ exitCode: 1, status: 500, code: "config_invalid", message: "API_TOKENS is invalid" });
		expect(asked).toBe(1);
	});

	it("found deleted, follows its live jobs to their end before saying so", async () => {
		const { ctx, out } = contextFor();
		let slept = () => {};
		const waited = new Promise<void>((resolve) => (slept = resolve));
		fake(URL_, (req) => {
			const path = new URL(req.url).pathname;
			if (path === `/v1/agents/${AGENT}`) return Response.json({ error: { code: "not_found", message: "gone" } }, { status: 404 });
			// The live job's last line at once; its end only once the follow has waited (found the agent deleted and not ended).
			const body = new ReadableStream({
				async start(c) {
					c.enqueue(new TextEncoder().encode(`id: 1\nevent: line\ndata: last words\n\n`));
					await waited;
					c.enqueue(new TextEncoder().encode(`event: end\ndata: {"status":"completed"}\n\n`));
					c.close();
				},
			});
			return new Response(body, { headers: { "content-type": "text/event-stream" } });
		});
		const live = job("live", "running");
		const sleep = async () => slept();
		const seenAtEnd = await followAgent(ctx, AGENT, [live], [{ job: live, lines: [], total: 0 }], agentSink(ctx, false, (raw) => out.push(raw)), { sleep }).catch((e: unknown) => [e, [...out]] as const);
		expect(seenAtEnd).toEqual([expect.objectContaining({ message: `agent ${AGENT} was deleted: none of its jobs will start any more` }), ["==> live (schedule) <==", "last words", "==> live completed <=="]]);
	});

	it("follows a live job on from its last line, and a new one from its first, to their ends before saying the agent was deleted", async () => {
		const { ctx, out } = contextFor();
		const lastEventIds: Record<string, string | null> = {};
		let polls = 0;
		fake(URL_, (req) => {
			const path = new URL(req.url).pathname;
			if (path === `/v1/agents/${AGENT}`) return polls > 1 ? Response.json({ error: { code: "not_found", message: "gone" } }, { status: 404 }) : Response.json({ name: AGENT, paused: null });
			if (path.endsWith("/stream")) {
				const id = path.split("/")[3]!;
				lastEventIds[id] = req.headers.get("last-event-id");
				return sse(`id: 3\nevent: line\ndata: ${id}-3\n\n`, `event: end\ndata: {"status":"completed"}\n\n`);
			}
			polls++;
			// The first page: a new job and one seen already, so no second page is asked for.
			return page([job("new", "running"), job("live", "running")], "more");
		});
		const sink = agentSink(ctx, false, (raw) => out.push(raw));
		const live = job("live", "running");
		const err_ = await followAgent(ctx, AGENT, [live], [{ job: live, lines: [], total: 2 }], sink, { sleep: async () => {}, pollMs: 1 }).catch((e: unknown) => e);
		expect(err_).toMatchObject({ message: `agent ${AGENT} was deleted: none of its jobs will start any more` });
		expect(lastEventIds).toEqual({ live: "2", new: null });
		expect(out).toEqual(expect.arrayContaining(["live-3", "new-3", "==> live completed <==", "==> new completed <=="]));
		expect(requests().filter((r) => r.includes("/jobs?")).every((r) => !r.includes("cursor"))).toBe(true);
	});
});
