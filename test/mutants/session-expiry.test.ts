// GET /v1/agents/:agent/sessions/current at the instant its session expires: a mutation walk found
// `expired` computed with > passing the suite (its clock was only ever read well before or after),
// where the next run, which starts a new session from that instant (>=), is told the session expired.
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";

afterEach(() => vi.useRealTimers());

const current = async (agent: string) => {
	const res = await call(`/v1/agents/${agent}/sessions/current`);
	expect(res.status, await res.clone().text()).toBe(200);
	return res.json();
};

describe("a persistent session at its expires_at", () => {
	it("reads expired from that instant on, as the run starting then finds it, and not a millisecond before", async () => {
		const START = Date.parse("2025-05-06T08:00:00Z");
		vi.useFakeTimers({ toFake: ["Date"], now: START });
		useEmulator().enqueue({ text: "One." });
		await createAgent({ name: "expires-on-time", session: { mode: "persistent", timeout: "2h" } });
		await runToRest("expires-on-time", "First.");

		vi.setSystemTime(START + 2 * 3_600_000 - 1);
		expect(await current("expires-on-time")).toMatchObject({ expires_at: "2025-05-06T10:00:00.000Z", expired: false, continues: true });
		vi.setSystemTime(START + 2 * 3_600_000);
		expect(await current("expires-on-time")).toMatchObject({
			expires_at: "2025-05-06T10:00:00.000Z",
			expired: true,
			continues: false,
			not_continued_because: expect.stringContaining("it expired at 2025-05-06T10:00:00.000Z"),
		});
	});
});
