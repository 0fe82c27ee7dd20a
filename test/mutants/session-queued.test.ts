// A session prefix lookup goes by the index's jobs that may have started a session: a job that has not
// started has started none (job-index.ts sessionStarts), so queued jobs of other agents whose ids fit
// the prefix cost the lookup none of the 10 agents it asks (AGENTS_ASKED). A file of its own (as
// session-continues is), so the day's prefix fits its jobs only.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createJob } from "../../src/jobs/model.ts";
import { upsertJobIndex } from "../../src/store/job-index.ts";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";

describe("a session id prefix that fits queued jobs of many agents", () => {
	it("finds the one session of the prefix, the queued jobs' agents not asked about", async () => {
		useEmulator();
		await createAgent({ name: "first-of-day" });
		const held = await runToRest("first-of-day", "Hello.");
		const day = held.id.slice(0, "job-YYYY-MM-DD-".length);
		const at = Date.parse(held.created_at);
		// A queued (not started) manual run each of ten other agents, ids first in the index's order.
		const queued = (i: number) =>
			createJob({ id: `${day}0000${String(i).padStart(2, "0")}`, agent: `queued-${i}`, trigger_type: "manual", definition_revision: "rev1", schedule: null }, new Date(at));
		for (let i = 0; i < 10; i++) await createAgent({ name: `queued-${i}` });
		await upsertJobIndex(env.DB, Array.from({ length: 10 }, (_, i) => queued(i)));

		const found = await call(`/v1/sessions/ses-${day}`);
		expect(found.status, await found.clone().text()).toBe(200);
		expect(await found.json()).toMatchObject({ session_id: held.session_id, agent: "first-of-day" });
	});
});
