// Where a request body stops being UTF-8 (src/shared/well-formed.ts, utf8Fault), where a mutation walk
// found the suite blind: an overlong three-byte form (E0 then 80–9F) and a lead byte past U+10FFFF's
// (F5–F7) are refused by the runtime's strict decoder, and the 400 must say where and which bytes, as
// it does for any other fault, not "bytes  at offset 0" (nothing found where the decoder refused).
import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { call, errorOf } from "../helpers/http.ts";

/** JSON text around bytes that are no UTF-8: `X` in `json` marks where they go. */
function withBytes(json: string, bad: readonly number[]): Uint8Array {
	const [before, after] = json.split("X") as [string, string];
	const enc = new TextEncoder();
	return new Uint8Array([...enc.encode(before), ...bad, ...enc.encode(after)]);
}

describe("a body that is not UTF-8", () => {
	it("names an overlong three-byte form at its offset: E0 then a byte below A0", async () => {
		await createAgent({ name: "utf8-overlong" });
		// E0 80 80 would spell U+0000 the long way, which UTF-8 forbids: the fault is E0 and its first follower.
		const res = await call("/v1/agents/utf8-overlong/notepad/k", { method: "PUT", as: "operate", body: withBytes(`{"value":"X"}`, [0xe0, 0x80, 0x80]) });
		expect(res.status).toBe(400);
		expect((await errorOf(res)).message).toBe("the request body is not valid UTF-8: bytes e0 80 at offset 10 are no UTF-8 character; send the body as UTF-8 text");
		expect(await (await call("/v1/agents/utf8-overlong/notepad")).json()).toEqual({});
	});

	it("names a lead byte past U+10FFFF's (F5) at its offset, as no UTF-8 character", async () => {
		await createAgent({ name: "utf8-past-max" });
		const res = await call("/v1/agents/utf8-past-max/notepad/k", { method: "PUT", as: "operate", body: withBytes(`{"value":"X"}`, [0xf5, 0x80, 0x80, 0x80]) });
		expect(res.status).toBe(400);
		expect((await errorOf(res)).message).toBe("the request body is not valid UTF-8: byte f5 at offset 10 is no UTF-8 character; send the body as UTF-8 text");
		expect(await (await call("/v1/agents/utf8-past-max/notepad")).json()).toEqual({});
	});
});
