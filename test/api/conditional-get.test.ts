import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";

interface JobPage {
	jobs: { id: string }[];
}

describe("conditional GETs: an unchanged JSON answer is not sent again", () => {
	it("answers a list's If-None-Match 304 with no body while it is unchanged, and 200 with the new list once it changes", async () => {
		useEmulator();
		await createAgent({ name: "etag-list", prompt: "Answer." });
		const first = await runToRest("etag-list");
		const path = "/v1/jobs?agent=etag-list";

		const full = await call(path);
		expect(full.status).toBe(200);
		const etag = full.headers.get("etag");
		expect(etag).toMatch(/^"[\w-]{27}"$/);
		expect(full.headers.get("cache-control")).toBe("private, no-cache");
		expect(((await full.json()) as JobPage).jobs.map((j) => j.id)).toEqual([first.id]);

		const same = await call(path, { headers: { "if-none-match": etag! } });
		expect(same.status).toBe(304);
		expect(await same.text()).toBe("");
		expect(same.headers.get("etag")).toBe(etag);
		expect(same.headers.get("cache-control")).toBe("private, no-cache");
		expect(same.headers.get("x-request-id")).toBeTruthy();
		// A weak form of the tag, or the tag among others, is the same tag (RFC 9110's weak comparison).
		expect((await call(path, { headers: { "if-none-match": `"other", W/${etag}` } })).status).toBe(304);
		// HEAD is answered as GET is, without the body.
		const head = await call(path, { method: "HEAD" });
		expect([head.status, head.headers.get("etag"), await head.text()]).toEqual([200, etag, ""]);
		expect((await call(path, { method: "HEAD", headers: { "if-none-match": etag! } })).status).toBe(304);

		const second = await runToRest("etag-list");
		const changed = await call(path, { headers: { "if-none-match": etag! } });
		expect(changed.status).toBe(200);
		expect(changed.headers.get("etag")).not.toBe(etag);
		expect(((await changed.json()) as JobPage).jobs.map((j) => j.id)).toEqual([second.id, first.id]);
	});

	it("answers a tag that does not match, or a different query's tag, in full", async () => {
		useEmulator();
		await createAgent({ name: "etag-other", prompt: "Answer." });
		await runToRest("etag-other");
		const page = await call("/v1/jobs?agent=etag-other");
		const etag = page.headers.get("etag")!;
		const stale = await call("/v1/jobs?agent=etag-other", { headers: { "if-none-match": '"not-the-tag"' } });
		expect(stale.status).toBe(200);
		expect(((await stale.json()) as JobPage).jobs).toHaveLength(1);
		const otherQuery = await call("/v1/jobs?agent=etag-other&status=failed", { headers: { "if-none-match": etag } });
		expect(otherQuery.status).toBe(200);
		expect(((await otherQuery.json()) as JobPage).jobs).toEqual([]);
	});

	it("leaves errors, writes, a job's output and its stream as they were", async () => {
		useEmulator();
		await createAgent({ name: "etag-rest", prompt: "Answer." });
		const job = await runToRest("etag-rest");

		const missing = await call("/v1/agents/etag-no-such-agent", { headers: { "if-none-match": "*" } });
		expect(missing.status).toBe(404);
		expect(missing.headers.get("etag")).toBeNull();

		const written = await call("/v1/agents/etag-rest/pause", { method: "POST", as: "operate", body: {} });
		expect(written.status).toBe(200);
		expect(written.headers.get("etag")).toBeNull();

		// The output is not buffered to be digested: it is answered whole whatever If-None-Match says.
		const output = await call(`/v1/jobs/${job.id}/output`, { headers: { "if-none-match": "*" } });
		expect(output.status).toBe(200);
		expect((await output.text()).split("\n").filter(Boolean).length).toBeGreaterThan(1);

		const stream = await call(`/v1/jobs/${job.id}/stream`, { headers: { "if-none-match": "*" } });
		expect(stream.status).toBe(200);
		expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
		expect(await stream.text()).toContain("event: end");
	});

	it("is documented in /openapi.json on every JSON read under /v1, and on nothing else", async () => {
		const doc = (await (await call("/openapi.json", { as: null })).json()) as {
			paths: Record<string, Record<string, { parameters?: { $ref?: string }[]; responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, unknown> }> }>>;
			components: { parameters: Record<string, { name: string; in: string }> };
		};
		const revalidated = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).filter(([, op]) => op.responses["304"]).map(([method]) => `${method} ${path}`));
		expect(revalidated).toEqual(expect.arrayContaining(["get /v1/jobs", "get /v1/agents", "get /v1/incidents", "get /v1/usage", "get /v1/status"]));
		expect(revalidated.every((r) => r.startsWith("get /v1/"))).toBe(true);
		const jobs = doc.paths["/v1/jobs"]!.get!;
		expect(jobs.responses["200"]!.headers).toMatchObject({ ETag: { $ref: "#/components/headers/ETag" } });
		expect(jobs.parameters).toContainEqual({ $ref: "#/components/parameters/IfNoneMatch" });
		expect(doc.components.parameters.IfNoneMatch).toMatchObject({ name: "If-None-Match", in: "header" });
		// A job's output is text, not revalidated.
		expect(doc.paths["/v1/jobs/{id}/output"]!.get!.responses["304"]).toBeUndefined();
	});
});
