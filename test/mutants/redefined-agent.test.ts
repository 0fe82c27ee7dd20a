import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";

// A deleted agent's name defined again is a new agent (README: its history stays the old one's), so
// nothing the old one's operators did to it carries over: not its pause, not its Idempotency-Keys.

type Paused = { at: string; reason: string | null; by: string } | null;
const pausedOf = async (agent: string) => ((await (await call(`/v1/agents/${agent}`)).json()) as { paused: Paused }).paused;
const run = (agent: string, prompt: string, key: string) =>
	call(`/v1/agents/${agent}/jobs`, { method: "POST", as: "operate", body: { prompt }, headers: { "idempotency-key": key } });
const remove = async (agent: string) => expect((await call(`/v1/agents/${agent}`, { method: "DELETE", as: "admin" })).status).toBe(200);

describe("an agent defined again under a deleted one's name", () => {
	it("is not paused because the deleted one was", async () => {
		await createAgent({ name: "paused-then-gone", max_concurrent: 5 });
		expect((await call("/v1/agents/paused-then-gone/pause", { method: "POST", as: "operate", body: { reason: "vendor outage" } })).status).toBe(200);
		expect(await pausedOf("paused-then-gone")).toMatchObject({ reason: "vendor outage", by: "operator" });
		await remove("paused-then-gone");

		await createAgent({ name: "paused-then-gone", max_concurrent: 5 });
		expect(await pausedOf("paused-then-gone")).toBeNull();
	});

	it("makes a new job for an Idempotency-Key the deleted one had used, not hand back the deleted one's", async () => {
		await createAgent({ name: "keyed-then-gone", max_concurrent: 5 });
		const first = await run("keyed-then-gone", "once", "deploy-4711");
		expect(first.status).toBe(201);
		const old = ((await first.json()) as { id: string }).id;
		await remove("keyed-then-gone");

		await createAgent({ name: "keyed-then-gone", max_concurrent: 5 });
		const again = await run("keyed-then-gone", "once", "deploy-4711");
		expect(again.status).toBe(201);
		expect(((await again.json()) as { id: string }).id).not.toBe(old);
		// The new agent's own use of the key is kept: a retry is answered with its job.
		const retry = await run("keyed-then-gone", "once", "deploy-4711");
		expect(retry.status).toBe(200);
	});
});
