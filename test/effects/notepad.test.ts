import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { useEmulator } from "../helpers/emulator.ts";
import { call, errorOf } from "../helpers/http.ts";
import { runToRest } from "../helpers/jobs.ts";

const put = (agent: string, key: string, value: unknown) => call(`/v1/agents/${agent}/notepad/${encodeURIComponent(key)}`, { method: "PUT", as: "operate", body: { value } });
const notes = async (agent: string) => (await (await call(`/v1/agents/${agent}/notepad`)).json()) as Record<string, string>;

describe("the notepad", () => {
	it("is written through the API and rendered before the prompt of the next run", async () => {
		const emulator = useEmulator();
		emulator.enqueue({ text: "one" }, { text: "two" });
		await createAgent({ name: "noted" });
		await runToRest("noted", "Check the feed.");
		expect((await put("noted", "watermark", "2026-11-30T08:00Z")).status).toBe(200);
		expect((await put("noted", "cursor", "page 7")).status).toBe(200);
		await runToRest("noted", "Check the feed.");
		const [before, after] = emulator.requests;
		expect(before!.messages![0]!.content).toBe("Check the feed.");
		expect(after!.messages![0]!.content).toBe("## Job notepad (persistent across runs)\n- cursor: page 7\n- watermark: 2026-11-30T08:00Z\n\nCheck the feed.");
		expect(await notes("noted")).toEqual({ cursor: "page 7", watermark: "2026-11-30T08:00Z" });
		expect(await (await call("/v1/agents/noted/notepad/cursor")).json()).toEqual({ key: "cursor", value: "page 7" });
	});

	it("refuses an oversized value, key or notepad with a 4xx and leaves it untouched", async () => {
		await createAgent({ name: "limits" });
		await put("limits", "a", "x".repeat(16 * 1024));
		await put("limits", "b", "x".repeat(16 * 1024));
		await put("limits", "c", "x".repeat(16 * 1024));
		const before = await notes("limits");

		const tooBig = await put("limits", "d", "x".repeat(16 * 1024 + 1));
		expect(tooBig.status).toBe(413);
		expect((await errorOf(tooBig)).message).toMatch(/at most 16 KiB/);
		const overTotal = await put("limits", "d", "x".repeat(16 * 1024));
		expect(overTotal.status).toBe(413);
		expect((await errorOf(overTotal)).message).toMatch(/at most 64 KiB in all/);
		const longKey = await put("limits", "k".repeat(129), "v");
		expect(longKey.status).toBe(400);
		const notString = await put("limits", "e", 42);
		expect(notString.status).toBe(400);
		expect(await notes("limits")).toEqual(before);

		// Replacing a value counts its new size, not both.
		expect((await put("limits", "a", "y".repeat(16 * 1024))).status).toBe(200);
	});

	it("deletes a key or the whole notepad; unknown keys and agents are 404; read tokens cannot write", async () => {
		await createAgent({ name: "erasable" });
		await put("erasable", "a", "1");
		await put("erasable", "b", "2");
		expect((await call("/v1/agents/erasable/notepad/a", { method: "DELETE", as: "operate" })).status).toBe(200);
		expect((await call("/v1/agents/erasable/notepad/a", { method: "DELETE", as: "operate" })).status).toBe(404);
		expect((await call("/v1/agents/erasable/notepad/a")).status).toBe(404);
		expect(await notes("erasable")).toEqual({ b: "2" });
		expect((await call("/v1/agents/erasable/notepad/b", { method: "PUT", as: "read", body: { value: "x" } })).status).toBe(403);
		expect((await call("/v1/agents/erasable/notepad", { method: "DELETE", as: "operate" })).status).toBe(200);
		expect(await notes("erasable")).toEqual({});
		expect((await call("/v1/agents/nobody/notepad")).status).toBe(404);
	});
});
