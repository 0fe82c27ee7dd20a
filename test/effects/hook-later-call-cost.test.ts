import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { laterCall, type SendRow } from "../../durable-objects/agent/effects.ts";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { runToRest } from "../helpers/jobs.ts";
import { fake } from "../helpers/outbound.ts";

/** Jobs the agent keeps, each with its hook's call taken: a month of a run a minute is 43,200. */
const KEPT = 2_000;

/** The SQL binding, counting the rows its statements read (each cursor's rowsRead, once read through). */
function counting(sql: SqlStorage): { sql: SqlStorage; rowsRead: () => number } {
	const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
	const exec = (query: string, ...bindings: unknown[]) => {
		const cursor = sql.exec(query, ...bindings);
		cursors.push(cursor);
		return cursor;
	};
	return { sql: new Proxy(sql, { get: (target, key) => (key === "exec" ? exec : Reflect.get(target, key)) }), rowsRead: () => cursors.reduce((n, c) => n + c.rowsRead, 0) };
}

describe("a hook's call given up or taken, looking for a later call of that hook", () => {
	it("reads the calls queued after its job ended, not every call the agent keeps", async () => {
		fake("https://hooks.example.test", () => new Response("ok"));
		const emulator = useEmulator();
		await createAgent({ name: "hook-history", hooks: { after_run: [{ url_secret: "TEST_HOOK_URL" }] } });
		emulator.enqueue({ text: "latest" });
		const latest = await runToRest("hook-history");
		const { found, read, earlierFound } = await runInDurableObject(env.AGENT.getByName("hook-history"), (_i: AgentDO, state) => {
			const sql = state.storage.sql;
			const row = sql.exec<SendRow>("SELECT * FROM deliveries WHERE job_id = ? AND kind = 'hook'", latest.id).one();
			const end = Date.parse(latest.finished_at!);
			// The month before: a job a minute, each ended and its hook's call taken when it was queued.
			for (let n = 1; n <= KEPT; n++) {
				const id = `earlier-${n}`;
				const at = end - n * 60_000;
				sql.exec(
					"INSERT INTO jobs (id, status, created_at, revision, record) SELECT ?1, status, ?2, revision, json_set(record, '$.id', ?1, '$.finished_at', ?3) FROM jobs WHERE id = ?4",
					id,
					at - 30_000,
					new Date(at).toISOString(),
					latest.id,
				);
				sql.exec(
					"INSERT INTO deliveries (id, job_id, kind, target, url_secret, body, content_type, attempts, next_at, status) VALUES (?, ?, 'hook', ?, ?, '{}', 'application/json', 1, ?, 'delivered')",
					`${id}:${row.target}`,
					id,
					row.target,
					row.url_secret,
					at + 5_000,
				);
			}
			const counted = counting(sql);
			const found = laterCall(counted.sql, row, "after_run", "delivered");
			// The look still finds a later call: the oldest kept job's call given up, the latest's taken.
			const oldest = sql.exec<SendRow>("SELECT * FROM deliveries WHERE job_id = ?", `earlier-${KEPT}`).one();
			return { found, read: counted.rowsRead(), earlierFound: laterCall(sql, oldest, "after_run", "delivered") };
		});
		expect(found).toBeNull();
		expect(earlierFound).not.toBeNull();
		// The job's own record, and the few calls queued since it ended: not the 2,000 calls (and their
		// jobs' records) kept from before, read at every call given up.
		expect(read).toBeLessThan(20);
	});
});
