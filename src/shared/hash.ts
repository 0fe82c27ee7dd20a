const encoder = new TextEncoder();

export const toHex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");

/** base64url without padding (RFC 4648 §5) of a binary string, one byte a character, as btoa takes it: safe in a URL and a header. */
export const toBase64Url = (binary: string) => btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

export async function sha256Hex(text: string): Promise<string> {
	return toHex(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/**
 * FNV-1a, 32 bits: stable across runtimes and deploys, and synchronous where a digest would be async.
 * For keys and tags, never for anything that must resist a forger.
 */
export function fnv1a32(text: string): number {
	let hash = 0x811c9dc5;
	for (let i = 0; i < text.length; i++) {
		hash ^= text.charCodeAt(i);
		hash = Math.imul(hash, 0x01000193);
	}
	return hash >>> 0;
}
