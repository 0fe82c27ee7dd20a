// A session found by a prefix past a full page of the index's candidates: a mutation walk found that
// the lookup's second round (the index's jobs of agents not asked yet) went unchecked. A file of its
// own, so the day's prefix fits this file's jobs only.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createJob, transition } from "../../src/jobs/model.ts";
import { upsertJobIndex } from "../../src/store/job-index.ts";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";

describe("a session id prefix past a page of another agent's jobs", () => {
	it("finds the one session of the prefix behind more than a page of started jobs of an agent that has none of it", async () => {
		useEmulator();
		await createAgent({ name: "holder" });
		const held = await runToRest("holder", "Hello.");
		const day = held.id.slice(0, "job-YYYY-MM-DD-".length);
		// Seven started jobs of another agent, ids first in the index's order, none a session of the agent's.
		await createAgent({ name: "crowd" });
		const crowd = Array.from({ length: 7 }, (_, i) => {
			const job = createJob({ id: `${day}00000${i}`, agent: "crowd", trigger_type: "manual", definition_revision: "rev1", schedule: null }, new Date(Date.parse(held.created_at)));
			return transition(job, "running", { reason: "claimed", at: new Date(Date.parse(held.created_at) + 1) });
		});
		await upsertJobIndex(env.DB, crowd);
		const res = await call(`/v1/sessions/ses-${day}`);
		expect(res.status, await res.clone().text()).toBe(200);
		expect(await res.json()).toMatchObject({ session_id: held.session_id, agent: "holder", job_count: 1, first_job: { id: held.id } });
	});
});
