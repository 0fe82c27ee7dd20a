import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import type { ToolContext } from "../../src/agent/contracts.ts";
import { callWebhookTool, type WebhookTool } from "../../src/agent/tools/webhook.ts";
import { parseAgent } from "../helpers/definitions.ts";
import { createAgent } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { fake, outboundLog } from "../helpers/outbound.ts";

describe("a definition stored before a release reserved the secret it names", () => {
	it("is not sent to the alert webhook, nor signed with its key; the agent says why and is paused, not told to set the key", async () => {
		const name = "stored-reserved";
		fake("https://alerts.example.test", () => new Response("ok"));
		await createAgent({ name, tools: [{ type: "webhook", name: "create_ticket", description: "Create.", url_secret: "TEST_TICKETS_URL" }] });
		// As a release before this one stored it (ALERT_WEBHOOK_URL was a name a definition could use).
		await runInDurableObject(env.AGENT.getByName(name), (instance: AgentDO, state) => {
			state.storage.sql.exec("UPDATE agent_state SET definition = replace(definition, 'TEST_TICKETS_URL', 'ALERT_WEBHOOK_URL')");
			const self = instance as unknown as { env: Env };
			self.env = { ...self.env, ALERT_WEBHOOK_URL_SIGNING_KEY: "alert-signing-key-0123456789" } as Env;
		});
		await env.DB.prepare("UPDATE agents SET definition = replace(definition, 'TEST_TICKETS_URL', 'ALERT_WEBHOOK_URL') WHERE name = ?").bind(name).run();
		const reason = "secret ALERT_WEBHOOK_URL (tool create_ticket) is one of drover's own (API_TOKENS, ANTHROPIC_*, DROVER_*, ALERT_WEBHOOK_URL*, PUBLIC_URL), not read for a definition: give it a secret of its own";
		const view = (await (await call(`/v1/agents/${name}`)).json()) as { paused: { reason: string } | null; warnings: string[] };
		expect(view.paused?.reason).toBe(`auto: ${reason}`);
		// Not told to set ALERT_WEBHOOK_URL_SIGNING_KEY for it.
		expect(view.warnings).toEqual([]);
		// The tool itself, as a run would call it: not sent.
		const stored = { type: "webhook", name: "create_ticket", description: "Create.", url_secret: "ALERT_WEBHOOK_URL", input_schema: { type: "object" }, requires_approval: false } as const;
		const ctx = { agent: parseAgent({ name, prompt: "x" }), env: { ...env, ALERT_WEBHOOK_URL: "https://alerts.example.test/hook", ALERT_WEBHOOK_URL_SIGNING_KEY: "k".repeat(32) } as Env, jobId: "job-x" } as unknown as ToolContext;
		const outcome = await callWebhookTool(stored as WebhookTool, { title: "FORGED: db down" }, ctx, "toolu_1");
		expect(outcome).toEqual({ ok: false, content: "webhook tool create_ticket is not configured (the operator has not set its URL secret)", failure: "not_configured" });
		expect(outboundLog.filter((r) => r.url.startsWith("https://alerts.example.test"))).toEqual([]);
	});
});
