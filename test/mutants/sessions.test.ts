import { describe, expect, it } from "vitest";
import { createAgent, settle } from "../helpers/agents.ts";
import { heldModel, useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { runToRest, trigger } from "../helpers/jobs.ts";

// sessions.ts' findSession: a prefix names a session only when it fits one; two of one agent are candidates.
describe("a session id prefix that fits two sessions of one agent", () => {
	it("is refused naming both, not answered with either", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "one" }, { text: "two" });
		await createAgent({ name: "ses-twice" });
		const a = await runToRest("ses-twice");
		const b = await runToRest("ses-twice");
		expect(a.session_id).not.toBe(b.session_id);
		const day = a.id.slice(0, "job-YYYY-MM-DD-".length);
		expect(b.id.startsWith(day)).toBe(true);
		const res = await call(`/v1/sessions/ses-${day}?agent=ses-twice`);
		expect(res.status, await res.clone().text()).toBe(409);
		const named = ((await errorOf(res)).details as { candidates: { session_id: string }[] }).candidates.map((c) => c.session_id);
		expect(new Set(named)).toEqual(new Set([a.session_id, b.session_id]));
	});
});

describe("a session with a started job and a continue of it queued", () => {
	it("is listed once, its continue counted in it", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "first" });
		await createAgent({ name: "ses-once" });
		const first = await runToRest("ses-once");
		// A run calling the model holds the only slot, so the continue stays queued behind it.
		const { arrived, release } = heldModel(emulator);
		const running = await trigger("ses-once");
		await arrived;
		const next = await call(`/v1/jobs/${first.id}/continue`, { method: "POST", as: "operate", body: { prompt: "And then?" } });
		expect(((await next.json()) as { status: string }).status).toBe("pending");

		const list = (await (await call("/v1/agents/ses-once/sessions")).json()) as { sessions: { session_id: string; job_count: number }[] };
		expect(list.sessions.map((s) => [s.session_id, s.job_count])).toEqual([
			[`ses-${running.id}`, 1],
			[first.session_id, 2],
		]);
		const whole = (await (await call(`/v1/sessions/${first.session_id}?agent=ses-once`)).json()) as { updated_at: string; first_job: { id: string } };
		expect(whole.first_job.id).toBe(first.id);
		emulator.enqueue({ text: "done" }, { text: "then" });
		release();
		await settle("ses-once");
	});

	it("is dated by its newest job's last transition, not its creation", async () => {
		useEmulator().enqueue({ text: "ok" });
		await createAgent({ name: "ses-dated" });
		const job = await runToRest("ses-dated");
		const whole = (await (await call(`/v1/sessions/${job.session_id}?agent=ses-dated`)).json()) as { updated_at: string };
		expect(whole.updated_at).toBe(job.transitions.at(-1)!.at);
		expect(job.transitions.at(-1)!.at).toBe(job.finished_at);
	});
});

// GET /v1/agents/:agent/sessions/current's schedule_modes: a mutation walk answering {} passed the suite
// (only the CLI's tests read it, from a canned answer).
describe("an agent whose schedule overrides its session mode", () => {
	it("is answered with that schedule's mode, by name, and no other schedule's", async () => {
		await createAgent({
			name: "ses-modes",
			session: { mode: "persistent" },
			schedules: { review: { cron: "0 9 * * *", session: { mode: "fresh_per_job" } }, nightly: { cron: "0 3 * * *" } },
		});
		const res = await call("/v1/agents/ses-modes/sessions/current");
		expect(res.status, await res.clone().text()).toBe(200);
		const current = (await res.json()) as { mode: string; schedule_modes: Record<string, string> };
		expect(current.mode).toBe("persistent");
		expect(current.schedule_modes).toEqual({ review: "fresh_per_job" });
	});
});
