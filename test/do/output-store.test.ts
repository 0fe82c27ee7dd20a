import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { putJob } from "../../durable-objects/agent/jobs.ts";
import { unconsolidated } from "../../durable-objects/agent/output-store.ts";
import { appendLines } from "../../durable-objects/agent/runner/output.ts";
import type { FinalStatus, JobRecord } from "../../src/jobs/model.ts";
import { lifecycleRecords } from "../helpers/jobs.ts";
import { countingReads } from "../helpers/sql.ts";

function jobIn(agent: string, status: "running" | FinalStatus, minute: number): JobRecord {
	const records = lifecycleRecords(agent, new Date(Date.UTC(2026, 10, 1) + minute * 60_000), status === "running" ? "completed" : status);
	return status === "running" ? records.running : records.ended;
}

describe("finding finished jobs whose output is not in R2 yet", () => {
	it("finds the finished jobs with lines in SQLite, not the running one, reading rows per job with lines and none per job of the history", async () => {
		await runInDurableObject(env.AGENT.getByName("unconsolidated-history"), async (_i, state) => {
			const sql = state.storage.sql;
			const agent = "unconsolidated-history";
			// A history of consolidated jobs: finished, their lines already gone to R2.
			state.storage.transactionSync(() => {
				for (let m = 0; m < 2_000; m++) putJob(sql, jobIn(agent, "completed", m), Date.now());
			});
			const live = jobIn(agent, "running", 3_000);
			const failed = jobIn(agent, "failed", 3_001);
			const completed = jobIn(agent, "completed", 3_002);
			for (const job of [live, failed, completed]) {
				putJob(sql, job, Date.now());
				appendLines(sql, job.id, Array.from({ length: 50 }, (_, i) => ({ type: "system" as const, subtype: "note", content: `line ${i}` })), Date.now());
			}

			const reads = countingReads(sql);
			expect(unconsolidated(reads.sql, 20).sort()).toEqual([failed.id, completed.id].sort());
			// Each job with lines costs a seek in output_lines and a lookup in jobs, whatever the
			// history holds; the query it replaced read every finished job (2,000 here).
			expect(reads.rowsRead()).toBeLessThan(20);

			expect(unconsolidated(sql, 1)).toHaveLength(1);
			sql.exec("DELETE FROM output_lines WHERE job_id IN (?, ?)", failed.id, completed.id);
			expect(unconsolidated(sql, 20)).toEqual([]);
		});
	});
});
