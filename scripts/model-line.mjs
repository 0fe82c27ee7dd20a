// The start banner's "model:" line: where the Worker's Messages API calls go.
import { providerConfig } from "../src/agent/credentials.ts";

/** As dotenv reads a value: one pair of quotes around it is not part of it. @param {string | undefined} value */
const unquoted = (value) => (value ?? "").trim().replace(/^(["'`])(.*)\1$/, "$2").trim();

/**
 * @param {{ apiKey: string, baseUrl: string | undefined, allowed?: string | undefined, emulator: string }} input
 *   apiKey, baseUrl, allowed: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL and ANTHROPIC_ALLOWED_BASE_URLS as
 *   .dev.vars sets them (the Worker's, read by wrangler dev); emulator: the local emulator's origin,
 *   where calls go without a key.
 * @returns {string} Names a host, never a key: only the base URL's host is said, not its user, path or query.
 */
export function modelLine({ apiKey, baseUrl, allowed, emulator }) {
	if (!apiKey) return `NO API KEY: the local Messages API emulator (${emulator}) answers for Claude; put ANTHROPIC_API_KEY in .dev.vars to use the real API`;
	const raw = unquoted(baseUrl);
	if (raw === "") return "the Anthropic Messages API (ANTHROPIC_API_KEY from .dev.vars)";
	// The Worker's own check (src/agent/credentials.ts), so the banner never names a host the Worker
	// will not call: one not allowed to receive the key is refused there at each call. Its messages
	// name a host at most, never the value (which may be a key in the wrong place).
	try {
		providerConfig({ ANTHROPIC_API_KEY: apiKey, ANTHROPIC_BASE_URL: raw, ANTHROPIC_ALLOWED_BASE_URLS: unquoted(allowed) });
	} catch (err) {
		return `the Worker sends no model call: ${err instanceof Error ? err.message : String(err)} (ANTHROPIC_BASE_URL in .dev.vars)`;
	}
	return `the Messages API at ${new URL(raw).host} (ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY from .dev.vars)`;
}
