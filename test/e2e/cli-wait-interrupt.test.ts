// A `--wait` stopped by Ctrl-C once the job's stream ended, while the job's record is read: said, and
// exit 130, as a Ctrl-C during the stream is (cli-answers.test.ts), not Node's silent default.
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { jobRecord } from "../helpers/job-record.ts";
import { childEnv, CLI } from "./cli-process.ts";
import { serversClosedAfterEach } from "./test-servers.ts";

const TOKEN = "fake-token-0123456789";
const { listen } = serversClosedAfterEach();

describe("--wait stopped by Ctrl-C after the job's stream ended", () => {
	it("while its record is read: says so and how to see the outcome, exits 130", async () => {
		const JOB = "job-2026-01-01-abcdef";
		let recordAsked!: () => void;
		const asked = new Promise<void>((resolve) => (recordAsked = resolve));
		const url = await listen((req, res) => {
			if (req.method === "POST" && req.url === "/v1/agents/fake/jobs") {
				res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify(jobRecord({ status: "pending", exit_reason: null, summary: null, transitions: [] })));
			} else if (req.url === `/v1/jobs/${JOB}/stream`) {
				res.writeHead(200, { "content-type": "text/event-stream" });
				res.end(`event: status\ndata: {"status":"completed","revision":2}\n\nevent: end\ndata: {"status":"completed"}\n\n`);
			} else if (req.url === `/v1/jobs/${JOB}`) {
				// The record's read hangs, as over a slow network: the user gives up on it.
				recordAsked();
			} else {
				res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "not_found", message: `no route for ${req.method} ${req.url}` } }));
			}
		});
		const child = spawn(process.execPath, [CLI, "trigger", "fake", "--wait"], { env: childEnv({ DROVER_URL: url, DROVER_TOKEN: TOKEN }), stdio: ["ignore", "pipe", "pipe"] });
		let stdout = "";
		let stderr = "";
		child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
		child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
		const closed = new Promise<number | null>((resolve) => child.on("close", (code, signal) => resolve(code ?? (signal ? -1 : null))));
		const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
		await Promise.race([asked, closed]);
		child.kill("SIGINT");
		const status = await closed;
		clearTimeout(timer);
		expect(status, stderr).toBe(130);
		expect(stdout).toBe(`${JOB}\n`);
		expect(stderr.split("\n").slice(-3)).toEqual([
			`drover: stopped waiting for ${JOB}'s outcome; its stream said it ended (completed)`,
			`drover: hint: drover job ${JOB} says how it ended`,
			"",
		]);
	});
});
