// src/api/agents/actions.ts: a mutation walk found that the ledger's pages (a default of 49, a page of
// limit + 1, a cursor after a full last page), a blank pause reason kept as written, and a manual
// prompt one character past the limit all passed the suite.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_PROMPT_CHARS } from "../../src/config/schema.ts";
import { createAgent, runsOf } from "../helpers/agents.ts";
import { call, errorOf } from "../helpers/http.ts";
import { numberedRecord, storeRun } from "../helpers/jobs.ts";

type RunsPage = { runs: { id: string; job_id: string | null }[]; next_cursor: string | null };
const runsPage = async (path: string): Promise<RunsPage> => {
	const res = await call(path);
	expect(res.status, await res.clone().text()).toBe(200);
	return res.json();
};

describe("an agent's ledger, paged", () => {
	it("gives 50 runs a page by default, each page exactly its limit, and no cursor after the last", async () => {
		await createAgent({ name: "ledger-pages" });
		const base = Date.now() - 3_600_000;
		await runInDurableObject(env.AGENT.getByName("ledger-pages"), (_i, state) => {
			for (let n = 0; n < 51; n++) storeRun(state.storage.sql, numberedRecord("ledger-pages", new Date(base + n * 1000), n));
		});

		const first = await runsPage("/v1/agents/ledger-pages/runs");
		expect(first.runs).toHaveLength(50);
		expect(first.next_cursor).toEqual(expect.any(String));
		const rest = await runsPage(`/v1/agents/ledger-pages/runs?cursor=${first.next_cursor}`);
		expect(rest.runs).toHaveLength(1);
		expect(rest.next_cursor).toBeNull();
		expect(new Set([...first.runs, ...rest.runs].map((r) => r.id)).size).toBe(51);

		// A page of exactly what is left is the last: no cursor to an empty one.
		const whole = await runsPage("/v1/agents/ledger-pages/runs?limit=51");
		expect(whole.runs).toHaveLength(51);
		expect(whole.next_cursor).toBeNull();
		const one = await runsPage("/v1/agents/ledger-pages/runs?limit=1");
		expect(one.runs).toHaveLength(1);
		expect(one.runs[0]!.id).toBe(first.runs[0]!.id);
	});
});

describe("a pause's reason", () => {
	it("is none when blank, and kept without the spaces around it", async () => {
		await createAgent({ name: "blank-pause" });
		const blank = await call("/v1/agents/blank-pause/pause", { method: "POST", as: "operate", body: { reason: "   " } });
		expect(blank.status).toBe(200);
		expect(((await blank.json()) as { paused: { reason: string | null } }).paused.reason).toBeNull();
		const padded = await call("/v1/agents/blank-pause/pause", { method: "POST", as: "operate", body: { reason: "  vendor outage  " } });
		expect(((await padded.json()) as { paused: { reason: string | null } }).paused.reason).toBe("vendor outage");
	});
});

describe("a manual prompt", () => {
	it("one character past the limit is a 400, running nothing", async () => {
		await createAgent({ name: "prompt-limit" });
		const res = await call("/v1/agents/prompt-limit/jobs", { method: "POST", as: "operate", body: { prompt: "x".repeat(MAX_PROMPT_CHARS + 1) } });
		expect(res.status).toBe(400);
		expect((await errorOf(res)).details?.issues?.[0]?.path).toBe("prompt");
		expect(await runsOf("prompt-limit")).toEqual([]);
	});
});
