import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, runToRest, trigger } from "../helpers/jobs.ts";
import { ticketTool } from "../helpers/tools.ts";

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
		// The key cut out where it stood, marked: the rest of the reason kept.
		expect(paused!.reason).toBe("rotating sk-ant-api03-[REDACTED]");
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

describe("an automatic pause lifted by a look at the agent", () => {
	it("starts the run it held, for an agent without schedules, which no tick would wake", async () => {
		useEmulator().enqueue({ tool_use: { name: "create_ticket", input: { title: "x" } } }, { text: "Ran once the pause lifted." });
		await createAgent({ name: "held-by-auto", tools: [ticketTool] });
		const stub = env.AGENT.getByName("held-by-auto");
		const first = await runToRest("held-by-auto");
		expect(first.status).toBe("approval_pending");
		const queued = await trigger("held-by-auto");
		// drover paused the agent itself (as autoPause writes it); then the running job is cancelled:
		// its slot frees, but the pause holds the queued run.
		await runInDurableObject(stub, (_i: AgentDO, state) => {
			state.storage.sql.exec("UPDATE agent_state SET paused_at = ?, paused_reason = 'auto: secret X is not set', paused_by = 'auto' WHERE id = 1", Date.now());
		});
		expect((await call(`/v1/jobs/${first.id}/cancel`, { method: "POST", as: "operate", body: {} })).status).toBe(200);
		await settle("held-by-auto");
		expect((await jobOf("held-by-auto", queued.id)).status).toBe("pending");
		// The cause is gone: reading the agent lifts the pause, and the run starts within seconds.
		expect(await pausedOf("held-by-auto")).toBeNull();
		const alarm = await runInDurableObject(stub, (_i: AgentDO, state) => state.storage.getAlarm());
		expect(alarm! - Date.now()).toBeLessThanOrEqual(5_000);
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		await settle("held-by-auto");
		expect((await jobOf("held-by-auto", queued.id)).status).toBe("completed");
	});
});
