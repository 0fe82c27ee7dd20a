// The URL guard's ranges at their far ends and its rarer address families: the last address of the
// carrier-grade NAT /10, both halves of the benchmarking /15, 192.0.0.0/24, multicast, reserved and
// broadcast, a password with no user, and the IPv6 ranges and IPv4 embeddings the table of
// test/unit/tools.test.ts does not name. Each is refused even when the allowlist names it (the schema
// refuses IP addresses there; the guard must hold without it), and says why. A mutation walk found
// every one of them unchecked: narrowed or dropped, each was fetched.
import { describe, expect, it } from "vitest";
import { httpFetch, type HttpFetchTool } from "../../src/agent/tools/http-fetch.ts";
import { checkUrl } from "../../src/agent/tools/url-guard.ts";
import { AgentSchema } from "../../src/config/schema.ts";
import { outboundLog } from "../helpers/outbound.ts";
import { env } from "cloudflare:test";

const refused: [string, RegExp][] = [
	["http://100.127.255.255/", /100\.127\.255\.255 is a carrier-grade NAT \(shared\) address/],
	["http://198.18.0.1/", /198\.18\.0\.1 is a benchmarking address/],
	["http://198.19.255.254/", /198\.19\.255\.254 is a benchmarking address/],
	["http://192.0.0.170/", /192\.0\.0\.170 is an IETF protocol-assignment address/],
	["http://224.0.0.251/", /224\.0\.0\.251 is a multicast address/],
	["http://239.255.255.250/", /239\.255\.255\.250 is a multicast address/],
	["http://240.0.0.1/", /240\.0\.0\.1 is a reserved or broadcast address/],
	["http://255.255.255.255/", /255\.255\.255\.255 is a reserved or broadcast address/],
	["http://:hunter2@api.example.test/", /URLs with credentials \(user:password@\) are refused/],
	["http://[febf::1]/", /\[febf::1\] is a link-local address/],
	["http://[fec0::1]/", /\[fec0::1\] is a site-local address/],
	["http://[ff02::1]/", /\[ff02::1\] is a multicast address/],
	["http://[::127.0.0.1]/", /an IPv6 address embedding 127\.0\.0\.1, a loopback address/],
	["http://[::10.1.2.3]/", /an IPv6 address embedding 10\.1\.2\.3, a private address/],
	["http://[2002:a00:1::]/", /a 6to4 address embedding 10\.0\.0\.1, a private address/],
];

// Every host above, as the parser spells it, on the allowlist.
const allowEverything = ["api.example.test", ...refused.map(([url]) => new URL(url).hostname)];

describe("the URL guard at the edges of what it refuses", () => {
	it.each(refused)("refuses %s even when its host is allowlisted", (url, reason) => {
		const check = checkUrl(url, allowEverything);
		expect(check.ok).toBe(false);
		if (!check.ok) expect(check.reason).toMatch(reason);
	});

	it("refuses each in http_fetch without making a request", async () => {
		const agent = AgentSchema.parse({ name: "edges", prompt: "p", tools: [{ type: "http_fetch", allow_hosts: ["api.example.test"] }] });
		const tool: HttpFetchTool = { ...(agent.tools[0] as HttpFetchTool), allow_hosts: allowEverything };
		for (const [url, reason] of refused) {
			const outcome = await httpFetch(tool, { url }, { agent, env: env as Env, jobId: "job_0001" });
			expect(outcome, url).toMatchObject({ ok: false, failure: "refused" });
			expect(outcome.content, url).toMatch(reason);
		}
		expect(outboundLog).toEqual([]);
	});
});
