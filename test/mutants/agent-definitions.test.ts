// src/api/agents/definitions.ts: a mutation walk found that a POST or PUT storing one of the Worker's
// secret values, a PUT of a cost limit no price can hold, and a page of agents after a cursor naming a
// fleet.yaml agent listing that agent again, and a PUT or DELETE of a name that never was an agent
// waking (and so storing) an object for it, all passed the suite.
import { env, listDurableObjectIds } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { call, errorOf } from "../helpers/http.ts";
import { TOKENS, WEBHOOK_SECRET } from "../helpers/tokens.ts";

const definitionOf = async (name: string) => ((await (await call(`/v1/agents/${name}`)).json()) as { definition: Record<string, unknown>; definition_revision: string });

describe("a definition holding one of the Worker's secret values", () => {
	it("is refused on POST, naming the field and not the value, and nothing is created", async () => {
		const res = await call("/v1/agents", { method: "POST", as: "admin", body: { name: "pasted-token", prompt: `Call the API with ${TOKENS.operate}.` } });
		expect(res.status).toBe(400);
		const error = await errorOf(res);
		expect(error.details?.issues?.map((i) => i.path)).toEqual(["prompt"]);
		expect(JSON.stringify(error)).not.toContain(TOKENS.operate);
		expect((await call("/v1/agents/pasted-token")).status).toBe(404);
	});

	it("is refused on PUT, the stored definition left as it was", async () => {
		await createAgent({ name: "pasted-later", system_prompt: "Be brief." });
		const before = await definitionOf("pasted-later");
		const res = await call("/v1/agents/pasted-later", { method: "PUT", as: "admin", body: { name: "pasted-later", prompt: "Do the thing.", system_prompt: `Sign with ${WEBHOOK_SECRET}.` } });
		expect(res.status).toBe(400);
		expect((await errorOf(res)).details?.issues?.map((i) => i.path)).toEqual(["system_prompt"]);
		expect(await definitionOf("pasted-later")).toEqual(before);
	});
});

describe("a PUT of a cost limit on a model with no price", () => {
	it("is refused as POST refuses it, the stored definition left as it was", async () => {
		await createAgent({ name: "priced-later", model: "claude-haiku-5-5" });
		const before = await definitionOf("priced-later");
		const res = await call("/v1/agents/priced-later", { method: "PUT", as: "admin", body: { name: "priced-later", prompt: "Do the thing.", model: "claude-sonnet-5-5", usage_limits: { max_cost_usd: 0.05 } } });
		expect(res.status).toBe(400);
		expect((await errorOf(res)).details?.issues?.map((i) => i.path)).toEqual(["usage_limits.max_cost_usd"]);
		expect(await definitionOf("priced-later")).toEqual(before);
	});
});

describe("a page of agents after a cursor", () => {
	it("starts after the agent the cursor names, a fleet.yaml agent too, in either view", async () => {
		for (const view of ["", "&view=names"]) {
			const res = await call(`/v1/agents?cursor=daily-digest&limit=200${view}`);
			expect(res.status).toBe(200);
			const names = ((await res.json()) as { agents: { name: string }[] }).agents.map((a) => a.name);
			expect(names, view).not.toContain("daily-digest");
			expect(names, view).toContain("site-watch");
		}
	});
});

describe("a PUT or DELETE of a name that never was an agent", () => {
	it("is a 404 that creates no object for it", async () => {
		const before = (await listDurableObjectIds(env.AGENT)).length;
		const put = await call("/v1/agents/never-defined", { method: "PUT", as: "admin", body: { name: "never-defined", prompt: "x" } });
		expect(put.status).toBe(404);
		const del = await call("/v1/agents/never-defined", { method: "DELETE", as: "admin" });
		expect(del.status).toBe(404);
		expect((await errorOf(del)).message).toBe("no agent named never-defined");
		expect((await listDurableObjectIds(env.AGENT)).length).toBe(before);
	});
});
