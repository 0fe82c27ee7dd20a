import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { putJob } from "../../durable-objects/agent/jobs.ts";
import { flushOutbox, outboxSize } from "../../durable-objects/agent/outbox.ts";
import { AGENT_MIGRATIONS } from "../../durable-objects/agent/schema.ts";
import { createJob, transition } from "../../src/jobs/model.ts";

const indexed = (id: string) => env.DB.prepare("SELECT status, revision FROM jobs WHERE id = ?").bind(id).first<{ status: string; revision: number }>();

describe("the index outbox", () => {
	it("holds one row per job however often it is saved, and sends its newest revision once", async () => {
		await runInDurableObject(env.AGENT.getByName("outbox-coalesce"), async (_i, state) => {
			const sql = state.storage.sql;
			const pending = createJob({ agent: "outbox-coalesce", trigger_type: "manual", definition_revision: "r" }, new Date("2026-11-30T10:00:00Z"));
			const running = transition(pending, "running", { reason: "started", at: new Date("2026-11-30T10:00:01Z") });
			const done = transition(running, "completed", { reason: "final answer", at: new Date("2026-11-30T10:00:02Z") });
			for (const job of [pending, running, done]) putJob(sql, job, Date.now());
			expect(sql.exec("SELECT job_id, version FROM outbox").toArray()).toEqual([{ job_id: pending.id, version: 3 }]);

			expect(await flushOutbox(sql, env.DB)).toBe(1);
			expect(await indexed(pending.id)).toEqual({ status: "completed", revision: done.revision });
			expect(outboxSize(sql)).toBe(0);
		});
	});

	it("keeps a job saved while D1 was being written, and sends that revision on the next pass", async () => {
		await runInDurableObject(env.AGENT.getByName("outbox-race"), async (_i, state) => {
			const sql = state.storage.sql;
			const pending = createJob({ agent: "outbox-race", trigger_type: "manual", definition_revision: "r" }, new Date("2026-11-30T10:00:00Z"));
			const running = transition(pending, "running", { reason: "started", at: new Date("2026-11-30T10:00:01Z") });
			putJob(sql, pending, Date.now());
			// The job moves on while its pending revision is on its way to D1.
			let saved = false;
			const db = new Proxy(env.DB, {
				get(target, prop) {
					if (prop !== "batch") return Reflect.get(target, prop);
					return async (statements: D1PreparedStatement[]) => {
						const result = await target.batch(statements);
						if (!saved) {
							putJob(sql, running, Date.now());
							saved = true;
						}
						return result;
					};
				},
			});
			// One flush: its first pass sends `pending`, and the row stays for `running`, which the
			// second pass sends.
			expect(await flushOutbox(sql, db)).toBe(2);
			expect(await indexed(pending.id)).toEqual({ status: "running", revision: running.revision });
			expect(outboxSize(sql)).toBe(0);
		});
	});

	it("migrates a queue of one row per save (schema 7) to one row per job", async () => {
		await runInDurableObject(env.AGENT.getByName("outbox-migration"), (_i, state) => {
			const sql = state.storage.sql;
			sql.exec("DROP TABLE outbox");
			sql.exec("CREATE TABLE outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, queued_at INTEGER NOT NULL)");
			for (const [job, at] of [["job-2026-11-30-aaaaaa", 5], ["job-2026-11-30-bbbbbb", 6], ["job-2026-11-30-aaaaaa", 7], ["job-2026-11-30-aaaaaa", 8]] as const) {
				sql.exec("INSERT INTO outbox (job_id, queued_at) VALUES (?, ?)", job, at);
			}
			sql.exec(AGENT_MIGRATIONS.find((m) => m.version === 8)!.sql);
			expect(sql.exec("SELECT job_id, version, queued_at FROM outbox ORDER BY job_id").toArray()).toEqual([
				{ job_id: "job-2026-11-30-aaaaaa", version: 3, queued_at: 5 },
				{ job_id: "job-2026-11-30-bbbbbb", version: 1, queued_at: 6 },
			]);
		});
	});
});
