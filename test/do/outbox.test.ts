import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { putJob } from "../../durable-objects/agent/jobs.ts";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { flushOutbox, outboxSize, settleOutbox, type OutboxAcks } from "../../durable-objects/agent/outbox.ts";
import { consolidateJob } from "../../durable-objects/agent/output-store.ts";
import { appendLines } from "../../durable-objects/agent/runner/output.ts";
import { AGENT_MIGRATIONS } from "../../durable-objects/agent/schema.ts";
import { createJob, transition } from "../../src/jobs/model.ts";
import { outputKey } from "../../src/store/output-r2.ts";
import { settle } from "../helpers/agents.ts";

const indexed = (id: string) => env.DB.prepare("SELECT status, revision FROM jobs WHERE id = ?").bind(id).first<{ status: string; revision: number }>();

/** One job's revisions as a run goes through them: created, started, completed. */
function lifecycle(agent: string) {
	const pending = createJob({ agent, trigger_type: "manual", definition_revision: "r" }, new Date("2026-11-30T10:00:00Z"));
	const running = transition(pending, "running", { reason: "started", at: new Date("2026-11-30T10:00:01Z") });
	const done = transition(running, "completed", { reason: "final answer", at: new Date("2026-11-30T10:00:02Z") });
	return { pending, running, done };
}

describe("the index outbox", () => {
	it("holds one row per job however often it is saved, and sends its newest revision once", async () => {
		await runInDurableObject(env.AGENT.getByName("outbox-coalesce"), async (_i, state) => {
			const sql = state.storage.sql;
			const { pending, running, done } = lifecycle("outbox-coalesce");
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
			const { pending, running } = lifecycle("outbox-race");
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

	it("with deletions deferred, counts acknowledged rows as sent, sends only what was saved since, and deletes them when settled", async () => {
		await runInDurableObject(env.AGENT.getByName("outbox-deferred"), async (_i, state) => {
			const sql = state.storage.sql;
			const { pending, running } = lifecycle("outbox-deferred");
			putJob(sql, pending, Date.now());
			const acked: OutboxAcks = new Map();

			expect(await flushOutbox(sql, env.DB, acked)).toBe(1);
			expect(outboxSize(sql)).toBe(1); // still queued in SQLite…
			expect(outboxSize(sql, acked)).toBe(0); // …but sent
			expect(await flushOutbox(sql, env.DB, acked)).toBe(0);

			putJob(sql, running, Date.now());
			expect(outboxSize(sql, acked)).toBe(1);
			expect(await flushOutbox(sql, env.DB, acked)).toBe(1);
			expect(await indexed(pending.id)).toEqual({ status: "running", revision: running.revision });

			settleOutbox(sql, acked);
			expect(outboxSize(sql)).toBe(0);
			expect(acked.size).toBe(0);
		});
	});

	it("sends acknowledged rows again when the acknowledgements are lost with the instance, which leaves the index as it was", async () => {
		await runInDurableObject(env.AGENT.getByName("outbox-lost-acks"), async (_i, state) => {
			const sql = state.storage.sql;
			const { done } = lifecycle("outbox-lost-acks");
			putJob(sql, done, Date.now());
			expect(await flushOutbox(sql, env.DB, new Map())).toBe(1);
			const before = await env.DB.prepare("SELECT * FROM jobs WHERE id = ?").bind(done.id).first();
			expect(await flushOutbox(sql, env.DB)).toBe(1); // a fresh instance knows nothing was sent
			expect(await env.DB.prepare("SELECT * FROM jobs WHERE id = ?").bind(done.id).first()).toEqual(before);
			expect(outboxSize(sql)).toBe(0);
		});
	});

	it("sends a backlog larger than the deferral bound in one flush", async () => {
		await runInDurableObject(env.AGENT.getByName("outbox-backlog"), async (_i, state) => {
			const sql = state.storage.sql;
			const ids: string[] = [];
			for (let i = 0; i < 260; i++) {
				// Numbered ids: 260 drawn at random in one day meet about once in 3,800 runs (one job stored).
				const pending = lifecycle("outbox-backlog").pending;
				const job = { ...pending, id: `${pending.id.slice(0, -6)}${i.toString(36).padStart(6, "0")}` };
				putJob(sql, job, Date.now());
				ids.push(job.id);
			}
			const acked: OutboxAcks = new Map();
			expect(await flushOutbox(sql, env.DB, acked)).toBe(260);
			expect(outboxSize(sql, acked)).toBe(0);
			const { n } = (await env.DB.prepare("SELECT count(*) AS n FROM jobs WHERE agent = 'outbox-backlog'").first<{ n: number }>())!;
			expect(n).toBe(260);
			settleOutbox(sql, acked);
			expect(outboxSize(sql)).toBe(0);
		});
	});

	it("consolidates again, to the same object, output whose consolidation was not noted before the instance died", async () => {
		const stub = env.AGENT.getByName("consolidate-again");
		const jobId = await runInDurableObject(stub, async (_i: AgentDO, state) => {
			const sql = state.storage.sql;
			const { done } = lifecycle("consolidate-again");
			putJob(sql, done, Date.now());
			appendLines(sql, done.id, [{ type: "assistant", content: "one", model: "claude-sonnet-5-5" }, { type: "system", subtype: "result", content: "final answer" }], Date.now());
			// R2 took the object; the instance died before noting it (recordConsolidated never ran).
			expect(await consolidateJob(sql, env.OUTPUT, done.id)).toMatchObject({ lines: 2 });
			return done.id;
		});
		const first = await (await env.OUTPUT.get(outputKey("consolidate-again", jobId)))!.text();
		await settle("consolidate-again");
		const again = await env.OUTPUT.get(outputKey("consolidate-again", jobId));
		expect(await again!.text()).toBe(first);
		expect(first.trim().split("\n")).toHaveLength(2);
		await runInDurableObject(stub, (_i: AgentDO, state) => {
			expect(state.storage.sql.exec("SELECT count(*) AS n FROM output_lines").one().n).toBe(0);
			expect(state.storage.sql.exec("SELECT output_key, lines FROM output_state").toArray()).toEqual([{ output_key: outputKey("consolidate-again", jobId), lines: 2 }]);
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
