import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest, saveJob } from "../helpers/jobs.ts";

// jobs.ts putJob: a record is stored only if its revision is newer than the one held. A copy of the
// same revision (a step replayed by a second instance, a retried write) changes nothing: the first
// write of a revision stands, and neither the index nor the ledger hear of it again.
describe("a job record saved again at the revision it holds", () => {
	it("is not written: the record the API answers is the one first stored at that revision", async () => {
		useEmulator().enqueue({ text: "The first answer." });
		await createAgent({ name: "same-revision" });
		const job = await runToRest("same-revision");
		expect(job.summary).toBe("The first answer.");
		expect(await saveJob("same-revision", { ...job, summary: "A replayed answer." })).toBe(false);
		const shown = (await (await call(`/v1/jobs/${job.id}`)).json()) as { summary: string; revision: number };
		expect(shown).toMatchObject({ summary: "The first answer.", revision: job.revision });
		// A newer revision is stored.
		expect(await saveJob("same-revision", { ...job, summary: "Amended.", revision: job.revision + 1 })).toBe(true);
		expect(((await (await call(`/v1/jobs/${job.id}`)).json()) as { summary: string }).summary).toBe("Amended.");
	});
});
