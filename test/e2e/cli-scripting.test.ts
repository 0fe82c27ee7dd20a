// The drover binary as a script, a cron job or a CI step runs it: no terminal, a pipe for stdout,
// a stdin that may stay open, colour asked for or refused by the environment. Served by a fake API
// (node:http) that records what was asked of it.
import { once } from "node:events";
import { createServer } from "node:http";
import { createServer as createTlsServer } from "node:https";
import { createServer as createTcpServer, type AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { runCliProcess, runOnTerminal } from "./cli-process.ts";
import { serversClosedAfterEach } from "./test-servers.ts";
import { jobRecord } from "../helpers/job-record.ts";

const TOKEN = "fake-token-0123456789";
const { listen } = serversClosedAfterEach();

/** A fake API answering GET /v1/jobs with an empty page and anything else with a 404; every request recorded. */
async function fakeApi(): Promise<{ url: string; seen: string[] }> {
	const seen: string[] = [];
	const url = await listen((req, res) => {
		seen.push(`${req.method} ${req.url}`);
		const found = req.method === "GET" && req.url?.startsWith("/v1/jobs?");
		res.writeHead(found ? 200 : 404, { "content-type": "application/json" });
		res.end(JSON.stringify(found ? { jobs: [], next_cursor: null } : { error: { code: "not_found", message: `no route for ${req.method} ${req.url}` } }));
	});
	return { url, seen };
}

/** The SGR sequence `format.ts`'s dim style opens with. */
const DIM = "\x1b[2m";

describe("colour, as the environment asks for it", () => {
	it("FORCE_COLOR colours into a pipe (a CI log that renders it), and --no-color still wins", async () => {
		const api = await fakeApi();
		// NO_COLOR unset: runCliProcess sets it unless the env given replaces it.
		const forced = await runCliProcess(["jobs"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN, NO_COLOR: "", FORCE_COLOR: "1" });
		expect(forced.status, forced.stderr).toBe(0);
		expect(forced.stdout).toBe(`${DIM}no jobs\x1b[22m\n`);
		const piped = await runCliProcess(["jobs"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN, NO_COLOR: "" });
		expect(piped.stdout).toBe("no jobs\n");
		const flag = await runCliProcess(["--no-color", "jobs"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN, NO_COLOR: "", FORCE_COLOR: "1" });
		expect(flag.stdout).toBe("no jobs\n");
	});

	it("FORCE_COLOR=0 and TERM=dumb turn it off on a terminal", async () => {
		const api = await fakeApi();
		const env = { DROVER_URL: api.url, DROVER_TOKEN: TOKEN, NO_COLOR: "" };
		const coloured = await runOnTerminal(["jobs"], env);
		expect(coloured.stdout).toContain(`${DIM}no jobs`);
		const zero = await runOnTerminal(["jobs"], { ...env, FORCE_COLOR: "0" });
		expect(zero.status).toBe(0);
		expect(zero.stdout).toContain("no jobs");
		expect(zero.stdout).not.toContain("\x1b[");
		const dumb = await runOnTerminal(["jobs"], { ...env, TERM: "dumb" });
		expect(dumb.status).toBe(0);
		expect(dumb.stdout).toContain("no jobs");
		expect(dumb.stdout).not.toContain("\x1b[");
	});
});

describe("an editor without a terminal", () => {
	// stdin a pipe that stays open, as a CI runner's or `ssh host drover …`'s: vi waited on it for keys forever.
	const openStdin = async () => {};

	it("edit with no VISUAL or EDITOR refuses at once, exit 2, before any request, saying what a script does instead", async () => {
		const api = await fakeApi();
		const r = await runCliProcess(["edit", "nightly"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN }, openStdin);
		expect(r.status, r.stderr).toBe(2);
		expect(r.stdout).toBe("");
		expect(r.stderr).toBe(
			[
				"drover: drover edit opens vi (neither VISUAL nor EDITOR is set), which needs a terminal, and stdin is not one: nothing was opened",
				"drover: hint: in a script, drover definition nightly > nightly.yaml, change it, then drover apply nightly.yaml, or set EDITOR to a command that edits the file it is given",
				"",
			].join("\n"),
		);
		expect(api.seen).toEqual([]);
	});

	it("notepad edit likewise; an EDITOR that is set is run as set, terminal or not", async () => {
		const api = await fakeApi();
		const r = await runCliProcess(["notepad", "nightly", "edit", "cursor"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN }, openStdin);
		expect(r.status, r.stderr).toBe(2);
		expect(r.stderr).toContain("drover: drover notepad edit opens vi (neither VISUAL nor EDITOR is set), which needs a terminal, and stdin is not one: nothing was opened\n");
		expect(r.stderr).toContain("drover notepad nightly set cursor <value|->");
		expect(api.seen).toEqual([]);
		// The fake has no notepad: the request made is the proof the editor was not refused.
		const set = await runCliProcess(["notepad", "nightly", "edit", "cursor"], { DROVER_URL: api.url, DROVER_TOKEN: TOKEN, EDITOR: "true" }, openStdin);
		expect(set.status).toBe(4);
		expect(api.seen).toEqual(["GET /v1/agents/nightly/notepad/cursor", "GET /v1/agents/nightly/notepad"]);
	});
});

describe("exit codes a script can branch on", () => {
	/** A server that answers each request with `status` and drover's JSON error (or, with `plain`, a text body). */
	function answering(status: number, plain = false): Promise<string> {
		return listen((_req, res) => {
			if (plain) res.writeHead(status, { "content-type": "text/plain" }).end("Not Found");
			else res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: status === 404 ? "not_found" : "refused", message: `answered ${status}` } }));
		});
	}

	/** The address of a server that was stopped: nothing listens on its port any more. */
	async function stopped(): Promise<string> {
		const server = createServer().listen(0, "127.0.0.1");
		await once(server, "listening");
		const { port } = server.address() as AddressInfo;
		await new Promise((resolve) => server.close(resolve));
		return `http://127.0.0.1:${port}`;
	}

	it("4 for what the API does not find, trigger --wait's too, where a failed job is 1", async () => {
		const url = await answering(404);
		for (const args of [["job", "job-2026-01-01-abcdef"], ["trigger", "nosuch", "--wait"], ["notepad", "a", "get", "k"], ["jobs", "--agent", "nosuch"]]) {
			const r = await runCliProcess(args, { DROVER_URL: url, DROVER_TOKEN: TOKEN });
			expect(r.status, `${args.join(" ")}: ${r.stderr}`).toBe(4);
			expect(r.stdout).toBe("");
			expect(r.stderr).toBe("drover: answered 404\n");
		}
	});

	it("5 for a server that is down or failing, which a retry may mend", async () => {
		const refused = await runCliProcess(["agents"], { DROVER_URL: await stopped(), DROVER_TOKEN: TOKEN });
		expect(refused.status, refused.stderr).toBe(5);
		expect(refused.stderr).toMatch(/^drover: cannot reach http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/);
		for (const status of [500, 503, 429]) {
			const r = await runCliProcess(["agents"], { DROVER_URL: await answering(status), DROVER_TOKEN: TOKEN });
			expect(r.status, `${status}: ${r.stderr}`).toBe(5);
			expect(r.stderr).toMatch(new RegExp(`^drover: answered ${status}\n`));
		}
	});

	it("2 for a command of the tools drover's users come from, saying drover's own, asking nothing", async () => {
		const api = await fakeApi();
		const env = { DROVER_URL: api.url, DROVER_TOKEN: TOKEN };
		// Hermes' `cron run <job>`: commander's closest name was `runs`, the ledger, not a run.
		const run = await runCliProcess(["run", "daily-digest"], env);
		expect(run.status, run.stderr).toBe(2);
		expect(run.stderr).toContain("drover: unknown command 'run': to run an agent now: drover trigger <agent> [prompt]");
		expect(run.stderr).not.toContain("Did you mean runs?");
		const cron = await runCliProcess(["cron", "status"], env);
		expect(cron.status, cron.stderr).toBe(2);
		expect(cron.stderr).toContain("drover's commands stand alone: drover status, agents, runs <agent>");
		const list = await runCliProcess(["list"], env);
		expect(list.stderr).toContain("drover agents (Hermes' cron list)");
		// Any other name is commander's message, as before.
		const other = await runCliProcess(["jbos"], env);
		expect(other.status).toBe(2);
		expect(other.stderr).toContain("drover: unknown command 'jbos'\n(Did you mean jobs?)");
		expect(api.seen).toEqual([]);
	});

	it("1 for a refusal, and for an answer that is not drover's", async () => {
		for (const status of [400, 401, 403, 409]) {
			const r = await runCliProcess(["agents"], { DROVER_URL: await answering(status), DROVER_TOKEN: TOKEN });
			expect(r.status, `${status}: ${r.stderr}`).toBe(1);
		}
		const other = await runCliProcess(["agents"], { DROVER_URL: await answering(404, true), DROVER_TOKEN: TOKEN });
		expect(other.status, other.stderr).toBe(1);
		expect(other.stderr).toContain("does not answer as a drover API");
	});
});

describe("the environment a CI step gives it", () => {
	it("an empty DROVER_URL (a secret not defined) is said to be empty, exit 2, before any request", async () => {
		for (const value of ["", " "]) {
			const r = await runCliProcess(["agents"], { DROVER_URL: value, DROVER_TOKEN: TOKEN });
			expect(r.status, r.stderr).toBe(2);
			expect(r.stderr).toBe(
				"drover: --url/DROVER_URL is empty\ndrover: hint: set it to the drover Worker's base URL, such as https://drover.example.workers.dev, or unset DROVER_URL for the default, http://localhost:8787\n",
			);
		}
	});
});

describe("a trigger whose answer is lost", () => {
	/** A server that reads each request whole, then drops the connection without an answer: the job may have started. */
	const dropping = () =>
		listen((req, res) => {
			req.resume();
			req.on("end", () => res.socket?.destroy());
		});

	it("exits 5 saying the job may have started, and how a retry cannot start a second one", async () => {
		const url = await dropping();
		const r = await runCliProcess(["trigger", "nightly"], { DROVER_URL: url, DROVER_TOKEN: TOKEN });
		expect(r.status, r.stderr).toBe(5);
		expect(r.stdout).toBe("");
		expect(r.stderr).toMatch(/^drover: cannot reach http:\/\/127\.0\.0\.1:\d+: /);
		expect(r.stderr).toContain(
			"drover: hint: the request may have reached drover and started a job before its answer was lost: drover jobs --agent nightly --limit 5 lists the newest; a retry that cannot start a second job passes --idempotency-key, the same key at each try\n",
		);
		const keyed = await runCliProcess(["trigger", "nightly", "--idempotency-key", "run-42"], { DROVER_URL: url, DROVER_TOKEN: TOKEN });
		expect(keyed.status, keyed.stderr).toBe(5);
		expect(keyed.stderr).toContain("drover: hint: run it again with the same --idempotency-key: that gives the job this request started, if it did, and starts one if it did not\n");
	});

	it("says so when the answer breaks off mid-body too, and a 408 exits 5 as a server away does", async () => {
		const cut = await listen((req, res) => {
			req.resume();
			req.on("end", () => {
				res.writeHead(201, { "content-type": "application/json", "content-length": "400" });
				res.write('{"id":"job-2026-01-01-abcdef",');
				setImmediate(() => res.socket?.destroy());
			});
		});
		const r = await runCliProcess(["trigger", "nightly"], { DROVER_URL: cut, DROVER_TOKEN: TOKEN });
		expect(r.status, r.stderr).toBe(5);
		expect(r.stderr).toContain("drover: hint: the request may have reached drover and started a job before its answer was lost");
		const timedOut = await listen((req, res) => {
			req.resume();
			req.on("end", () => {
				res.writeHead(408, { "content-type": "application/json" });
				res.end(JSON.stringify({ error: { code: "request_timeout", message: "the request took too long" } }));
			});
		});
		const t = await runCliProcess(["jobs"], { DROVER_URL: timedOut, DROVER_TOKEN: TOKEN });
		expect(t.status, t.stderr).toBe(5);
	});

	it("says so after a 500 too (the job may have been written before the request failed), keeping its request id", async () => {
		const url = await listen((req, res) => {
			req.resume();
			req.on("end", () => {
				res.writeHead(500, { "content-type": "application/json", "x-request-id": "req-500" });
				res.end(JSON.stringify({ error: { code: "internal", message: "internal error", request_id: "req-500" } }));
			});
		});
		const r = await runCliProcess(["trigger", "nightly"], { DROVER_URL: url, DROVER_TOKEN: TOKEN });
		expect(r.status, r.stderr).toBe(5);
		expect(r.stdout).toBe("");
		expect(r.stderr).toContain("req-500");
		expect(r.stderr).toContain(
			"drover: hint: the request may have reached drover and started a job before it failed: drover jobs --agent nightly --limit 5 lists the newest; a retry that cannot start a second job passes --idempotency-key, the same key at each try\n",
		);
	});

	it("a continue or a fork sends its --idempotency-key, says when the answer is the job the key started, and says to retry with it when its answer is lost", async () => {
		const seen: (string | undefined)[] = [];
		const keyed = await listen((req, res) => {
			req.resume();
			seen.push(req.headers["idempotency-key"] as string | undefined);
			req.on("end", () => {
				res.writeHead(200, { "content-type": "application/json" });
				res.end(JSON.stringify(jobRecord({ trigger_type: "continue", prompt: "And then?" })));
			});
		});
		const job = jobRecord().id as string;
		const again = await runCliProcess(["continue", job, "And then?", "--idempotency-key", "ci-7"], { DROVER_URL: keyed, DROVER_TOKEN: TOKEN });
		expect(again.status, again.stderr).toBe(0);
		expect(seen).toEqual(["ci-7"]);
		expect(again.stderr).toMatch(/is the job idempotency key ci-7 already started \(\w+\); no new job was started/);
		const url = await dropping();
		const lost = await runCliProcess(["fork", job], { DROVER_URL: url, DROVER_TOKEN: TOKEN });
		expect(lost.status, lost.stderr).toBe(5);
		expect(lost.stderr).toContain("drover: hint: the request may have reached drover and started a job before its answer was lost: drover jobs --limit 5 lists the newest; a retry that cannot start a second job passes --idempotency-key, the same key at each try\n");
	});

	it("a session's resume says so too, and to look before trying again (it takes no key: a retry would resume from the job the first try made)", async () => {
		const session = "ses-job-2026-01-01-abcdef";
		const ref = { id: "job-2026-01-01-abcdef", status: "completed", created_at: "2026-01-01T00:00:00.000Z" };
		const url = await listen((req, res) => {
			req.resume();
			req.on("end", () => {
				if (req.method === "POST") return void res.socket?.destroy();
				res.writeHead(200, { "content-type": "application/json" });
				res.end(JSON.stringify({ session_id: session, agent: "nightly", job_count: 1, first_job: ref, last_job: ref, updated_at: ref.created_at, jobs: [] }));
			});
		});
		const r = await runCliProcess(["sessions", "resume", session, "And then?"], { DROVER_URL: url, DROVER_TOKEN: TOKEN });
		expect(r.status, r.stderr).toBe(5);
		expect(r.stderr).toContain(
			"drover: hint: the request may have reached drover and started a job before its answer was lost: drover jobs --agent nightly --limit 5 lists the newest; look there before trying again, which could start a second job\n",
		);
	});

	it("says so after an answer that is not HTTP too: the server read the request", async () => {
		const server = createTcpServer((socket) => socket.once("data", () => socket.end("HELLO garbage\r\n\r\n"))).listen(0, "127.0.0.1");
		await once(server, "listening");
		try {
			const r = await runCliProcess(["trigger", "nightly"], { DROVER_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, DROVER_TOKEN: TOKEN });
			expect(r.status, r.stderr).toBe(5);
			expect(r.stderr).toContain("drover: hint: the request may have reached drover and started a job before its answer was lost");
		} finally {
			await new Promise((resolve) => server.close(resolve));
		}
	});

	it("says nothing of the kind, and exits 1, when the server's TLS certificate is not trusted: the handshake failed before anything was sent", async () => {
		// Self-signed for 127.0.0.1, made for this test (openssl req -x509, 100 years): no CA this machine has signed it.
		const server = createTlsServer({ key: TLS_KEY, cert: TLS_CERT }, (_req, res) => res.end("{}")).listen(0, "127.0.0.1");
		await once(server, "listening");
		try {
			const r = await runCliProcess(["trigger", "nightly"], { DROVER_URL: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, DROVER_TOKEN: TOKEN });
			expect(r.status, r.stderr).toBe(1);
			expect(r.stderr).toMatch(/SELF_SIGNED_CERT/);
			expect(r.stderr).toContain("drover: hint: its TLS certificate is not one this machine trusts");
			expect(r.stderr).not.toContain("may have");
		} finally {
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		}
	});

	it("says nothing of the kind when nothing was there to take the request", async () => {
		const server = createServer().listen(0, "127.0.0.1");
		await once(server, "listening");
		const { port } = server.address() as AddressInfo;
		await new Promise((resolve) => server.close(resolve));
		const r = await runCliProcess(["trigger", "nightly"], { DROVER_URL: `http://127.0.0.1:${port}`, DROVER_TOKEN: TOKEN });
		expect(r.status, r.stderr).toBe(5);
		expect(r.stderr).toMatch(/ECONNREFUSED/);
		expect(r.stderr).not.toContain("may have");
	});
});

const TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgSxwORW8BS3ytEMT5
IR0OFSWcUk7a94Yef6cE3MNUNdyhRANCAASQ317PuuamgC2yfKQE2KKnYQ0z2VMu
1nXeGNia3MfLjA3dr34caVwEPTSP/Vi8vwfAWJcT4ZohONVj6wb5hncS
-----END PRIVATE KEY-----`;
const TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBfjCCASWgAwIBAgIUGDuhsGntd52VAxS9ZLHiG2IYu5kwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTIwNjEzMTMzN1oYDzIxMjYxMTEy
MTMxMzM3WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAASQ317PuuamgC2yfKQE2KKnYQ0z2VMu1nXeGNia3MfLjA3dr34caVwE
PTSP/Vi8vwfAWJcT4ZohONVj6wb5hncSo1MwUTAdBgNVHQ4EFgQUA/M8Wj56tyNs
m+wHMdxRGRfETHswHwYDVR0jBBgwFoAUA/M8Wj56tyNsm+wHMdxRGRfETHswDwYD
VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNHADBEAiAnaITmWQIQKpByzSyKo/RQ
nBkOSaRF599kO7PKn2DNrQIgMFQ824CsIaGavPcpvUu9OaLhTtx90MFYEND7WBT0
KJ8=
-----END CERTIFICATE-----`;
