// What a job's manifest and output.log carry, where a mutation walk found the suite blind: a
// persistent run's manifest names the run whose session it found (the manifest tests' runs were all
// fresh, so persistent_from: null passed), and a log is downloaded under its job's name.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createJob, transition } from "../../src/jobs/model.ts";
import { upsertJobIndex } from "../../src/store/job-index.ts";
import { outputLogKey } from "../../src/store/output-r2.ts";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";

async function persistentFrom(id: string): Promise<string | null> {
	const res = await call(`/v1/jobs/${id}/manifest`);
	expect(res.status, await res.clone().text()).toBe(200);
	return ((await res.json()) as { persistent_from: string | null }).persistent_from;
}

describe("a job's reads", () => {
	it("a persistent run's manifest names the last completed run it found, '' for the first", async () => {
		useEmulator().enqueue({ text: "One." }, { text: "Two." });
		await createAgent({ name: "keeps-session", session: { mode: "persistent" } });
		const first = await runToRest("keeps-session", "First.");
		const second = await runToRest("keeps-session", "Second.");
		expect(second.continued_from).toBe(first.id);
		expect(await persistentFrom(first.id)).toBe("");
		expect(await persistentFrom(second.id)).toBe(first.id);
	});

	it("serves output.log as an inline download named <job id>.log", async () => {
		const created = createJob({ agent: "log-named", trigger_type: "manual", definition_revision: "rev1", schedule: null }, new Date("2026-05-05T10:00:00Z"));
		const job = transition(transition(created, "running", { reason: "claimed", at: new Date("2026-05-05T10:00:01Z") }), "completed", { reason: "done", at: new Date("2026-05-05T10:00:02Z") });
		await upsertJobIndex(env.DB, [job]);
		await env.OUTPUT.put(outputLogKey("log-named", job.id), "2026-05-05T10:00:01.000Z assistant Done.\n");
		const res = await call(`/v1/jobs/${job.id}/output.log`);
		expect(res.status).toBe(200);
		expect(res.headers.get("content-disposition")).toBe(`inline; filename="${job.id}.log"`);
		expect(await res.text()).toBe("2026-05-05T10:00:01.000Z assistant Done.\n");
	});
});
