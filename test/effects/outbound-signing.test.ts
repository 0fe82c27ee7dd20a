import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { sendAlert } from "../../src/incidents/alert.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { runToRest } from "../helpers/jobs.ts";
import { detectedIncident } from "../helpers/incidents.ts";
import { fake } from "../helpers/outbound.ts";

afterEach(() => vi.useRealTimers());

interface Seen {
	headers: Record<string, string>;
	body: string;
}

/** A receiver that records each request as it arrives; `answer` picks the status of the n-th (1-based). */
function receiver(origin: string, answer: (n: number) => number = () => 200): Seen[] {
	const seen: Seen[] = [];
	fake(origin, async (req) => {
		seen.push({ headers: Object.fromEntries(req.headers), body: await req.text() });
		return new Response("ok", { status: answer(seen.length) });
	});
	return seen;
}

/** What a receiver computes from the headers and the bytes it got: `sha256=hex(HMAC(key, "<ts>.<body>"))`. */
async function expectedSignature(key: string, timestamp: string, body: string): Promise<string> {
	const k = await crypto.subtle.importKey("raw", new TextEncoder().encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
	const mac = new Uint8Array(await crypto.subtle.sign("HMAC", k, new TextEncoder().encode(`${timestamp}.${body}`)));
	return `sha256=${[...mac].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** The agent's Durable Object runs with these Worker secrets added, as `wrangler secret put` would give it. */
async function withSecrets(agent: string, secrets: Record<string, string>): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(agent), (instance: AgentDO) => {
		const self = instance as unknown as { env: Env };
		self.env = { ...self.env, ...secrets };
	});
}

async function timePasses(agent: string): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) => {
		state.storage.sql.exec("UPDATE deliveries SET next_at = 0 WHERE status IN ('pending', 'sending')");
	});
	await settle(agent);
}

const DELIVERY_KEY = "delivery-signing-key-0123456789";
const HOOK_KEY = "hook-signing-key-0123456789";

describe("deliveries and hooks are signed with <url_secret>_SIGNING_KEY", () => {
	it("signs each attempt over the bytes sent, with a fresh timestamp, and a hook with its own key", async () => {
		const start = Date.parse("2024-03-01T12:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: start });
		useEmulator().enqueue({ text: "Three deploys." });
		const delivered = receiver("https://deliver.example.test", (n) => (n === 1 ? 500 : 200));
		const hooked = receiver("https://hooks.example.test");
		await createAgent({ name: "signed-out", delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" }, hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }] } });
		await withSecrets("signed-out", { TEST_DELIVERY_URL_SIGNING_KEY: DELIVERY_KEY, TEST_HOOK_URL_SIGNING_KEY: HOOK_KEY });
		await runToRest("signed-out");
		vi.setSystemTime(start + 600_000);
		await timePasses("signed-out");
		expect(delivered).toHaveLength(2);
		for (const got of delivered) {
			expect(got.headers["x-drover-signature"]).toBe(await expectedSignature(DELIVERY_KEY, got.headers["x-drover-timestamp"]!, got.body));
		}
		expect(delivered.map((d) => Number(d.headers["x-drover-timestamp"]))).toEqual([start / 1000, start / 1000 + 600]);
		expect(hooked).toHaveLength(1);
		expect(hooked[0]!.headers["x-drover-signature"]).toBe(await expectedSignature(HOOK_KEY, hooked[0]!.headers["x-drover-timestamp"]!, hooked[0]!.body));
	});

	it("sends no signature without the key: the URL is never used as one", async () => {
		useEmulator().enqueue({ text: "Hi." });
		const delivered = receiver("https://deliver.example.test");
		await createAgent({ name: "unsigned-out", delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		await runToRest("unsigned-out");
		expect(delivered).toHaveLength(1);
		expect(delivered[0]!.headers).not.toHaveProperty("x-drover-signature");
		expect(delivered[0]!.headers).not.toHaveProperty("x-drover-timestamp");
	});
});

const incident = detectedIncident({ id: "inc_0002" });

describe("incident alerts are signed with ALERT_WEBHOOK_URL_SIGNING_KEY", () => {
	it("signs the alert when the key is set, and not otherwise", async () => {
		const sentAt = Date.parse("2024-03-02T08:30:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: sentAt });
		const seen = receiver("https://alerts.example.test");
		const key = "alert-signing-key-0123456789";
		expect(await sendAlert({ ...env, ALERT_WEBHOOK_URL_SIGNING_KEY: key } as Env, incident, `${incident.id}:1`)).toBe(true);
		expect(await sendAlert({ ...env, ALERT_WEBHOOK_URL_SIGNING_KEY: "" } as Env, incident, `${incident.id}:1`)).toBe(true);
		expect(seen).toHaveLength(2);
		expect(seen[0]!.headers["x-drover-signature"]).toBe(await expectedSignature(key, seen[0]!.headers["x-drover-timestamp"]!, seen[0]!.body));
		// Stamped with the moment it was sent, in seconds.
		expect(seen[0]!.headers["x-drover-timestamp"]).toBe(String(sentAt / 1000));
		expect(seen[1]!.headers).not.toHaveProperty("x-drover-signature");
	});
});
