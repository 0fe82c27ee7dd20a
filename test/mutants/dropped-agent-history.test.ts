// An agent a deploy dropped from fleet.yaml is still known by its indexed jobs: reads of its history
// answer, where a name that never was an agent is a 404. A mutation walk found the index's part of
// that question (agentEverExisted's jobs) unchecked.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createJob } from "../../src/jobs/model.ts";
import { upsertJobIndex } from "../../src/store/job-index.ts";
import { call } from "../helpers/http.ts";

describe("a dropped file agent's history", () => {
	it("lists its sessions by its indexed jobs, and a name never used is a 404", async () => {
		await upsertJobIndex(env.DB, [createJob({ agent: "dropped-file", trigger_type: "manual", definition_revision: "rev1", schedule: null }, new Date("2026-05-05T10:00:00Z"))]);
		const known = await call("/v1/agents/dropped-file/sessions");
		expect(known.status, await known.clone().text()).toBe(200);
		expect((await call("/v1/agents/never-an-agent/sessions")).status).toBe(404);
	});
});
