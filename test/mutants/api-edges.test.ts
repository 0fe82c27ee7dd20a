// The Worker's request handling at points a mutation walk of src/api (hooks, request-guards,
// yaml-body, params, request-log, error-handler) found unchecked: each case failed on a mutant of the
// module it names, which the suite let through.
import { afterEach, describe, expect, it, vi } from "vitest";
import { signatureHeaders, signWebhook } from "../../src/api/webhook-signature.ts";
import { createAgent, runsOf } from "../helpers/agents.ts";
import { call, errorOf } from "../helpers/http.ts";
import { captureLogs } from "../helpers/logs.ts";
import { WEBHOOK_SECRET } from "../helpers/tokens.ts";

afterEach(() => vi.restoreAllMocks());

describe("hooks.ts: a signed webhook's content type", () => {
	it("is a 415 for a JSON-like type that is not JSON (application/json-seq), creating nothing", async () => {
		await createAgent({ name: "hook-media", prompt: "Triage this.", webhook: { secret: "TRIAGE_WEBHOOK_SECRET" } });
		const body = JSON.stringify({ event: "opened" });
		const timestamp = Math.floor(Date.now() / 1000);
		const res = await call("/v1/hooks/hook-media", {
			method: "POST",
			as: null,
			body,
			headers: { "content-type": "application/json-seq", "x-drover-timestamp": String(timestamp), "x-drover-signature": await signWebhook(WEBHOOK_SECRET, timestamp, body) },
		});
		expect(res.status).toBe(415);
		expect((await errorOf(res)).code).toBe("unsupported_media_type");
		expect(await runsOf("hook-media")).toEqual([]);
	});
});

describe("request-guards.ts: a path with malformed percent-encoding", () => {
	it("shows a long segment cut to 100 characters in its 400, not whole", async () => {
		const segment = `%ZZ${"a".repeat(300)}`;
		const res = await call(`/v1/jobs/${segment}`);
		expect(res.status).toBe(400);
		const { message } = await errorOf(res);
		const shown = /^the path segment "([^"]+)" has malformed percent-encoding: /.exec(message)?.[1];
		expect(shown).toBe(`%ZZ${"a".repeat(96)}…`);
	});
});

describe("yaml-body.ts: a definition sent as YAML", () => {
	it("is read under each name YAML went by, text/x-yaml too", async () => {
		for (const type of ["application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"]) {
			const res = await call("/v1/agents?dry_run=true", { method: "POST", as: "admin", headers: { "content-type": type }, body: "name: yaml-types\nprompt: Go.\nmax_turns: 3\n" });
			expect(res.status, type).toBe(200);
			expect(await res.json(), type).toMatchObject({ dry_run: true, name: "yaml-types", action: "create", definition: { max_turns: 3 } });
		}
	});
});

describe("yaml-body.ts: a definition holding an agents key", () => {
	it("is one agent's definition with an unknown key, not a fleet file, when it has a name", async () => {
		const res = await call("/v1/agents?dry_run=true", { method: "POST", as: "admin", body: { name: "with-agents-key", prompt: "Go.", agents: [] } });
		expect(res.status).toBe(400);
		const { details } = await errorOf(res);
		expect(details?.issues).toEqual([{ path: "agents", message: expect.stringMatching(/^unknown key; allowed: name, /) }]);
	});
});

describe("request-log.ts: a client's own X-Request-Id", () => {
	it("is logged beside the request's id only in the shape of one (no spaces, at most 100 characters)", async () => {
		const lines = captureLogs();
		for (const id of ["client-req-1", "two words", "x".repeat(101)]) await call("/v1/jobs", { as: null, headers: { "x-request-id": id } });
		expect(lines.filter((l) => l.event === "request").map((l) => l.client_request_id ?? null)).toEqual(["client-req-1", null, null]);
	});
});

describe("error-handler.ts: a body that is not JSON at all", () => {
	it("is a 400 naming the body as the field at fault, as every 400 names its fields", async () => {
		await createAgent({ name: "not-json-body" });
		const res = await call("/v1/agents/not-json-body/jobs", { method: "POST", as: "operate", body: "{not json" });
		expect(res.status).toBe(400);
		const error = await errorOf(res);
		expect(error).toEqual({ code: "bad_request", message: expect.any(String), details: { issues: [{ path: "body", message: error.message }] } });
		expect(await runsOf("not-json-body")).toEqual([]);
	});
});

describe("webhook-signature.ts: a timestamp", () => {
	it("sent in milliseconds is said to be malformed (unix seconds), not a request from the far future", async () => {
		await createAgent({ name: "hook-millis", prompt: "Triage this.", webhook: { secret: "TRIAGE_WEBHOOK_SECRET" } });
		const body = JSON.stringify({ event: "opened" });
		const millis = Date.now();
		const res = await call("/v1/hooks/hook-millis", { method: "POST", as: null, body, headers: { "x-drover-timestamp": String(millis), "x-drover-signature": await signWebhook(WEBHOOK_SECRET, millis, body) } });
		expect(res.status).toBe(401);
		expect((await errorOf(res)).message).toBe("missing or malformed X-Drover-Timestamp (unix seconds)");
		expect(await runsOf("hook-millis")).toEqual([]);
	});

	it("that drover signs with is the whole seconds already begun, never the next one", async () => {
		expect((await signatureHeaders("k3y-0f-its-own-0123456789abcdef", "{}", 1_764_493_200_999))["x-drover-timestamp"]).toBe("1764493200");
	});
});

describe("preconditions.ts: a write's If-Match", () => {
	it("takes one tag followed by an empty list element (RFC 9110's lists allow them), and quotes a bad header cut to 80 characters", async () => {
		await createAgent({ name: "match-list" });
		const { definition_revision: revision } = (await (await call("/v1/agents/match-list")).json()) as { definition_revision: string };
		const plan = (ifMatch: string) => call("/v1/agents/match-list?dry_run=true", { method: "PUT", as: "admin", headers: { "if-match": ifMatch }, body: { name: "match-list", prompt: "Go now." } });
		const res = await plan(`"${revision}", `);
		expect(res.status, await res.clone().text()).toBe(200);
		const bad = await plan(`W/${"x".repeat(200)}`);
		expect(bad.status).toBe(400);
		expect((await errorOf(bad)).message).toMatch(new RegExp(`; not "W/x{78}"$`));
	});
});

describe("media-type.ts: a charset refused", () => {
	it("is quoted cut to 40 characters in the 415", async () => {
		await createAgent({ name: "long-charset" });
		const charset = `x-${"c".repeat(100)}`;
		const res = await call("/v1/agents/long-charset/jobs", { method: "POST", as: "operate", body: { prompt: "Go." }, headers: { "content-type": `application/json; charset=${charset}` } });
		expect(res.status).toBe(415);
		expect((await errorOf(res)).message).toBe(`the request body must be UTF-8: charset "${charset.slice(0, 40)}" is not taken (send charset=utf-8, or none)`);
		expect(await runsOf("long-charset")).toEqual([]);
	});
});
