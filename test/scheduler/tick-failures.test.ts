import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent, runsOf } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";
import { fake } from "../helpers/outbound.ts";
import { tick } from "../helpers/ticks.ts";

describe("a tick that cannot reach an agent", () => {
	it("still claims for every other agent, reports partial, opens a scheduler incident, and catches up later", async () => {
		const alerts: unknown[] = [];
		fake("https://alerts.example.test", async (req) => {
			alerts.push(await req.json());
			return new Response("ok");
		});
		await createAgent({ name: "healthy", max_concurrent: 5, schedules: { q: { interval: "15m" } } });
		await createAgent({ name: "broken", max_concurrent: 5, schedules: { q: { interval: "15m" } } });
		await tick("2026-12-05T10:00:00Z");
		// The broken agent's object fails every call (its stored state no longer parses).
		await runInDurableObject(env.AGENT.getByName("broken"), (_i: AgentDO, state) => {
			state.storage.sql.exec("UPDATE agent_state SET definition = '{not json'");
		});
		await tick("2026-12-05T10:15:00Z");

		const status = (await (await call("/v1/status")).json()) as { scheduler: { outcome: string; error: string } };
		expect(status.scheduler.outcome).toBe("partial");
		expect(status.scheduler.error).toMatch(/^broken: /);
		expect((await runsOf("healthy")).map((r) => r.scheduled_instant)).toEqual(["2026-12-05T10:00:00.000Z", "2026-12-05T10:15:00.000Z"]);
		const { incidents } = (await (await call("/v1/incidents?agent=scheduler")).json()) as { incidents: { state: string; error: string }[] };
		expect(incidents).toMatchObject([{ state: "alerted" }]);
		expect(incidents[0]!.error).toMatch(/^tick partial: broken: /);
		expect(alerts).toHaveLength(1);

		// Repaired, the agent is called again (its due time never advanced) and claims the slot it missed.
		await call("/v1/agents/broken", { method: "PUT", as: "admin", body: { name: "broken", prompt: "Do the thing.", max_concurrent: 5, schedules: { q: { interval: "15m" } } } });
		await tick("2026-12-05T10:16:00Z");
		expect((await runsOf("broken")).map((r) => [r.scheduled_instant, r.dispatch])).toEqual([
			["2026-12-05T10:00:00.000Z", "on_time"],
			["2026-12-05T10:15:00.000Z", "late"],
		]);
		const after = (await (await call("/v1/incidents?agent=scheduler")).json()) as { incidents: { state: string }[] };
		expect(after.incidents).toMatchObject([{ state: "resolved" }]);
	});
});
