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
});
