import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app.ts";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { runToRest } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { agentWithVars } from "../helpers/vars.ts";

function receiver(origin: string): Record<string, unknown>[] {
	const seen: Record<string, unknown>[] = [];
	fake(origin, async (req) => {
		seen.push((await req.json()) as Record<string, unknown>);
		return new Response("ok");
	});
	return seen;
}

describe("the dashboard link in a delivery (PUBLIC_URL)", () => {
	it("is the job's dashboard page under PUBLIC_URL, in the webhook body and Slack's context line", async () => {
		useEmulator().enqueue({ text: "Three deploys." }, { text: "Hi." });
		const hooked = receiver("https://deliver.example.test");
		const slacked = receiver("https://slack.example.test");
		await createAgent({ name: "linked-hook", delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		await createAgent({ name: "linked-slack", delivery: { type: "slack", url_secret: "TEST_SLACK_URL" } });
		await agentWithVars("linked-hook", { PUBLIC_URL: "https://drover.example.test" });
		await agentWithVars("linked-slack", { PUBLIC_URL: "https://drover.example.test/" });
		const a = await runToRest("linked-hook");
		const b = await runToRest("linked-slack");
		expect(hooked[0]!.dashboard_url).toBe(`https://drover.example.test/jobs/${a.id}`);
		expect((slacked[0]!.blocks as unknown[]).at(-1)).toEqual({
			type: "context",
			elements: [{ type: "mrkdwn", text: `Job \`${b.id}\` · manual · completed · <https://drover.example.test/jobs/${b.id}|Open in drover>` }],
		});
	});

	it("is left out when PUBLIC_URL is not an http(s) origin, which /healthz lists", async () => {
		useEmulator().enqueue({ text: "Hi." });
		const seen = receiver("https://deliver.example.test");
		await createAgent({ name: "unlinked", delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		await agentWithVars("unlinked", { PUBLIC_URL: "drover.example.test/jobs" });
		await runToRest("unlinked");
		expect(seen[0]).not.toHaveProperty("dashboard_url");
		const res = await app.request("/healthz", {}, { ...env, PUBLIC_URL: "drover.example.test/jobs" } as Env);
		expect(((await res.json()) as { variables: unknown }).variables).toEqual({
			ok: false,
			issues: [{ path: "PUBLIC_URL", message: 'PUBLIC_URL "drover.example.test/jobs" is not an http(s) origin (such as https://drover.example.workers.dev): deliveries carry no dashboard link' }],
		});
	});
});
