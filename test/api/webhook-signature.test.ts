import { describe, expect, it } from "vitest";
import { signWebhook } from "../../src/api/webhook-signature.ts";
import { createAgent, runsOf } from "../helpers/agents.ts";
import { call, errorOf } from "../helpers/http.ts";
import { WEBHOOK_SECRET } from "../helpers/tokens.ts";

function hook(agent: string, body: string, timestamp: number, signature: string) {
	return call(`/v1/hooks/${agent}`, { method: "POST", as: null, body, headers: { "x-drover-timestamp": String(timestamp), "x-drover-signature": signature } });
}

/** `sha256=<hex>` with its hex digits recased. */
const recase = (signature: string, f: (hex: string) => string) => `sha256=${f(signature.slice("sha256=".length))}`;

describe("X-Drover-Signature hex", () => {
	it("accepts the signature's hex in capitals or mixed case, as in lower case", async () => {
		await createAgent({ name: "hex-case", max_concurrent: 10, prompt: "Triage this.", webhook: { secret: "TRIAGE_WEBHOOK_SECRET" } });
		const now = Math.floor(Date.now() / 1000);
		const first = JSON.stringify({ n: 1 });
		const res = await hook("hex-case", first, now, recase(await signWebhook(WEBHOOK_SECRET, now, first), (hex) => hex.toUpperCase()));
		expect(res.status, JSON.stringify(await res.clone().json())).toBe(202);
		const mixed = JSON.stringify({ n: 2 });
		const mixedSignature = recase(await signWebhook(WEBHOOK_SECRET, now, mixed), (hex) => [...hex].map((ch, i) => (i % 2 ? ch.toUpperCase() : ch)).join(""));
		expect((await hook("hex-case", mixed, now, mixedSignature)).status).toBe(202);
		expect(await runsOf("hex-case")).toHaveLength(2);
	});

	it("takes the same signature spelt in another case as a replay: the first job again, creating nothing more", async () => {
		await createAgent({ name: "hex-replay", max_concurrent: 10, prompt: "Triage this.", webhook: { secret: "TRIAGE_WEBHOOK_SECRET" } });
		const now = Math.floor(Date.now() / 1000);
		const body = JSON.stringify({ n: 1 });
		const signature = await signWebhook(WEBHOOK_SECRET, now, body);
		const first = await hook("hex-replay", body, now, signature);
		expect(first.status).toBe(202);
		const { id } = (await first.json()) as { id: string };
		for (const spelling of [recase(signature, (hex) => hex.toUpperCase()), recase(signature, (hex) => hex.replace(/[a-f]/, (ch) => ch.toUpperCase()))]) {
			const replay = await hook("hex-replay", body, now, spelling);
			expect(replay.status, spelling).toBe(200);
			expect(((await replay.json()) as { id: string }).id).toBe(id);
		}
		expect(await runsOf("hex-replay")).toHaveLength(1);
	});

	it("still refuses a capitalised signature of other bytes as not matching, and non-hex as malformed, creating nothing", async () => {
		await createAgent({ name: "hex-forged", max_concurrent: 10, prompt: "Triage this.", webhook: { secret: "TRIAGE_WEBHOOK_SECRET" } });
		const now = Math.floor(Date.now() / 1000);
		const body = JSON.stringify({ n: 1 });
		const forged = await hook("hex-forged", body, now, recase(await signWebhook("not-the-secret", now, body), (hex) => hex.toUpperCase()));
		expect(forged.status).toBe(401);
		expect((await errorOf(forged)).message).toBe("signature does not match");
		const notHex = await hook("hex-forged", body, now, `sha256=${"G".repeat(64)}`);
		expect(notHex.status).toBe(401);
		expect((await errorOf(notHex)).message).toMatch(/missing or malformed X-Drover-Signature/);
		expect(await runsOf("hex-forged")).toEqual([]);
	});
});

describe("X-Drover-Timestamp and the sha256= prefix, as a sender writes them", () => {
	function send(agent: string, body: string, timestamp: string, signature: string) {
		return call(`/v1/hooks/${agent}`, { method: "POST", as: null, body, headers: { "x-drover-timestamp": timestamp, "x-drover-signature": signature } });
	}
	/** HMAC-SHA256 over `<ts>.<body>`, the timestamp as the header spells it (README's recipe). */
	async function hmacHex(timestamp: string, body: string): Promise<string> {
		const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(WEBHOOK_SECRET), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
		const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${timestamp}.${body}`));
		return [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("");
	}

	it("verifies against the timestamp as sent, a leading zero included", async () => {
		await createAgent({ name: "ts-zero", max_concurrent: 10, prompt: "Triage this.", webhook: { secret: "TRIAGE_WEBHOOK_SECRET" } });
		const ts = `0${Math.floor(Date.now() / 1000)}`;
		const body = JSON.stringify({ n: 1 });
		const res = await send("ts-zero", body, ts, `sha256=${await hmacHex(ts, body)}`);
		expect(res.status, JSON.stringify(await res.clone().json())).toBe(202);
		// Signed over the number without its zero, it does not match what was sent.
		const other = await send("ts-zero", JSON.stringify({ n: 2 }), ts, `sha256=${await hmacHex(ts.slice(1), JSON.stringify({ n: 2 }))}`);
		expect(other.status).toBe(401);
		expect((await errorOf(other)).message).toBe("signature does not match");
		expect(await runsOf("ts-zero")).toHaveLength(1);
	});

	it("takes the sha256= prefix in any case, and its resend in another case as the same request", async () => {
		await createAgent({ name: "prefix-case", max_concurrent: 10, prompt: "Triage this.", webhook: { secret: "TRIAGE_WEBHOOK_SECRET" } });
		const ts = String(Math.floor(Date.now() / 1000));
		const body = JSON.stringify({ n: 1 });
		const hex = await hmacHex(ts, body);
		const first = await send("prefix-case", body, ts, `SHA256=${hex}`);
		expect(first.status, JSON.stringify(await first.clone().json())).toBe(202);
		const again = await send("prefix-case", body, ts, `sha256=${hex}`);
		expect(again.status).toBe(200);
		expect(await runsOf("prefix-case")).toHaveLength(1);
	});
});

describe("a webhook's query string", () => {
	it("is refused when it holds any parameter, signed or not, creating nothing: none is read", async () => {
		await createAgent({ name: "hook-query", max_concurrent: 10, prompt: "Triage this.", webhook: { secret: "TRIAGE_WEBHOOK_SECRET" } });
		const now = Math.floor(Date.now() / 1000);
		const body = JSON.stringify({ n: 1 });
		const signature = await signWebhook(WEBHOOK_SECRET, now, body);
		const res = await call("/v1/hooks/hook-query?prompt=Do+something+else", { method: "POST", as: null, body, headers: { "x-drover-timestamp": String(now), "x-drover-signature": signature } });
		expect(res.status).toBe(400);
		expect((await errorOf(res)).message).toContain("prompt");
		expect(await runsOf("hook-query")).toEqual([]);
		// The same request without it is taken (its signature was not spent by the refusal).
		expect((await hook("hook-query", body, now, signature)).status).toBe(202);
	});
});
