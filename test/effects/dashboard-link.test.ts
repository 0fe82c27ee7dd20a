import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app.ts";
import { sendAlert } from "../../src/incidents/alert.ts";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { jobOf, runToRest } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";
import { agentWithVars } from "../helpers/vars.ts";
import { detectedIncident } from "../helpers/incidents.ts";

/** A target answering `statuses` in turn (the last one from then on), keeping each body it is sent. */
function receiver(origin: string, statuses: number[] = [200]): Record<string, unknown>[] {
	const seen: Record<string, unknown>[] = [];
	fake(origin, async (req) => {
		seen.push((await req.json()) as Record<string, unknown>);
		return new Response("ok", { status: statuses[Math.min(seen.length - 1, statuses.length - 1)] });
	});
	return seen;
}

/** The agent's queued sends come due, as if their backoff had passed, and are sent. */
async function retryNow(agent: string): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) => {
		state.storage.sql.exec("UPDATE deliveries SET next_at = 0 WHERE status IN ('pending', 'sending')");
	});
	await settle(agent);
}

const contextLine = (body: Record<string, unknown>) => ((body.blocks as { type: string; elements?: { text: string }[] }[]).at(-1)!.elements ?? [])[0]!.text;

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
			issues: [{ path: "PUBLIC_URL", message: 'PUBLIC_URL "drover.example.test/…" is not an http(s) origin (such as https://drover.example.workers.dev): deliveries and alerts carry no dashboard link' }],
		});
	});

	it("is listed by /healthz, which anyone may ask, without the user, password, path, query or fragment a pasted URL carries", async () => {
		const pasted = "https://bot:s3cret-pass-0123@drover.example.test/hooks/PathTok0123456789?tok=PubQry0123456789#frag";
		const res = await app.request("/healthz", {}, { ...env, PUBLIC_URL: pasted } as Env);
		const text = await res.text();
		expect(JSON.parse(text).variables).toEqual({
			ok: false,
			issues: [{ path: "PUBLIC_URL", message: 'PUBLIC_URL "https://…@drover.example.test/…?…#…" is not an http(s) origin (such as https://drover.example.workers.dev): deliveries and alerts carry no dashboard link' }],
		});
		for (const part of ["bot", "s3cret", "PathTok", "PubQry", "frag"]) expect(text).not.toContain(part);
		// A password holding "@" or "/" (a parser reads to the last "@") is elided whole too.
		for (const password of ["p@ss-word0123", "pa/ss-word0123", "pa?ss-word0123", "pa#ss-word0123"]) {
			const body = await (await app.request("/healthz", {}, { ...env, PUBLIC_URL: `https://bot:${password}@drover.example.test/` } as Env)).text();
			expect((JSON.parse(body) as { variables: { issues: { message: string }[] } }).variables.issues[0]!.message).toMatch(/^PUBLIC_URL "https:\/\/…@drover\.example\.test\/" is not/);
			expect(body).not.toContain("word0123");
		}
	});

	it("is the deployment's PUBLIC_URL when the delivery is sent: a retry after a redeploy links to the new one, or to none", async () => {
		useEmulator().enqueue({ text: "Three deploys." }, { text: "Hi." });
		const hooked = receiver("https://deliver.example.test", [503, 200]);
		const slacked = receiver("https://slack.example.test", [503, 200]);
		await createAgent({ name: "moved-hook", delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		await createAgent({ name: "moved-slack", delivery: { type: "slack", url_secret: "TEST_SLACK_URL" } });
		await agentWithVars("moved-hook", { PUBLIC_URL: "https://old.example.test" });
		await agentWithVars("moved-slack", { PUBLIC_URL: "https://old.example.test" });
		const a = await runToRest("moved-hook");
		const b = await runToRest("moved-slack");
		expect(hooked[0]!.dashboard_url).toBe(`https://old.example.test/jobs/${a.id}`);
		expect(contextLine(slacked[0]!)).toContain(`<https://old.example.test/jobs/${b.id}|Open in drover>`);
		// Redeployed between the first attempt and the retry: the dashboard moved, and Slack's lost its link.
		await agentWithVars("moved-hook", { PUBLIC_URL: "https://new.example.test" });
		await agentWithVars("moved-slack", { PUBLIC_URL: "" });
		await retryNow("moved-hook");
		await retryNow("moved-slack");
		expect(hooked).toHaveLength(2);
		expect(hooked[1]).toEqual({ ...hooked[0], dashboard_url: `https://new.example.test/jobs/${a.id}` });
		expect(slacked).toHaveLength(2);
		expect(contextLine(slacked[1]!)).toBe(`Job \`${b.id}\` · manual · completed`);
		expect((await jobOf("moved-hook", a.id)).delivery).toEqual({ target: "webhook", outcome: "delivered" });
	});

	it("is left as it was in a delivery queued before deliveries were formatted when sent: its body is sent as stored", async () => {
		useEmulator().enqueue({ text: "Hi." });
		const seen = receiver("https://deliver.example.test", [503, 200]);
		await createAgent({ name: "queued-before", delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		await agentWithVars("queued-before", { PUBLIC_URL: "https://new.example.test" });
		const job = await runToRest("queued-before");
		// The row as the release before queued it: the body formatted, its link fixed.
		const before = { type: "drover.delivery", job_id: job.id, answer: "Hi.", dashboard_url: `https://old.example.test/jobs/${job.id}` };
		await runInDurableObject(env.AGENT.getByName("queued-before"), (_i: AgentDO, state) => {
			state.storage.sql.exec("UPDATE deliveries SET body = ?, content_type = 'application/json' WHERE kind = 'delivery'", JSON.stringify(before));
		});
		await retryNow("queued-before");
		expect(seen.at(-1)).toEqual(before);
		expect((await jobOf("queued-before", job.id)).delivery).toEqual({ target: "webhook", outcome: "delivered" });
	});
});

describe("the dashboard link in an incident's alert (PUBLIC_URL)", () => {
	it("is its agent's incidents under PUBLIC_URL: dashboard_url in the generic body, after Slack's line; none without PUBLIC_URL", async () => {
		const generic = receiver("https://alerts.example.test");
		const slack: Record<string, unknown>[] = [];
		fake("https://hooks.slack.com", async (req) => {
			slack.push((await req.json()) as Record<string, unknown>);
			return new Response("ok");
		});
		const incident = detectedIncident({ id: "nightly_0123456789ab", agent: "nightly-report", error: "boom" });
		const withUrl = (alerts: string, publicUrl?: string) => ({ ...env, ALERT_WEBHOOK_URL: alerts, ...(publicUrl === undefined ? {} : { PUBLIC_URL: publicUrl }) }) as Env;
		expect(await sendAlert(withUrl("https://alerts.example.test/in", "https://drover.example.test/"), incident, `${incident.id}:1`)).toBe(true);
		expect(await sendAlert(withUrl("https://hooks.slack.com/services/T0/B0/x", "https://drover.example.test"), incident, `${incident.id}:1`)).toBe(true);
		expect(await sendAlert(withUrl("https://alerts.example.test/in", ""), incident, `${incident.id}:2`)).toBe(true);
		expect(await sendAlert(withUrl("https://alerts.example.test/in", "drover.example.test/jobs"), incident, `${incident.id}:3`)).toBe(true);
		expect(generic[0]!.dashboard_url).toBe("https://drover.example.test/incidents?agent=nightly-report");
		expect(slack).toEqual([{ text: "drover incident nightly_0123456789ab on nightly-report, unknown: boom · <https://drover.example.test/incidents?agent=nightly-report|Open in drover>" }]);
		// Unset, or not an http(s) origin (which /healthz lists): no link.
		expect(generic.slice(1).map((body) => Object.hasOwn(body, "dashboard_url"))).toEqual([false, false]);
	});
});
