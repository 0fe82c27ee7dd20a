// A webhook tool's input held to its input_schema: every problem is named up to five (not just the
// first), and the schema is read as JSON Schema 2020-12 (prefixItems, and keywords beside a $ref,
// which draft 7 ignores), and a call with no input at all is held to it as {}. A mutation walk found
// each unchecked: input that broke the schema was sent, or the model was told one problem of many.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { callWebhookTool, type WebhookTool } from "../../src/agent/tools/webhook.ts";
import { AgentSchema } from "../../src/config/schema.ts";
import { fake, outboundLog } from "../helpers/outbound.ts";

const HOOK_URL = "https://hooks.example.test/in/0f3c9a7e55d1";
const fields = ["a", "b", "c", "d", "e", "f", "g"];
const agent = AgentSchema.parse({
	name: "checker",
	prompt: "call it",
	tools: [
		{
			type: "webhook",
			name: "record",
			description: "Record.",
			url_secret: "RECORD_URL",
			input_schema: {
				type: "object",
				properties: {
					...Object.fromEntries(fields.map((f) => [f, { type: "string" }])),
					pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }] },
					code: { $ref: "#/$defs/word", maxLength: 3 },
				},
				required: ["a"],
				$defs: { word: { type: "string" } },
			},
		},
	],
});
const tool = agent.tools[0] as WebhookTool;
const ctx = { agent, env: { ...env, RECORD_URL: HOOK_URL } as Env, jobId: "job_0001" };

describe("a webhook tool's input that breaks its input_schema", () => {
	it("is not sent, and the model is told its first five problems", async () => {
		fake(HOOK_URL, () => new Response("recorded"));
		const outcome = await callWebhookTool(tool, Object.fromEntries(fields.map((f) => [f, 1])), ctx, "toolu_1");
		expect(outcome.ok).toBe(false);
		expect(outcome.content.match(/tool_input\/[a-g]: /g)).toEqual(["tool_input/a: ", "tool_input/b: ", "tool_input/c: ", "tool_input/d: ", "tool_input/e: "]);
		expect(outboundLog).toEqual([]);
	});

	it("is held to prefixItems, and to a $ref's sibling keywords, as JSON Schema 2020-12 reads them", async () => {
		fake(HOOK_URL, () => new Response("recorded"));
		const outcome = await callWebhookTool(tool, { pair: [1, "one"] }, ctx, "toolu_2");
		expect(outcome).toMatchObject({ ok: false, failure: "bad_input" });
		expect(outcome.content).toMatch(/tool_input\/pair\/0: /);
		// Draft 7 ignored every keyword beside a $ref: the 7 characters were sent.
		const sibling = await callWebhookTool(tool, { code: "toolong" }, ctx, "toolu_3");
		expect(sibling).toMatchObject({ ok: false, failure: "bad_input" });
		expect(sibling.content).toMatch(/tool_input\/code: /);
		expect(outboundLog).toEqual([]);
	});

	it("is not sent when the call carries no input at all, and a required field is missing", async () => {
		fake(HOOK_URL, () => new Response("recorded"));
		const outcome = await callWebhookTool(tool, undefined, ctx, "toolu_4");
		expect(outcome).toMatchObject({ ok: false, failure: "bad_input" });
		expect(outcome.content).toMatch(/required property "a"/i);
		expect(outboundLog).toEqual([]);
	});
});
