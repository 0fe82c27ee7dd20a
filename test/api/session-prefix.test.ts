import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";

/**
 * A session found by a prefix of its id, among persistent runs that carried a session on: a file
 * of its own, so a day's prefix (ses-job-YYYY-MM-DD-) fits this file's jobs only.
 */
describe("a session id prefix", () => {
	it("passes over persistent runs that carried their agent's session on: they started none", async () => {
		const emulator = useEmulator();
		emulator.enqueue(...Array.from({ length: 8 }, (_, i) => ({ text: `Answer ${i}.` })));
		await createAgent({ name: "carrier", session: { mode: "persistent" } });
		const first = await runToRest("carrier", "First.");
		const second = await runToRest("carrier", "Second.");
		expect(second).toMatchObject({ session_id: first.session_id, continued_from: first.id });
		const day = `ses-${first.id.slice(0, "job-YYYY-MM-DD-".length)}`;

		// One session of the day: the prefix names it, and not the run that carried it on.
		const only = await call(`/v1/sessions/${day}`);
		expect(only.status, await only.clone().text()).toBe(200);
		expect(await only.json()).toMatchObject({ session_id: first.session_id, agent: "carrier", job_count: 2, last_job: { id: second.id } });
		expect((await call(`/v1/sessions/ses-${second.id}`)).status).toBe(404);

		// With another agent's session of the day, the 409 names the two sessions there are, though
		// the carrier's runs are more than a page of the index's candidates (6), before it or not.
		await createAgent({ name: "bystander" });
		const other = await runToRest("bystander", "Other.");
		for (const n of [3, 4, 5, 6, 7]) await runToRest("carrier", `Run ${n}.`);
		const res = await call(`/v1/sessions/${day}`);
		expect(res.status).toBe(409);
		const error = await errorOf(res);
		const named = (error.details as { candidates: { session_id: string; agent: string }[] }).candidates;
		expect(named.map((c) => `${c.session_id} ${c.agent}`).sort()).toEqual([`${first.session_id} carrier`, `${other.session_id} bystander`].sort());
		expect(error.message).not.toContain(second.id);
	});
});
