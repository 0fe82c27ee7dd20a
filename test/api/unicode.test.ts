import { describe, expect, it } from "vitest";
import { createAgent, runsOf } from "../helpers/agents.ts";
import { call, errorOf } from "../helpers/http.ts";

// Raw JSON text: the escapes are what a client sends, not characters this file holds.
const LONE = String.raw`\ud800`;
const PAIR = String.raw`\ud83d\ude00`;

describe("a lone UTF-16 surrogate in a body", () => {
	it("is a 400 naming the field, on every route with a body, and changes nothing (no storage keeps one)", async () => {
		await createAgent({ name: "surrogates" });
		const trigger = await call("/v1/agents/surrogates/jobs", { method: "POST", as: "operate", body: `{"prompt":"Check a${LONE}b."}` });
		expect(trigger.status).toBe(400);
		expect(await errorOf(trigger)).toMatchObject({ details: { issues: [{ path: "prompt", message: expect.stringContaining("unpaired UTF-16 surrogate") }] } });
		const note = await call("/v1/agents/surrogates/notepad/k", { method: "PUT", as: "operate", body: `{"value":"x${LONE}"}` });
		expect(note.status).toBe(400);
		const pause = await call("/v1/agents/surrogates/pause", { method: "POST", as: "operate", body: `{"reason":"${LONE}"}` });
		expect(pause.status).toBe(400);
		expect(await runsOf("surrogates")).toEqual([]);
		expect(await (await call("/v1/agents/surrogates/notepad")).json()).toEqual({});
		expect(((await (await call("/v1/agents/surrogates")).json()) as { paused: unknown }).paused).toBeNull();
	});

	it("is no problem as a pair: an emoji sent as escapes is taken as the emoji", async () => {
		await createAgent({ name: "surrogate-pair" });
		const res = await call("/v1/agents/surrogate-pair/notepad/mood", { method: "PUT", as: "operate", body: `{"value":"${PAIR}"}` });
		expect(res.status).toBe(200);
		expect(await res.json()).toEqual({ mood: "😀" });
	});
});
