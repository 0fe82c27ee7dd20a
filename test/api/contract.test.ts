import { createExecutionContext, env } from "cloudflare:test";
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { afterEach, describe, expect, it, vi } from "vitest";
import { app } from "../../src/app.ts";
import { dashboardApp } from "../../src/dashboard/routes.tsx";
import type { AppEnv } from "../../src/api/context.ts";
import { HTTPException } from "hono/http-exception";
import { onError } from "../../src/api/error-handler.ts";
import { requestLog } from "../../src/api/request-log.ts";
import { createApi } from "../../src/api/factory.ts";
import { ConflictError, PayloadTooLargeError } from "../../src/errors.ts";
import { call, errorOf } from "../helpers/http.ts";
import { TOKENS } from "../helpers/tokens.ts";

afterEach(() => vi.restoreAllMocks());

describe("the error contract", () => {
	it("answers an unknown route with a JSON 404", async () => {
		const res = await call("/v2/nothing");
		expect(res.status).toBe(404);
		expect(res.headers.get("content-type")).toMatch(/application\/json/);
		expect(await res.json()).toEqual({ error: { code: "not_found", message: "no route for GET /v2/nothing", request_id: res.headers.get("x-request-id") } });
	});

	it("answers a route's path under a method it does not take with a 405 naming the methods it does", async () => {
		const cases: [string, string, string][] = [
			["DELETE", "/v1/jobs/job-2026-11-30-abcdef", "GET, HEAD"],
			["GET", "/v1/jobs/job-2026-11-30-abcdef/cancel", "POST"],
			["POST", "/healthz", "GET, HEAD"],
			["PATCH", "/v1/agents", "GET, HEAD, POST"],
		];
		for (const [method, path, allow] of cases) {
			const res = await call(path, { method, as: "admin" });
			expect(res.status, `${method} ${path}`).toBe(405);
			expect(res.headers.get("allow")).toBe(allow);
			expect(await res.json()).toEqual({ error: { code: "method_not_allowed", message: `${method} is not allowed on ${path}; allowed: ${allow}`, request_id: res.headers.get("x-request-id") } });
		}
		// A path no method takes is still a 404, and so is a route's own method when the route misses.
		expect((await call("/v1/nothing", { method: "DELETE" })).status).toBe(404);
		expect((await call("/ui/jobs/a/b", { method: "POST" })).status).toBe(404);
	});

	it("answers a browser at an address that is no page with an HTML 404 leading back; the API and other clients keep JSON", async () => {
		const html = { accept: "text/html,application/xhtml+xml,*/*;q=0.8" };
		const res = await call("/agents/site-watch/settings", { as: null, headers: html });
		expect(res.status).toBe(404);
		expect(res.headers.get("content-type")).toMatch(/^text\/html/);
		expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
		const body = await res.text();
		expect(body).toContain("The dashboard has no page at <code>/agents/site-watch/settings</code>.");
		expect(body).toContain('<a href="/">Fleet</a>');
		// Static: no script to sign in or load anything.
		expect(body).not.toContain("<script");
		const hostile = await (await call("/%3Cscript%3Ealert(1)%3C/script%3E", { as: null, headers: html })).text();
		expect(hostile).not.toContain("<script>alert(1)");
		for (const [path, headers] of [["/agents/site-watch/settings", {}], ["/v1/nothing", html]] as const) {
			const json = await call(path, { as: null, headers });
			expect(json.status, path).toBe(404);
			expect(json.headers.get("content-type"), path).toMatch(/application\/json/);
		}
	});

	it("carries an AppError's status, code, message and details", async () => {
		const api = createApi();
		api.get("/conflict", () => {
			throw new ConflictError("job job-2026-11-30-abcdef is final", { status: "completed" });
		});
		api.get("/large", () => {
			throw new PayloadTooLargeError("body exceeds 64 KiB");
		});
		api.onError(onError);
		const conflict = await api.request("/conflict");
		expect(conflict.status).toBe(409);
		expect(await conflict.json()).toEqual({
			error: { code: "conflict", message: "job job-2026-11-30-abcdef is final", details: { status: "completed" } },
		});
		const large = await api.request("/large");
		expect(large.status).toBe(413);
		expect(await large.json()).toEqual({ error: { code: "payload_too_large", message: "body exceeds 64 KiB" } });
	});

	it("turns a crash into a generic 500 and keeps the internals in the log", async () => {
		const logged: string[] = [];
		vi.spyOn(console, "error").mockImplementation((line: string) => void logged.push(line));
		const api = new OpenAPIHono<AppEnv>();
		api.get("/boom", () => {
			throw new Error("SQLITE_CONSTRAINT: jobs.id at /internal/path.ts:12");
		});
		api.onError(onError);
		const res = await api.request("/boom");
		expect(res.status).toBe(500);
		const body = await res.text();
		expect(JSON.parse(body)).toEqual({ error: { code: "internal", message: "internal error" } });
		expect(body).not.toContain("SQLITE");
		const line = JSON.parse(logged.at(-1)!);
		expect(line).toMatchObject({ level: "error", event: "request.crashed", path: "/boom", error_message: expect.stringContaining("SQLITE_CONSTRAINT") });
	});

	it("logs a crash with the request id its caller was answered with, and the agent and job the path names", async () => {
		const logged: string[] = [];
		vi.spyOn(console, "error").mockImplementation((line: string) => void logged.push(line));
		const api = new OpenAPIHono<AppEnv>();
		api.use(requestLog);
		api.get("/v1/jobs/:id", () => {
			throw new Error("boom");
		});
		api.get("/v1/agents/:agent/fail", () => {
			throw new HTTPException(502, { message: "upstream said: D1_ERROR at /internal/path.ts" });
		});
		api.onError(onError);
		const job = await api.request("/v1/jobs/job-2026-12-03-abcdef");
		expect(job.status).toBe(500);
		// As a `request` line: how long it took, and the code it was answered with.
		expect(JSON.parse(logged.at(-1)!)).toMatchObject({ event: "request.crashed", job_id: "job-2026-12-03-abcdef", request_id: job.headers.get("x-request-id"), code: "internal", ms: expect.any(Number) });
		// A framework exception's message is no more answered than a crash's.
		const failed = await api.request("/v1/agents/nightly/fail");
		expect(failed.status).toBe(502);
		const body = await failed.text();
		expect(JSON.parse(body)).toEqual({ error: { code: "internal", message: "internal error", request_id: failed.headers.get("x-request-id") } });
		expect(body).not.toContain("D1_ERROR");
		expect(JSON.parse(logged.at(-1)!)).toMatchObject({ event: "request.crashed", agent: "nightly", request_id: failed.headers.get("x-request-id"), code: "internal", ms: expect.any(Number), error_message: expect.stringContaining("D1_ERROR") });
	});

	it("answers a body that is not JSON, or of the wrong shape, with a 400 naming the problem", async () => {
		const api = createApi();
		api.openapi(
			{
				method: "post",
				path: "/things",
				request: { body: { content: { "application/json": { schema: z.object({ name: z.string(), count: z.number().int() }) } } } },
				responses: { 200: { description: "ok" } },
			},
			(c) => c.json(c.req.valid("json"), 200),
		);
		api.onError(onError);
		const post = (body: string) => api.request("/things", { method: "POST", body, headers: { "content-type": "application/json" } });

		const notJson = await post("{name:");
		expect(notJson.status).toBe(400);
		expect((await errorOf(notJson)).code).toBe("bad_request");

		const wrong = await post(JSON.stringify({ name: 3 }));
		expect(wrong.status).toBe(400);
		const error = await errorOf(wrong);
		expect(error.message).toMatch(/^invalid body: /);
		expect(error.details?.issues?.map((i) => i.path).sort()).toEqual(["count", "name"]);
	});
});

describe("GET /openapi.json", () => {
	it("documents what every answer shares: the X-Request-Id header on each, and the 405 with Allow that a path gives under a method it does not list", async () => {
		const doc = (await (await call("/openapi.json", { as: null })).json()) as {
			info: { description: string };
			paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>;
			components: { headers: Record<string, unknown>; responses: Record<string, { headers: Record<string, unknown>; content: unknown }> };
		};
		let responses = 0;
		for (const ops of Object.values(doc.paths)) {
			for (const op of Object.values(ops)) {
				for (const response of Object.values(op.responses)) {
					expect(response.headers?.["X-Request-Id"]).toEqual({ $ref: "#/components/headers/RequestId" });
					responses++;
				}
			}
		}
		expect(responses).toBeGreaterThan(100);
		expect(doc.components.headers.RequestId).toMatchObject({ schema: { type: "string" } });
		expect(doc.components.responses.MethodNotAllowed).toMatchObject({
			description: expect.stringContaining("method_not_allowed"),
			headers: { Allow: expect.objectContaining({ schema: { type: "string" } }), "X-Request-Id": { $ref: "#/components/headers/RequestId" } },
			content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
		});
		expect(doc.info.description).toContain("405 method_not_allowed with Allow");
		// As the answer itself is.
		const res = await call("/v1/status", { method: "DELETE", as: null });
		expect(res.status).toBe(405);
		expect(res.headers.get("allow")).toBe("GET, HEAD");
		expect(res.headers.get("x-request-id")).toBe(((await res.json()) as { error: { code: string; request_id: string } }).error.request_id);
	});

	it("is served without a token and lists every route the app serves, with the role it needs", async () => {
		const res = await call("/openapi.json", { as: null });
		expect(res.status).toBe(200);
		const doc = (await res.json()) as {
			openapi: string;
			paths: Record<string, Record<string, { security?: unknown; "x-drover-role"?: string; responses: Record<string, unknown> }>>;
			components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
		};
		expect(doc.openapi).toBe("3.1.0");

		// The dashboard's pages and assets are not API routes: they are left out of the document.
		const pages = new Set(dashboardApp.routes.map((r) => `${r.method} ${r.path}`));
		const served = app.routes
			.filter((r) => r.method !== "ALL" && r.path !== "/openapi.json" && !pages.has(`${r.method} ${r.path}`))
			.map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}`);
		const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
		expect(new Set(documented)).toEqual(new Set(served));
		expect(served).toEqual(
			expect.arrayContaining([
				"GET /healthz",
				"GET /v1/status",
				"POST /v1/tick",
				"GET /v1/jobs",
				"GET /v1/jobs/{id}",
				"GET /v1/agents",
				"POST /v1/agents",
				"GET /v1/agents/{agent}",
				"PUT /v1/agents/{agent}",
				"DELETE /v1/agents/{agent}",
				"POST /v1/agents/{agent}/jobs",
				"POST /v1/agents/{agent}/pause",
				"POST /v1/agents/{agent}/resume",
				"GET /v1/agents/{agent}/runs",
				"POST /v1/hooks/{agent}",
			]),
		);

		for (const [path, ops] of Object.entries(doc.paths)) {
			for (const op of Object.values(ops)) {
				// Webhooks authenticate by signature instead of a bearer token.
				if (path.startsWith("/v1/hooks/")) {
					expect(op.security).toEqual([]);
					expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["401", "404"]));
				} else if (path.startsWith("/v1/")) {
					expect(op.security).toEqual([{ bearer: [] }]);
					expect(["read", "operate", "admin"]).toContain(op["x-drover-role"]);
					expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["400", "401", "403", "500"]));
				}
			}
		}
		// Every route that takes a JSON body documents the 415 it answers to a body of another type.
		const withBody = Object.entries(doc.paths).flatMap(([path, ops]) =>
			Object.entries(ops as Record<string, { requestBody?: { content: Record<string, unknown> }; responses: Record<string, unknown> }>)
				.filter(([, op]) => op.requestBody?.content["application/json"])
				.map(([method, op]) => [`${method.toUpperCase()} ${path}`, op.responses["415"]] as const),
		);
		expect(withBody.map(([route]) => route)).toEqual(expect.arrayContaining(["POST /v1/agents", "PUT /v1/agents/{agent}", "POST /v1/jobs/{id}/cancel"]));
		for (const [route, response] of withBody) {
			expect(response, route).toMatchObject({ content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } });
		}
		// And the 413 it answers to one over its limit, as the webhook route does.
		const error = { content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
		for (const [route] of withBody) {
			const [method, path] = route.split(" ") as [string, string];
			expect(doc.paths[path]![method.toLowerCase()]!.responses["413"], route).toMatchObject(error);
		}
		expect(doc.paths["/v1/hooks/{agent}"]!.post!.responses["413"]).toMatchObject(error);
		// Every route that queues a run documents the 429 of a full queue; the webhook route its 503.
		for (const [path, method] of [["/v1/agents/{agent}/jobs", "post"], ["/v1/jobs/{id}/continue", "post"], ["/v1/jobs/{id}/fork", "post"], ["/v1/hooks/{agent}", "post"]] as const) {
			expect(doc.paths[path]![method]!.responses["429"], path).toMatchObject(error);
		}
		expect(doc.paths["/v1/hooks/{agent}"]!.post!.responses["503"]).toMatchObject(error);
		// The full queue's 429 says when to come back.
		expect(doc.paths["/v1/agents/{agent}/jobs"]!.post!.responses["429"]).toMatchObject({ headers: { "Retry-After": { schema: { type: "string" } } } });
		// The webhook's body is documented though the route reads it raw (its signature covers the bytes).
		expect(doc.paths["/v1/hooks/{agent}"]!.post).toMatchObject({ requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } } });
		// A job's dispatch is a schedule's (or null); "manual" is only the runs ledger's word.
		const schemas = doc.components.schemas as Record<string, { properties: Record<string, { enum?: (string | null)[]; anyOf?: { enum?: (string | null)[] }[] }> }>;
		const values = (p: { enum?: (string | null)[]; anyOf?: { enum?: (string | null)[] }[] }) => p.enum ?? p.anyOf?.flatMap((a) => a.enum ?? []) ?? [];
		expect(new Set(values(schemas.JobRecord!.properties.dispatch!))).toEqual(new Set(["catch_up", "late", "on_time", null]));
		expect(new Set(values(schemas.JobSummary!.properties.dispatch!))).toEqual(new Set(["catch_up", "late", "on_time", null]));
		// A 416 on job output carries the same JSON error as every other error status.
		expect(doc.paths["/v1/jobs/{id}/output"]!.get!.responses["416"]).toMatchObject({ content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } });
		expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(["Error", "JobRecord", "JobSummary", "JobPage", "AgentView"]));
		expect(doc.components.securitySchemes).toHaveProperty("bearer");
	});

	/**
	 * A request with a body, to the app as a client sends it. A GET or HEAD with a body reaches a
	 * deployed Worker, with its Content-Length, but a Request cannot be built with one: the GET is a
	 * POST that says GET.
	 */
	async function send(method: string, path: string, body: string): Promise<Response> {
		if (method !== "GET" && method !== "HEAD") return call(path, { method, as: "admin", body });
		const post = new Request(`https://drover.test${path}`, { method: "POST", body, headers: { "content-type": "application/json", "content-length": String(new TextEncoder().encode(body).length), authorization: `Bearer ${TOKENS.admin}` } });
		const get = new Proxy(post, {
			get(target, prop) {
				if (prop === "method") return method;
				const value: unknown = Reflect.get(target, prop, target);
				return typeof value === "function" ? value.bind(target) : value;
			},
		});
		return app.fetch(get, env, createExecutionContext());
	}

	it("documents a 413 for every route that answers one to a body over its limit (256 KiB; more where a prompt or a definition is carried), routes that take no body included", async () => {
		const doc = (await (await call("/openapi.json", { as: null })).json()) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
		const params: Record<string, string> = { agent: "some-agent", id: "job-2026-11-01-abcdef", key: "some-key" };
		// The routes that carry a prompt take a body sized to 100,000 characters however escaped, and
		// those that carry a definition one sized to its 256 KiB of JSON however escaped.
		const larger: Record<string, [string, number]> = {
			"POST /v1/agents/{agent}/jobs": ["1.25 MiB", 1.25 * 1024 * 1024],
			"POST /v1/jobs/{id}/continue": ["1.25 MiB", 1.25 * 1024 * 1024],
			"POST /v1/jobs/{id}/fork": ["1.25 MiB", 1.25 * 1024 * 1024],
			"POST /v1/agents": ["1 MiB", 1024 * 1024],
			"PUT /v1/agents/{agent}": ["1 MiB", 1024 * 1024],
		};
		const oversized = JSON.stringify({ pad: "x".repeat(300 * 1024) });
		// The GET reaches the GET route (a POST to it would be a 404).
		expect((await send("GET", "/v1/jobs", "{}")).status).toBe(200);
		const answered: string[] = [];
		for (const [path, ops] of Object.entries(doc.paths)) {
			for (const [method, op] of Object.entries(ops)) {
				const route = `${method.toUpperCase()} ${path}`;
				const url = path.replace(/\{(\w+)\}/g, (_, name: string) => params[name]!);
				const [limit, bytes] = larger[route] ?? ["256 KiB", 256 * 1024];
				const res = await send(method.toUpperCase(), url, bytes > 256 * 1024 ? JSON.stringify({ pad: "x".repeat(bytes + 1024) }) : oversized);
				const message = res.status === 413 ? ((await res.json()) as { error: { message: string } }).error.message : (await res.body?.cancel(), undefined);
				if (res.status === 413) answered.push(route);
				// The document states a 413 exactly where the route gives one, and the limit the answer names.
				expect(op.responses["413"], `${route} answered ${res.status}`).toEqual(
					res.status === 413 ? { description: expect.stringContaining(`over ${limit}`), content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } }, headers: { "X-Request-Id": { $ref: "#/components/headers/RequestId" } } } : undefined,
				);
				if (message !== undefined) expect(message, route).toBe(`request body exceeds ${limit}, this route's limit`);
				// Under its own limit, such a route reads a body another route refuses.
				if (larger[route]) expect((await send(method.toUpperCase(), url, oversized)).status, route).not.toBe(413);
			}
		}
		expect(answered).toEqual(expect.arrayContaining(Object.keys(larger)));
		expect(answered).toEqual(
			expect.arrayContaining([
				"GET /v1/jobs",
				"POST /v1/agents/{agent}/resume",
				"POST /v1/incidents/{id}/close",
				"DELETE /v1/agents/{agent}",
				"POST /v1/agents",
				"POST /v1/hooks/{agent}",
			]),
		);
	});
});
