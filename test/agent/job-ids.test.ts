import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { freshJobId, getJob, putJob } from "../../durable-objects/agent/jobs.ts";
import { createJob } from "../../src/jobs/model.ts";
import { deleteFromJobIndex, upsertJobIndex } from "../../src/store/job-index.ts";

const NOW = Date.parse("2026-12-01T10:00:00Z");

// Ids carry 6 random characters a day (the design's format), so two jobs can draw the same one.
describe("job ids drawn twice", () => {
	it("are drawn again when the agent already holds the id, so a new job is never dropped", async () => {
		const stub = env.AGENT.getByName("twice-drawn");
		await runInDurableObject(stub, (_instance, state) => {
			const sql = state.storage.sql;
			const first = createJob({ id: "job-2026-12-01-aaaaaa", agent: "twice-drawn", trigger_type: "manual", definition_revision: "r" }, new Date(NOW));
			expect(putJob(sql, first, NOW)).toBe(true);

			const draws = ["job-2026-12-01-aaaaaa", "job-2026-12-01-aaaaaa", "job-2026-12-01-bbbbbb"];
			const id = freshJobId(sql, NOW, () => draws.shift()!);
			expect(id).toBe("job-2026-12-01-bbbbbb");
			const second = createJob({ id, agent: "twice-drawn", trigger_type: "manual", definition_revision: "r" }, new Date(NOW));
			expect(putJob(sql, second, NOW)).toBe(true);
			expect(getJob(sql, first.id)?.id).toBe(first.id);
			expect(getJob(sql, second.id)?.id).toBe(second.id);
		});
	});

	it("never lets another agent's job overwrite the index row of the job that drew the id first", async () => {
		const id = "job-2026-12-01-cccccc";
		const mine = createJob({ id, agent: "first-drawer", trigger_type: "manual", definition_revision: "r" }, new Date(NOW));
		await upsertJobIndex(env.DB, [mine]);
		const theirs = createJob({ id, agent: "second-drawer", trigger_type: "schedule", definition_revision: "r" }, new Date(NOW + 1000));
		await upsertJobIndex(env.DB, [{ ...theirs, status: "running", revision: mine.revision + 5 }]);

		const row = await env.DB.prepare("SELECT agent, status, trigger_type FROM jobs WHERE id = ?").bind(id).first();
		expect(row).toEqual({ agent: "first-drawer", status: "pending", trigger_type: "manual" });
		// The first job's own updates still land.
		await upsertJobIndex(env.DB, [{ ...mine, status: "running", revision: mine.revision + 1 }]);
		expect(await env.DB.prepare("SELECT status FROM jobs WHERE id = ?").bind(id).first("status")).toBe("running");
		// Nor does the other agent's pruning of its job take the first job's row away.
		await deleteFromJobIndex(env.DB, "second-drawer", [id]);
		expect(await env.DB.prepare("SELECT agent FROM jobs WHERE id = ?").bind(id).first("agent")).toBe("first-drawer");
	});
});
