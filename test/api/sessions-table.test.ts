import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { getSetup, putSetup } from "../../durable-objects/agent/runner/session.ts";
import { createAgent } from "../helpers/agents.ts";
import { numberedRecord, storeRun } from "../helpers/jobs.ts";
import { sessionsSnapshot } from "../helpers/sql.ts";

function seedSetup(sql: SqlStorage, jobId: string, sessionId: string): void {
	sql.exec(
		"INSERT INTO job_setup (job_id, session_id, definition, system, tools, models, max_tokens, deadline, next_step_at) VALUES (?, ?, '{}', '[]', '[]', '[]', 1024, 0, ?)",
		jobId,
		sessionId,
		Number.MAX_SAFE_INTEGER,
	);
}

describe("the sessions table (agent schema step 29) under random writes of job_setup", () => {
	it("stays what job_setup sums up to after each of 400 seeded inserts, rewrites (INSERT OR REPLACE), single and bulk deletes, and all rows deleted", async () => {
		await createAgent({ name: "sessions-fuzz" });
		const result = await runInDurableObject(env.AGENT.getByName("sessions-fuzz"), (_i: AgentDO, state) => {
			const sql = state.storage.sql;
			let seed = 12345;
			const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
			const live: string[] = [];
			const sessions = ["s-a", "s-b", "s-c", "s-d"];
			let t = Date.parse("2026-01-01T00:00:00Z");
			for (let step = 0; step < 400; step++) {
				const op = rnd(10);
				if (op < 5 || live.length === 0) {
					const job = numberedRecord("sessions-fuzz", new Date((t += 60_000)), step);
					storeRun(sql, job);
					seedSetup(sql, job.id, sessions[rnd(sessions.length)]!);
					live.push(job.id);
				} else if (op < 7) {
					const id = live[rnd(live.length)]!;
					putSetup(sql, getSetup(sql, id)!);
				} else if (op < 9) {
					const id = live.splice(rnd(live.length), 1)[0]!;
					sql.exec("DELETE FROM job_setup WHERE job_id = ?", id);
				} else {
					const s = sessions[rnd(sessions.length)]!;
					sql.exec("DELETE FROM job_setup WHERE session_id = ? AND rowid % 2 = 0", s);
					const left = new Set(sql.exec<{ job_id: string }>("SELECT job_id FROM job_setup").toArray().map((r) => r.job_id));
					for (let i = live.length - 1; i >= 0; i--) if (!left.has(live[i]!)) live.splice(i, 1);
				}
				const snap = sessionsSnapshot(sql);
				if (JSON.stringify(snap.kept) !== JSON.stringify(snap.fromSetup)) return { step, op, ...snap };
			}
			sql.exec("DELETE FROM job_setup");
			return { step: -1, ...sessionsSnapshot(sql) };
		});
		expect(result.kept).toEqual(result.fromSetup);
		expect(result.step).toBe(-1);
	});
});
