import { UnauthorizedError } from "../errors.ts";
import { toHex } from "../shared/hash.ts";

/** How far a webhook's timestamp may be from the Worker's clock, either way. */
const REPLAY_WINDOW_SECONDS = 300;

const encoder = new TextEncoder();

function hexToBytes(hex: string): Uint8Array | null {
	// Hex is case-insensitive: senders that print it in capitals sign the same bytes.
	if (!/^[0-9a-fA-F]{64}$/.test(hex)) return null;
	const bytes = new Uint8Array(32);
	for (let i = 0; i < 32; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
	return bytes;
}

/** Imported keys by secret. The secrets come from env, which the isolate holds anyway. */
const keys = new Map<string, Promise<CryptoKey>>();
/** A deployment has a handful of webhook secrets; past this, the cache starts over rather than grow. */
const MAX_KEYS = 64;

/** Importing a key on every call was ~1.5 % of a webhook-tool job's CPU; a CryptoKey is reusable. */
function hmacKey(secret: string): Promise<CryptoKey> {
	let key = keys.get(secret);
	if (!key) {
		if (keys.size >= MAX_KEYS) keys.clear();
		key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
		// A failed import is not kept: the next call tries again.
		key.catch(() => keys.delete(secret));
		keys.set(secret, key);
	}
	return key;
}

/**
 * What is signed: `${timestamp}.` and then the body's bytes exactly as sent (a string as its UTF-8).
 * A received timestamp is its header's text: `0170…` is not re-spelt `170…` under the sender's MAC.
 */
function signedBytes(timestamp: number | string, body: string | Uint8Array): Uint8Array {
	if (typeof body === "string") return encoder.encode(`${timestamp}.${body}`);
	const prefix = encoder.encode(`${timestamp}.`);
	const out = new Uint8Array(prefix.length + body.length);
	out.set(prefix);
	out.set(body, prefix.length);
	return out;
}

/** `sha256=<hex>` of HMAC-SHA256(secret, `${timestamp}.${body}`): what a sender puts in X-Drover-Signature. */
export async function signWebhook(secret: string, timestamp: number, body: string | Uint8Array): Promise<string> {
	const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret), signedBytes(timestamp, body));
	return `sha256=${toHex(mac)}`;
}

/**
 * The headers that sign `body` for its receiver, stamped now: what drover sends on every signed POST
 * (webhook tools, deliveries, hooks, alerts); none without a key. Called per attempt, so a retry
 * carries a fresh timestamp and a receiver's replay window does not refuse it.
 */
export async function signatureHeaders(key: string | undefined, body: string, nowMs = Date.now()): Promise<{ "x-drover-timestamp"?: string; "x-drover-signature"?: string }> {
	if (key === undefined) return {};
	const timestamp = Math.floor(nowMs / 1000);
	return { "x-drover-timestamp": String(timestamp), "x-drover-signature": await signWebhook(key, timestamp, body) };
}

/**
 * Checks a webhook's timestamp and signature. The comparison is crypto.subtle.verify, which is
 * constant-time; the timestamp is signed too, so an old request cannot be re-dated.
 */
export async function verifyWebhook(secret: string, timestampHeader: string | undefined, signatureHeader: string | undefined, body: string | Uint8Array, nowMs: number): Promise<void> {
	if (!timestampHeader || !/^\d{1,12}$/.test(timestampHeader)) {
		throw new UnauthorizedError("missing or malformed X-Drover-Timestamp (unix seconds)");
	}
	// The prefix in any case, as the hex: `SHA256=` names the same algorithm.
	const signature = signatureHeader?.slice(0, 7).toLowerCase() === "sha256=" ? hexToBytes(signatureHeader.slice(7)) : null;
	if (!signature) throw new UnauthorizedError("missing or malformed X-Drover-Signature (sha256=<64 hex>)");
	const timestamp = Number(timestampHeader);
	const skew = timestamp - nowMs / 1000;
	if (Math.abs(skew) > REPLAY_WINDOW_SECONDS) {
		// How far off, and which way: a sender whose clock drifted reads it at once, where a bare "stale"
		// sends them hunting; the Worker's time is no secret (every answer's Date header carries it).
		// Rounded up, so that one refused is never said to be within the window.
		const seconds = Math.ceil(Math.abs(skew));
		const off = skew < 0 ? `${seconds} s behind` : `${seconds} s ahead of`;
		throw new UnauthorizedError(
			`stale request: X-Drover-Timestamp is ${off} the Worker's clock (${new Date(nowMs).toISOString()}); at most ${REPLAY_WINDOW_SECONDS} s either way is taken: check the sender's clock, and sign each attempt afresh`,
		);
	}
	const ok = await crypto.subtle.verify("HMAC", await hmacKey(secret), signature, signedBytes(timestampHeader, body));
	if (!ok) throw new UnauthorizedError("signature does not match");
}
