import { forModel, MODEL_TOOL_RESULT_CHARS } from "../../durable-objects/agent/runner/context.ts";
import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { ToolContext } from "../../src/agent/contracts.ts";
import { findTool, requiresApproval, toolParams } from "../../src/agent/tools/definitions.ts";
import { httpFetch, type HttpFetchTool, MAX_REDIRECTS } from "../../src/agent/tools/http-fetch.ts";
import { executeTool } from "../../src/agent/tools/index.ts";
import { checkUrl } from "../../src/agent/tools/url-guard.ts";
import { callWebhookTool, type WebhookTool, WEBHOOK_MAX_RESPONSE_BYTES } from "../../src/agent/tools/webhook.ts";
import { AgentSchema, type AgentDefinition } from "../../src/config/schema.ts";
import { fake, fakeStallingBody, outboundLog } from "../helpers/outbound.ts";

const API = "https://api.example.test";
const HOOK_URL = "https://hooks.test/x/T0000/B0000/secretpath";

function agentWith(tools: unknown[]): AgentDefinition {
	return AgentSchema.parse({ name: "toolbox", prompt: "use the tools", tools });
}

const agent = agentWith([
	{ type: "http_fetch", allow_hosts: ["api.example.test", "cdn.example.test"], methods: ["GET", "POST"], max_response_bytes: 2500 },
	{
		type: "webhook",
		name: "create_ticket",
		description: "Create a ticket.",
		url_secret: "MY_HOOK_URL",
		input_schema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
		requires_approval: true,
	},
]);
const fetchTool = agent.tools[0] as HttpFetchTool;
const hookTool = agent.tools[1] as WebhookTool;
const getOnly = agentWith([{ type: "http_fetch", allow_hosts: ["api.example.test"] }]).tools[0] as HttpFetchTool;

function ctxWith(extraEnv: Record<string, string> = {}): ToolContext {
	return { agent, env: { ...env, ...extraEnv } as Env, jobId: "job_0001" };
}

describe("tool definitions", () => {
	it("builds the Messages API tools in declaration order, byte-identical across calls", () => {
		// Client tools only here, so every entry has the client-tool shape.
		const tools = toolParams(agent) as import("@anthropic-ai/sdk").default.Tool[];
		expect(tools.map((t) => t.name)).toEqual(["http_fetch", "create_ticket"]);
		expect(tools[0]?.input_schema).toEqual({
			type: "object",
			properties: {
				url: { type: "string" },
				method: { enum: ["GET", "POST"] },
				body: { type: "string" },
				headers: { type: "object", additionalProperties: { type: "string" } },
			},
			required: ["url"],
		});
		expect(tools[0]?.description).toContain("api.example.test, cdn.example.test");
		expect(tools[0]?.description).toContain("GET, POST");
		expect(tools[1]).toEqual({
			name: "create_ticket",
			description: "Create a ticket.",
			input_schema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
		});
		expect(JSON.stringify(toolParams(agent))).toBe(JSON.stringify(tools));
		expect(toolParams(agentWith([]))).toEqual([]);
	});

	it("finds tools by the name the model calls them and says which need approval", () => {
		expect(findTool(agent, "http_fetch")?.type).toBe("http_fetch");
		expect(findTool(agent, "create_ticket")?.type).toBe("webhook");
		expect(findTool(agent, "nope")).toBeUndefined();
		expect(requiresApproval(agent, "create_ticket")).toBe(true);
		expect(requiresApproval(agent, "http_fetch")).toBe(false);
		expect(requiresApproval(agent, "nope")).toBe(false);
	});
});

describe("the URL guard", () => {
	// Every host here is on the allowlist, to show the allowlist cannot let these through.
	const allowEverything = [
		"api.example.test",
		"localhost",
		"foo.localhost",
		"127.0.0.1",
		"10.0.0.1",
		"172.16.5.4",
		"192.168.1.1",
		"100.64.0.1",
		"169.254.169.254",
		"0.0.0.0",
		"metadata.google.internal",
		"db.internal",
		"printer.local",
		"2130706433",
		"0x7f.1",
		"127.1",
	];
	const refusedUrls: [string, RegExp][] = [
		["http://127.0.0.1/", /127\.0\.0\.1 is a loopback address/],
		["http://127.255.0.9/", /loopback/],
		["http://10.0.0.1/", /private/],
		["http://172.16.5.4/", /private/],
		["http://172.31.255.255/", /private/],
		["http://192.168.1.1/", /private/],
		["http://100.64.0.1/", /carrier-grade NAT/],
		["http://169.254.169.254/latest/meta-data/", /169\.254\.169\.254 is a link-local address/],
		["http://0.0.0.0/", /unspecified/],
		["http://0.1.2.3/", /unspecified/],
		["http://2130706433/", /127\.0\.0\.1 is a loopback/],
		["http://0177.0.0.1/", /127\.0\.0\.1 is a loopback/],
		["http://0x7f.1/", /127\.0\.0\.1 is a loopback/],
		["http://0x7f000001/", /127\.0\.0\.1 is a loopback/],
		["http://127.1/", /127\.0\.0\.1 is a loopback/],
		["http://%31%32%37.0.0.1/", /127\.0\.0\.1 is a loopback/],
		["http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/", /127\.0\.0\.1 is a loopback/],
		["http://0xa9.0xfe.0xa9.0xfe/", /169\.254\.169\.254 is a link-local/],
		["http://127.0.0.1./", /loopback/],
		["http://[::1]/", /loopback/],
		["http://[::]/", /unspecified/],
		["http://[fe80::1]/", /link-local/],
		["http://[fd00::1]/", /unique-local/],
		["http://[fc00::abcd]/", /unique-local/],
		["http://[::ffff:127.0.0.1]/", /IPv4-mapped address \(127\.0\.0\.1\)/],
		["http://[::ffff:169.254.169.254]/", /IPv4-mapped address \(169\.254\.169\.254\)/],
		["http://[64:ff9b::a9fe:a9fe]/", /embedding 169\.254\.169\.254/],
		["http://[2002:7f00:1::]/", /6to4 address embedding 127\.0\.0\.1/],
		["http://localhost/", /localhost is a local or internal name/],
		["http://LOCALHOST./", /localhost is a local or internal name/],
		["http://foo.localhost/", /local or internal name/],
		["http://metadata.google.internal/computeMetadata/v1/", /metadata\.google\.internal is a local or internal name/],
		["http://db.internal/", /local or internal name/],
		["http://printer.local/", /local or internal name/],
		["http://user:pass@api.example.test/", /credentials/],
		["http://user@api.example.test/", /credentials/],
		["https://api.example.test:8443/", /port 8443/],
		["http://api.example.test:443/", /port 443/],
		["ftp://api.example.test/", /only http and https/],
		["file:///etc/passwd", /only http and https/],
		["javascript:alert(1)", /only http and https/],
		["/relative/path", /not a valid absolute URL/],
		["http://1.2.3.4.5/", /not a valid absolute URL/],
	];

	it.each(refusedUrls)("refuses %s even when its host is allowlisted", (url, reason) => {
		const check = checkUrl(url, allowEverything);
		expect(check.ok).toBe(false);
		if (!check.ok) expect(check.reason).toMatch(reason);
	});

	it("refuses every one of them in http_fetch without making a request", async () => {
		// The schema refuses IP addresses and localhost in allow_hosts; the guard must hold without it.
		const valid = agentWith([{ type: "http_fetch", allow_hosts: ["api.example.test"] }]).tools[0] as HttpFetchTool;
		const tool: HttpFetchTool = { ...valid, allow_hosts: allowEverything };
		for (const [url, reason] of refusedUrls) {
			const outcome = await httpFetch(tool, { url }, ctxWith());
			expect(outcome.ok, url).toBe(false);
			expect(outcome.content, url).toMatch(/^refused: /);
			expect(outcome.content, url).toMatch(reason);
		}
		expect(outboundLog).toEqual([]);
	});

	it("matches the allowlist exactly, ignoring case and a trailing dot", () => {
		const allow = ["api.example.test"];
		expect(checkUrl("https://API.Example.TEST/a?b=1", allow)).toMatchObject({ ok: true });
		expect(checkUrl("https://api.example.test./a", allow)).toMatchObject({ ok: true });
		expect(checkUrl("http://api.example.test:80/", allow)).toMatchObject({ ok: true });
		expect(checkUrl("https://api.example.test:443/", allow)).toMatchObject({ ok: true });
		for (const url of ["https://evil.api.example.test/", "https://api.example.test.evil.com/", "https://example.test/", "https://8.8.8.8/"]) {
			const check = checkUrl(url, allow);
			expect(check.ok, url).toBe(false);
			if (!check.ok) expect(check.reason).toMatch(/is not allowed; allowed hosts: api\.example\.test/);
		}
		// A public IP literal is fetched only when the operator listed it.
		expect(checkUrl("http://8.8.8.8/", ["8.8.8.8"])).toMatchObject({ ok: true });
	});
});

describe("http_fetch", () => {
	it("GETs an allowed URL and returns the status line, content type and body", async () => {
		fake(API, (req) => new Response(`you asked for ${new URL(req.url).pathname} with ${req.method}`, { status: 200, statusText: "OK", headers: { "content-type": "text/plain; charset=utf-8" } }));
		const outcome = await httpFetch(fetchTool, { url: `${API}/status` }, ctxWith());
		expect(outcome).toEqual({ ok: true, content: "HTTP 200 OK\ncontent-type: text/plain; charset=utf-8\n\nyou asked for /status with GET" });
		expect(outboundLog).toEqual([{ method: "GET", url: `${API}/status` }]);
	});

	it("reports an HTTP error status as the result, not as a failure of the tool", async () => {
		fake(API, () => new Response("no such thing", { status: 404, statusText: "Not Found", headers: { "content-type": "text/html" } }));
		expect(await httpFetch(fetchTool, { url: `${API}/missing` }, ctxWith())).toEqual({ ok: true, content: "HTTP 404 Not Found\ncontent-type: text/html\n\nno such thing" });
	});

	it("refuses a host not on the allowlist without making any request", async () => {
		const outcome = await httpFetch(fetchTool, { url: "https://elsewhere.test/" }, ctxWith());
		expect(outcome).toEqual({ ok: false, content: "refused: host elsewhere.test is not allowed; allowed hosts: api.example.test, cdn.example.test", failure: "refused" });
		expect(outboundLog).toEqual([]);
	});

	it("follows a redirect to an allowed host", async () => {
		fake(API, () => new Response(null, { status: 302, headers: { location: "https://cdn.example.test/file.txt" } }));
		fake("https://cdn.example.test", () => new Response("the file", { headers: { "content-type": "text/plain" } }));
		const outcome = await httpFetch(fetchTool, { url: `${API}/download` }, ctxWith());
		expect(outcome).toEqual({ ok: true, content: "HTTP 200\ncontent-type: text/plain\n\nthe file" });
		expect(outboundLog.map((r) => r.url)).toEqual([`${API}/download`, "https://cdn.example.test/file.txt"]);
	});

	it("resolves a relative Location, and turns a POST into a GET without its body on 303", async () => {
		const seen: { method: string; body: string; type: string | null }[] = [];
		fake(API, async (req) => {
			seen.push({ method: req.method, body: await req.text(), type: req.headers.get("content-type") });
			return new URL(req.url).pathname === "/submit" ? new Response(null, { status: 303, headers: { location: "/done?id=7" } }) : new Response("done 7");
		});
		const outcome = await httpFetch(fetchTool, { url: `${API}/submit`, method: "POST", body: '{"a":1}', headers: { "content-type": "application/json" } }, ctxWith());
		expect(outcome.ok).toBe(true);
		expect(outcome.content).toMatch(/done 7$/);
		expect(seen).toEqual([
			{ method: "POST", body: '{"a":1}', type: "application/json" },
			{ method: "GET", body: "", type: null },
		]);
		expect(outboundLog.map((r) => r.url)).toEqual([`${API}/submit`, `${API}/done?id=7`]);
	});

	it.each([
		["http://169.254.169.254/latest/meta-data/iam/", /169\.254\.169\.254 is a link-local address/],
		["http://localhost:8080/admin", /port 8080/],
		["http://localhost/admin", /localhost is a local or internal name/],
		["http://[::ffff:7f00:1]/", /IPv4-mapped/],
		["https://attacker.test/collect", /host attacker\.test is not allowed/],
		["http://api.example.test/plain", /which would leave https for plain http$/],
	])("refuses a redirect to %s and never makes the second request", async (location, reason) => {
		fake(API, () => new Response(null, { status: 301, headers: { location } }));
		const outcome = await httpFetch(fetchTool, { url: `${API}/go` }, ctxWith());
		expect(outcome.ok).toBe(false);
		expect(outcome.content).toMatch(/^redirect refused: https:\/\/api\.example\.test\/go answered 301 pointing to /);
		expect(outcome.content).toMatch(reason);
		expect(outboundLog).toEqual([{ method: "GET", url: `${API}/go` }]);
	});

	it(`gives up after ${MAX_REDIRECTS} redirects`, async () => {
		fake(API, (req) => {
			const n = Number(new URL(req.url).searchParams.get("n") ?? "0");
			return new Response(null, { status: 307, headers: { location: `/loop?n=${n + 1}` } });
		});
		const outcome = await httpFetch(fetchTool, { url: `${API}/loop?n=0` }, ctxWith());
		expect(outcome.ok).toBe(false);
		expect(outcome.content).toMatch(/^too many redirects: gave up after following 5/);
		expect(outboundLog).toHaveLength(MAX_REDIRECTS + 1);
	});

	it("follows exactly five redirects", async () => {
		fake(API, (req) => {
			const n = Number(new URL(req.url).searchParams.get("n"));
			return n < 5 ? new Response(null, { status: 308, headers: { location: `/hop?n=${n + 1}` } }) : new Response(`arrived after ${n}`);
		});
		const outcome = await httpFetch(fetchTool, { url: `${API}/hop?n=0` }, ctxWith());
		expect(outcome.content).toMatch(/arrived after 5$/);
		expect(outboundLog).toHaveLength(6);
	});

	it("truncates a body larger than the cap and cancels the stream instead of reading on", async () => {
		let pulls = 0;
		let cancelled = false;
		fake(API, () => {
			const stream = new ReadableStream<Uint8Array>(
				{
					pull(controller) {
						pulls++;
						controller.enqueue(new TextEncoder().encode("a".repeat(1000)));
						if (pulls === 1000) controller.close();
					},
					cancel() {
						cancelled = true;
					},
				},
				{ highWaterMark: 0 },
			);
			return new Response(stream, { headers: { "content-type": "text/plain" } });
		});
		const outcome = await httpFetch(fetchTool, { url: `${API}/huge` }, ctxWith());
		expect(outcome.ok).toBe(true);
		expect(outcome.content).toBe(`HTTP 200\ncontent-type: text/plain\n\n${"a".repeat(2500)}\n[truncated at 2500 bytes]`);
		expect(cancelled).toBe(true);
		// 2500 bytes need three 1000-byte chunks; the stream could have given a thousand.
		expect(pulls).toBeGreaterThanOrEqual(3);
		expect(pulls).toBeLessThanOrEqual(5);
	});

	it("keeps no piece of a secret the cap cuts through: the cut end that starts one goes, ordinary text stays", async () => {
		// Each body runs past the 2,500-byte cap, which falls right after `piece`: the start of a
		// secret, which no pattern or value matches once the rest of it is cut off.
		const cases = [
			{ piece: "found sk-ant-api03-Q7Q7Q7", shown: "found sk-ant-api03-[REDACTED]" },
			{ piece: "token ghp_Q7Q7Q7Q7Q7", shown: "token ghp_[REDACTED]" },
			{ piece: '{"note":"use Bearer abc12', shown: '{"note":"use Bearer [REDACTED]' },
			{ piece: "key AKIAIOSFODNN7", shown: "key AKIA[REDACTED]" },
			// TEST_SLACK_URL, a URL secret (https://slack.example.test/services/T0/B0/xyz), its host in capitals too.
			{ piece: "posted to https://slack.example.test/services/T0/B", shown: "posted to [REDACTED]" },
			{ piece: "posted to HTTPS://SLACK.EXAMPLE.TEST/services/T0/B0/x", shown: "posted to [REDACTED]" },
			// A drover token (API_TOKENS' admin-token-6d2b8f4a1c9e7b30).
			{ piece: "sent admin-token-6d2b", shown: "sent [REDACTED]" },
			// Ordinary text and a public URL are no secret's start.
			{ piece: "the quick brown fox jum", shown: "the quick brown fox jum" },
			{ piece: "see https://slack.example.test/", shown: "see https://slack.example.test/" },
			{ piece: "see https://api.example.test/docs/pa", shown: "see https://api.example.test/docs/pa" },
		];
		for (const { piece, shown } of cases) {
			const head = `${"n".repeat(2500 - piece.length - 1)} `;
			fake(API, () => new Response(`${head}${piece}${"Q7".repeat(40)} and more`, { headers: { "content-type": "text/plain" } }));
			const outcome = await httpFetch(fetchTool, { url: `${API}/cut` }, ctxWith());
			expect(outcome.content, piece).toBe(`HTTP 200\ncontent-type: text/plain\n\n${head}${shown}\n[truncated at 2500 bytes]`);
		}
	});

	it("does not call a body of exactly the cap truncated", async () => {
		fake(API, () => new Response("b".repeat(2500), { headers: { "content-type": "text/plain" } }));
		const outcome = await httpFetch(fetchTool, { url: `${API}/exact` }, ctxWith());
		expect(outcome.content).toBe(`HTTP 200\ncontent-type: text/plain\n\n${"b".repeat(2500)}`);
	});

	it("describes a binary body instead of dumping its bytes", async () => {
		const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
		fake(API, () => new Response(png, { headers: { "content-type": "image/png" } }));
		expect(await httpFetch(fetchTool, { url: `${API}/logo.png` }, ctxWith())).toEqual({
			ok: true,
			content: "HTTP 200\ncontent-type: image/png\n\n[binary body: 12 bytes of image/png, not shown]",
		});
		fake("https://cdn.example.test", () => new Response(new Uint8Array([0xff, 0xfe, 0x00, 0x01])));
		const undeclared = await httpFetch(fetchTool, { url: "https://cdn.example.test/blob" }, ctxWith());
		expect(undeclared.content).toMatch(/\[binary body: 4 bytes of .*, not shown\]$/);
	});

	it("reads a text body in the encoding its byte order mark names, or an HTML page's <meta> charset when the header names none", async () => {
		const utf16 = new Uint8Array([0xff, 0xfe, ...[..."héllo"].flatMap((c) => [c.charCodeAt(0), 0])]);
		fake(API, () => new Response(utf16, { headers: { "content-type": "text/plain" } }));
		expect((await httpFetch(fetchTool, { url: `${API}/u16` }, ctxWith())).content).toBe("HTTP 200\ncontent-type: text/plain\n\nhéllo");
		// 東京 in Shift_JIS, on a page that says so only in its <meta>.
		const sjis = new Uint8Array([...new TextEncoder().encode('<html><head><meta charset="Shift_JIS"></head><body>'), 0x93, 0x8c, 0x8b, 0x9e, ...new TextEncoder().encode("</body></html>")]);
		fake(API, () => new Response(sjis, { headers: { "content-type": "text/html" } }));
		expect((await httpFetch(fetchTool, { url: `${API}/jp` }, ctxWith())).content).toContain("<body>東京</body>");
		// A header's charset wins over a <meta>, as in a browser.
		fake(API, () => new Response(new TextEncoder().encode('<meta charset="Shift_JIS">é'), { headers: { "content-type": "text/html; charset=utf-8" } }));
		expect((await httpFetch(fetchTool, { url: `${API}/hdr` }, ctxWith())).content).toMatch(/>é$/);
	});

	it.each(["utf-16", "UTF-16LE", "utf-16be", "unicode", "ucs-2", "csUnicode"])("reads a page whose <meta> says %s without a byte order mark as UTF-8, as a browser does", async (label) => {
		// The <meta> was read as ASCII, so the bytes cannot be UTF-16: the HTML prescan takes UTF-8.
		fake(API, () => new Response(new TextEncoder().encode(`<meta charset="${label}"><p>héllo 東京</p>`), { headers: { "content-type": "text/html" } }));
		expect((await httpFetch(fetchTool, { url: `${API}/u16meta` }, ctxWith())).content).toBe(`HTTP 200\ncontent-type: text/html\n\n<meta charset="${label}"><p>héllo 東京</p>`);
	});

	it("reads a page whose <meta> says x-user-defined as windows-1252, as a browser does", async () => {
		const bytes = new Uint8Array([...new TextEncoder().encode('<meta charset="x-user-defined"><p>caf'), 0xe9, 0x80, ...new TextEncoder().encode("</p>")]);
		fake(API, () => new Response(bytes, { headers: { "content-type": "text/html" } }));
		expect((await httpFetch(fetchTool, { url: `${API}/xud` }, ctxWith())).content).toMatch(/<p>café€<\/p>$/);
	});

	it("sends a body only with POST, and POST only when the tool allows it", async () => {
		fake(API, async (req) => new Response(`${req.method} ${await req.text()}`, { headers: { "content-type": "text/plain" } }));
		expect(await httpFetch(fetchTool, { url: `${API}/items`, method: "POST", body: "name=x" }, ctxWith())).toMatchObject({ ok: true, content: expect.stringMatching(/POST name=x$/) });
		expect(await httpFetch(fetchTool, { url: `${API}/items`, method: "GET", body: "name=x" }, ctxWith())).toEqual({ ok: false, content: "body is only allowed with POST", failure: "bad_input" });
		expect(await httpFetch(fetchTool, { url: `${API}/items`, body: "name=x" }, ctxWith())).toEqual({ ok: false, content: "body is only allowed with POST", failure: "bad_input" });
		expect(await httpFetch(getOnly, { url: `${API}/items`, method: "POST", body: "name=x" }, ctxWith())).toEqual({ ok: false, content: "method POST is not allowed; allowed: GET", failure: "bad_input" });
		expect(await httpFetch(fetchTool, { url: `${API}/items`, method: "DELETE" }, ctxWith())).toEqual({ ok: false, content: "method must be one of GET, POST", failure: "bad_input" });
		expect(outboundLog).toEqual([{ method: "POST", url: `${API}/items` }]);
	});

	it.each(["Authorization", "cookie", "Host", "Proxy-Authorization", "proxy-connection", "X-HTTP-Method-Override", "x-http-method", "X-Method-Override"])("refuses the %s header", async (name) => {
		const outcome = await httpFetch(fetchTool, { url: `${API}/`, headers: { [name]: "DELETE" } }, ctxWith());
		expect(outcome).toEqual({ ok: false, content: `header ${name} is not allowed (authorization, cookie, host, proxy-* and method-override headers are refused)`, failure: "bad_input" });
		expect(outboundLog).toEqual([]);
	});

	it("passes ordinary headers and drops hop-by-hop ones", async () => {
		let received: Record<string, string> = {};
		fake(API, (req) => {
			received = Object.fromEntries(req.headers);
			return new Response("ok");
		});
		await httpFetch(fetchTool, { url: `${API}/`, headers: { accept: "application/json", "x-trace": "t1", connection: "keep-alive", "transfer-encoding": "chunked" } }, ctxWith());
		expect(received).toMatchObject({ accept: "application/json", "x-trace": "t1" });
		expect(received).not.toHaveProperty("connection");
		expect(received).not.toHaveProperty("transfer-encoding");
	});

	it("refuses malformed input with a reason the model can act on", async () => {
		expect(await httpFetch(fetchTool, "https://api.example.test/", ctxWith())).toEqual({ ok: false, content: "input must be an object with url, method, body, headers", failure: "bad_input" });
		expect(await httpFetch(fetchTool, {}, ctxWith())).toEqual({ ok: false, content: "url is required and must be a string", failure: "bad_input" });
		expect(await httpFetch(fetchTool, { url: `${API}/`, verb: "GET" }, ctxWith())).toEqual({ ok: false, content: "unknown input field(s) verb; allowed: url, method, body, headers", failure: "bad_input" });
		expect(await httpFetch(fetchTool, { url: `${API}/`, headers: { "x-a": 1 } }, ctxWith())).toEqual({ ok: false, content: "header x-a must have a string value", failure: "bad_input" });
		expect(await httpFetch(fetchTool, { url: `${API}/`, headers: { "x-a": "a\r\nx-b: b" } }, ctxWith())).toEqual({ ok: false, content: "header x-a has an invalid name or value", failure: "bad_input" });
		expect(outboundLog).toEqual([]);
	});

	it("reports a network error as a result instead of throwing", async () => {
		fake(API, () => {
			throw new TypeError("Network connection lost.");
		});
		expect(await httpFetch(fetchTool, { url: `${API}/flaky` }, ctxWith())).toEqual({ ok: false, content: `GET ${API}/flaky failed: network error: Network connection lost.`, failure: "network" });
	});

	it("ends a body that stalls mid-read at the call's 30 s deadline, the only thing that aborts a tool call", async () => {
		vi.useFakeTimers();
		try {
			const { reached } = fakeStallingBody(API);
			const outcome = httpFetch(fetchTool, { url: `${API}/stall` }, ctxWith());
			await reached;
			await vi.advanceTimersByTimeAsync(29_999);
			const early = await Promise.race([outcome.then(() => "settled"), Promise.resolve("pending")]);
			expect(early).toBe("pending");
			await vi.advanceTimersByTimeAsync(1);
			expect(await outcome).toEqual({ ok: false, content: `HTTP 200, but reading the body of ${API}/stall failed: timed out after 30 s`, failure: "body_read" });
		} finally {
			vi.useRealTimers();
		}
	});
});

describe("webhook tools", () => {
	const encoder = new TextEncoder();

	async function verify(key: string, req: Request, body: string): Promise<boolean> {
		const signature = req.headers.get("x-drover-signature") ?? "";
		const hex = signature.replace(/^sha256=/, "");
		const bytes = new Uint8Array((hex.match(/../g) ?? []).map((h) => Number.parseInt(h, 16)));
		const cryptoKey = await crypto.subtle.importKey("raw", encoder.encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
		return crypto.subtle.verify("HMAC", cryptoKey, bytes, encoder.encode(`${req.headers.get("x-drover-timestamp")}.${body}`));
	}

	it("says a call a forced cancel cut off was cut off, not that it timed out", async () => {
		const reached = new Promise<void>((arrived) =>
			fake(HOOK_URL, (req) => {
				arrived();
				return new Promise<Response>((_resolve, reject) => req.signal.addEventListener("abort", () => reject(new Error("aborted"))));
			}),
		);
		const forced = new AbortController();
		const call = callWebhookTool(hookTool, { title: "x" }, { ...ctxWith({ MY_HOOK_URL: HOOK_URL }), signal: forced.signal }, "toolu_cut");
		await reached;
		forced.abort(new Error("force-cancelled by operator"));
		expect(await call).toMatchObject({ ok: false, failure: "cut_off", content: expect.stringContaining("cut off by a forced cancel") });
	});

	it("POSTs the signed input with an idempotency key and returns the answer", async () => {
		let checked: { valid: boolean; headers: Record<string, string>; payload: unknown } | undefined;
		fake(HOOK_URL, async (req) => {
			const body = await req.text();
			checked = { valid: await verify(HOOK_URL, req, body), headers: Object.fromEntries(req.headers), payload: JSON.parse(body) };
			return new Response('{"ticket":"T-42"}', { status: 201 });
		});
		const before = Math.floor(Date.now() / 1000);
		const outcome = await callWebhookTool(hookTool, { title: "disk full" }, ctxWith({ MY_HOOK_URL: HOOK_URL }), "toolu_01");
		expect(outcome).toEqual({ ok: true, content: '{"ticket":"T-42"}' });
		expect(checked?.valid).toBe(true);
		expect(checked?.payload).toEqual({ tool: "create_ticket", input: { title: "disk full" }, job_id: "job_0001" });
		expect(checked?.headers).toMatchObject({ "content-type": "application/json", "idempotency-key": "job_0001:toolu_01" });
		expect(Number(checked?.headers["x-drover-timestamp"])).toBeGreaterThanOrEqual(before);
		expect(checked?.headers["x-drover-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
		expect(outboundLog).toEqual([{ method: "POST", url: HOOK_URL }]);
	});

	it("signs with <url_secret>_SIGNING_KEY when it is set", async () => {
		const valid: Record<string, boolean> = {};
		fake(HOOK_URL, async (req) => {
			const body = await req.text();
			valid.signingKey = await verify("dedicated-signing-key", req, body);
			valid.url = await verify(HOOK_URL, req, body);
			return new Response("ok");
		});
		const outcome = await callWebhookTool(hookTool, { title: "x" }, ctxWith({ MY_HOOK_URL: HOOK_URL, MY_HOOK_URL_SIGNING_KEY: "dedicated-signing-key" }), "toolu_02");
		expect(outcome).toEqual({ ok: true, content: "ok" });
		expect(valid).toEqual({ signingKey: true, url: false });
	});

	it("reports a non-2xx answer with the start of its body", async () => {
		fake(HOOK_URL, () => new Response(`quota exceeded ${"z".repeat(1000)}`, { status: 429 }));
		const outcome = await callWebhookTool(hookTool, { title: "x" }, ctxWith({ MY_HOOK_URL: HOOK_URL }), "toolu_03");
		expect(outcome).toEqual({ ok: false, content: `webhook answered 429: ${`quota exceeded ${"z".repeat(1000)}`.slice(0, 499)}…`, failure: "http_429" });
	});

	it("does not follow a redirect with the signed payload", async () => {
		fake(HOOK_URL, () => new Response(null, { status: 302, headers: { location: "https://elsewhere.test/" } }));
		const outcome = await callWebhookTool(hookTool, { title: "x" }, ctxWith({ MY_HOOK_URL: HOOK_URL }), "toolu_04");
		expect(outcome).toEqual({ ok: false, content: "webhook answered 302: ", failure: "http_302" });
		expect(outboundLog).toHaveLength(1);
	});

	it("sends nothing for input that breaks the tool's input_schema, and names each problem", async () => {
		fake(HOOK_URL, () => new Response("made"));
		const outcome = await callWebhookTool(hookTool, { title: 7 }, ctxWith({ MY_HOOK_URL: HOOK_URL }), "toolu_10");
		expect(outcome.ok).toBe(false);
		expect(outcome.content).toMatch(/^input does not match create_ticket's input_schema, so it was not sent: tool_input\/title: .*string/);
		// One sentence's end, not the validator's period and then the message's own.
		expect(outcome.content).toMatch(/"string"\. Call create_ticket again with input that matches it\.$/);
		expect(outboundLog).toEqual([]);
	});

	it("reports a missing URL secret without making a request", async () => {
		expect("MY_HOOK_URL" in env).toBe(false);
		const outcome = await callWebhookTool(hookTool, { title: "x" }, ctxWith(), "toolu_05");
		expect(outcome).toEqual({ ok: false, content: "webhook tool create_ticket is not configured (the operator has not set its URL secret)", failure: "not_configured" });
		expect(outboundLog).toEqual([]);
	});

	it("truncates a large answer at 1 MB", async () => {
		fake(HOOK_URL, () => new Response("y".repeat(WEBHOOK_MAX_RESPONSE_BYTES + 10)));
		const outcome = await callWebhookTool(hookTool, { title: "x" }, ctxWith({ MY_HOOK_URL: HOOK_URL }), "toolu_06");
		expect(outcome.ok).toBe(true);
		expect(outcome.content).toBe(`${"y".repeat(WEBHOOK_MAX_RESPONSE_BYTES)}\n[truncated at ${WEBHOOK_MAX_RESPONSE_BYTES} bytes]`);
	});

	it("never puts the secret URL in a result, even when the network error quotes it", async () => {
		fake(HOOK_URL, () => {
			throw new TypeError(`connect failed for ${HOOK_URL}`);
		});
		const outcome = await callWebhookTool(hookTool, { title: "x" }, ctxWith({ MY_HOOK_URL: HOOK_URL }), "toolu_07");
		expect(outcome).toEqual({
			ok: false,
			content:
				"webhook create_ticket failed: network error: connect failed for <webhook url>; the request may have reached the server, so whether it took effect is unknown: check before making it again",
			failure: "network",
		});
		expect(outcome.content).not.toContain("secretpath");
	});

	it("keeps no piece of the secret URL an answer echoes where it is cut: at the error excerpt, or at the read cap", async () => {
		const path = new URL(HOOK_URL).pathname;
		// Error pages are quoted to 500 characters; this one echoes the path across the 500th.
		const page = `${"x".repeat(500 - "Cannot POST ".length - 10)}Cannot POST ${path}`;
		fake(HOOK_URL, () => new Response(page, { status: 404 }));
		const refused = await callWebhookTool(hookTool, { title: "x" }, ctxWith({ MY_HOOK_URL: HOOK_URL }), "toolu_11");
		expect(refused.content).toBe(`webhook answered 404: ${"x".repeat(478)}Cannot POST <webhook …`);

		// A success answer stops at 1 MB; this one stops inside the echoed path.
		const body = `${"y".repeat(WEBHOOK_MAX_RESPONSE_BYTES - path.length + 6)}${path}`;
		fake(HOOK_URL, () => new Response(body));
		const cut = await callWebhookTool(hookTool, { title: "x" }, ctxWith({ MY_HOOK_URL: HOOK_URL }), "toolu_12");
		expect(cut.content).toBe(`${"y".repeat(WEBHOOK_MAX_RESPONSE_BYTES - path.length + 6)}<webhook url>\n[truncated at ${WEBHOOK_MAX_RESPONSE_BYTES} bytes]`);
	});

	it("keeps no piece of another secret an answer is cut through at the read cap", async () => {
		const head = "y".repeat(WEBHOOK_MAX_RESPONSE_BYTES - "key sk-ant-api03-Q7Q7Q7".length);
		fake(HOOK_URL, () => new Response(`${head}key sk-ant-api03-Q7Q7Q7${"Q7".repeat(40)}`));
		const cut = await callWebhookTool(hookTool, { title: "x" }, ctxWith({ MY_HOOK_URL: HOOK_URL }), "toolu_13");
		expect(cut.content).toBe(`${head}key sk-ant-api03-[REDACTED]\n[truncated at ${WEBHOOK_MAX_RESPONSE_BYTES} bytes]`);
	});

	it("says a call that timed out may have taken effect, so the model checks before making it again under a new idempotency key", async () => {
		vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
		try {
			let reached!: () => void;
			const sent = new Promise<void>((resolve) => (reached = resolve));
			fake(HOOK_URL, () => {
				reached();
				return new Promise<Response>(() => {});
			});
			const outcome = callWebhookTool(hookTool, { title: "x" }, ctxWith({ MY_HOOK_URL: HOOK_URL }), "toolu_08");
			await sent;
			await vi.advanceTimersByTimeAsync(30_000);
			expect(await outcome).toEqual({
				ok: false,
				content: "webhook create_ticket failed: timed out after 30 s; the request may have reached the server, so whether it took effect is unknown: check before making it again",
				failure: "timeout",
			});
		} finally {
			vi.useRealTimers();
		}
	});
});

describe("executeTool", () => {
	it("dispatches by name and answers an unknown tool with a result", async () => {
		fake(API, () => new Response("hi"));
		fake(HOOK_URL, () => new Response("made"));
		const ctx = ctxWith({ MY_HOOK_URL: HOOK_URL });
		expect(await executeTool(agent, "http_fetch", { url: `${API}/` }, "toolu_1", ctx)).toMatchObject({ ok: true, content: expect.stringMatching(/hi$/) });
		expect(await executeTool(agent, "create_ticket", { title: "t" }, "toolu_2", ctx)).toEqual({ ok: true, content: "made" });
		expect(await executeTool(agent, "delete_everything", {}, "toolu_3", ctx)).toEqual({ ok: false, content: 'unknown tool "delete_everything"; available tools: http_fetch, create_ticket' });
		expect(outboundLog.map((r) => r.url)).toEqual([`${API}/`, HOOK_URL]);
	});
});

describe("a tool result handed to the model", () => {
	it("is passed whole up to the limit", () => {
		const fits = "a".repeat(MODEL_TOOL_RESULT_CHARS);
		expect(forModel(fits)).toBe(fits);
	});

	it("is cut at the limit with a note, never inside a surrogate pair", () => {
		const long = "b".repeat(MODEL_TOOL_RESULT_CHARS + 10);
		expect(forModel(long)).toBe(`${"b".repeat(MODEL_TOOL_RESULT_CHARS)}\n[drover: result cut from ${long.length} to ${MODEL_TOOL_RESULT_CHARS} characters; the whole result is in the job's output]`);
		// An emoji (two UTF-16 units) straddling the limit is left out whole.
		const straddling = `${"c".repeat(MODEL_TOOL_RESULT_CHARS - 1)}😀${"d".repeat(10)}`;
		const cut = forModel(straddling);
		expect(cut.startsWith(`${"c".repeat(MODEL_TOOL_RESULT_CHARS - 1)}\n[drover: result cut from`)).toBe(true);
		expect(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(new TextEncoder().encode(cut))).toBe(cut);
		expect(cut).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
	});
});
