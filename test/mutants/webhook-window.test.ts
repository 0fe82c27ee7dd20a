// src/api/webhook-signature.ts: a mutation walk found that a timestamp exactly 300 s off refused, one
// 300.5 s off said to be 300 s off (within the window), and a signed timestamp with letters around its
// digits taken (never stale, so replayable for good) all passed the suite. The clock is passed in.
import { describe, expect, it } from "vitest";
import { signWebhook, verifyWebhook } from "../../src/api/webhook-signature.ts";
import { WEBHOOK_SECRET } from "../helpers/tokens.ts";

const body = JSON.stringify({ issue: 7 });
const T = 1_764_493_200;
const signedAt = async (timestamp: string) => {
	const mac = await crypto.subtle.sign("HMAC", await crypto.subtle.importKey("raw", new TextEncoder().encode(WEBHOOK_SECRET), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]), new TextEncoder().encode(`${timestamp}.${body}`));
	return `sha256=${[...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
};

describe("the replay window", () => {
	it("takes a timestamp exactly 300 s behind or ahead of the clock", async () => {
		const signature = await signWebhook(WEBHOOK_SECRET, T, body);
		await expect(verifyWebhook(WEBHOOK_SECRET, String(T), signature, body, (T + 300) * 1000)).resolves.toBeUndefined();
		await expect(verifyWebhook(WEBHOOK_SECRET, String(T), signature, body, (T - 300) * 1000)).resolves.toBeUndefined();
	});

	it("refuses one 300.5 s behind, saying 301 s, never a number within the window", async () => {
		const signature = await signWebhook(WEBHOOK_SECRET, T, body);
		await expect(verifyWebhook(WEBHOOK_SECRET, String(T), signature, body, (T + 300.5) * 1000)).rejects.toThrow(/^stale request: X-Drover-Timestamp is 301 s behind the Worker's clock/);
		await expect(verifyWebhook(WEBHOOK_SECRET, String(T), signature, body, (T - 300.5) * 1000)).rejects.toThrow(/^stale request: X-Drover-Timestamp is 301 s ahead of the Worker's clock/);
	});

	it("refuses a timestamp that is not digits alone, however it is signed", async () => {
		for (const timestamp of [`t${T}`, `${T}s`, `${T}.5`]) {
			const signature = await signedAt(timestamp);
			await expect(verifyWebhook(WEBHOOK_SECRET, timestamp, signature, body, T * 1000), timestamp).rejects.toThrow("missing or malformed X-Drover-Timestamp (unix seconds)");
		}
	});
});
