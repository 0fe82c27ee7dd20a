// A 304 carries what its 200 would have to (RFC 9110 15.4.5): a job record's answer depends on
// Accept, so its 304 says Vary: Accept too, or a cache would serve one client's YAML to another;
// and If-None-Match: * is met by any current representation. A mutation walk found both unchecked.
import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";

describe("a conditional GET of a job record", () => {
	it("answers 304 with the 200's Vary: Accept, its ETag and Cache-Control, and no representation headers, and 304 to If-None-Match: *", async () => {
		useEmulator();
		await createAgent({ name: "etag-vary", prompt: "Answer." });
		const job = await runToRest("etag-vary");
		const full = await call(`/v1/jobs/${job.id}`);
		expect(full.status).toBe(200);
		expect(full.headers.get("vary")).toMatch(/accept/i);
		const etag = full.headers.get("etag")!;

		const same = await call(`/v1/jobs/${job.id}`, { headers: { "if-none-match": etag } });
		expect(same.status).toBe(304);
		expect(await same.text()).toBe("");
		expect(same.headers.get("vary")).toMatch(/accept/i);
		expect(same.headers.get("etag")).toBe(etag);
		expect(same.headers.get("cache-control")).toBe("private, no-cache");
		expect([...same.headers.keys()].sort()).toEqual(["cache-control", "etag", "vary", "x-request-id"]);
		// "*" matches any current representation (RFC 9110 13.1.2).
		expect((await call(`/v1/jobs/${job.id}`, { headers: { "if-none-match": "*" } })).status).toBe(304);
	});
});
