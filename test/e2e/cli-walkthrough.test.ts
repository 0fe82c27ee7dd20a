// What a new user's walkthrough of the drover binary ran into, each checked as they see it (stdout,
// stderr, exit code) against a fake API (node:http), which also shows what was sent: a mistake the
// CLI can see for itself is said before any request, in the words of what the user gave.
import { existsSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { describe, expect, inject, it } from "vitest";
import { shellWord } from "../../cli/format.ts";
import { runCliProcess, scratchDir } from "./cli-process.ts";
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
		// In capitals, as pasted: the same id, sent as drover lists it.
		const seen = await fakeApi({ "POST /v1/incidents/site-w_0123456789ab/close": (_req, res) => json(res, 409, { error: { code: "conflict", message: "already closed" } }) });
		const upper = await runCli(seen.url, ["incidents", "close", "SITE-W_0123456789AB"]);
		expect(upper.stderr).toContain("already closed");
		expect(seen.seen).toEqual(["POST /v1/incidents/site-w_0123456789ab/close"]);
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

describe("edit with a token below admin", () => {
	const { url, tokens } = inject("drover");
	const dir = scratchDir("walk-edit-");
	/** An editor that only notes it was opened. */
	const noting = (mark: string) => `touch ${shellWord(path.join(dir, mark))}; true`;

	it("is refused before the editor opens, with the role it needs and the one the token has (exit 1, as the API's 403 is)", async () => {
		const agent = `cli-walk-edit-${Math.random().toString(36).slice(2, 8)}`;
		const created = await fetch(`${url}/v1/agents`, { method: "POST", headers: { authorization: `Bearer ${tokens.admin}`, "content-type": "application/json" }, body: JSON.stringify({ name: agent, model: "claude-test-walk", prompt: "Watch db-9." }) });
		expect(created.status).toBe(201);
		for (const [role, name] of [["read", "reader"], ["operate", "operator"]] as const) {
			const r = await runCliProcess(["edit", agent], { DROVER_URL: url, DROVER_TOKEN: tokens[role], EDITOR: noting(role) });
			expect(r.status).toBe(1);
			expect(r.stdout).toBe("");
			expect(r.stderr).toBe(
				`drover: edit saves an agent's definition, which needs the admin role; token "${name}" has ${role}: nothing was opened\ndrover: hint: this needs a token with a stronger role (read < operate < admin): set DROVER_TOKEN (or --token) to one\n`,
			);
			expect(existsSync(path.join(dir, role)), "the editor was opened").toBe(false);
		}
	});

	it("against a Worker without GET /v1/me (a 404), opens the editor and is refused at the save, as before", async () => {
		const api = await fakeApi({
			"GET /v1/agents/a/definition": (_req, res) => res.writeHead(200, { "content-type": "application/yaml", etag: '"r1"' }).end("name: a\nmax_turns: 7\n"),
			"PUT /v1/agents/a": (_req, res) => json(res, 403, { error: { code: "forbidden", message: 'this route needs the admin role; token "reader" has read' } }),
		});
		const r = await runCli(api.url, ["edit", "a"], { EDITOR: "sed -i s/max_turns:.7/max_turns:\\ 8/" });
		expect(r.status).toBe(1);
		expect(r.stderr).toMatch(/^drover: this route needs the admin role; token "reader" has read\ndrover: hint: your edit is kept in \S+\n/);
		expect(api.seen).toEqual(["GET /v1/me", "GET /v1/agents/a/definition", "PUT /v1/agents/a"]);
	});
});

describe("arguments and fields the API would refuse as malformed parameters, said as given before any request", () => {
	it("apply: an agent whose name field is no agent name names the field and what is wrong with it (exit 1, as the file's other faults)", async () => {
		const api = await fakeApi({});
		const dir = scratchDir("walk-apply-");
		const one = path.join(dir, "one.yaml");
		writeFileSync(one, "name: Bad_Name\nprompt: Watch db-1.\n");
		const r = await runCli(api.url, ["apply", one]);
		expect([r.status, r.stdout]).toEqual([1, ""]);
		expect(r.stderr).toBe('drover: Bad_Name: name must be 1-63 lowercase letters, digits or -, starting with a letter or digit; it has "B" at character 1\n');
		// In a file of several, which one it is; a dash that only looks like one is named, with the name meant.
		const two = path.join(dir, "two.yaml");
		writeFileSync(two, "- name: fine-one\n  prompt: x\n- name: no\u2010way\n  prompt: y\n");
		const several = await runCli(api.url, ["apply", two, "--dry-run"]);
		expect(several.status).toBe(1);
		expect(several.stderr).toBe(`drover: no\u2010way: name must be 1-63 lowercase letters, digits or -, starting with a letter or digit; it has U+2010 at character 3 (did you mean "no-way"?) (agent 2 of ${two})\n`);
		expect(api.seen).toEqual([]);
	});

	it("sessions resume: a ses- id the API would refuse is no session id, and a name no agent name (exit 2, a usage error)", async () => {
		const api = await fakeApi({});
		const session = await runCli(api.url, ["sessions", "resume", "ses-job", "Go on."]);
		expect([session.status, session.stdout]).toEqual([2, ""]);
		expect(session.stderr).toBe("drover: ses-job is not a session id: a session id is ses-<first job's id> (older sessions: ses-<uuid>), or a prefix of one with at least 8 characters after ses-, in a-z, 0-9 and -\n");
		const agent = await runCli(api.url, ["sessions", "resume", "Nightly_Digest", "Go on."]);
		expect(agent.status).toBe(2);
		expect(agent.stderr).toBe('drover: Nightly_Digest is not an agent name (nor a session or job id): must be 1-63 lowercase letters, digits or -, starting with a letter or digit; it has "N" at character 1\n');
		expect(api.seen).toEqual([]);
	});

	it("incidents close: an id not of the incident form is a usage error (exit 2)", async () => {
		const api = await fakeApi({});
		const r = await runCli(api.url, ["incidents", "close", "1"]);
		expect([r.status, r.stdout]).toEqual([2, ""]);
		expect(r.stderr).toBe(
			"drover: command-argument value '1' is invalid for argument 'id'. not an incident id: an incident id is <agent prefix>_<12 hex>, its agent's name's first 6 characters (or fewer), _ and 12 of 0-9 and a-f, as drover incidents lists them\n(add --help for usage)\n",
		);
		expect(api.seen).toEqual([]);
	});
});
