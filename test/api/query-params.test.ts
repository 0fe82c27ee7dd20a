import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { call, errorOf } from "../helpers/http.ts";

/** Routes that read query parameters, each with one of its parameters and a valid value of it. */
const routes: [path: string, param: string, valid: string][] = [
	["/v1/jobs", "limit", "5"],
	["/v1/jobs", "since", "2026-11-01T00:00:00Z"],
	["/v1/jobs", "cursor", "abc"],
	["/v1/incidents", "cursor", "abc"],
	["/v1/usage", "limit", "5"],
	["/v1/usage", "since", "2026-11-01"],
	["/v1/usage", "agent", "some-agent"],
	["/v1/incidents", "limit", "5"],
	["/v1/incidents", "state", "open"],
	["/v1/agents", "limit", "5"],
	["/v1/agents/some-agent/runs", "limit", "5"],
	["/v1/agents/some-agent/jobs", "limit", "5"],
	["/v1/jobs/job-2026-11-01-abcdef/output", "lines", "5"],
];

async function badRequest(url: string): Promise<{ message: string; issues: { path: string; message: string }[] | undefined }> {
	const res = await call(url);
	expect(res.status, url).toBe(400);
	const error = await errorOf(res);
	expect(error.code, url).toBe("bad_request");
	return { message: error.message, issues: error.details?.issues };
}

describe("query parameters given twice or empty", () => {
	it("say a parameter was given more than once, naming it, on every route that reads the query", async () => {
		for (const [path, param, valid] of routes) {
			const url = `${path}?${param}=${valid}&${param}=${valid}`;
			const { message, issues } = await badRequest(url);
			expect(message, url).toBe(`invalid query: ${param}: given more than once; give it once`);
			expect(issues, url).toEqual([{ path: param, message: "given more than once; give it once" }]);
		}
	});

	it("say a parameter was given empty, naming it, rather than what coercing it gave", async () => {
		for (const [path, param] of routes) {
			const url = `${path}?${param}=`;
			const { message, issues } = await badRequest(url);
			expect(message, url).toBe(`invalid query: ${param}: given empty; give it a value or leave it out`);
			expect(issues, url).toEqual([{ path: param, message: "given empty; give it a value or leave it out" }]);
		}
	});

	it("still report the other parameters' own faults beside it", async () => {
		const { issues } = await badRequest("/v1/usage?limit=5&limit=6&until=yesterday");
		expect(issues).toEqual(
			expect.arrayContaining([
				{ path: "limit", message: "given more than once; give it once" },
				{ path: "until", message: "must be a date, YYYY-MM-DD" },
			]),
		);
		expect(issues).toHaveLength(2);
		// A value that is wrong, given once, says its range and the value.
		expect((await badRequest("/v1/jobs?limit=0")).message).toBe("invalid query: limit: must be at least 1, got 0");
	});
});

describe("a route that reads no query", () => {
	it("refuses a parameter, naming it, as the lists refuse one they do not know, and changes nothing", async () => {
		const urls = [
			"/v1/status?verbose=1",
			"/v1/agents/some-agent?x=1",
			"/v1/jobs/job-2026-11-01-abcdef?lines=20",
			"/v1/agents/some-agent/notepad?k=a",
		];
		for (const url of urls) {
			const param = new URL(url, "https://x").searchParams.keys().next().value!;
			const { message, issues } = await badRequest(url);
			expect(message, url).toMatch(new RegExp(`^invalid query: ${param}: `));
			expect(issues?.map((i) => i.path), url).toEqual([param]);
		}
		await createAgent({ name: "no-query" });
		const paused = await call("/v1/agents/no-query/pause?reason=x", { method: "POST", as: "operate" });
		expect(paused.status).toBe(400);
		expect((await errorOf(paused)).message).toMatch(/^invalid query: reason: /);
		const agent = await call("/v1/agents/no-query");
		expect(agent.status).toBe(200);
		expect(((await agent.json()) as { paused: unknown }).paused).toBeNull();
	});
});

describe("whole-number parameters", () => {
	it("take plain digits only, saying so, where coercion took 1e2, 0x10, 5.0 or a padded 5", async () => {
		for (const value of ["1e2", "0x10", "5.0", "%205", "-3", "abc"]) {
			for (const [path, param, max] of [
				["/v1/jobs", "limit", 200],
				["/v1/usage", "limit", 1000],
				["/v1/jobs/job-2026-11-01-abcdef/output", "lines", 100_000],
			] as const) {
				const url = `${path}?${param}=${value}`;
				const { message, issues } = await badRequest(url);
				expect(message, url).toBe(`invalid query: ${param}: must be a whole number from 1 to ${max}, in digits`);
				expect(issues?.map((i) => i.path), url).toEqual([param]);
			}
		}
		expect((await call("/v1/jobs?limit=200")).status).toBe(200);
		expect((await badRequest("/v1/jobs?limit=201")).message).toBe("invalid query: limit: must be at most 200, got 201");
	});

	it("are integers in the OpenAPI document, with their range and default", async () => {
		const doc = (await (await call("/openapi.json", { as: null })).json()) as {
			paths: Record<string, { get: { parameters: { name: string; schema: Record<string, unknown> }[] } }>;
		};
		const param = (path: string, name: string) => doc.paths[path]!.get.parameters.find((p) => p.name === name)!.schema;
		expect(param("/v1/jobs", "limit")).toMatchObject({ type: "integer", minimum: 1, maximum: 200, default: 20 });
		expect(param("/v1/usage", "limit")).toMatchObject({ type: "integer", minimum: 1, maximum: 1000, default: 500 });
		expect(param("/v1/jobs/{id}/output", "lines")).toMatchObject({ type: "integer", minimum: 1, maximum: 100000 });
		expect(param("/v1/jobs", "cursor")).toMatchObject({ type: "string", minLength: 1 });
	});
});
