import { describe, expect, it } from "vitest";
import { createAgent } from "../helpers/agents.ts";
import { call, errorOf } from "../helpers/http.ts";

// Hermes' notepad limits (16 KiB a value, 64 KiB a job) are sizes of what is stored, so they count
// UTF-8 bytes, as README's "16 KiB" and the 413's "bytes" say; a test of ASCII values alone cannot
// tell bytes from characters or UTF-16 units.
const put = (agent: string, key: string, value: string) => call(`/v1/agents/${agent}/notepad/${encodeURIComponent(key)}`, { method: "PUT", as: "operate", body: { value } });
const notes = async (agent: string) => (await (await call(`/v1/agents/${agent}/notepad`)).json()) as Record<string, string>;

describe("the notepad's limits, in bytes of UTF-8", () => {
	it("takes a value of exactly 16 KiB in two- and four-byte characters and refuses one a character longer, changing nothing", async () => {
		await createAgent({ name: "byte-values" });
		const twoByte = "é".repeat(8 * 1024); // 16,384 bytes, 8,192 characters
		const fourByte = "🦄".repeat(4 * 1024); // 16,384 bytes, 8,192 UTF-16 units
		expect((await put("byte-values", "two", twoByte)).status).toBe(200);
		expect((await put("byte-values", "four", fourByte)).status).toBe(200);
		const before = await notes("byte-values");
		expect(before).toEqual({ four: fourByte, two: twoByte });

		const overTwo = await put("byte-values", "two", "é".repeat(8 * 1024 + 1));
		expect(overTwo.status).toBe(413);
		expect((await errorOf(overTwo)).message).toBe("a notepad value is at most 16 KiB; this one is 16386 bytes");
		const overFour = await put("byte-values", "more", "🦄".repeat(4 * 1024 + 1));
		expect(overFour.status).toBe(413);
		expect((await errorOf(overFour)).message).toBe("a notepad value is at most 16 KiB; this one is 16388 bytes");
		expect(await notes("byte-values")).toEqual(before);
	});

	it("counts the whole notepad's 64 KiB in bytes too: exactly 65,536 bytes of keys and values fit, one more does not", async () => {
		await createAgent({ name: "byte-total" });
		// Three one-byte keys with 16,384-byte values (8,192 "é"): 49,155 bytes, 24,579 characters.
		for (const key of ["a", "b", "c"]) expect((await put("byte-total", key, "é".repeat(8 * 1024))).status).toBe(200);
		const before = await notes("byte-total");
		// One byte of key and 16,381 of value make 65,537 bytes in all (32,771 characters).
		const over = await put("byte-total", "d", `${"é".repeat(8190)}x`);
		expect(over.status).toBe(413);
		expect((await errorOf(over)).message).toBe("the notepad would hold 65537 bytes; at most 64 KiB in all");
		expect(await notes("byte-total")).toEqual(before);
		// 16,380 bytes of value make exactly 64 KiB.
		expect((await put("byte-total", "d", "é".repeat(8190))).status).toBe(200);
		expect(Object.keys(await notes("byte-total"))).toEqual(["a", "b", "c", "d"]);
	});
});
