// `--wait-timeout`: a `--wait` that gives up after a while, not the job, as a wait wrapped in
// timeout(1) does, with its exit code (124); a value that is no duration is a usage error before any
// job starts.
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { jobRecord } from "../helpers/job-record.ts";
import { runCliProcess } from "./cli-process.ts";
import { serversClosedAfterEach } from "./test-servers.ts";

const TOKEN = "fake-token-0123456789";
const JOB = "job-2026-01-01-abcdef";
const { listen } = serversClosedAfterEach();

/** A drover whose job runs for ever: its stream says `running` and then stays open. Counts the jobs started. */
async function foreverJob(status = "running"): Promise<{ url: string; started: () => number; streams: ServerResponse[] }> {
	let started = 0;
	const streams: ServerResponse[] = [];
	const url = await listen((req, res) => {
		if (req.method === "POST" && (req.url === "/v1/agents/fake/jobs" || req.url === `/v1/jobs/${JOB}/continue`)) {
			started++;
			res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify(jobRecord({ status: "pending", exit_reason: null, summary: null, transitions: [] })));
		} else if (req.url?.startsWith(`/v1/jobs/${JOB}/stream`)) {
			res.writeHead(200, { "content-type": "text/event-stream" });
			res.write(`event: status\ndata: {"status":"${status}","revision":2}\n\n`);
			streams.push(res);
		} else {
			res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "not_found", message: `no route for ${req.method} ${req.url}` } }));
		}
	});
	return { url, started: () => started, streams };
}

describe("--wait-timeout", () => {
	it("gives up waiting after the time given, says the job goes on and how to follow it, exits 124", async () => {
		const { url, started, streams } = await foreverJob();
		const r = await runCliProcess(["trigger", "fake", "--wait-timeout", "1s"], { DROVER_URL: url, DROVER_TOKEN: TOKEN });
		for (const s of streams) s.end();
		expect(r.status, r.stderr).toBe(124);
		expect(started()).toBe(1);
		// It implies --wait: the job was followed (its stream read), and its id printed first.
		expect(streams).toHaveLength(1);
		expect(r.stdout).toBe(`${JOB}\n`);
		expect(r.stderr.split("\n").slice(-3)).toEqual([
			`drover: stopped waiting for ${JOB} after 1s, which goes on (running)`,
			`drover: hint: drover logs --job ${JOB} --follow follows it again; drover cancel ${JOB} stops it`,
			"",
		]);
	});

	it("given up on a job waiting for approval, says first how to decide it", async () => {
		const { url, streams } = await foreverJob("approval_pending");
		const r = await runCliProcess(["trigger", "fake", "--wait-timeout", "1s"], { DROVER_URL: url, DROVER_TOKEN: TOKEN });
		for (const s of streams) s.end();
		expect(r.status, r.stderr).toBe(124);
		expect(r.stderr.split("\n").slice(-3)).toEqual([
			`drover: stopped waiting for ${JOB} after 1s, which goes on (approval_pending)`,
			`drover: hint: drover approve|deny ${JOB} decides the call it waits on; drover logs --job ${JOB} --follow follows it again; drover cancel ${JOB} stops it`,
			"",
		]);
	});

	it("is taken by continue (and fork and sessions resume) too", async () => {
		const { url, streams } = await foreverJob();
		const r = await runCliProcess(["continue", JOB, "and then?", "--wait", "--wait-timeout", "1s"], { DROVER_URL: url, DROVER_TOKEN: TOKEN });
		for (const s of streams) s.end();
		expect(r.status, r.stderr).toBe(124);
		expect(r.stderr).toContain(`drover: stopped waiting for ${JOB} after 1s, which goes on (running)`);
	});

	it("refuses what is no duration of at least a second as a usage error, starting no job", async () => {
		const { url, started } = await foreverJob();
		for (const value of ["0s", "soon", "10", "-5m", ""]) {
			const r = await runCliProcess(["trigger", "fake", "--wait-timeout", value], { DROVER_URL: url, DROVER_TOKEN: TOKEN });
			expect(r.status, value).toBe(2);
			expect(r.stdout, value).toBe("");
			expect(r.stderr, value).toContain(`option '--wait-timeout <duration>' argument '${value}' is invalid. not a duration of at least 1s: a number with a unit (d, h, m, s), e.g. "90s", "15m", "1h30m", "1d"`);
		}
		expect(started()).toBe(0);
	});
});
