import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { insertOccurrence } from "../../durable-objects/agent/ledger.ts";
import { createAgent, runsOf, settle } from "../helpers/agents.ts";
import { alarmOf } from "../helpers/retention.ts";
import { call } from "../helpers/http.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { fake } from "../helpers/outbound.ts";
import { jobRowsOf } from "../helpers/sql.ts";
import { endedRecord, jobOf, lifecycleRecords, runToRest, storeRun } from "../helpers/jobs.ts";

const DAY = 86_400_000;

afterEach(() => void vi.useRealTimers());

type Internals = { env: Env; passes: { lastPrune: number } };

/** Runs the agent's next pass now, with its hourly prune due, its R2 deletes refused when `r2Down`. */
async function passWithPrune(agent: string, r2Down = false): Promise<void> {
	await runInDurableObject(env.AGENT.getByName(agent), async (instance: AgentDO) => {
		const self = instance as unknown as Internals;
		self.passes.lastPrune = 0;
		const bucket = env.OUTPUT;
		const refusing = new Proxy(bucket, {
			get: (target, prop) => {
				const value = Reflect.get(target, prop) as unknown;
				if (prop !== "delete") return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
				return () => Promise.reject(new Error("R2: we encountered an internal error, please try again"));
			},
		});
		self.env = { ...self.env, OUTPUT: r2Down ? refusing : bucket };
		await instance.alarm();
	});
}

const held = (agent: string) =>
	runInDurableObject(env.AGENT.getByName(agent), (_i: AgentDO, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM jobs").one().n);

// retention.ts pruneJobRows: which jobs a prune takes, and how many.
describe("retention", () => {
	it("keeps a job for its retention after it finished, not after it was made: one queued ten days ago and ended yesterday stays", async () => {
		const name = "keep-by-finish";
		await createAgent({ name, retention_days: 7 });
		// Made ten days ago (queued across a pause), ended yesterday.
		const job = { ...lifecycleRecords(name, new Date(Date.now() - DAY)).ended, created_at: new Date(Date.now() - 10 * DAY).toISOString() };
		const gone = endedRecord(name, new Date(Date.now() - 10 * DAY));
		await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => {
			storeRun(state.storage.sql, job);
			storeRun(state.storage.sql, gone);
		});
		await passWithPrune(name);
		expect((await call(`/v1/jobs/${gone.id}`)).status).toBe(404);
		expect((await call(`/v1/jobs/${job.id}`)).status).toBe(200);
	});

	it("prunes an indeterminate job past its retention as it does every final status: one ended ten days ago goes, with a 7-day retention", async () => {
		const name = "prune-indeterminate";
		await createAgent({ name, retention_days: 7 });
		const gone = { ...endedRecord(name, new Date(Date.now() - 10 * DAY), "indeterminate"), error: { type: "indeterminate", message: "the run stopped while tool create_ticket was executing; its effect is unknown" } };
		const kept = endedRecord(name, new Date(Date.now() - DAY), "indeterminate");
		await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => {
			storeRun(state.storage.sql, gone);
			storeRun(state.storage.sql, kept);
		});
		await passWithPrune(name);
		expect((await call(`/v1/jobs/${gone.id}`)).status).toBe(404);
		expect((await call(`/v1/jobs/${kept.id}`)).status).toBe(200);
		expect(await held(name)).toBe(1);
	});

	it("prunes a job's delivery and hook call (the answer they carried) with it: no row of it is left", async () => {
		const name = "prune-sends";
		fake("https://deliver.example.test", () => new Response("ok"));
		fake("https://hooks.example.test", () => new Response("ok"));
		useEmulator().enqueue({ text: "Sent, then kept a week." });
		await createAgent({ name, retention_days: 7, delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" }, hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }] } });
		const job = await runToRest(name);
		await settle(name);
		expect(await jobRowsOf(name, job.id)).toMatchObject({ deliveries: 2 });
		vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 8 * DAY });
		await passWithPrune(name);
		expect((await call(`/v1/jobs/${job.id}`)).status).toBe(404);
		expect(await jobRowsOf(name, job.id)).toEqual({});
	});

	it("deletes a pruned job's chunked output (R2 took its chunks, never the whole) and then has nothing left to wake for: no backlog alarm a second on", async () => {
		const name = "prune-chunked-done";
		await createAgent({ name, retention_days: 7 });
		const job = endedRecord(name, new Date(Date.now() - 10 * DAY));
		await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => {
			storeRun(state.storage.sql, job);
			state.storage.sql.exec("INSERT INTO output_state (job_id, flushed_line) VALUES (?, 1)", job.id);
		});
		await env.OUTPUT.put(`jobs/${name}/${job.id}/lines-000000001-000000001.jsonl`, "{}\n");
		await passWithPrune(name);
		expect((await env.OUTPUT.list({ prefix: `jobs/${name}/` })).objects).toEqual([]);
		expect(await held(name)).toBe(0);
		expect(await alarmOf(name)).toBeNull();
	});

	it("prunes no further while a batch's outputs are still to delete from R2: those jobs wait as one batch, the rest stay listed", async () => {
		const name = "prune-waits-r2";
		await createAgent({ name, retention_days: 7 });
		await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => {
			for (let i = 0; i < 120; i++) storeRun(state.storage.sql, endedRecord(name, new Date(Date.now() - 10 * DAY - i * 60_000)));
		});
		await passWithPrune(name, true);
		expect(await held(name)).toBe(70);
		// R2 still refusing at the next prune: nothing more goes until that batch's outputs are deleted.
		await passWithPrune(name, true);
		expect(await held(name)).toBe(70);
		const waiting = () => runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM pruned_outputs").one().n);
		expect(await waiting()).toBe(50);
		// R2 back: the batch's outputs go, and the next prune takes the next batch.
		await passWithPrune(name);
		expect(await waiting()).toBe(0);
		await passWithPrune(name);
		expect(await held(name)).toBe(20);
	});

	it("ages a deleted agent's skip out at its own retention, though its name was defined again (twice) with a longer one; the alarm waits for that, not more", async () => {
		const name = "skips-stamped";
		await createAgent({ name, retention_days: 7, schedules: { daily: { cron: "0 9 * * *" } } });
		const claimed = Date.now() - 6 * DAY;
		await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => {
			insertOccurrence(state.storage.sql, { schedule: "daily", source: "cron", scheduledInstant: claimed, dispatch: "on_time", claimedAt: claimed, status: "skipped", skipReason: "paused" });
		});
		for (let again = 0; again < 2; again++) {
			expect((await call(`/v1/agents/${name}`, { method: "DELETE", as: "admin" })).status).toBe(200);
			await settle(name);
			await createAgent({ name, retention_days: 30 });
			await settle(name);
		}
		expect((await runsOf(name)).map((r) => r.status)).toEqual(["skipped"]);
		// The first agent's 7 days from the skip, whatever its successors keep.
		expect(await alarmOf(name)).toBe(claimed + 7 * DAY);
		// Two days on: past those 7 days, within the new agent's 30.
		vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 2 * DAY });
		await passWithPrune(name);
		expect(await runsOf(name)).toEqual([]);
	});

	it("prunes a deleted agent's run at the instant its own retention after its finish ends (its name defined again with a longer one), in the alarm set for that instant", async () => {
		const name = "run-stamped";
		await createAgent({ name, retention_days: 7 });
		// Queued ten days ago (across a pause), ended six days ago: its 7 days count from its end.
		const job = { ...lifecycleRecords(name, new Date(Date.now() - 6 * DAY)).ended, created_at: new Date(Date.now() - 10 * DAY).toISOString() };
		await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => storeRun(state.storage.sql, job));
		expect((await call(`/v1/agents/${name}`, { method: "DELETE", as: "admin" })).status).toBe(200);
		await settle(name);
		await createAgent({ name, retention_days: 30 });
		await settle(name);
		const due = Date.parse(job.finished_at!) + 7 * DAY;
		expect(await alarmOf(name)).toBe(due);
		vi.useFakeTimers({ toFake: ["Date"], now: due });
		await passWithPrune(name);
		expect((await call(`/v1/jobs/${job.id}`)).status).toBe(404);
		expect(await held(name)).toBe(0);
		// Nothing of it is left: its ledger row went with it.
		expect(await jobRowsOf(name, job.id)).toEqual({});
	});

	it("prunes a deleted agent's run that was still delivering when its name was defined again, and its mark as the deleted agent's with it", async () => {
		const name = "run-marked";
		let up = false;
		fake("https://deliver.example.test", () => new Response(up ? "ok" : "busy", { status: up ? 200 : 503 }));
		useEmulator().enqueue({ text: "Late answer." });
		await createAgent({ name, retention_days: 7, delivery: { type: "webhook", url_secret: "TEST_DELIVERY_URL" } });
		const job = await runToRest(name);
		expect((await jobOf(name, job.id)).delivery?.outcome).toBe("pending");
		expect((await call(`/v1/agents/${name}`, { method: "DELETE", as: "admin" })).status).toBe(200);
		await settle(name);
		await createAgent({ name, retention_days: 30 });
		await settle(name);
		// The target is back: the retry (made due now) delivers the deleted agent's answer.
		up = true;
		await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => void state.storage.sql.exec("UPDATE deliveries SET next_at = 0"));
		await settle(name);
		expect((await jobOf(name, job.id)).delivery).toEqual({ target: "webhook", outcome: "delivered" });
		vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 8 * DAY });
		await passWithPrune(name);
		expect((await call(`/v1/jobs/${job.id}`)).status).toBe(404);
		expect(await jobRowsOf(name, job.id)).toEqual({});
	});

	it("ages a skip out of a live agent's ledger with its retention, and sets its alarm for that when the ledger holds nothing else", async () => {
		const name = "skips-age";
		await createAgent({ name, retention_days: 7 });
		const old = Date.now() - 10 * DAY;
		const recent = Date.now() - DAY;
		await runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => {
			for (const at of [old, recent]) insertOccurrence(state.storage.sql, { schedule: "daily", source: "cron", scheduledInstant: at, dispatch: "on_time", claimedAt: at, status: "skipped", skipReason: "paused" });
		});
		await passWithPrune(name);
		expect((await runsOf(name)).map((r) => r.scheduled_instant)).toEqual([new Date(recent).toISOString()]);
		expect(await alarmOf(name)).toBe(recent + 7 * DAY);
	});
});

