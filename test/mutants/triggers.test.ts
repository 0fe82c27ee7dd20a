import { describe, expect, it } from "vitest";
import { MAX_QUEUED } from "../../durable-objects/agent/triggers.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { heldModel, useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { trigger } from "../helpers/jobs.ts";
import { WEBHOOK_SECRET } from "../helpers/tokens.ts";
import { signWebhook } from "../../src/api/webhook-signature.ts";

// triggers.ts: a full queue's 429 asks for a retry, and a sender honouring it may resend the same
// signed bytes, which must then run; only a paused or disabled agent's 409 remembers them as refused.
describe("a signed webhook refused for a full queue", () => {
	it("runs when its sender resends the same bytes once a place frees", async () => {
		const emulator = useEmulator();
		const { arrived, release } = heldModel(emulator);
		await createAgent({ name: "full-hooked", overlap: "queue", prompt: "Triage this.", webhook: { secret: "TRIAGE_WEBHOOK_SECRET" } });
		await trigger("full-hooked");
		await arrived;
		for (let i = 0; i < MAX_QUEUED; i++) await trigger("full-hooked");
		const body = JSON.stringify({ issue: 18 });
		const timestamp = Math.floor(Date.now() / 1000);
		const headers = { "x-drover-timestamp": String(timestamp), "x-drover-signature": await signWebhook(WEBHOOK_SECRET, timestamp, body) };
		const send = () => call("/v1/hooks/full-hooked", { method: "POST", as: null, body, headers });
		expect((await send()).status).toBe(429);

		const queued = ((await (await call("/v1/jobs?agent=full-hooked&status=pending&limit=1")).json()) as { jobs: { id: string }[] }).jobs[0]!;
		expect((await call(`/v1/jobs/${queued.id}/cancel`, { method: "POST", as: "operate", body: {} })).status).toBe(200);
		const resent = await send();
		expect(resent.status, await resent.clone().text()).toBe(202);
		expect(((await resent.json()) as { trigger_type: string }).trigger_type).toBe("webhook");

		expect((await call("/v1/agents/full-hooked", { method: "DELETE", as: "admin" })).status).toBe(200);
		release();
		await settle("full-hooked");
	});
});
