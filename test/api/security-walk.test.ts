import { exports } from "cloudflare:workers";
import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { app } from "../../src/app.ts";
import { parseApiTokens } from "../../src/api/auth/tokens.ts";
import { signWebhook } from "../../src/api/webhook-signature.ts";
import { scrubbedExcerpt } from "../../src/delivery/secret-url.ts";
import { REDACTED, redact } from "../../src/security/redact.ts";
import { MAX_QUEUED } from "../../durable-objects/agent/triggers.ts";
import { createAgent, runsOf, settle } from "../helpers/agents.ts";
import { heldModel, useEmulator } from "../helpers/emulator.ts";
import { jobOf, trigger } from "../helpers/jobs.ts";
import { call, errorOf } from "../helpers/http.ts";
import { API_TOKENS, TOKENS, WEBHOOK_SECRET } from "../helpers/tokens.ts";

interface Operation {
	security?: unknown[];
	"x-drover-role"?: "read" | "operate" | "admin";
}

/** The OpenAPI document's operations, each with a concrete path (its parameters given plausible values). */
async function operations(): Promise<{ method: string; path: string; op: Operation }[]> {
	const doc = (await (await exports.default.fetch("https://drover.test/openapi.json")).json()) as { paths: Record<string, Record<string, Operation>> };
	const values: Record<string, string> = { agent: "triage", id: "job-2026-12-01-aaaaaa", key: "note" };
	return Object.entries(doc.paths).flatMap(([path, ops]) =>
		Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path: path.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? "x"), op })),
	);
}

function send(method: string, path: string, token: string | null): Promise<Response> {
	const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
	const body = method === "GET" || method === "HEAD" || method === "DELETE" ? undefined : "{}";
	if (body !== undefined) headers["content-type"] = "application/json";
	return exports.default.fetch(new Request(`https://drover.test${path}`, { method, headers, body }));
}

describe("security walk: every operation the OpenAPI document lists", () => {
	it("answers 401 without a token, and 403 to a read token where it needs more, for every bearer route", async () => {
		const ops = await operations();
		expect(ops.length).toBeGreaterThan(30);
		const seen: string[] = [];
		for (const { method, path, op } of ops) {
			const route = `${method} ${path}`;
			if (!path.startsWith("/v1/")) {
				expect(op.security ?? [], route).toEqual([]);
				continue;
			}
			if (path.startsWith("/v1/hooks/")) {
				// Signature, not token: an unsigned POST is refused whatever the token.
				for (const token of [null, TOKENS.admin]) expect((await send(method, path, token)).status, route).toBe(401);
				continue;
			}
			const none = await send(method, path, null);
			expect(none.status, `${route} without a token`).toBe(401);
			const read = await send(method, path, TOKENS.read);
			if (op["x-drover-role"] === "read") expect(read.status, `${route} as read`).not.toBe(403);
			else expect(read.status, `${route} as read`).toBe(403);
			// A write is never allowed below its declared role, and only GET/HEAD are open to read.
			if (method !== "GET") expect(op["x-drover-role"], route).not.toBe("read");
			seen.push(route);
		}
		expect(seen.length).toBeGreaterThan(30);
	});
});

describe("security walk: a definition holding one of the Worker's secret values", () => {
	// Each is a value a read token must never see: a drover token, a webhook secret, a URL secret
	// (percent-encoded, as a link would carry it, and JSON-escaped, as PHP writes a slash).
	const cases = [
		["a drover admin token in the prompt", { prompt: `Call the API with ${TOKENS.admin} when done.` }, "prompt"],
		["a webhook secret in a schedule's prompt", { prompt: "Do it.", schedules: { morning: { cron: "0 9 * * *", prompt: `sign with ${WEBHOOK_SECRET}` } } }, "schedules.morning.prompt"],
		["a URL secret percent-encoded in the system prompt", { prompt: "Do it.", system_prompt: `post to ${encodeURIComponent("https://tickets.example.test/hook")}` }, "system_prompt"],
		["a URL secret JSON-escaped in the system prompt", { prompt: "Do it.", system_prompt: String.raw`post to https:\/\/tickets.example.test\/hook` }, "system_prompt"],
	] as const;

	for (const [what, fields, path] of cases) {
		it(`refuses ${what} (400 naming the field, never the value) and stores nothing`, async () => {
			const name = `leaky-${path.replace(/[^a-z]/g, "").slice(0, 20)}-${what.length}`;
			for (const query of ["?dry_run=true", ""]) {
				const res = await call(`/v1/agents${query}`, { method: "POST", as: "admin", body: { name, ...fields } });
				const text = await res.clone().text();
				expect(res.status, text).toBe(400);
				const error = await errorOf(res);
				expect(error.details?.issues).toEqual([{ path, message: expect.stringMatching(/value of one of the Worker's secrets/) }]);
				for (const secret of [TOKENS.admin, WEBHOOK_SECRET, "tickets.example.test"]) expect(text).not.toContain(secret);
			}
			expect((await call(`/v1/agents/${name}`)).status).toBe(404);
		});
	}

	it("refuses a PUT that would put a token in, leaving the definition as it was", async () => {
		await createAgent({ name: "leaky-put" });
		const before = await (await call("/v1/agents/leaky-put/definition")).text();
		const res = await call("/v1/agents/leaky-put", { method: "PUT", as: "admin", body: { name: "leaky-put", prompt: "Do the thing.", tools: [], system_prompt: `op token: ${TOKENS.operate}` } });
		expect(res.status).toBe(400);
		expect((await errorOf(res)).details?.issues).toEqual([{ path: "system_prompt", message: expect.stringMatching(/value of one of the Worker's secrets/) }]);
		const after = await (await call("/v1/agents/leaky-put/definition")).text();
		expect(after).toBe(before);
		expect(after).not.toContain(TOKENS.operate);
	});

	it("still takes a definition that names its secrets, and words that merely look like them", async () => {
		await createAgent({ name: "names-secrets", prompt: "Post what you find; TRIAGE_WEBHOOK_SECRET signs the trigger, https://tickets.example.test/ is the public site.", webhook: { secret: "TRIAGE_WEBHOOK_SECRET" } });
	});
});

describe("security walk: a URL secret's password, as its receiver quotes it", () => {
	// TEST_BASIC_AUTH_URL is https://drover-bot:p%40ss-w0rd-0123@basic.example.test/in: drover posts
	// without the password in the URL, as `authorization: Basic <base64 of user:password>`, so what a
	// receiver has to quote is the password decoded, or that credential, never the URL.
	const password = "p@ss-w0rd-0123";
	const basic = btoa("drover-bot:p@ss-w0rd-0123");
	const url = "https://drover-bot:p%40ss-w0rd-0123@basic.example.test/in";

	it("is redacted decoded, percent-encoded and as the Basic credential, wherever it is stored or logged", () => {
		for (const text of [`401: wrong password ${password} for drover-bot`, `{"error":"bad credentials ${basic}"}`, `password=${encodeURIComponent(password)}&user=drover-bot`, `seen: ${password}.`]) {
			const out = redact(text);
			expect(out, text).toContain(REDACTED);
			for (const secret of [password, basic, encodeURIComponent(password)]) expect(out, text).not.toContain(secret);
		}
		// A word that only starts like it is kept.
		expect(redact("p@ss-w0rd-01")).toBe("p@ss-w0rd-01");
	});

	it("is cut out of a webhook tool's answer the model and the output are shown", () => {
		const answer = `{"detail":"user drover-bot, password ${password} refused; sent Basic ${basic}"}`;
		const shown = scrubbedExcerpt(answer, url, "<webhook url>", 500);
		expect(shown).not.toContain(password);
		expect(shown).not.toContain(basic);
	});
});

/** A body of `bytes` sent as a stream, with no Content-Length: the limit must count what arrives. */
function streamed(bytes: number): ReadableStream<Uint8Array> {
	const chunk = new TextEncoder().encode(`{"x":"${"a".repeat(64 * 1024 - 8)}"}`);
	let sent = 0;
	return new ReadableStream({
		pull(controller) {
			if (sent >= bytes) return controller.close();
			controller.enqueue(chunk);
			sent += chunk.byteLength;
		},
	});
}

describe("security walk: request bodies", () => {
	it("refuses a body past the limit sent without Content-Length, unauthenticated and on the unsigned webhook route alike (413, nothing read past it)", async () => {
		for (const [path, token] of [["/v1/hooks/triage", null], ["/v1/agents/triage/pause", null], ["/v1/agents/triage/pause", TOKENS.admin], ["/v1/no-such-route", TOKENS.admin]] as const) {
			const headers: Record<string, string> = { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) };
			const res = await exports.default.fetch(new Request(`https://drover.test${path}`, { method: "POST", headers, body: streamed(4 * 1024 * 1024), duplex: "half" } as RequestInit));
			expect(res.status, path).toBe(413);
			expect(((await res.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
		}
	});
});

describe("security walk: the dashboard's serving headers (read, not changed: src/dashboard is not this walk's)", () => {
	it("frames nowhere, runs only its own script, sends no referrer and sets no cookie, and escapes a crafted address", async () => {
		const res = await exports.default.fetch(new Request(`https://drover.test/jobs/${encodeURIComponent('"><script>alert(1)</script>')}`));
		const csp = res.headers.get("content-security-policy") ?? "";
		expect(csp).toContain("frame-ancestors 'none'");
		expect(csp).toContain("script-src 'self'");
		expect(csp).not.toContain("unsafe-inline");
		expect(res.headers.get("x-frame-options")).toBe("DENY");
		expect(res.headers.get("x-content-type-options")).toBe("nosniff");
		expect(res.headers.get("referrer-policy")).toBe("no-referrer");
		expect(res.headers.get("set-cookie")).toBeNull();
		expect(await res.text()).not.toContain("<script>alert(1)");
	});
});

describe("security walk: values echoed into headers", () => {
	it("a job id or agent name that could carry a header break or a quote never reaches a path, a key or a header: refused at the parameter", async () => {
		for (const path of [`/v1/jobs/${encodeURIComponent('job-2026-12-01-aaaaaa"\r\nx-evil: 1')}/output.log`, `/v1/jobs/${encodeURIComponent("../../etc")}/output`, `/v1/agents/${encodeURIComponent("Triage/../x")}/runs`]) {
			const res = await call(path);
			expect(res.status, path).toBe(400);
			expect(res.headers.get("x-evil")).toBeNull();
			expect(res.headers.get("content-disposition")).toBeNull();
		}
	});
});

describe("security walk: one token under two roles in API_TOKENS (a careless operator's copied line)", () => {
	const shared = "shared-token-0123456789abcdef";
	// Grafana was to read; the token it holds is ops' admin one. The first entry used to win.
	const secret = `${API_TOKENS},ops:admin:${shared},grafana:read:${shared}`;
	const asShared = (path: string, method = "GET") => app.request(path, { method, headers: { authorization: `Bearer ${shared}` } }, { ...env, API_TOKENS: secret } as Env);

	it("lets neither role in with it, says so by place under /healthz, and keeps every other token working", async () => {
		vi.spyOn(console, "error").mockImplementation(() => {});
		expect((await asShared("/v1/me")).status).toBe(401);
		expect((await asShared("/v1/tick", "POST")).status).toBe(401);
		const admin = await app.request("/v1/me", { headers: { authorization: `Bearer ${TOKENS.admin}` } }, { ...env, API_TOKENS: secret } as Env);
		expect(await admin.json()).toEqual({ name: "root", role: "admin" });
		const { refused } = await parseApiTokens(secret);
		expect(refused).toEqual([
			{ path: "API_TOKENS[3]", message: "token is also API_TOKENS[4]'s, under another role: a token has one role; this entry is refused, the others work" },
			{ path: "API_TOKENS[4]", message: "token is also API_TOKENS[3]'s, under another role: a token has one role; this entry is refused, the others work" },
		]);
		const health = (await (await app.request("/healthz", {}, { ...env, API_TOKENS: secret } as Env)).json()) as { api_tokens: { ok: boolean; issues: unknown[] } };
		expect(health.api_tokens).toEqual({ ok: true, issues: refused });
		expect(JSON.stringify(health)).not.toContain(shared);
		vi.restoreAllMocks();
	});

	it("still takes one token under two names of the same role (the first name is the caller's)", async () => {
		const { entries, refused } = await parseApiTokens(`a:operate:${shared},b:operate:${shared}`);
		expect(refused).toEqual([]);
		expect(entries.map((e) => e.name)).toEqual(["a", "b"]);
	});
});

describe("security walk: a signed webhook refused while its agent is paused", () => {
	const hook = (body: string, timestamp: number, signature: string) =>
		call("/v1/hooks/walk-paused", { method: "POST", as: null, body, headers: { "x-drover-timestamp": String(timestamp), "x-drover-signature": signature } });

	it("refuses an exact replay of it once the agent resumes, and takes the sender's own retry signed afresh", async () => {
		await createAgent({ name: "walk-paused", max_concurrent: 10, prompt: "Triage this.", webhook: { secret: "TRIAGE_WEBHOOK_SECRET" } });
		await call("/v1/agents/walk-paused/pause", { method: "POST", as: "operate", body: { reason: "maintenance" } });
		const body = JSON.stringify({ ticket: 7 });
		const now = Math.floor(Date.now() / 1000);
		const signature = await signWebhook(WEBHOOK_SECRET, now, body);
		const refused = await hook(body, now, signature);
		expect(refused.status).toBe(409);
		expect((await errorOf(refused)).code).toBe("agent_paused");
		await call("/v1/agents/walk-paused/resume", { method: "POST", as: "operate" });
		// Whoever captured the refused request replays it, still within the 300 s window.
		const replay = await hook(body, now, signature);
		expect(replay.status).toBe(409);
		expect(await errorOf(replay)).toEqual({
			code: "conflict",
			message: "this webhook request was refused when it was first sent, and an exact replay of it is refused too: send it again signed with a new X-Drover-Timestamp",
		});
		expect(await runsOf("walk-paused")).toHaveLength(0);
		// The sender's own retry, re-signed with a new timestamp, runs.
		const retry = await hook(body, now + 1, await signWebhook(WEBHOOK_SECRET, now + 1, body));
		expect(retry.status).toBe(202);
		expect(await runsOf("walk-paused")).toHaveLength(1);
	});
});

describe("security walk: a signed webhook refused with its agent's queue full", () => {
	it("runs when the sender honouring Retry-After sends the same signed bytes again once the queue drains", async () => {
		const emulator = useEmulator();
		const { arrived, release } = heldModel(emulator);
		await createAgent({ name: "walk-full", overlap: "queue", prompt: "Triage this.", webhook: { secret: "TRIAGE_WEBHOOK_SECRET" } });
		const running = await trigger("walk-full");
		await arrived;
		for (let i = 0; i < MAX_QUEUED; i++) await trigger("walk-full");
		const body = JSON.stringify({ ticket: 8 });
		const now = Math.floor(Date.now() / 1000);
		const signature = await signWebhook(WEBHOOK_SECRET, now, body);
		const send = () => call("/v1/hooks/walk-full", { method: "POST", as: null, body, headers: { "x-drover-timestamp": String(now), "x-drover-signature": signature } });
		const full = await send();
		expect(full.status).toBe(429);
		expect(full.headers.get("retry-after")).toBe("30");
		// A queued run cancelled: the queue has room again, and the same bytes come back.
		const queued = ((await (await call("/v1/jobs?agent=walk-full&status=pending&limit=1")).json()) as { jobs: { id: string }[] }).jobs[0]!;
		expect((await call(`/v1/jobs/${queued.id}/cancel`, { method: "POST", as: "operate", body: {} })).status).toBe(200);
		const resent = await send();
		expect(resent.status).toBe(202);
		expect(((await resent.json()) as { trigger_type: string }).trigger_type).toBe("webhook");
		expect((await call("/v1/agents/walk-full", { method: "DELETE", as: "admin" })).status).toBe(200);
		emulator.enqueue({ text: "Done." });
		release();
		await settle("walk-full");
		expect((await jobOf("walk-full", running.id)).status).toBe("completed");
	}, 30_000);
});

describe("security walk: a URL secret with its scheme and host in another case", () => {
	// TEST_SLACK_URL is https://slack.example.test/services/T0/B0/xyz: a receiver, a proxy or a
	// log line may write the host in capitals; it is the same URL, and the path is the credential.
	it("is redacted in any text drover stores or logs, the path as written only", () => {
		for (const text of ["POST HTTPS://SLACK.EXAMPLE.TEST/services/T0/B0/xyz failed", '{"url":"Https:\\/\\/Slack.Example.Test\\/services\\/T0\\/B0\\/xyz"}']) {
			const out = redact(text);
			expect(out, text).toContain(REDACTED);
			expect(out, text).not.toMatch(/T0.B0.xyz/);
		}
		expect(redact("see https://slack.example.test/Services/T0/B0/XYZ")).toBe("see https://slack.example.test/Services/T0/B0/XYZ");
	});
});
