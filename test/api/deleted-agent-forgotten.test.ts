import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { createAgent, settle } from "../helpers/agents.ts";
import { gate, useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";

// A deleted API agent's history stays readable for its retention; after that nothing of it is kept:
// not its object's storage (its definition, up to 256 KiB, among it), not its registry row. CI that
// creates and deletes throwaway agents would otherwise grow D1 by a definition, and the fleet by a
// billed object, per deletion, for good.

const DAY = 86_400_000;

afterEach(() => {
	vi.useRealTimers();
});

type Swappable = { env: Env };

/** Time passes as it does deployed: the clock moves to each alarm the object holds, and that alarm fires. */
async function followAlarms(name: string, days: number): Promise<number> {
	const stub = env.AGENT.getByName(name);
	const until = Date.now() + days * DAY;
	let fired = 0;
	for (; fired < 50; fired++) {
		const at = await runInDurableObject(stub, (_i: AgentDO, state) => state.storage.getAlarm());
		if (at === null || at > until) break;
		vi.useFakeTimers({ toFake: ["Date"], now: Math.max(at, Date.now()) + 1 });
		expect(await runDurableObjectAlarm(stub)).toBe(true);
	}
	return fired;
}

/** The object's tables, and the rows each holds (read without waking a fresh agent: no RPC). */
function storageOf(name: string): Promise<{ tables: Record<string, number>; alarm: number | null }> {
	return runInDurableObject(env.AGENT.getByName(name), async (_i: AgentDO, state) => {
		const sql = state.storage.sql;
		const names = sql
			.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY name")
			.toArray()
			.map((r) => r.name);
		const tables = Object.fromEntries(names.map((t) => [t, sql.exec<{ n: number }>(`SELECT count(*) AS n FROM "${t}"`).one().n]));
		return { tables, alarm: await state.storage.getAlarm() };
	});
}

const registryRow = (name: string) =>
	env.DB.prepare("SELECT deleted_at, definition FROM agents WHERE name = ?").bind(name).first<{ deleted_at: number | null; definition: string }>();

const bigPrompt = "Check every dashboard, then every queue, and report what changed. ".repeat(1500);

describe("a deleted API agent", () => {
	it("keeps its registry row without its definition, its history readable, until its retention has passed", async () => {
		useEmulator().enqueue({ text: "done" });
		await createAgent({ name: "gone-kept", retention_days: 7, prompt: bigPrompt });
		const job = await runToRest("gone-kept");
		expect((await registryRow("gone-kept"))?.definition.length).toBeGreaterThan(bigPrompt.length);
		expect((await call("/v1/agents/gone-kept", { method: "DELETE", as: "admin" })).status).toBe(200);
		await settle("gone-kept");

		// Nothing reads a deleted agent's definition from the registry (its object keeps what its
		// history needs: its retention, the hooks of a run still ending): the row keeps its name.
		const row = await registryRow("gone-kept");
		expect(row?.deleted_at).toEqual(expect.any(Number));
		expect(row?.definition.length).toBeLessThan(10);
		expect((await call("/v1/agents/gone-kept")).status).toBe(404);
		expect((await call(`/v1/jobs/${job.id}`)).status).toBe(200);
		const runs = (await (await call("/v1/agents/gone-kept/runs")).json()) as { runs: { job_id: string }[] };
		expect(runs.runs.map((r) => r.job_id)).toEqual([job.id]);
		expect((await call("/v1/agents/gone-kept", { method: "PUT", as: "admin", body: { name: "gone-kept", prompt: "Back?" } })).status).toBe(404);
	});
});
