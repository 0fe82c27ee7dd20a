import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { runTick } from "../../src/scheduler/tick.ts";
import { getIncident, recordFailure } from "../../src/store/incidents.ts";
import { fake } from "../helpers/outbound.ts";
import { loggedDuring } from "../helpers/logs.ts";

// Alerts that did not go out are tried again at each tick. While the alert webhook is down, a tick
// tries one and leaves the rest to the next tick: each try may wait out the webhook's timeout, and
// the tick has other work. Once it is back, every one of them goes out.

const MIN = 60_000;
const HOUR = 60 * MIN;

const logged = (fn: () => Promise<unknown>) => loggedDuring(fn);

describe("alerts retried by the tick", () => {
	it("are tried one per tick while the webhook is down, and all go out once it is back", async () => {
		// Minute 7 of an hour: not the hourly minute whose tick also prunes and recounts.
		const minute = Math.floor(Date.now() / HOUR) * HOUR + 7 * MIN;
		const ids: string[] = [];
		for (const agent of ["alert-a", "alert-b", "alert-c"]) {
			const { incident } = await recordFailure(env.DB, { agent, error: `${agent} failed`, jobId: null, at: minute - 5 * MIN });
			ids.push(incident.id);
		}

		let up = false;
		const tried = new Set<string>();
		fake("https://alerts.example.test", async (req) => {
			tried.add((req.headers.get("idempotency-key") ?? "").split(":")[0]!);
			return up ? new Response("ok") : new Response("down", { status: 503 });
		});

		await runTick(env, minute, minute + 1000);
		expect(tried.size).toBe(1);
		for (const id of ids) expect(await getIncident(env.DB, id)).toMatchObject({ state: "detected" });

		up = true;
		tried.clear();
		await runTick(env, minute + MIN, minute + MIN + 1000);
		expect([...tried].sort()).toEqual([...ids].sort());
		for (const id of ids) expect(await getIncident(env.DB, id)).toMatchObject({ state: "alerted" });
	});

	it("leave an incident seen in the minute before the tick to the failure that filed it, and retry one seen earlier", async () => {
		// The window's edge: an incident last seen 60 s before the tick's minute is retried, one seen
		// 59 s before is not (its own failure is paging it). Minute 17: not an hourly minute.
		const minute = Math.floor(Date.now() / HOUR) * HOUR + 17 * MIN;
		const { incident: earlier } = await recordFailure(env.DB, { agent: "alert-edge-a", error: "edge a failed", jobId: null, at: minute - MIN });
		const { incident: recent } = await recordFailure(env.DB, { agent: "alert-edge-b", error: "edge b failed", jobId: null, at: minute - MIN + 1000 });
		const tried = new Set<string>();
		fake("https://alerts.example.test", async (req) => {
			tried.add((req.headers.get("idempotency-key") ?? "").split(":")[0]!);
			return new Response("ok");
		});
		const lines = await logged(() => runTick(env, minute, minute + 1000));
		expect([...tried]).toEqual([earlier.id]);
		// README's incident.alert_retried: the alert a tick's retry sent, with the tick's minute.
		expect(lines.filter((l) => l.event === "incident.alert_retried")).toEqual([
			expect.objectContaining({ level: "info", agent: "alert-edge-a", incident: earlier.id, minute: new Date(minute).toISOString() }),
		]);
		expect(await getIncident(env.DB, earlier.id)).toMatchObject({ state: "alerted" });
		expect(await getIncident(env.DB, recent.id)).toMatchObject({ state: "detected" });
	});

	it("are not tried while ALERT_WEBHOOK_URL holds no URL: the tick says nothing of it each minute, as filing the incident did once", async () => {
		// Minute 27: not an hourly minute, nor one of fleet.yaml's slots.
		const minute = Math.floor(Date.now() / HOUR) * HOUR + 27 * MIN;
		const { incident } = await recordFailure(env.DB, { agent: "alert-nowhere", error: "nowhere failed", jobId: null, at: minute - 5 * MIN });
		const lines = await logged(() => runTick({ ...env, ALERT_WEBHOOK_URL: "not a url" } as Env, minute, minute + 1000));
		expect(lines.map((l) => l.event)).toContain("tick.done");
		expect(lines.filter((l) => String(l.event).startsWith("incident."))).toEqual([]);
		expect(await getIncident(env.DB, incident.id)).toMatchObject({ state: "detected" });
	});
});
