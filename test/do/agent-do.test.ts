import { env, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import { AGENT_MIGRATIONS } from "../../durable-objects/agent/schema.ts";
import { createJob, transition, type JobRecord } from "../../src/jobs/model.ts";
import { migrate } from "../../src/store/sqlite-migrations.ts";
import { putJob } from "../../durable-objects/agent/jobs.ts";
import { insertOccurrence } from "../../durable-objects/agent/ledger.ts";
import { AgentSchema } from "../../src/config/schema.ts";
import { settle } from "../helpers/agents.ts";
import { fake } from "../helpers/outbound.ts";
import { saveJob } from "../helpers/jobs.ts";

describe("AgentDO storage", () => {
	it("migrates its SQLite schema in the constructor, once", async () => {
		const stub = env.AGENT.getByName("migrations-once");
		expect(await runInDurableObject(stub, (instance: AgentDO) => instance.schemaVersion)).toBe(AGENT_MIGRATIONS.at(-1)!.version);
		await runInDurableObject(stub, (_instance, state) => {
			const rows = state.storage.sql.exec<{ version: number; name: string }>("SELECT version, name FROM schema_migrations ORDER BY version").toArray();
			expect(rows.map((r) => [r.version, r.name])).toEqual(AGENT_MIGRATIONS.map((m) => [m.version, m.name]));
			// Running the steps again applies nothing and fails on nothing.
			expect(migrate(state.storage, AGENT_MIGRATIONS)).toBe(AGENT_MIGRATIONS.at(-1)!.version);
			expect(state.storage.sql.exec("SELECT count(*) AS n FROM schema_migrations").one().n).toBe(AGENT_MIGRATIONS.length);
		});
	});

	it("keeps jobs across eviction and never lets a revision go backwards", async () => {
		const stub = env.AGENT.getByName("keeps-jobs");
		const pending = createJob({ agent: "keeps-jobs", trigger_type: "manual", definition_revision: "r" }, new Date("2026-11-30T10:00:00Z"));
		const running = transition(pending, "running", { reason: "claimed", at: new Date("2026-11-30T10:00:01Z") });
		expect(await saveJob("keeps-jobs", pending)).toBe(true);
		expect(await saveJob("keeps-jobs", running)).toBe(true);
		expect(await saveJob("keeps-jobs", pending)).toBe(false);

		await evictDurableObject(stub);
		const again = env.AGENT.getByName("keeps-jobs");
		expect(await again.getJob(pending.id)).toEqual(running);
		expect(await again.getJob("job-2026-11-30-nobody")).toBeNull();
	});

	it("refuses a migration step that fails, leaving the previous version intact", async () => {
		await runInDurableObject(env.AGENT.getByName("bad-step"), (_instance, state) => {
			const bad = [...AGENT_MIGRATIONS, { version: 999, name: "broken", sql: "CREATE TABLE half (x); SELECT * FROM missing_table;" }];
			expect(() => migrate(state.storage, bad)).toThrow(/missing_table/);
			const version = state.storage.sql.exec<{ v: number }>("SELECT max(version) AS v FROM schema_migrations").one().v;
			expect(version).toBe(AGENT_MIGRATIONS.at(-1)!.version);
			expect(state.storage.sql.exec("SELECT count(*) AS n FROM sqlite_master WHERE name = 'half'").one().n).toBe(0);
		});
	});
});

describe("an agent that no longer exists", () => {
	it("cancels the queued runs of a file agent a deploy dropped from fleet.yaml, saying why", async () => {
		// The object of a file agent whose name the bundled fleet.yaml no longer has.
		const stub = env.AGENT.getByName("dropped-from-fleet");
		await stub.tick("dropped-from-fleet", "file", Date.parse("2026-12-01T10:00:00Z"));
		const queued = createJob({ agent: "dropped-from-fleet", trigger_type: "schedule", definition_revision: "r" }, new Date("2026-12-01T10:00:00Z"));
		expect(await saveJob("dropped-from-fleet", queued)).toBe(true);
		await settle("dropped-from-fleet");
		const job = (await stub.getJob(queued.id)) as JobRecord | null;
		expect(job).toMatchObject({ status: "cancelled" });
		expect(job!.transitions.at(-1)).toMatchObject({ to: "cancelled", reason: "agent removed from fleet.yaml" });
		const indexed = await env.DB.prepare("SELECT status FROM jobs WHERE id = ?").bind(queued.id).first<{ status: string }>();
		expect(indexed?.status).toBe("cancelled");
	});

	it("sends the hooks of the runs a deploy's drop cancelled at its alarm, set now, though the dropped agent is ticked no more", async () => {
		const name = "dropped-with-hooks";
		const hooks: string[] = [];
		fake("https://hooks.example.test", async (req) => (hooks.push(await req.text()), new Response("ok")));
		const stub = env.AGENT.getByName(name);
		await stub.tick(name, "file", Date.now());
		const queued = createJob({ agent: name, trigger_type: "manual", definition_revision: "r" }, new Date());
		const retentionAlarm = Date.now() + 30 * 86_400_000;
		await runInDurableObject(stub, async (_i: AgentDO, state) => {
			// A run held while its agent was paused, the alarm at its oldest record's retention expiry.
			insertOccurrence(state.storage.sql, { schedule: null, source: "manual", scheduledInstant: null, dispatch: "manual", claimedAt: Date.now(), status: "claimed", jobId: queued.id });
			putJob(state.storage.sql, queued, Date.now());
			await state.storage.setAlarm(retentionAlarm);
		});
		const before = Date.now();
		await stub.dropFromFleet(AgentSchema.parse({ name, prompt: "Go.", hooks: { on_error: [{ url_secret: "TEST_ERROR_HOOK_URL", events: ["cancelled"] }] } }) as never);
		expect(((await stub.getJob(queued.id)) as JobRecord | null)?.status).toBe("cancelled");
		const alarm = await runInDurableObject(stub, (_i: AgentDO, state) => state.storage.getAlarm());
		expect(alarm! - before).toBeLessThan(1_000);
		expect(await runDurableObjectAlarm(stub)).toBe(true);
		expect(hooks).toHaveLength(1);
		expect(JSON.parse(hooks[0]!)).toMatchObject({ type: "drover.job.cancelled", job: { id: queued.id, status: "cancelled" } });
	});
});
