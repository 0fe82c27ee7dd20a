// A webhook tool's answers at their edges: 300 is no success, an empty 2xx body is said in words
// (not handed to the model as an empty result), and a URL secret that is no http(s) URL is reported
// as misconfigured without a request. A mutation walk found each unchecked.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ToolContext } from "../../src/agent/contracts.ts";
import { callWebhookTool, type WebhookTool } from "../../src/agent/tools/webhook.ts";
import { AgentSchema } from "../../src/config/schema.ts";
import { fake, outboundLog } from "../helpers/outbound.ts";

const HOOK_URL = "https://hooks.example.test/in/0f3c9a7e55d1";
const agent = AgentSchema.parse({
	name: "hooker",
	prompt: "call it",
	tools: [{ type: "webhook", name: "notify", description: "Notify.", url_secret: "NOTIFY_URL", input_schema: { type: "object", properties: { text: { type: "string" } } } }],
});
const tool = agent.tools[0] as WebhookTool;
const ctx = (url: string): ToolContext => ({ agent, env: { ...env, NOTIFY_URL: url } as Env, jobId: "job_0001" });

describe("a webhook tool's answer", () => {
	it("is a failure when the receiver answers 300, as for any status outside 2xx", async () => {
		fake(HOOK_URL, () => new Response("pick one", { status: 300 }));
		expect(await callWebhookTool(tool, { text: "x" }, ctx(HOOK_URL), "toolu_1")).toEqual({ ok: false, content: "webhook answered 300: pick one", failure: "http_300" });
	});

	it("says an empty 2xx body in words", async () => {
		fake(HOOK_URL, () => new Response(null, { status: 204 }));
		expect(await callWebhookTool(tool, { text: "x" }, ctx(HOOK_URL), "toolu_2")).toEqual({ ok: true, content: "webhook answered 204 with an empty body" });
	});

	it("reports a URL secret that is not an http(s) URL as misconfigured, and sends nothing", async () => {
		expect(await callWebhookTool(tool, { text: "x" }, ctx("ftp://hooks.example.test/in"), "toolu_3")).toEqual({
			ok: false,
			content: "webhook tool notify is not configured correctly (its URL secret is not an http(s) URL)",
			failure: "bad_url",
		});
		expect(outboundLog).toEqual([]);
	});
});
