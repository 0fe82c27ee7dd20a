// What a new user's walkthrough of the drover binary ran into, each checked as they see it (stdout,
// stderr, exit code) against a fake API (node:http), which also shows what was sent: a mistake the
// CLI can see for itself is said before any request, in the words of what the user gave.
import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { runCliProcess } from "./cli-process.ts";
import { serversClosedAfterEach } from "./test-servers.ts";

const TOKEN = "fake-token-0123456789";
const JOB = "job-2026-01-01-abcdef";

type Routes = Record<string, (req: IncomingMessage, res: ServerResponse, body: string) => void>;

const { listen } = serversClosedAfterEach();

/** A fake API: `routes` keyed by "METHOD /path?query"; anything else is a 404. Records every request. */
async function fakeApi(routes: Routes): Promise<{ url: string; seen: string[] }> {
	const seen: string[] = [];
	const url = await listen((req, res) => {
		let body = "";
		req.setEncoding("utf8").on("data", (d: string) => (body += d));
		req.on("end", () => {
			const route = `${req.method} ${req.url}`;
			seen.push(route);
			const handler = routes[route];
			if (handler) handler(req, res, body);
			else json(res, 404, { error: { code: "not_found", message: `no route for ${route}` } });
		});
	});
	return { url, seen };
}

function json(res: ServerResponse, status: number, body: unknown): void {
	res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

const runCli = (url: string, args: string[], env: Record<string, string> = {}) => runCliProcess(args, { DROVER_URL: url, DROVER_TOKEN: TOKEN, ...env });

describe("logs --from", () => {
	it("0 is said to be no line number (lines count from 1), not to be outside 1 to 2^53 - 1; nothing is sent", async () => {
		const api = await fakeApi({});
		const r = await runCli(api.url, ["logs", "--job", JOB, "--from", "0"]);
		expect(r.status).toBe(2);
		expect(r.stdout).toBe("");
		expect(r.stderr).toBe("drover: option '--from <line>' argument '0' is invalid. must be a line number, from 1 (a job's first line)\n(add --help for usage)\n");
		expect(api.seen).toEqual([]);
	});
});

describe("deny --help", () => {
	it("says what --call is without naming an --input deny does not take; approve's still says --input needs it", async () => {
		const deny = await runCliProcess(["deny", "--help"], {});
		expect(deny.status).toBe(0);
		expect(deny.stdout).toMatch(/--call <tool_use_id>/);
		expect(deny.stdout).not.toContain("--input");
		const approve = await runCliProcess(["approve", "--help"], {});
		expect(approve.stdout.replace(/\s+/g, " ")).toContain("Without it, the call waiting when the command runs; needed with --input");
	});
});
