import { describe, expect, it } from "vitest";
import { call, errorOf } from "../helpers/http.ts";

/** `levels` arrays, one inside the next. */
function nested(levels: number): unknown {
	let v: unknown = "leaf";
	for (let i = 0; i < levels; i++) v = [v];
	return v;
}

describe("JSON nested past what drover walks", () => {
	it("is a 400 naming the field, not a 500, in a tool's definition or input_schema, and creates nothing", async () => {
		const tools = [
			{ type: "server", definition: { type: "web_search_20250305", name: "web_search", deep: nested(3000) } },
			{ type: "webhook", name: "deep", description: "d", url_secret: "TEST_TICKETS_URL", input_schema: { type: "object", properties: { a: nested(3000) } } },
		];
		for (const tool of tools) {
			const res = await call("/v1/agents", { method: "POST", as: "admin", body: { name: "deep-one", prompt: "x", tools: [tool] } });
			expect(res.status, tool.type).toBe(400);
			const error = await errorOf(res);
			expect(error.message).toContain("nests deeper than 64 levels");
		}
		expect((await call("/v1/agents/deep-one")).status).toBe(404);
	});

	it("still takes a definition nested to the limit", async () => {
		const res = await call("/v1/agents", {
			method: "POST",
			as: "admin",
			body: { name: "deep-enough", prompt: "x", tools: [{ type: "server", definition: { type: "web_search_20250305", name: "web_search", deep: nested(60) } }] },
		});
		expect(res.status, await res.clone().text()).toBe(201);
	});
});
