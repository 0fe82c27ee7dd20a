// The start banner's "model:" line: where the Worker's Messages API calls go.

/**
 * @param {{ apiKey: string, baseUrl: string | undefined, emulator: string }} input
 *   apiKey, baseUrl: ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL as .dev.vars sets them (the Worker's,
 *   read by wrangler dev); emulator: the local emulator's origin, where calls go without a key.
 * @returns {string} Names a host, never a key: only the base URL's host is said, not its user, path or query.
 */
export function modelLine({ apiKey, baseUrl, emulator }) {
	if (!apiKey) return `NO API KEY: the local Messages API emulator (${emulator}) answers for Claude; put ANTHROPIC_API_KEY in .dev.vars to use the real API`;
	// As dotenv reads it: one pair of quotes around the value is not part of it.
	const raw = (baseUrl ?? "").trim().replace(/^(["'`])(.*)\1$/, "$2").trim();
	if (raw === "") return "the Anthropic Messages API (ANTHROPIC_API_KEY from .dev.vars)";
	let url;
	try {
		url = new URL(raw);
	} catch {
		url = null;
	}
	// Not echoed, as the Worker does not echo it: a value that is not a URL may be a key in the wrong place.
	if (url === null || (url.protocol !== "https:" && url.protocol !== "http:"))
		return "ANTHROPIC_BASE_URL in .dev.vars is not an http(s) URL: the Worker sends no model call (ANTHROPIC_API_KEY from .dev.vars)";
	return `the Messages API at ${url.host} (ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY from .dev.vars)`;
}
