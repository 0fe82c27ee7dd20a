// A follow-up's copied conversation (durable-objects/agent/runner/messages.ts, follow-up.ts), where a
// mutation walk found the suite blind: a refusal that wrote nothing is an empty answer, left out of the
// copy, so the copy ends on the refused user turn; dropping "the refused answer" must then drop nothing,
// and the continue's prompt joins that turn, the original prompt kept. A continue's record holds its
// own prompt, not its source's.
import { describe, expect, it } from "vitest";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { jobOf, runToRest } from "../helpers/jobs.ts";

describe("a continue of a job whose model refused without writing anything", () => {
	it("sends the refused prompt with the continue's, in one user turn", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ stop_reason: "refusal" }, { text: "Here is the timeline." });
		await createAgent({ name: "refused-empty-continued" });
		const refused = await runToRest("refused-empty-continued", "Summarise the incident report.");
		expect(refused.error?.type).toBe("refusal");
		const res = await call(`/v1/jobs/${refused.id}/continue`, { method: "POST", as: "operate", body: { prompt: "Only the timeline, please." } });
		expect(res.status, await res.clone().text()).toBe(201);
		const next = (await res.json()) as { id: string };
		await settle("refused-empty-continued");
		expect((await jobOf("refused-empty-continued", next.id)).status).toBe("completed");
		const sent = emulator.requests.at(-1)!.messages!;
		expect(sent.map((m) => m.role)).toEqual(["user"]);
		expect(JSON.stringify(sent)).toMatch(/Summarise the incident report\..*Only the timeline, please\./);
	});
});

describe("a continue's job record", () => {
	it("holds the continue's prompt, not the prompt of the job it continues", async () => {
		useEmulator().enqueue({ text: "Three deploys." }, { text: "All green." });
		await createAgent({ name: "continue-prompt-kept" });
		const source = await runToRest("continue-prompt-kept", "What went out overnight?");
		const res = await call(`/v1/jobs/${source.id}/continue`, { method: "POST", as: "operate", body: { prompt: "Did any of them fail?" } });
		expect(res.status, await res.clone().text()).toBe(201);
		const next = (await res.json()) as { id: string; prompt: string };
		expect(next.prompt).toBe("Did any of them fail?");
		await settle("continue-prompt-kept");
		expect(await jobOf("continue-prompt-kept", next.id)).toMatchObject({ status: "completed", prompt: "Did any of them fail?", continued_from: source.id });
	});
});
