// http_fetch's rarer paths: a POST answered 301 or 302 is followed as a GET without its body (as
// fetch does), a call with no method is a GET whatever order the tool lists its methods in, a POST
// lost to the network may have had its effect, "+json" and "+xml" bodies are text, an undeclared body
// holding NULs is described, a hop-by-hop header is dropped however it is capitalised, headers given
// as an array are refused, a content-length the model gives is dropped, and a body a forced cancel
// cut off says so. A mutation walk found each unchecked.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ToolContext } from "../../src/agent/contracts.ts";
import { httpFetch, type HttpFetchTool } from "../../src/agent/tools/http-fetch.ts";
import { AgentSchema } from "../../src/config/schema.ts";
import { fake, fakeStallingBody, outboundLog } from "../helpers/outbound.ts";

const API = "https://api.example.test";
const agent = AgentSchema.parse({ name: "fetcher", prompt: "fetch", tools: [{ type: "http_fetch", allow_hosts: ["api.example.test"], methods: ["POST", "GET"] }] });
const tool = agent.tools[0] as HttpFetchTool;
const ctx: ToolContext = { agent, env: env as Env, jobId: "job_0001" };

describe("http_fetch", () => {
	it.each([301, 302])("follows a POST answered %i as a GET, without the body or its headers", async (status) => {
		const seen: { method: string; body: string; type: string | null }[] = [];
		fake(API, async (req) => {
			seen.push({ method: req.method, body: await req.text(), type: req.headers.get("content-type") });
			return new URL(req.url).pathname === "/form" ? new Response(null, { status, headers: { location: "/thanks" } }) : new Response("thanks");
		});
		const outcome = await httpFetch(tool, { url: `${API}/form`, method: "POST", body: "a=1", headers: { "content-type": "application/x-www-form-urlencoded" } }, ctx);
		expect(outcome.content).toMatch(/thanks$/);
		expect(seen).toEqual([
			{ method: "POST", body: "a=1", type: "application/x-www-form-urlencoded" },
			{ method: "GET", body: "", type: null },
		]);
	});

	it("GETs when the call names no method, though the tool lists POST first", async () => {
		fake(API, (req) => new Response(req.method));
		expect((await httpFetch(tool, { url: `${API}/read` }, ctx)).content).toMatch(/\n\nGET$/);
		expect(outboundLog).toEqual([{ method: "GET", url: `${API}/read` }]);
	});

	it("tells the model a POST lost to the network may have taken effect", async () => {
		fake(API, () => {
			throw new TypeError("Network connection lost.");
		});
		const outcome = await httpFetch(tool, { url: `${API}/orders`, method: "POST", body: "{}" }, ctx);
		expect(outcome).toEqual({
			ok: false,
			content: `POST ${API}/orders failed: network error: Network connection lost.; the request may have reached the server, so whether it took effect is unknown: check before making it again`,
			failure: "network",
		});
	});

	it.each(["application/vnd.api+json", "image/svg+xml"])("shows a %s body as text", async (type) => {
		fake(API, () => new Response('{"data":[]}', { headers: { "content-type": type } }));
		expect((await httpFetch(tool, { url: `${API}/doc` }, ctx)).content).toBe(`HTTP 200\ncontent-type: ${type}\n\n{"data":[]}`);
	});

	it("describes an undeclared body holding a NUL, though it is valid UTF-8", async () => {
		fake(API, () => new Response(new Uint8Array([0x61, 0x00, 0x62])));
		expect((await httpFetch(tool, { url: `${API}/blob` }, ctx)).content).toMatch(/\n\n\[binary body: 3 bytes of .*, not shown\]$/);
	});

	it("drops a hop-by-hop header however it is capitalised", async () => {
		let received: Record<string, string> = {};
		fake(API, (req) => {
			received = Object.fromEntries(req.headers);
			return new Response("ok");
		});
		await httpFetch(tool, { url: `${API}/`, headers: { "X-Trace": "t1", Upgrade: "websocket", "Keep-Alive": "timeout=5", TE: "trailers" } }, ctx);
		expect(received).toMatchObject({ "x-trace": "t1" });
		expect(Object.keys(received)).not.toContain("upgrade");
		expect(Object.keys(received)).not.toContain("keep-alive");
		expect(Object.keys(received)).not.toContain("te");
	});

	it("drops a content-length the model gives, which would frame a body the runtime does not send", async () => {
		let received: Record<string, string> = {};
		fake(API, (req) => {
			received = Object.fromEntries(req.headers);
			return new Response("ok");
		});
		expect((await httpFetch(tool, { url: `${API}/`, headers: { "Content-Length": "5" } }, ctx)).ok).toBe(true);
		expect(Object.keys(received)).not.toContain("content-length");
	});
});

describe("http_fetch's cut body", () => {
	it("drops a character the cap cut in two rather than showing a replacement character", async () => {
		const small: HttpFetchTool = { ...tool, max_response_bytes: 2 };
		fake(API, () => new Response("aé", { headers: { "content-type": "text/plain; charset=utf-8" } }));
		expect((await httpFetch(small, { url: `${API}/cut` }, ctx)).content).toBe("HTTP 200\ncontent-type: text/plain; charset=utf-8\n\na\n[truncated at 2 bytes]");
	});
});

describe("http_fetch's refusals and cuts", () => {
	it("refuses headers given as an array, saying they must be an object", async () => {
		expect(await httpFetch(tool, { url: `${API}/`, headers: ["x-a"] }, ctx)).toEqual({ ok: false, content: "headers must be an object of header name to string value", failure: "bad_input" });
		expect(outboundLog).toEqual([]);
	});

	it("says a body a forced cancel cut off mid-read was cut off", async () => {
		const { reached } = fakeStallingBody(API);
		const forced = new AbortController();
		const outcome = httpFetch(tool, { url: `${API}/stall` }, { ...ctx, signal: forced.signal });
		await reached;
		forced.abort(new Error("force-cancelled by operator"));
		expect(await outcome).toEqual({ ok: false, content: `HTTP 200, but reading the body of ${API}/stall failed: cut off by a forced cancel`, failure: "cut_off" });
	});
});
