import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { ensureState } from "../../durable-objects/agent/state.ts";
import { triggerJob, type TriggerRequest } from "../../durable-objects/agent/triggers.ts";
import { AgentSchema } from "../../src/config/schema.ts";
import { drawnJobId } from "../../src/jobs/id-blocks.ts";
import { countingReads } from "../helpers/sql.ts";

const MINUTE = 60_000;
const count = (sql: SqlStorage, query: string, ...bindings: SqlStorageValue[]): number => sql.exec<{ n: number }>(query, ...bindings).one().n;

describe("Idempotency-Keys and webhook signatures over time", () => {
	it("a trigger reads the key it was given, not every key kept; one past its time counts for nothing; the hourly pass deletes those", async () => {
		await runInDurableObject(env.AGENT.getByName("keys-over-time"), async (instance: AgentDO, state) => {
			const sql = state.storage.sql;
			const now = Date.now();
			const agent = AgentSchema.parse({ name: "keys-over-time", prompt: "Go.", max_concurrent: 5 });
			const ctx = { agent, state: ensureState(sql, agent.name, "api", () => 30 * 86_400_000), definitionRevision: "r1", now, drawJobId: drawnJobId };
			const trigger = (req: Partial<TriggerRequest>, on = sql) => triggerJob(on, ctx, { kind: "manual", owner: "test", ...req });
			// A keyed trigger a minute for 25 hours, and a webhook call a second for 20 minutes.
			state.storage.transactionSync(() => {
				for (let m = 0; m < 1_500; m++) {
					sql.exec("INSERT INTO idempotency (key, job_id, request_hash, created_at) VALUES (?, ?, 'h', ?)", `k${m}`, `j${m}`, now - m * MINUTE);
				}
				for (let s = 0; s < 1_200; s++) sql.exec("INSERT INTO webhook_seen (signature, seen_at) VALUES (?, ?)", `s${s}`, now - s * 1_000);
			});

			const reads = countingReads(sql);
			expect(trigger({}, reads.sql)).toMatchObject({ created: true });
			// It used to delete the expired keys first, a scan of all 1,500.
			expect(reads.rowsRead()).toBeLessThan(30);

			// 24 h 59 min old: the key is free again, whatever the request.
			expect(trigger({ idempotency: { key: "k1499", requestHash: "another" } })).toMatchObject({ created: true });
			// 10 min old: the same key for another request is still refused.
			expect(trigger({ idempotency: { key: "k10", requestHash: "another" } })).toMatchObject({ refused: { status: 409 } });
			// Signatures are remembered for 15 minutes: one 18 minutes old is not a replay, one 100 s old is.
			expect(trigger({ kind: "webhook", signature: "s1100" })).toMatchObject({ created: true });
			expect(trigger({ kind: "webhook", signature: "s100" })).toMatchObject({ refused: { status: 409 } });

			await AgentDO.prune(instance, now, true);
			// What is past its time is gone; the rest, and the two just used again, stay.
			expect(count(sql, "SELECT count(*) AS n FROM idempotency WHERE created_at < ?", now - 24 * 60 * MINUTE)).toBe(0);
			expect(count(sql, "SELECT count(*) AS n FROM idempotency")).toBe(1_441 + 1);
			expect(count(sql, "SELECT count(*) AS n FROM webhook_seen WHERE seen_at < ?", now - 15 * MINUTE)).toBe(0);
			expect(count(sql, "SELECT count(*) AS n FROM webhook_seen")).toBe(901 + 1);
		});
	});

	it("a paused agent's refused webhooks are not kept past their 15 minutes, though no pass runs to delete them", async () => {
		await runInDurableObject(env.AGENT.getByName("refused-over-time"), async (_instance: AgentDO, state) => {
			const sql = state.storage.sql;
			const start = Date.now();
			const agent = AgentSchema.parse({ name: "refused-over-time", prompt: "Go.", max_concurrent: 5 });
			const paused = { ...ensureState(sql, agent.name, "api", () => 30 * 86_400_000), pausedAt: start, pausedReason: "maintenance" };
			// A sender retrying every minute, signed afresh as the refusal asks, for two hours of a pause:
			// a paused agent that only takes webhooks has no alarm, so no hourly pass deletes anything.
			for (let m = 0; m < 120; m++) {
				const ctx = { agent, state: paused, definitionRevision: "r1", now: start + m * MINUTE, drawJobId: drawnJobId };
				expect(triggerJob(sql, ctx, { kind: "webhook", signature: `sha256=${m}`, owner: null })).toMatchObject({ refused: { status: 409 } });
			}
			// The last 15 minutes' are kept (a replay of each is still refused); older ones are gone.
			expect(count(sql, "SELECT count(*) AS n FROM webhook_seen")).toBeLessThanOrEqual(16);
			// The deletion reads the refused keys alone, not the accepted ones beside them (a busy agent's).
			for (let s = 0; s < 1_000; s++) sql.exec("INSERT INTO webhook_seen (signature, seen_at) VALUES (?, ?)", `sha256=a${s}`, start + 119 * MINUTE);
			const reads = countingReads(sql);
			const later = { agent, state: paused, definitionRevision: "r1", now: start + 120 * MINUTE, drawJobId: drawnJobId };
			expect(triggerJob(reads.sql, later, { kind: "webhook", signature: "sha256=new", owner: null })).toMatchObject({ refused: { status: 409 } });
			expect(reads.rowsRead()).toBeLessThan(40);
			const ctx = { agent, state: { ...paused, pausedAt: null, pausedReason: null }, definitionRevision: "r1", now: start + 120 * MINUTE, drawJobId: drawnJobId };
			expect(triggerJob(sql, ctx, { kind: "webhook", signature: "sha256=119", owner: null })).toMatchObject({ refused: { status: 409, message: expect.stringContaining("refused when it was first sent") } });
		});
	});
});
