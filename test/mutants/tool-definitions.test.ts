// What the model is told about its tools: http_fetch's description gives the tool's own body cap
// and says a body goes only with POST where POST is allowed; a client-side call of a server tool is
// answered as such, never sent anywhere; an agent with no tools is told it has none. A mutation
// walk found each unchecked.
import { env } from "cloudflare:test";
import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { executeTool, toolParams } from "../../src/agent/tools/index.ts";
import { AgentSchema } from "../../src/config/schema.ts";
import { outboundLog } from "../helpers/outbound.ts";

const agent = AgentSchema.parse({
	name: "described",
	prompt: "p",
	tools: [
		{ type: "http_fetch", allow_hosts: ["api.example.test"], methods: ["GET", "POST"], max_response_bytes: 2500 },
		{ type: "server", definition: { type: "web_search_20250305", name: "web_search" } },
	],
});

describe("the tools the model is given", () => {
	it("describe http_fetch's own body cap, and that a body goes only with POST", () => {
		const description = (toolParams(agent)[0] as Anthropic.Tool).description;
		expect(description).toContain("Bodies beyond 2500 bytes are truncated");
		expect(description).toContain("Allowed methods: GET, POST. body is sent only with POST.");
	});

	it("answer a client-side call of a server tool as the model's mistake, sending nothing", async () => {
		expect(await executeTool(agent, "web_search", { query: "x" }, "toolu_1", { agent, env: env as Env, jobId: "job_0001" })).toEqual({
			ok: false,
			content: "web_search is a server tool: Anthropic runs it, not a tool_use call",
		});
		expect(outboundLog).toEqual([]);
	});

	it("answer a call of any tool, for an agent with none, saying there are none", async () => {
		const bare = AgentSchema.parse({ name: "bare", prompt: "p" });
		expect(await executeTool(bare, "http_fetch", { url: "https://api.example.test/" }, "toolu_2", { agent: bare, env: env as Env, jobId: "job_0001" })).toEqual({
			ok: false,
			content: 'unknown tool "http_fetch"; available tools: none',
		});
	});
});
