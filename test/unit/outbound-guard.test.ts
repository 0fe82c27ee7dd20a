import { describe, expect, it } from "vitest";
import { fake, outboundLog, unmocked } from "../helpers/outbound.ts";

describe("the outbound guard", () => {
	it("answers declared fakes and refuses everything else", async () => {
		fake("https://hooks.example.test", () => new Response("ok"));
		expect(await (await fetch("https://hooks.example.test/x", { method: "POST" })).text()).toBe("ok");
		await expect(fetch("https://elsewhere.test/")).rejects.toThrow(/unmocked outbound request/);
		expect(outboundLog.map((r) => r.url)).toEqual(["https://hooks.example.test/x", "https://elsewhere.test/"]);
		// Drained here so this deliberate refusal does not fail the test in the setup's afterEach.
		expect(unmocked.splice(0)).toEqual(["GET https://elsewhere.test/"]);
	});
});
