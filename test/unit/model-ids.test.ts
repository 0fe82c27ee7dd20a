import { describe, expect, it } from "vitest";
import sdkMessages from "../../node_modules/@anthropic-ai/sdk/resources/messages/messages.d.ts?raw";
import { KNOWN_MODELS, modelIdProblem } from "../../src/config/models.ts";
import { definitionWarnings } from "../../src/config/warnings.ts";

describe("a model id", () => {
	it("is known as the Anthropic SDK names its models (its Model type)", () => {
		const union = /export type Model = ([^;]+);/.exec(sdkMessages)?.[1];
		expect(union).toBeDefined();
		const named = [...(union ?? "").matchAll(/'([^']+)'/g)].map((m) => m[1]);
		expect(named.length).toBeGreaterThan(10);
		expect([...KNOWN_MODELS].sort()).toEqual(named.sort());
	});

	it("is taken when known or in the API's form of a known family (a model newer than this release)", () => {
		for (const id of ["claude-sonnet-5-5", "claude-haiku-4-5-20251001", "claude-opus-5-6", "claude-sonnet-6", "claude-haiku-5-5-20270101", "claude-mythos-preview"]) expect(modelIdProblem(id), id).toBeNull();
		// Older ids, version first, and the -latest aliases.
		for (const id of ["claude-3-5-haiku-20241022", "claude-3-7-sonnet-latest", "claude-3-opus-20240229", "claude-sonnet-4-5-latest"]) expect(modelIdProblem(id), id).toBeNull();
		// A gateway's spelling, for a proxy at ANTHROPIC_BASE_URL (Bedrock's, Vertex's, a path's).
		for (const id of ["anthropic.claude-sonnet-5-5-20260101-v1:0", "us.anthropic.claude-sonnet-5-5-v1:0", "claude-sonnet-5-5@20260101", "us/claude-sonnet-5-5"]) expect(modelIdProblem(id), id).toBeNull();
	});

	it("is said likely misspelt otherwise, with the closest known id", () => {
		expect(modelIdProblem("claude-sonnet-5.5")).toBe(
			"claude-sonnet-5.5 is not a model id this release knows (did you mean claude-sonnet-5-5?): the API's are written like claude-sonnet-5-5; a misspelt one fails its job's first call (404)",
		);
		expect(modelIdProblem("claude-sonet-5-5")).toContain("(did you mean claude-sonnet-5-5?)");
		expect(modelIdProblem("sonnet-5-5")).toContain("(did you mean claude-sonnet-5-5?)");
		expect(modelIdProblem("Claude-Opus-5-5")).toContain("(did you mean claude-opus-5-5?)");
		expect(modelIdProblem("gpt-4o")).toMatch(/^gpt-4o is not a model id this release knows: /);
		expect(modelIdProblem(`claude-${"x".repeat(100_000)}`)).toMatch(/knows: /);
	});

	it("is warned of in a definition, the model's and each fallback's", () => {
		const agent = { tools: [], approval_timeout: "1h", timeout: "30m", model: "claude-sonnet-5.5", fallback_models: ["claude-haiku-5-5", "claude-hiaku-5-5"] };
		expect(definitionWarnings(agent)).toEqual([
			expect.stringMatching(/^model claude-sonnet-5\.5 is not a model id this release knows \(did you mean claude-sonnet-5-5\?\)/),
			expect.stringMatching(/^fallback model claude-hiaku-5-5 is not a model id this release knows \(did you mean claude-haiku-5-5\?\)/),
		]);
	});
});
