import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { runTick } from "../../src/scheduler/tick.ts";
import { getIncident, recordFailure } from "../../src/store/incidents.ts";
import { fake } from "../helpers/outbound.ts";

// Alerts that did not go out are tried again at each tick. While the alert webhook is down, a tick
// tries one and leaves the rest to the next tick: each try may wait out the webhook's timeout, and
// the tick has other work. Once it is back, every one of them goes out.

const MIN = 60_000;
const HOUR = 60 * MIN;

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
});
