// The CLI revalidating its repeated JSON GETs (If-None-Match, 304): its client against a fake API
// (node:http) that tags what it is told to, and `drover logs <agent> --follow` against the real Worker
// through a proxy that records what was asked and answered.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ApiClient } from "../../cli/client.ts";
import { shapes } from "../../cli/shapes.ts";
import { childEnv, CLI, runCliProcess } from "./cli-process.ts";
import { serversClosedAfterEach } from "./test-servers.ts";

const TOKEN = "fake-token-0123456789";

/** What a request asked and what it was answered. */
interface Seen {
	method: string;
	path: string;
	ifNoneMatch: string | null;
	status: number;
	etag: string | null;
}

const { servers, listen } = serversClosedAfterEach();

/** The Worker's tag of a body: its SHA-1, base64url, quoted (src/api/conditional-get.ts). */
const tagOf = (body: string) => `"${createHash("sha1").update(body).digest("base64url")}"`;

/**
 * A fake API answering every request with `body(path)` as `type`, tagged unless `tagged` says not,
 * and a 304 when If-None-Match names the tag, as the Worker does.
 */
async function fakeApi(body: (path: string) => string, options: { tagged?: boolean; type?: string } = {}) {
	const seen: Seen[] = [];
	const url = await listen((req, res) => {
		const text = body(req.url!);
		const etag = options.tagged === false ? null : tagOf(text);
		const ifNoneMatch = (req.headers["if-none-match"] as string | undefined) ?? null;
		const status = etag !== null && ifNoneMatch === etag ? 304 : 200;
		seen.push({ method: req.method!, path: req.url!, ifNoneMatch, status, etag });
		const headers = { ...(etag ? { etag, "cache-control": "private, no-cache" } : {}) };
		if (status === 304) res.writeHead(304, headers).end();
		else res.writeHead(200, { "content-type": options.type ?? "application/json", ...headers }).end(text);
	});
	return { client: new ApiClient({ url, token: TOKEN }), seen };
}

const page = (ids: string[]) => JSON.stringify({ jobs: ids.map((id) => ({ id, agent: "fake", status: "completed", trigger_type: "schedule" })), next_cursor: null });

describe("the CLI's client revalidating JSON GETs", () => {
	it("sends back the tag a GET was answered with, and reads the 304 as the answer it kept, parsed afresh", async () => {
		const api = await fakeApi(() => page(["job-a"]));
		const first = await api.client.answer("/v1/agents/fake/jobs", shapes.jobPage, { query: { limit: 50 } });
		// A caller changing what it got does not change what the next one gets.
		first.value.jobs.length = 0;
		const second = await api.client.answer("/v1/agents/fake/jobs", shapes.jobPage, { query: { limit: 50 } });
		expect(second).toEqual({ status: 200, value: JSON.parse(page(["job-a"])) });
		const tag = tagOf(page(["job-a"]));
		expect(api.seen).toEqual([
			{ method: "GET", path: "/v1/agents/fake/jobs?limit=50", ifNoneMatch: null, status: 200, etag: tag },
			{ method: "GET", path: "/v1/agents/fake/jobs?limit=50", ifNoneMatch: tag, status: 304, etag: tag },
		]);
		// Still kept after the 304: the third read revalidates too.
		expect(await api.client.json("/v1/agents/fake/jobs", shapes.jobPage, { query: { limit: 50 } })).toEqual(JSON.parse(page(["job-a"])));
		expect(api.seen[2]).toMatchObject({ ifNoneMatch: tag, status: 304 });
	});

	it("reads a changed answer whole and keeps its new tag; another query of the path is another answer", async () => {
		let ids = ["job-a"];
		const api = await fakeApi(() => page(ids));
		const read = (query: Record<string, string | number>) => api.client.json("/v1/agents/fake/jobs", shapes.jobPage, { query });
		await read({ limit: 50 });
		ids = ["job-b", "job-a"];
		expect((await read({ limit: 50 })).jobs.map((j) => j.id)).toEqual(["job-b", "job-a"]);
		await read({ limit: 50 });
		await read({ limit: 50, cursor: "c1" });
		expect(api.seen.map((s) => [s.path, s.ifNoneMatch, s.status])).toEqual([
			["/v1/agents/fake/jobs?limit=50", null, 200],
			["/v1/agents/fake/jobs?limit=50", tagOf(page(["job-a"])), 200],
			["/v1/agents/fake/jobs?limit=50", tagOf(page(["job-b", "job-a"])), 304],
			["/v1/agents/fake/jobs?limit=50&cursor=c1", null, 200],
		]);
	});

	it("does not revalidate an answer without an ETag (a server older than the tags)", async () => {
		const api = await fakeApi(() => page(["job-a"]), { tagged: false });
		for (let i = 0; i < 3; i++) expect((await api.client.json("/v1/agents/fake/jobs", shapes.jobPage)).jobs).toHaveLength(1);
		expect(api.seen.map((s) => [s.ifNoneMatch, s.status])).toEqual([
			[null, 200],
			[null, 200],
			[null, 200],
		]);
	});

	it("revalidates only JSON GETs: not a job's output, nor a POST, even when they carry a tag", async () => {
		const output = await fakeApi(() => '{"type":"assistant"}\n', { type: "application/x-ndjson" });
		for (let i = 0; i < 2; i++) await output.client.text("/v1/jobs/job-a/output", "application/x-ndjson");
		const posts = await fakeApi(() => JSON.stringify({ deleted: 1 }));
		for (let i = 0; i < 2; i++) await posts.client.json("/v1/jobs/job-a/cancel", shapes.deleted, { method: "POST", body: {} });
		expect([...output.seen, ...posts.seen].map((s) => [s.method, s.ifNoneMatch, s.status])).toEqual([
			["GET", null, 200],
			["GET", null, 200],
			["POST", null, 200],
			["POST", null, 200],
		]);
	});

	it("keeps at most 64 answers, the least recently used going first, and not one answer of over a million characters", async () => {
		const big = "x".repeat(1_100_000);
		const api = await fakeApi((path) => (path === "/v1/big" ? JSON.stringify({ jobs: [], next_cursor: null, big }) : page([path])));
		const read = (path: string) => api.client.json(path, shapes.jobPage);
		const asked = (path: string) => api.seen.filter((s) => s.path === path).map((s) => s.status);
		for (let n = 0; n < 64; n++) await read(`/v1/p/${n}`);
		// p/0 used again: p/1 is now the least recently used, and the 65th answer pushes it out.
		await read("/v1/p/0");
		await read("/v1/p/64");
		await read("/v1/p/0");
		await read("/v1/p/1");
		expect(asked("/v1/p/0")).toEqual([200, 304, 304]);
		expect(asked("/v1/p/1")).toEqual([200, 200]);
		await read("/v1/big");
		await read("/v1/big");
		expect(asked("/v1/big")).toEqual([200, 200]);
	});

	it("keeps at most 4,000,000 characters of answers, the least recently used going first", async () => {
		const body = (path: string) => JSON.stringify({ jobs: [], next_cursor: null, fill: path.padEnd(900_000, ".") });
		const api = await fakeApi(body);
		const read = (path: string) => api.client.json(path, shapes.jobPage);
		// Four of 900,000 characters fit; the fifth pushes out the first.
		for (let n = 0; n < 5; n++) await read(`/v1/f/${n}`);
		await read("/v1/f/1");
		await read("/v1/f/0");
		expect(api.seen.slice(5).map((s) => [s.path, s.status])).toEqual([
			["/v1/f/1", 304],
			["/v1/f/0", 200],
		]);
	});
});

describe("drover logs <agent> --follow against the real Worker", () => {
	const { url, emulatorUrl, tokens } = inject("drover");
	// The Worker is shared by every e2e file: the agent's name is this file's own.
	const agent = `cli-reval-${Math.random().toString(36).slice(2, 8)}`;
	const model = `claude-test-${agent}`;
	const emulated = (step: unknown) => fetch(`${emulatorUrl}/__emulator/model_errors`, { method: "POST", body: JSON.stringify({ [model]: step }) });
	const api = (path: string, body?: unknown) =>
		fetch(`${url}${path}`, { method: body === undefined ? "GET" : "POST", headers: { authorization: `Bearer ${tokens.admin}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });

	beforeAll(async () => {
		expect((await api("/v1/agents", { name: agent, model, prompt: "Say hello." })).status).toBe(201);
		expect((await emulated({ text: "Hello, revalidated." })).status).toBe(200);
	});
	afterAll(async () => void (await emulated(null)));

	/** A pass-through proxy in front of the Worker that records each request's If-None-Match and the answer's status and ETag. */
	async function recordingProxy() {
		const seen: Seen[] = [];
		const proxyUrl = await listen((req, res) => {
			void (async () => {
				const headers: Record<string, string> = {};
				for (const name of ["authorization", "accept", "if-none-match", "last-event-id"]) {
					const v = req.headers[name];
					if (typeof v === "string") headers[name] = v;
				}
				const upstream = await fetch(`${url}${req.url}`, { method: req.method, headers });
				seen.push({ method: req.method!, path: req.url!, ifNoneMatch: headers["if-none-match"] ?? null, status: upstream.status, etag: upstream.headers.get("etag") });
				const out: Record<string, string> = {};
				upstream.headers.forEach((v, k) => {
					if (!["content-length", "content-encoding", "transfer-encoding", "connection"].includes(k)) out[k] = v;
				});
				res.writeHead(upstream.status, out);
				res.flushHeaders();
				if (upstream.body) for await (const chunk of upstream.body as unknown as AsyncIterable<Uint8Array>) res.write(chunk);
				res.end();
			})().catch(() => res.socket?.destroy());
		});
		return { url: proxyUrl, seen };
	}

	async function until(what: string, probe: () => boolean, timeoutMs = 30_000): Promise<void> {
		const deadline = Date.now() + timeoutMs;
		while (!probe()) {
			if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
			await new Promise((r) => setTimeout(r, 100));
		}
	}

	it("asks for the agent's unchanged jobs list with its tag and gets a 304, and still follows the job started after", async () => {
		const via = await recordingProxy();
		const child = spawn(process.execPath, [CLI, "logs", agent, "--follow"], { env: childEnv({ DROVER_URL: via.url, DROVER_TOKEN: tokens.admin }), stdio: ["ignore", "pipe", "pipe"] });
		let stdout = "";
		let stderr = "";
		child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
		child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
		const closed = new Promise((resolve) => child.on("close", resolve));
		try {
			const polls = () => via.seen.filter((s) => s.path === `/v1/agents/${agent}/jobs?limit=50`);
			// The agent has no jobs: its list is the same at each poll, 2 s apart.
			await until("two polls of the jobs list", () => polls().length >= 2);
			const tag = polls()[0]!.etag;
			expect(tag).toMatch(/^"[\w-]+"$/);
			expect(polls().slice(0, 2)).toEqual([
				{ method: "GET", path: `/v1/agents/${agent}/jobs?limit=50`, ifNoneMatch: null, status: 200, etag: tag },
				{ method: "GET", path: `/v1/agents/${agent}/jobs?limit=50`, ifNoneMatch: tag, status: 304, etag: tag },
			]);

			const job = (await (await api(`/v1/agents/${agent}/jobs`, {})).json()) as { id: string };
			await until(`${job.id}'s end`, () => stdout.includes(`==> ${job.id} completed <==`));
			// The list that named it was answered whole: the tag sent was the empty list's.
			expect(polls().find((s) => s.status === 200 && s.ifNoneMatch !== null)).toMatchObject({ ifNoneMatch: tag });
			const shown = stdout.split("\n").filter((l) => l !== "");
			// Its lines once, between its two marks.
			expect(shown.filter((l) => l.startsWith("==> "))).toEqual([expect.stringMatching(new RegExp(`^==> ${job.id} \\(manual(, completed)?\\) <==$`)), `==> ${job.id} completed <==`]);
			const whole = await runCliProcess(["logs", "--job", job.id, "--lines", "1000"], { DROVER_URL: url, DROVER_TOKEN: tokens.admin });
			expect(shown.slice(1, -1)).toEqual(whole.stdout.split("\n").filter((l) => l !== ""));
			expect(shown.join("\n")).toContain("Hello, revalidated.");
			expect(stderr).toBe("");
		} finally {
			child.kill("SIGINT");
			await closed;
		}
	});
});
