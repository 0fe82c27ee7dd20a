import { createHash } from "node:crypto";

/**
 * A notepad value's version, as a key's ETag gives it (quoted) and a write's If-Match names it: the
 * value's SHA-256 in base64url, 43 characters. Synchronous (node:crypto), so that the agent's object
 * compares and writes in one turn, no other write coming between; the API and the CLI use it too.
 */
export function noteVersion(value: string): string {
	return createHash("sha256").update(value, "utf8").digest("base64url");
}

/**
 * The same version where only Web Crypto is: the dashboard, which takes this function's source, so it
 * refers to nothing outside itself. A unit test holds the two to one answer.
 */
export async function noteVersionWeb(value: string): Promise<string> {
	const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value)));
	let binary = "";
	for (const byte of digest) binary += String.fromCharCode(byte);
	return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
