import { env } from "cloudflare:test";
import { Hono } from "hono";
import { afterEach, describe, expect, it, vi } from "vitest";
import { requireRole } from "../../src/api/auth/middleware.ts";
import { findToken, parseApiTokens, sha256 } from "../../src/api/auth/tokens.ts";
import type { AppEnv } from "../../src/api/context.ts";
import { onError } from "../../src/api/error-handler.ts";
import { app } from "../../src/app.ts";
import { ConfigError } from "../../src/errors.ts";
import { recordTick } from "../../src/store/heartbeat.ts";
import { call, errorOf } from "../helpers/http.ts";
import { API_TOKENS, TOKENS } from "../helpers/tokens.ts";

/** A tiny app with one route per role, behind the real middleware and error handler. */
function roleApp() {
	const app = new Hono<AppEnv>();
	app.get("/read", requireRole("read"), (c) => c.json({ who: c.var.principal }));
	app.get("/operate", requireRole("operate"), (c) => c.json({ who: c.var.principal }));
	app.get("/admin", requireRole("admin"), (c) => c.json({ who: c.var.principal }));
	app.onError(onError);
	return app;
}

/** `apiTokens` null: the secret is not set at all. */
function request(app: Hono<AppEnv>, path: string, token: string | null, apiTokens: string | null = API_TOKENS) {
	const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
	return app.request(path, { headers }, (apiTokens === null ? {} : { API_TOKENS: apiTokens }) as Env);
}

afterEach(() => vi.restoreAllMocks());

describe("the API's bearer tokens", () => {
	it("answers 401 with a clear message when no token is sent", async () => {
		const res = await call("/v1/jobs", { as: null });
		expect(res.status).toBe(401);
		const error = await errorOf(res);
		expect(error.code).toBe("unauthorized");
		expect(error.message).toMatch(/missing Authorization header/);
		expect(res.headers.get("www-authenticate")).toBe('Bearer realm="drover"');
		// A forbidden role is a 403, which names no scheme: the token was fine, its role too weak.
		const weak = await call("/v1/agents", { method: "POST", as: "read", body: { name: "x", model: "y" } });
		expect(weak.status).toBe(403);
		expect(weak.headers.get("www-authenticate")).toBeNull();
	});

	it("tells the caller its token's name and role at GET /v1/me, and nothing without a token", async () => {
		for (const [role, name] of [["read", "reader"], ["operate", "operator"], ["admin", "root"]] as const) {
			const res = await call("/v1/me", { as: role });
			expect(res.status).toBe(200);
			expect(await res.json()).toEqual({ name, role });
		}
		expect((await call("/v1/me", { as: null })).status).toBe(401);
	});

	it("answers 401 to a wrong token, one differing only in its last character, and an empty one", async () => {
		for (const token of ["nope-nope-nope-nope-nope", `${TOKENS.read.slice(0, -1)}x`, `${TOKENS.read}x`]) {
			const res = await call("/v1/jobs", { as: { token } });
			expect(res.status).toBe(401);
			expect((await errorOf(res)).message).toBe("invalid token");
		}
	});

	it("answers 401 to an Authorization header that is not a bearer token", async () => {
		for (const value of [`Basic ${btoa(`x:${TOKENS.read}`)}`, "Bearer", TOKENS.read]) {
			const res = await call("/v1/jobs", { as: null, headers: { authorization: value } });
			expect(res.status).toBe(401);
		}
	});

	it("refuses a token in the query string, even a valid one alongside a valid header", async () => {
		for (const param of ["token", "access_token", "api_key"]) {
			const res = await call(`/v1/jobs?${param}=${TOKENS.admin}`, { as: "admin" });
			expect(res.status).toBe(401);
			expect((await errorOf(res)).message).toMatch(/not accepted in the query string/);
		}
	});

	it("lets each role reach the routes of its rank and below, and answers 403 above it", async () => {
		const app = roleApp();
		const expected = {
			read: { "/read": 200, "/operate": 403, "/admin": 403 },
			operate: { "/read": 200, "/operate": 200, "/admin": 403 },
			admin: { "/read": 200, "/operate": 200, "/admin": 200 },
		} as const;
		for (const [role, routes] of Object.entries(expected)) {
			for (const [path, status] of Object.entries(routes)) {
				const res = await request(app, path, TOKENS[role as keyof typeof TOKENS]);
				expect({ role, path, status: res.status }).toEqual({ role, path, status });
				if (status === 403) {
					const error = await errorOf(res);
					expect(error.code).toBe("forbidden");
					expect(error.message).toContain(`needs the ${path.slice(1)} role`);
				}
			}
		}
	});

	it("identifies the caller by the token's name, never echoing the token", async () => {
		const res = await request(roleApp(), "/read", TOKENS.operate);
		const body = await res.text();
		expect(JSON.parse(body)).toEqual({ who: { name: "operator", role: "operate" } });
		expect(body).not.toContain(TOKENS.operate);
	});

	it("lets a read token list jobs through the real Worker", async () => {
		const res = await call("/v1/jobs", { as: "read" });
		expect(res.status).toBe(200);
	});
});

describe("constant-time token lookup", () => {
	it("compares fixed-length digests against every configured entry, wherever the match is", async () => {
		const { entries } = await parseApiTokens(API_TOKENS);
		for (const [presented, expectedName] of [
			[TOKENS.read, "reader"],
			[TOKENS.admin, "root"],
			["x", undefined],
			["a-much-longer-token-than-any-configured-one-0123456789", undefined],
		] as const) {
			const lengths: number[] = [];
			let calls = 0;
			const found = await findToken(entries, presented, (a, b) => {
				calls++;
				lengths.push(a.byteLength, b.byteLength);
				return crypto.subtle.timingSafeEqual(a, b);
			});
			expect(found?.name).toBe(expectedName);
			// No early exit on a match, and the presented token's length never shows in what is compared.
			expect(calls).toBe(entries.length);
			expect(new Set(lengths)).toEqual(new Set([32]));
		}
	});

	it("keeps only digests of the configured tokens", async () => {
		const { entries } = await parseApiTokens(API_TOKENS);
		expect(entries.map((e) => [e.name, e.role])).toEqual([
			["reader", "read"],
			["operator", "operate"],
			["root", "admin"],
		]);
		const digest = new Uint8Array(await sha256(TOKENS.read));
		expect(new Uint8Array(entries[0]!.digest)).toEqual(digest);
		expect(JSON.stringify(entries)).not.toContain(TOKENS.read);
	});

	it("accepts tokens that contain colons", async () => {
		const { entries } = await parseApiTokens("ci:operate:abc:def:0123456789abcdef");
		expect((await findToken(entries, "abc:def:0123456789abcdef"))?.name).toBe("ci");
	});
});

describe("a misconfigured API_TOKENS secret", () => {
	const cases: [string, string][] = [
		["", "no tokens configured"],
		["reader:read", "API_TOKENS[0]: expected name:role:token"],
		["reader:owner:0123456789abcdef0", "API_TOKENS[0]: role must be read, operate or admin"],
		["reader:read:short", "API_TOKENS[0]: token is shorter than 16 characters"],
		["a:read:0123456789abcdef0,a:admin:0123456789abcdef1", "API_TOKENS[1]: name is used twice (as API_TOKENS[0])"],
		["bad name:read:0123456789abcdef0", "name must be 1-64 of"],
		// Only curl could send these: a browser's fetch refuses them or sends them as Latin-1, the CLI refuses them.
		// Refused one by one (below), the secret is refused whole when no entry is left, or with another problem.
		["a:read:トークン-abcdefghijklmnop", "API_TOKENS[0]: token holds characters no token has: a space, a line break or a character beyond ASCII; API_TOKENS: no entry is left to use"],
		["a:read:0123456789 abcdef0", "API_TOKENS[0]: token holds characters no token has"],
		["a:read:0123456789abcdef0,b:admin:caf\u00e9-0123456789abcdef,c:owner:0123456789abcdef0", "API_TOKENS[1]: token holds characters no token has: a space, a line break or a character beyond ASCII; API_TOKENS[2]: role must be"],
	];
	for (const [secret, message] of cases) {
		it(`is refused whole: ${message}`, async () => {
			const err = await parseApiTokens(secret).catch((e: unknown) => e);
			expect(err).toBeInstanceOf(ConfigError);
			expect((err as ConfigError).message).toContain(message);
			// Entries are named by their place, never by the token.
			expect((err as ConfigError).message).not.toMatch(/トークン|café|abcdef0 /);
		});
	}

	it("says the secret is not set when it is not, instead of an internal error", async () => {
		vi.spyOn(console, "error").mockImplementation(() => {});
		for (const secret of [null, "", "  "]) {
			const res = await request(roleApp(), "/read", "0123456789abcdef0123", secret);
			expect(res.status).toBe(500);
			// A config_invalid 500 as every other one (ConfigError): the issue names the secret, nothing of a value.
			expect(await res.json()).toEqual({
				error: {
					code: "config_invalid",
					message: "the API_TOKENS secret is not set; set it with `wrangler secret put API_TOKENS` (npm start writes one to .dev.vars)",
					details: { issues: [{ path: "API_TOKENS", message: "the secret is not set" }] },
				},
			});
		}
	});

	it("fails closed with a 500 that tells callers nothing of the configuration, and logs the issue without the token", async () => {
		const logged: string[] = [];
		vi.spyOn(console, "error").mockImplementation((line: string) => void logged.push(line));
		const secret = "reader:read:tooshort-secret";
		const res = await request(roleApp(), "/read", "tooshort-secret", secret);
		expect(res.status).toBe(500);
		const body = await res.text();
		expect(JSON.parse(body).error.code).toBe("config_invalid");
		expect(JSON.parse(body).error.message).toBe("the API_TOKENS secret is misconfigured; /healthz and the Worker's logs say how");
		expect(JSON.parse(body).error.details).toEqual({ issues: [{ path: "API_TOKENS", message: "the secret does not parse; /healthz and the Worker's logs say how" }] });
		expect(body).not.toContain("tooshort-secret");
		expect(body).not.toContain("reader");
		expect(logged.join("\n")).toContain(`{"path":"API_TOKENS[0]","message":"token is shorter than 16 characters"}`);
		expect(logged.join("\n")).not.toContain("tooshort-secret");
	});

	it("does not log a token written in the name's place (an entry written token first)", async () => {
		const logged: string[] = [];
		vi.spyOn(console, "error").mockImplementation((line: string) => void logged.push(line));
		const token = "Zq8vN3rT6yW1pL4sK7dF2hJ5";
		const res = await request(roleApp(), "/read", token, `${token}:admin:ci`);
		expect(res.status).toBe(500);
		expect(logged.join("\n")).toContain(`{"path":"API_TOKENS[0]","message":"token is shorter than 16 characters"}`);
		expect(logged.join("\n")).not.toContain(token);
	});
});

describe("an API_TOKENS entry whose token is not printable ASCII", () => {
	// A rule of this release: a deployment upgrading with such an entry keeps its other tokens.
	const refusedIssue = { path: "API_TOKENS[1]", message: "token holds characters no token has: a space, a line break or a character beyond ASCII; this entry is refused, the others work" };
	const secret = `${API_TOKENS},latin:admin:caf\u00e9-0123456789abcdef`;

	it("is refused alone: the other tokens keep working, on the API and for the dashboard's and CLI's GET /v1/me", async () => {
		const logged: string[] = [];
		vi.spyOn(console, "error").mockImplementation((line: string) => void logged.push(line));
		const withLatin = { ...env, API_TOKENS: `reader:read:${TOKENS.read},latin:admin:caf\u00e9-0123456789abcdef` } as Env;
		const me = await app.request("/v1/me", { headers: { authorization: `Bearer ${TOKENS.read}` } }, withLatin);
		expect(me.status).toBe(200);
		expect(await me.json()).toEqual({ name: "reader", role: "read" });
		// The refused entry's token does not get in, by curl or otherwise.
		const latin = await app.request("/v1/me", { headers: { authorization: `Bearer ${new TextDecoder("latin1").decode(new TextEncoder().encode("caf\u00e9-0123456789abcdef"))}` } }, withLatin);
		expect(latin.status).toBe(401);
		// Logged by its place once, never by its token.
		const lines = logged.filter((l) => l.includes('"auth.tokens_refused"'));
		expect(lines).toHaveLength(1);
		expect(JSON.parse(lines[0]!).issues).toEqual([refusedIssue]);
		// Not /caf/: the line's request_id is random hex, which may hold it.
		expect(logged.join("\n")).not.toMatch(/caf(\u00e9|\\u00e9)|latin|0123456789abcdef/);
	});

	it("is listed under api_tokens in /healthz, without degrading it, and never named or quoted there", async () => {
		await freshTick();
		const res = await app.request("/healthz", {}, { ...env, API_TOKENS: secret } as Env);
		expect(res.status).toBe(200);
		const health = (await res.json()) as { api_tokens: unknown; status: string };
		expect(health.status).toBe("ok");
		expect(health.api_tokens).toEqual({ ok: true, issues: [{ ...refusedIssue, path: "API_TOKENS[3]" }] });
		expect(JSON.stringify(health)).not.toMatch(/caf(\u00e9|\\u00e9)|latin|0123456789abcdef/);
		expect(((await (await call("/healthz", { as: null })).json()) as { api_tokens: unknown }).api_tokens).toEqual({ ok: true });
	});

	it("/healthz answers 503 with the issues of a secret refused whole, or not set, which callers of the API only hear the name of", async () => {
		vi.spyOn(console, "error").mockImplementation(() => {});
		await freshTick();
		expect((await call("/healthz", { as: null })).status).toBe(200);
		const short = await app.request("/healthz", {}, { ...env, API_TOKENS: "reader:read:tooshort-secret" } as Env);
		expect(short.status).toBe(503);
		const body = await short.text();
		expect(JSON.parse(body)).toMatchObject({ status: "degraded", api_tokens: { ok: false, issues: [{ path: "API_TOKENS[0]", message: "token is shorter than 16 characters" }] } });
		expect(body).not.toMatch(/tooshort|reader/);
		const unset = await app.request("/healthz", {}, { ...env, API_TOKENS: "" } as Env);
		expect(unset.status).toBe(503);
		expect(((await unset.json()) as { api_tokens: unknown }).api_tokens).toEqual({ ok: false, issues: [{ path: "API_TOKENS", message: "the secret is not set" }] });
	});
});

/** A good tick just now, so /healthz answers for API_TOKENS alone. */
async function freshTick(): Promise<void> {
	const now = Date.now();
	await recordTick(env.DB, { tickAt: now, scheduledTime: now, outcome: "ok", shardsOk: 16, shardsFailed: 0, agentsCalled: 0, claimed: 0, skipped: 0, error: null, deferred: 0, oldestDeferredAt: null, shardsBehind: 0 });
}
