// A shard brings its file agents in line with the bundled fleet.yaml once per deploy
// (durable-objects/shard/shard-do.ts syncFileAgents), which a mutation walk of the shard found
// unchecked: synced at every tick, each file agent was called at every tick, due or not. A file of
// its own, so the fleet's agents are fleet.yaml's alone.
import { afterEach, describe, expect, it, vi } from "vitest";
import { call } from "../helpers/http.ts";

afterEach(() => {
	vi.useRealTimers();
});

async function tickAnswer(): Promise<{ scheduled_time: string; agents_called: number }> {
	const res = await call("/v1/tick", { method: "POST", as: "admin" });
	expect(res.status).toBe(200);
	return res.json();
}

describe("fleet.yaml's agents, synced by the deploy's first tick", () => {
	it("are called by a later tick only when due: a minute none is due calls none", async () => {
		// 10:02 and 10:03 of a Wednesday: no slot of fleet.yaml's schedules (weekday 09:00, Friday 16:00, every 15 minutes).
		vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2037-12-16T10:02:05Z") });
		const first = await tickAnswer();
		expect(first.scheduled_time).toBe("2037-12-16T10:02:00.000Z");
		// The sync's first calls: each file agent, to learn when it is next due.
		expect(first.agents_called).toBeGreaterThan(0);
		vi.setSystemTime(Date.parse("2037-12-16T10:03:05Z"));
		expect(await tickAnswer()).toMatchObject({ scheduled_time: "2037-12-16T10:03:00.000Z", agents_called: 0 });
	});
});
