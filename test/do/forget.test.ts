import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { forgettable } from "../../durable-objects/agent/forget.ts";
import { parseAgent } from "../helpers/definitions.ts";
import { endedRecord, storeRun } from "../helpers/jobs.ts";

// Which deleted agents' objects may forget them (see forget.ts): only one of which nothing is left,
// whatever table holds what is left, one a later schema step adds too.

const DAY = 86_400_000;
const retentionMs = (definition: { retention_days?: number } | null) => (definition?.retention_days ?? 30) * DAY;

async function deletedAgent(name: string): Promise<number> {
	const stub = env.AGENT.getByName(name);
	await stub.define(name, parseAgent({ name, prompt: "Go.", retention_days: 3 }), "rev-1");
	const at = Date.now();
	expect(await stub.remove(at)).toEqual({ deleted: name, cancelled: 0 });
	await runInDurableObject(stub, (_i: AgentDO, state) => {
		// Left by the delete for its pass (the incidents' retirement), done here by hand.
		state.storage.sql.exec("DELETE FROM incident_events");
	});
	return at;
}

const judged = (name: string, seed: (sql: SqlStorage) => void = () => {}) =>
	runInDurableObject(env.AGENT.getByName(name), (_i: AgentDO, state) => {
		seed(state.storage.sql);
		return forgettable(state.storage.sql, new Map(), retentionMs);
	});

describe("a deleted agent's object", () => {
	it("may forget it once nothing of it is left, at its own retention after the delete", async () => {
		const at = await deletedAgent("forget-nothing-left");
		// What a define of the name would drop anyway does not keep it.
		const seeded = await judged("forget-nothing-left", (sql) => {
			sql.exec("INSERT INTO notepad (key, value, updated_at) VALUES ('k', 'v', 0)");
			sql.exec("INSERT INTO webhook_seen (signature, seen_at) VALUES ('sig', 0)");
		});
		expect(seeded).toEqual({ name: "forget-nothing-left", deletedAt: at, at: at + 3 * DAY });
	});

	it("may forget it though it holds a manual run's idempotency key and its persistent session: a define of its name drops both", async () => {
		const at = await deletedAgent("forget-keys-left");
		const seeded = await judged("forget-keys-left", (sql) => {
			sql.exec("INSERT INTO idempotency (key, job_id, request_hash, created_at) VALUES ('key-1', 'job-x', 'hash', 0)");
			sql.exec("INSERT INTO persistent_session (id, session_id, job_id, started_at, active_at) VALUES (1, 'session-1', 'job-x', 0, 0)");
		});
		expect(seeded).toEqual({ name: "forget-keys-left", deletedAt: at, at: at + 3 * DAY });
	});

	const kept: [string, (sql: SqlStorage) => void][] = [
		["a job", (sql) => storeRun(sql, endedRecord("forget-kept", new Date(Date.now() - DAY)))],
		["a skip in its ledger", (sql) => sql.exec("INSERT INTO occurrences (id, schedule, source, scheduled_instant, dispatch, claimed_at, status) VALUES ('occ-1', 's', 'schedule', 0, 'on_time', 0, 'skipped')")],
		["a registry sync pending", (sql) => sql.exec("INSERT INTO registry_sync (id, seq, by, at, due_at) VALUES (1, 1, 'api', 0, 0)")],
		// Else a retirement D1 refused would be lost: the old agent's open or closed incidents would
		// stay so, and take the failures of an agent defined again under its name unpaged.
		["its incidents' retirement still to go to D1", (sql) => sql.exec("INSERT INTO incident_events (kind, job_id, error, at) VALUES ('retired', NULL, NULL, 0)")],
		["an index row not yet sent", (sql) => sql.exec("INSERT INTO outbox (job_id, version, queued_at) VALUES ('job-x', 1, 0)")],
		["a run of the deleted agent still ending", (sql) => sql.exec("INSERT INTO former_agent_jobs (job_id) VALUES ('job-x')")],
		["a row in a table a later schema step adds", (sql) => sql.exec("CREATE TABLE later_work (id INTEGER); INSERT INTO later_work VALUES (1)")],
	];
	for (const [what, seed] of kept) {
		it(`keeps it while it holds ${what}`, async () => {
			const name = `forget-kept-${kept.findIndex(([w]) => w === what)}`;
			await deletedAgent(name);
			expect(await judged(name)).not.toBeNull();
			expect(await judged(name, seed)).toBeNull();
		});
	}

	it("keeps an agent that is not deleted, or defined again", async () => {
		const stub = env.AGENT.getByName("forget-live");
		await stub.define("forget-live", parseAgent({ name: "forget-live", prompt: "Go." }), "rev-1");
		expect(await judged("forget-live")).toBeNull();
		await deletedAgent("forget-again");
		await env.AGENT.getByName("forget-again").define("forget-again", parseAgent({ name: "forget-again", prompt: "Again." }), "rev-2");
		expect(await judged("forget-again")).toBeNull();
	});
});
