import { describe, expect, it } from "vitest";
import type { JobRecord } from "../../src/jobs/model.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";

const followUp = (kind: "continue" | "fork", id: string, body: object, key?: string) =>
	call(`/v1/jobs/${id}/${kind}`, { method: "POST", as: "operate", body, headers: key ? { "idempotency-key": key } : {} });

async function jobsOf(agent: string): Promise<string[]> {
	const res = await call(`/v1/agents/${agent}/jobs?limit=50`);
	expect(res.status).toBe(200);
	return ((await res.json()) as { jobs: { id: string }[] }).jobs.map((j) => j.id).sort();
}

// A script's continue or fork whose answer was lost (exit 5) can be sent again under its key
// without starting a second job, as a trigger's can.
describe("an Idempotency-Key on a continue or a fork", () => {
	it("returns the job a continue made under it (200) instead of a second, and refuses it for a different request", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "First." }, { text: "Continued." });
		await createAgent({ name: "keyed-continue" });
		const first = await runToRest("keyed-continue");
		const made = await followUp("continue", first.id, { prompt: "And then?" }, "ci-run-7");
		expect(made.status, await made.clone().text()).toBe(201);
		const job = (await made.json()) as JobRecord;
		const again = await followUp("continue", first.id, { prompt: "And then?" }, "ci-run-7");
		expect(again.status).toBe(200);
		expect(((await again.json()) as JobRecord).id).toBe(job.id);
		const other = await followUp("continue", first.id, { prompt: "Something else" }, "ci-run-7");
		expect(other.status).toBe(409);
		expect((await errorOf(other)).message).toMatch(/Idempotency-Key was used within 24 h for a different request/);
		await settle("keyed-continue");
		expect(await jobsOf("keyed-continue")).toEqual([first.id, job.id].sort());
		expect(emulator.requests).toHaveLength(2);
	});

	it("does the same for a fork, and a key a fork used is refused for a continue of the same job", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "First." }, { text: "Forked." });
		await createAgent({ name: "keyed-fork" });
		const first = await runToRest("keyed-fork");
		const made = await followUp("fork", first.id, {}, "fork-1");
		expect(made.status, await made.clone().text()).toBe(201);
		const job = (await made.json()) as JobRecord;
		expect(job.forked_from).toBe(first.id);
		const again = await followUp("fork", first.id, {}, "fork-1");
		expect(again.status).toBe(200);
		expect(((await again.json()) as JobRecord).id).toBe(job.id);
		expect((await followUp("continue", first.id, { prompt: "And then?" }, "fork-1")).status).toBe(409);
		// Without a key each request is a job of its own, as before.
		emulator.enqueue({ text: "Forked again." });
		const unkeyed = await followUp("fork", first.id, {});
		expect(unkeyed.status).toBe(201);
		await settle("keyed-fork");
		expect(await jobsOf("keyed-fork")).toEqual([first.id, job.id, ((await unkeyed.json()) as JobRecord).id].sort());
	});
});
