import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";

const pausedOf = async (agent: string) => ((await (await call(`/v1/agents/${agent}`)).json()) as { paused: unknown }).paused;

describe("a route that takes no body", () => {
	it("refuses one with a 400 and does nothing, whatever its type", async () => {
		await createAgent({ name: "bodiless" });
		expect((await call("/v1/agents/bodiless/pause", { method: "POST", as: "operate", body: { reason: "maintenance" } })).status).toBe(200);
		for (const [body, contentType] of [["{\"x\":", "application/json"], ["resume please", "text/plain"], [{ agent: "other" }, "application/json"]] as const) {
			const res = await call("/v1/agents/bodiless/resume", { method: "POST", as: "operate", body, headers: { "content-type": contentType } });
			expect(res.status, String(body)).toBe(400);
			const error = await errorOf(res);
			expect(error.message).toMatch(/takes no body; send none \(or \{\}\)$/);
			expect(error.details?.issues).toEqual([{ path: "body", message: "must be empty (or {})" }]);
		}
		expect(await pausedOf("bodiless")).not.toBeNull();

		await call("/v1/agents/bodiless/notepad/keep", { method: "PUT", as: "operate", body: { value: "me" } });
		await call("/v1/agents/bodiless/notepad/drop", { method: "PUT", as: "operate", body: { value: "me" } });
		// Meant as "delete this key"; it must not clear the whole notepad.
		const wide = await call("/v1/agents/bodiless/notepad", { method: "DELETE", as: "operate", body: { key: "drop" } });
		expect(wide.status).toBe(400);
		expect(Object.keys((await (await call("/v1/agents/bodiless/notepad")).json()) as object).sort()).toEqual(["drop", "keep"]);
	});

	it("takes none, or an empty object, as clients send with a POST", async () => {
		await createAgent({ name: "bodiless-ok" });
		const agent = "bodiless-ok";
		// Each call did what it names: a pause sent without a body pauses, a resume with {} or a blank body resumes.
		expect((await call(`/v1/agents/${agent}/pause`, { method: "POST", as: "operate" })).status).toBe(200);
		expect(await pausedOf(agent)).toMatchObject({ by: "operator" });
		expect((await call(`/v1/agents/${agent}/resume`, { method: "POST", as: "operate", body: {} })).status).toBe(200);
		expect(await pausedOf(agent)).toBeNull();
		expect((await call(`/v1/agents/${agent}/pause`, { method: "POST", as: "operate" })).status).toBe(200);
		expect(await pausedOf(agent)).toMatchObject({ by: "operator" });
		expect((await call(`/v1/agents/${agent}/resume`, { method: "POST", as: "operate", body: " " })).status).toBe(200);
		expect(await pausedOf(agent)).toBeNull();
	});
});

describe("a route whose body is optional", () => {
	it("reads a blank body sent as JSON as none, as clients that always send Content-Type do; a malformed one is still a 400", async () => {
		await createAgent({ name: "blank-body" });
		const json = { "content-type": "application/json" };
		const paused = await call("/v1/agents/blank-body/pause", { method: "POST", as: "operate", body: "", headers: json });
		expect(paused.status).toBe(200);
		expect(await pausedOf("blank-body")).toMatchObject({ reason: null });
		const resumed = await call("/v1/agents/blank-body/resume", { method: "POST", as: "operate", body: "", headers: json });
		expect(resumed.status).toBe(200);
		// The job's model call hangs until the cancel aborts it.
		useEmulator().enqueue({ hang: true });
		const triggered = await call("/v1/agents/blank-body/jobs", { method: "POST", as: "operate", body: " \n", headers: json });
		expect(triggered.status).toBe(201);
		const { id } = (await triggered.json()) as { id: string };
		const cancelled = await call(`/v1/jobs/${id}/cancel`, { method: "POST", as: "operate", body: "", headers: json });
		expect(cancelled.status).toBe(200);
		expect(await cancelled.json()).toMatchObject({ status: "cancelled" });

		// A blank reason is none.
		expect((await call("/v1/agents/blank-body/pause", { method: "POST", as: "operate", body: { reason: "  " } })).status).toBe(200);
		expect(await pausedOf("blank-body")).toMatchObject({ reason: null });
		expect((await call("/v1/agents/blank-body/resume", { method: "POST", as: "operate" })).status).toBe(200);
		const malformed = await call("/v1/agents/blank-body/pause", { method: "POST", as: "operate", body: "{\"reason\":", headers: json });
		expect(malformed.status).toBe(400);
		expect(await pausedOf("blank-body")).toBeNull();
	});
});

describe("a request with no body that names a charset", () => {
	it("is not refused for the charset, which names nothing sent: only a route that takes a body and is sent one checks it", async () => {
		await createAgent({ name: "charset-empty" });
		const latin = { "content-type": "application/json; charset=iso-8859-1" };
		expect((await call("/v1/agents/charset-empty/pause", { method: "POST", as: "operate", body: "", headers: latin })).status).toBe(200);
		// A route that takes no body answers as the OpenAPI document says, which lists no 415 for it.
		expect((await call("/v1/agents/charset-empty/resume", { method: "POST", as: "operate", body: "", headers: latin })).status).toBe(200);
		expect((await call("/v1/agents/charset-empty/pause", { method: "POST", as: "operate", body: "", headers: latin })).status).toBe(200);
		expect((await call("/v1/agents/charset-empty/resume", { method: "POST", as: "operate", body: "{}", headers: latin })).status).toBe(200);
		expect(await pausedOf("charset-empty")).toBeNull();
		// A body to a route that takes one is still a 415 in that charset.
		const sent = await call("/v1/agents/charset-empty/pause", { method: "POST", as: "operate", body: '{"reason":"x"}', headers: latin });
		expect(sent.status).toBe(415);
		expect(await pausedOf("charset-empty")).toBeNull();
	});
});
