// An agent as GET /v1/agents/:agent answers it (src/api/agents/views.ts), where a mutation walk found
// the suite blind: a disabled agent's schedules said when they would next run, its fallback models
// could be left out, and the storage warning could be dropped from `warnings`.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { agentView } from "../../src/api/agents/views.ts";
import { AgentSchema } from "../../src/config/schema.ts";
import { call } from "../helpers/http.ts";

describe("an agent's view", () => {
	it("gives a disabled agent's schedules no next run, though each schedule is enabled, and lists its fallback models", async () => {
		const body = { name: "view-disabled", prompt: "Go.", enabled: false, fallback_models: ["claude-haiku-5-5"], schedules: { hourly: { cron: "0 * * * *" } } };
		const created = await call("/v1/agents", { method: "POST", as: "admin", body });
		expect(created.status, await created.clone().text()).toBe(201);
		const view = (await (await call("/v1/agents/view-disabled")).json()) as { enabled: boolean; fallback_models: string[]; schedules: { enabled: boolean; next_run: string | null }[] };
		expect(view).toMatchObject({ enabled: false, fallback_models: ["claude-haiku-5-5"], schedules: [{ enabled: true, next_run: null }] });
		const enabled = await call("/v1/agents/view-disabled", { method: "PUT", as: "admin", body: { ...body, enabled: true } });
		expect(enabled.status, await enabled.clone().text()).toBe(200);
		const next = ((await (await call("/v1/agents/view-disabled")).json()) as { schedules: { next_run: string | null }[] }).schedules[0]!.next_run;
		expect(Date.parse(next!) % 3_600_000).toBe(0);
	});

	it("warns of an agent's storage from 8 of its object's 10 GB", () => {
		const definition = AgentSchema.parse({ name: "view-storage", prompt: "Go." });
		const status = { name: "view-storage", source: "api" as const, deleted: false, paused: null, running_jobs: [], queued_jobs: 0, last_job: null, last_runs: {}, index_backlog: 0 };
		const viewAt = (bytes: number) => agentView({ name: "view-storage", source: "api", definition, hasDefaultPrompt: true }, { ...status, storage_bytes: bytes }, new Date(), env).warnings;
		expect(viewAt(7.9e9)).toEqual([]);
		expect(viewAt(8.6e9)).toEqual(["storage: the agent's Durable Object holds 8.6 GB of the 10 GB Cloudflare allows (writes fail past it): lower its retention_days, or run it less often"]);
	});
});
