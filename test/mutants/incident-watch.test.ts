// durable-objects/agent/incidents.ts: a mutation walk found that logging incident.opened at every
// failure filed, not only at the one that opened the incident, passed the suite: an operator's log
// alert on incident.opened would page at every repeat of an error already paged. And that a clean run
// skipping D1 while the open incident waits only on a schedule the definition no longer has (kept
// open for good, as no run of it will come) passed too. And that a failure keeping the watch's list of
// schedules the open incidents wait on, where it must clear it, passed: a clean run of the schedule
// that failed since would skip D1, its incident left open for good.
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { flushIncidentEvents } from "../../durable-objects/agent/incidents.ts";
import { createAgent, settle, settleClaimedRuns } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";
import { captureLogs } from "../helpers/logs.ts";
import { fake } from "../helpers/outbound.ts";
import { dayFromToday, minuteOn, tick } from "../helpers/ticks.ts";

// The ticks below claim fleet.yaml's site-watch too: its run ends with the test that claimed it.
afterEach(settleClaimedRuns);

describe("incident.opened", () => {
	it("is logged once for an error that fails twice: the second failure counts on the open incident", async () => {
		fake("https://alerts.example.test", () => new Response("ok"));
		const emulator = useEmulator();
		await createAgent({ name: "opened-once" });
		const lines = captureLogs();
		for (let i = 0; i < 2; i++) {
			emulator.enqueue({ error: 400, message: "messages.0: tool_result block without tool_use" });
			await runToRest("opened-once");
		}
		const { incidents } = (await (await call("/v1/incidents?agent=opened-once")).json()) as { incidents: { id: string; count: number }[] };
		expect(incidents).toEqual([expect.objectContaining({ count: 2 })]);
		expect(lines.filter((l) => l.event === "incident.opened" && l.agent === "opened-once")).toEqual([expect.objectContaining({ incident: incidents[0]!.id })]);
	});
});

describe("an incident waiting on a schedule since dropped", () => {
	it("resolves at the next clean run of a schedule the agent still has", async () => {
		fake("https://alerts.example.test", () => new Response("ok"));
		const emulator = useEmulator();
		const day = dayFromToday(-1);
		const scheduled = async (hhmm: string) => {
			await tick(minuteOn(day, hhmm));
			await settle("dropped-schedule");
		};
		const incident = async () => ((await (await call("/v1/incidents?agent=dropped-schedule")).json()) as { incidents: { state: string; failing: string[] | null }[] }).incidents[0];
		await createAgent({ name: "dropped-schedule", schedules: { hourly: { cron: "0 * * * *" }, halfpast: { cron: "30 * * * *" } } });
		emulator.enqueue({ error: 400, message: "messages.0: tool_result block without tool_use" });
		await scheduled("10:00");
		// The other schedule's clean run leaves it open, waiting on hourly alone.
		emulator.enqueue({ text: "fine" });
		await scheduled("10:30");
		expect(await incident()).toMatchObject({ state: "alerted", failing: ["schedule:hourly"] });

		const put = await call("/v1/agents/dropped-schedule", { method: "PUT", as: "admin", body: { name: "dropped-schedule", prompt: "Do the thing.", schedules: { halfpast: { cron: "30 * * * *" } } } });
		expect(put.status).toBe(200);
		emulator.enqueue({ text: "fine" });
		await scheduled("11:30");
		expect(await incident()).toMatchObject({ state: "resolved" });
	});
});

describe("a failure after a clean run left an incident open", () => {
	it("has the next clean run of its own schedule ask D1, which resolves its incident: the watch's list is cleared by the failure", async () => {
		await createAgent({ name: "watch-reset", schedules: { a: { cron: "0 * * * *" }, b: { cron: "30 * * * *" } } });
		const at = Date.now();
		// As the agent's runs queue them: a fails; b runs clean (a's incident stays, waiting on a);
		// b fails with another error; b runs clean again.
		const events: [string, string, string | null][] = [
			["failure", "schedule:a", "a broke"],
			["clean", "schedule:b", null],
			["failure", "schedule:b", "b broke"],
			["clean", "schedule:b", null],
		];
		await runInDurableObject(env.AGENT.getByName("watch-reset"), async (_i: AgentDO, state) => {
			const sql = state.storage.sql;
			events.forEach(([kind, source, error], i) =>
				sql.exec("INSERT INTO incident_events (kind, job_id, error, at, source) VALUES (?, ?, ?, ?, ?)", kind, `job-watch-${i}`, error, at + i, source),
			);
			await flushIncidentEvents(sql, env, "watch-reset", () => {});
		});
		const { incidents } = (await (await call("/v1/incidents?agent=watch-reset")).json()) as { incidents: { error: string; state: string }[] };
		expect(incidents.map((i) => [i.error, i.state]).sort()).toEqual([
			["a broke", "detected"],
			["b broke", "resolved"],
		]);
	});
});
