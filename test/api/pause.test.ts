import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";

type Paused = { at: string; reason: string | null; by: string } | null;
const pausedOf = async (agent: string) => ((await (await call(`/v1/agents/${agent}`)).json()) as { paused: Paused }).paused;
const pause = (agent: string, as: "operate" | "admin", body?: { reason: string }) => call(`/v1/agents/${agent}/pause`, { method: "POST", as, ...(body ? { body } : {}) });

describe("pausing an agent that is paused already", () => {
	it("keeps the time it was first paused; a new reason replaces the old, none keeps it; the caller takes the pause over", async () => {
		await createAgent({ name: "paused-twice" });
		expect((await pause("paused-twice", "operate", { reason: "vendor outage" })).status).toBe(200);
		const first = await pausedOf("paused-twice");
		expect(first).toMatchObject({ reason: "vendor outage", by: "operator" });

		const again = await pause("paused-twice", "admin");
		expect(again.status).toBe(200);
		expect(((await again.json()) as { paused: Paused }).paused).toEqual({ at: first!.at, reason: "vendor outage", by: "root" });

		expect((await pause("paused-twice", "operate", { reason: "still down, ETA 18:00" })).status).toBe(200);
		expect(await pausedOf("paused-twice")).toEqual({ at: first!.at, reason: "still down, ETA 18:00", by: "operator" });

		// Once resumed, a pause is a new one with its own time and reason.
		expect((await call("/v1/agents/paused-twice/resume", { method: "POST", as: "operate" })).status).toBe(200);
		expect(await pausedOf("paused-twice")).toBeNull();
		expect((await pause("paused-twice", "operate")).status).toBe(200);
		expect(await pausedOf("paused-twice")).toMatchObject({ reason: null, by: "operator" });
	});

	it("stores its reason redacted, as every record is: a credential pasted into it is shown to no one", async () => {
		await createAgent({ name: "paused-with-a-key" });
		const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";
		expect((await pause("paused-with-a-key", "operate", { reason: `rotating ${key}` })).status).toBe(200);
		const paused = await pausedOf("paused-with-a-key");
		expect(paused!.reason).toMatch(/^rotating /);
		expect(paused!.reason).not.toContain(key);
		expect(await (await call("/v1/agents")).text()).not.toContain(key);
	});

	it("turns an automatic pause into the operator's, kept with its time and reason until resume", async () => {
		const tool = { type: "webhook", name: "create_ticket", description: "File a ticket.", url_secret: "NEVER_SET_TICKETS_URL" };
		await createAgent({ name: "auto-then-operator", tools: [tool] });
		const auto = await pausedOf("auto-then-operator");
		expect(auto).toMatchObject({ by: "auto" });
		expect((await pause("auto-then-operator", "operate")).status).toBe(200);
		expect(await pausedOf("auto-then-operator")).toEqual({ at: auto!.at, reason: auto!.reason, by: "operator" });
	});
});
