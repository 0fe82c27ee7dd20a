import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { app } from "../../src/app.ts";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";
import { TOKENS } from "../helpers/tokens.ts";
import { recordTick } from "../../src/store/heartbeat.ts";
import { bundleFleetForTest } from "../../src/config/bundled.ts";
import { captureLogs } from "../helpers/logs.ts";

afterEach(() => vi.restoreAllMocks());

const requestLines = (lines: Record<string, unknown>[]) => lines.filter((l) => l.event === "request");

describe("a refused request, as an operator finds it", () => {
	it("logs a bad token's 401 at warn, with the request id its caller was answered with, in the header and the body", async () => {
		const lines = captureLogs();
		const res = await call("/v1/jobs", { as: { token: "wrong-token-0000000000000000" } });
		expect(res.status).toBe(401);
		const id = res.headers.get("x-request-id");
		expect(id).toBeTruthy();
		expect(((await res.json()) as { error: { request_id: string } }).error.request_id).toBe(id);
		expect(requestLines(lines)).toEqual([
			expect.objectContaining({ level: "warn", method: "GET", route: "/v1/jobs", path: "/v1/jobs", status: 401, code: "unauthorized", request_id: id, ms: expect.any(Number) }),
		]);
		// The token sent is no part of the line.
		expect(JSON.stringify(lines)).not.toContain("wrong-token");
	});

	it("logs a 403 at warn with the token's name, never the token", async () => {
		const lines = captureLogs();
		const res = await call("/v1/agents", { method: "POST", as: "read", body: { name: "x" } });
		expect(res.status).toBe(403);
		expect(requestLines(lines)).toEqual([expect.objectContaining({ level: "warn", route: "/v1/agents", status: 403, code: "forbidden", by: "reader", request_id: res.headers.get("x-request-id") })]);
		expect(JSON.stringify(lines)).not.toContain(TOKENS.read);
	});

	it("logs a 404 and a 405 at info, each with its body's request id", async () => {
		const lines = captureLogs();
		const missing = await call("/v1/nothing-here");
		expect(missing.status).toBe(404);
		const notAllowed = await call("/v1/jobs", { method: "DELETE" });
		expect(notAllowed.status).toBe(405);
		const ids = [((await missing.json()) as { error: { request_id: string } }).error.request_id, ((await notAllowed.json()) as { error: { request_id: string } }).error.request_id];
		expect(ids).toEqual([missing.headers.get("x-request-id"), notAllowed.headers.get("x-request-id")]);
		expect(requestLines(lines)).toEqual([
			expect.objectContaining({ level: "info", method: "GET", path: "/v1/nothing-here", status: 404, code: "not_found", request_id: ids[0] }),
			expect.objectContaining({ level: "info", method: "DELETE", path: "/v1/jobs", status: 405, code: "method_not_allowed", request_id: ids[1] }),
		]);
	});

	it("logs a 400 with its route and request id", async () => {
		const lines = captureLogs();
		const res = await call("/v1/jobs?limit=0");
		expect(res.status).toBe(400);
		expect(requestLines(lines)).toEqual([expect.objectContaining({ level: "info", route: "/v1/jobs", status: 400, code: "bad_request", by: "reader", request_id: res.headers.get("x-request-id") })]);
	});

	it("names an incident a refused request was about as incident, as every other incident line does", async () => {
		const lines = captureLogs();
		const res = await call("/v1/incidents/nope_0123456789ab/close", { method: "POST", as: "operate" });
		expect(res.status).toBe(404);
		const [line] = requestLines(lines);
		expect(line).toMatchObject({ route: "/v1/incidents/:id/close", status: 404, incident: "nope_0123456789ab" });
		expect(line).not.toHaveProperty("id");
	});

	it("logs no line for a success (Workers' invocation log has it)", async () => {
		const lines = captureLogs();
		expect((await call("/v1/jobs")).status).toBe(200);
		expect(requestLines(lines)).toEqual([]);
	});

	it("takes Cloudflare's cf-ray as the id, so the invocation log matches, and never adopts a client's X-Request-Id", async () => {
		const lines = captureLogs();
		const ray = await call("/v1/jobs", { as: null, headers: { "cf-ray": "8f1a2b3c4d5e6f70-LHR" } });
		expect(ray.headers.get("x-request-id")).toBe("8f1a2b3c4d5e6f70-LHR");
		const forged = await call("/v1/jobs", { as: null, headers: { "x-request-id": "someone-elses-request" } });
		const id = forged.headers.get("x-request-id");
		expect(id).not.toBe("someone-elses-request");
		expect(((await forged.json()) as { error: { request_id: string } }).error.request_id).toBe(id);
		expect(requestLines(lines)).toEqual([
			expect.objectContaining({ status: 401, request_id: "8f1a2b3c4d5e6f70-LHR" }),
			expect.objectContaining({ status: 401, request_id: id, client_request_id: "someone-elses-request" }),
		]);
	});
});

describe("an unconfigured webhook called by anyone", () => {
	it("logs one line a request, with its request id and no stack, and which secret is missing once", async () => {
		await createAgent({ name: "hook-quiet", prompt: "Triage this.", webhook: { secret: "HOOK_QUIET_SECRET" } });
		const lines = captureLogs();
		const send = () => call("/v1/hooks/hook-quiet", { method: "POST", as: null, body: "{}" });
		const first = await send();
		const second = await send();
		expect([first.status, second.status]).toEqual([503, 503]);
		const firstId = first.headers.get("x-request-id");
		const failed = lines.filter((l) => l.event === "request.failed");
		expect(failed).toEqual([
			// A warning each: anyone may send them, and the cause is said once at error (below).
			expect.objectContaining({ level: "warn", route: "/v1/hooks/:agent", agent: "hook-quiet", status: 503, code: "unavailable", request_id: firstId, ms: expect.any(Number) }),
			expect.objectContaining({ request_id: second.headers.get("x-request-id") }),
		]);
		for (const line of failed) expect(line).not.toHaveProperty("stack");
		// Which secret, said once, on the request that met it first.
		expect(lines.filter((l) => l.event === "hooks.not_configured")).toEqual([expect.objectContaining({ agent: "hook-quiet", secret_name: "HOOK_QUIET_SECRET", request_id: firstId })]);
		// request.failed is each request's line: no second line for the same failure.
		expect(requestLines(lines)).toEqual([]);
	});
});

describe("a refused request's cause", () => {
	it("is the message its client was answered with, under error_message: a 401's missing header, wrong token or token in the query", async () => {
		const lines = captureLogs();
		const answers = [
			await call("/v1/jobs", { as: null }),
			await call("/v1/jobs", { as: { token: "wrong-token-0000000000000000" } }),
			await call(`/v1/jobs?token=${TOKENS.read}`, { as: null }),
		];
		const messages: string[] = [];
		for (const res of answers) {
			expect(res.status).toBe(401);
			messages.push(((await res.json()) as { error: { message: string } }).error.message);
		}
		expect(new Set(messages).size).toBe(3);
		expect(requestLines(lines).map((l) => [l.status, l.error_message])).toEqual(messages.map((m) => [401, m]));
		expect(JSON.stringify(lines)).not.toContain(TOKENS.read);
		expect(JSON.stringify(lines)).not.toContain("wrong-token");
	});

	it("leaves out what the request sent, quoted in the message: a token pasted into a filter is not logged, nor the suggestion made of it", async () => {
		const lines = captureLogs();
		const pasted = "Hunter2-PRIVATE-0123456789abcdef";
		const res = await call(`/v1/jobs?agent=${pasted}`);
		expect(res.status).toBe(400);
		// The client is told, the suggestion with it.
		expect(((await res.json()) as { error: { message: string } }).error.message.toLowerCase()).toContain(pasted.toLowerCase());
		const [line] = requestLines(lines);
		expect(line).toMatchObject({ status: 400, error_message: expect.stringContaining('"…"') });
		expect(JSON.stringify(lines).toLowerCase()).not.toContain("hunter2");
	});

	it("is cut short when long: the cause, not a page of it", async () => {
		const lines = captureLogs();
		const res = await call(`/v1/${"x".repeat(2000)}`);
		expect(res.status).toBe(404);
		const [line] = requestLines(lines);
		expect(line).toMatchObject({ status: 404, code: "not_found", error_message: expect.stringMatching(/^no route for GET \/v1\/x+/) });
		expect(String(line!.error_message).length).toBeLessThanOrEqual(300);
	});
});

describe("/healthz while drover is degraded", () => {
	afterEach(() => bundleFleetForTest(undefined));

	it("logs each polled 503 at warn, not error, with its code and what is not ok, where its one cause is fleet.yaml, which each tick says at error", async () => {
		// A fresh heartbeat, written as a tick writes it (no tick run: its claims would start later, in another test).
		const now = Date.now();
		await recordTick(env.DB, { tickAt: now, scheduledTime: Math.floor(now / 60_000) * 60_000, outcome: "ok", shardsOk: 16, shardsFailed: 0, agentsCalled: 0, claimed: 0, skipped: 0, deferred: 0, oldestDeferredAt: null, shardsBehind: 0, error: null });
		bundleFleetForTest(new TextEncoder().encode('version: 1\nagents:\n  - name: x\n    prompt: Go.\n    schedules:\n      m: { cron: "0 9 * *" }\n'));
		const lines = captureLogs();
		const res = await app.request("/healthz", {}, env);
		expect(res.status).toBe(503);
		expect(requestLines(lines)).toEqual([expect.objectContaining({ level: "warn", path: "/healthz", status: 503, code: "degraded", error_message: "not ok: fleet" })]);
	});

	it("logs a 503 at error otherwise: an API_TOKENS no request has read yet, or a scheduler no tick reaches, which no other line says", async () => {
		const now = Date.now();
		await recordTick(env.DB, { tickAt: now, scheduledTime: Math.floor(now / 60_000) * 60_000, outcome: "ok", shardsOk: 16, shardsFailed: 0, agentsCalled: 0, claimed: 0, skipped: 0, deferred: 0, oldestDeferredAt: null, shardsBehind: 0, error: null });
		let lines = captureLogs();
		expect((await app.request("/healthz", {}, { ...env, API_TOKENS: "" } as Env)).status).toBe(503);
		expect(requestLines(lines)).toEqual([expect.objectContaining({ level: "error", path: "/healthz", status: 503, code: "degraded", error_message: "not ok: api_tokens" })]);
		// No heartbeat at all (a cron that never fired).
		await env.DB.prepare("DELETE FROM scheduler_heartbeat").run();
		vi.restoreAllMocks();
		lines = captureLogs();
		expect((await app.request("/healthz", {}, env)).status).toBe(503);
		expect(requestLines(lines)).toEqual([expect.objectContaining({ level: "error", path: "/healthz", status: 503, code: "degraded", error_message: "not ok: scheduler" })]);
	});
});

describe("a webhook call for an agent without a webhook", () => {
	it("says why it was refused under error_message, as every other line says what went wrong", async () => {
		await createAgent({ name: "hook-none", prompt: "Triage this." });
		const lines = captureLogs();
		expect((await call("/v1/hooks/hook-none", { method: "POST", as: null, body: "{}" })).status).toBe(404);
		expect((await call("/v1/hooks/hook-nobody", { method: "POST", as: null, body: "{}" })).status).toBe(404);
		expect(lines.filter((l) => l.event === "hooks.refused")).toEqual([
			expect.objectContaining({ agent: "hook-none", error_message: "the agent has no webhook.secret in its definition" }),
			expect.objectContaining({ agent: "hook-nobody", error_message: "no agent of that name" }),
		]);
		for (const line of lines) expect(line).not.toHaveProperty("problem");
	});
});

describe("a job's output and stream, answered by the agent's object", () => {
	it("carry X-Request-Id, and the object's error body the request_id, as every other answer does", async () => {
		useEmulator().enqueue({ text: "Done." });
		await createAgent({ name: "ids-forwarded" });
		const job = await runToRest("ids-forwarded");
		const full = await call(`/v1/jobs/${job.id}/output`);
		const beyond = await call(`/v1/jobs/${job.id}/output`, { headers: { range: "bytes=999999-" } });
		const stream = await call(`/v1/jobs/${job.id}/stream`);
		await stream.body?.cancel();
		expect([full.status, beyond.status, stream.status]).toEqual([200, 416, 200]);
		for (const answer of [full, beyond, stream]) expect(answer.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
		// The agent's 416 keeps its code, message and Content-Range, with the request's id added.
		const body = (await beyond.json()) as { error: { code: string; message: string; request_id?: string } };
		expect(body.error.code).toBe("range_not_satisfiable");
		expect(body.error.message).toMatch(/is outside job \S+'s output, which is/);
		expect(body.error.request_id).toBe(beyond.headers.get("x-request-id"));
		expect(beyond.headers.get("content-range")).toMatch(/^bytes \*\/\d+$/);
	});
});
