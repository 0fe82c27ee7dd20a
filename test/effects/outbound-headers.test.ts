import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sendAlert } from "../../src/incidents/alert.ts";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { runToRest } from "../helpers/jobs.ts";
import { detectedIncident } from "../helpers/incidents.ts";
import { fake } from "../helpers/outbound.ts";

const incident = detectedIncident({ id: "inc_0003", error: "boom @everyone" });

describe("what drover's outbound requests say they are", () => {
	it("a webhook tool call carries user-agent: drover", async () => {
		const agents: (string | null)[] = [];
		fake("https://tickets.example.test", (req) => {
			agents.push(req.headers.get("user-agent"));
			return Response.json({ id: 7 });
		});
		await createAgent({ name: "ua-tool", tools: [{ type: "webhook", name: "create_ticket", description: "Create a ticket.", url_secret: "TEST_TICKETS_URL" }] });
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "Disk full" } } }, { text: "Filed." });
		await runToRest("ua-tool");
		expect(agents).toEqual(["drover"]);
	});

	it("an alert carries user-agent: drover, and a ptb. or canary. Discord webhook gets Discord's body", async () => {
		const seen: { ua: string | null; body: Record<string, unknown> }[] = [];
		for (const host of ["ptb.discord.com", "canary.discord.com"]) {
			fake(`https://${host}`, async (req) => {
				seen.push({ ua: req.headers.get("user-agent"), body: (await req.json()) as Record<string, unknown> });
				return new Response(null, { status: 204 });
			});
			expect(await sendAlert({ ...env, ALERT_WEBHOOK_URL: `https://${host}/api/webhooks/1/abc` } as Env, incident, `${incident.id}:1`)).toBe(true);
		}
		const discord = { ua: "drover", body: { content: "drover incident inc_0003 on flaky, unknown: boom @everyone", allowed_mentions: { parse: [] } } };
		expect(seen).toEqual([discord, discord]);
	});

	it("a URL secret's user and password go as Basic auth (fetch drops them from the URL): a delivery, a webhook tool call and an alert alike", async () => {
		const basic = `Basic ${btoa("drover-bot:p@ss-w0rd-0123")}`;
		const seen: { url: string; auth: string | null; ua: string | null }[] = [];
		fake("https://basic.example.test", (req) => {
			seen.push({ url: req.url, auth: req.headers.get("authorization"), ua: req.headers.get("user-agent") });
			return Response.json({ ok: true });
		});
		await createAgent({
			name: "basic-auth",
			tools: [{ type: "webhook", name: "create_ticket", description: "Create a ticket.", url_secret: "TEST_BASIC_AUTH_URL" }],
			delivery: { type: "webhook", url_secret: "TEST_BASIC_AUTH_URL" },
		});
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "Disk full" } } }, { text: "Filed." });
		expect(await runToRest("basic-auth")).toMatchObject({ status: "completed", delivery: { outcome: "delivered" } });
		expect(await sendAlert({ ...env, ALERT_WEBHOOK_URL: "https://drover-bot:p%40ss-w0rd-0123@basic.example.test/in" } as Env, incident, `${incident.id}:2`)).toBe(true);
		// The tool call, the delivery, the alert: each to the URL without its user and password.
		expect(seen).toEqual([0, 1, 2].map(() => ({ url: "https://basic.example.test/in", auth: basic, ua: "drover" })));
	});
});
