// How every /v1 route reads its body (src/api/factory.ts), where a mutation walk found the suite
// blind: a route that takes no body takes an empty object however a client spaces it (`{ }`, or one
// pretty-printed over two lines), as it takes `{}`: it is no body, and the call does what it names.
import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { call } from "../helpers/http.ts";

const pausedOf = async (agent: string) => ((await (await call(`/v1/agents/${agent}`)).json()) as { paused: unknown }).paused;

describe("a route that takes no body, sent an empty object with spaces in it", () => {
	it("takes it as none: the resume resumes", async () => {
		await createAgent({ name: "spaced-empty" });
		for (const body of ["{ }", "{\n}"]) {
			expect((await call("/v1/agents/spaced-empty/pause", { method: "POST", as: "operate" })).status).toBe(200);
			expect(await pausedOf("spaced-empty")).toMatchObject({ by: "operator" });
			const res = await call("/v1/agents/spaced-empty/resume", { method: "POST", as: "operate", body, headers: { "content-type": "application/json" } });
			expect(res.status, JSON.stringify(body)).toBe(200);
			expect(await pausedOf("spaced-empty")).toBeNull();
		}
	});
});
