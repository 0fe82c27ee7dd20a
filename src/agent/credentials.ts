/**
 * Which Messages API host drover talks to, and with which keys. Credentials are only ever sent to a
 * host they belong to: a configured base URL that could carry a key elsewhere is refused at dispatch
 * (Hermes' credential guard), before any request is made.
 */
import { ModelCallError } from "./contracts.ts";

/** The variables this module reads; `Env` satisfies it, and so do the plain objects tests build. */
export interface ProviderEnv {
	ANTHROPIC_API_KEY?: string;
	ANTHROPIC_BASE_URL?: string;
	/** Comma-separated exact origins of operator gateways that may receive the keys. */
	ANTHROPIC_ALLOWED_BASE_URLS?: string;
}

export interface ProviderConfig {
	/** The key pool, in configured order; a key's index is what records and logs may name. */
	keys: string[];
	/** The configured base URL, or null for the SDK default (https://api.anthropic.com). */
	baseURL: string | null;
	/** No keys and a loopback base URL: a local emulator serves the model and gets no key. */
	emulator: boolean;
}

export const DEFAULT_BASE_URL = "https://api.anthropic.com";

/** The SDK refuses to send a request without a credential; the emulator gets this instead of a key. */
export const EMULATOR_API_KEY = "emulator";

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** Splits a pool such as "sk-ant-a, sk-ant-b" or one key a line; duplicates would only skew rotation. */
function parseKeys(raw: string | undefined): string[] {
	const keys = (raw ?? "").split(/[\s,]+/).filter((k) => k !== "");
	return [...new Set(keys)];
}

function allowedOrigins(raw: string | undefined): Set<string> {
	const origins = new Set([DEFAULT_BASE_URL]);
	for (const entry of (raw ?? "").split(",")) {
		const trimmed = entry.trim();
		if (trimmed === "") continue;
		// An unparseable entry allows nothing rather than failing every call: the base URL check
		// below still refuses any host that is not listed correctly.
		const origin = originOf(trimmed);
		if (origin !== null) origins.add(origin);
	}
	return origins;
}

function originOf(url: string): string | null {
	try {
		const parsed = new URL(url);
		return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.origin : null;
	} catch {
		return null;
	}
}

/**
 * The provider configuration for one dispatch. Throws ModelCallError "guard" when keys would go to a
 * host that is not allowed, and "auth" when there is no key and no local emulator to talk to. Error
 * messages name the host, never a key.
 */
export function providerConfig(env: ProviderEnv): ProviderConfig {
	const keys = parseKeys(env.ANTHROPIC_API_KEY);
	const rawBase = (env.ANTHROPIC_BASE_URL ?? "").trim();
	if (rawBase === "") {
		if (keys.length === 0) throw new ModelCallError("auth", "ANTHROPIC_API_KEY is not set");
		return { keys, baseURL: null, emulator: false };
	}

	let base: URL;
	try {
		base = new URL(rawBase);
	} catch {
		// Not echoed: a value that is not a URL may be a key pasted into the wrong variable.
		throw new ModelCallError("guard", "ANTHROPIC_BASE_URL is not a valid URL; no request was sent");
	}
	if (base.protocol !== "https:" && base.protocol !== "http:") {
		throw new ModelCallError("guard", `ANTHROPIC_BASE_URL must be an http(s) URL, not ${base.protocol}; no request was sent`);
	}

	if (keys.length === 0) {
		if (LOOPBACK_HOSTS.has(base.hostname)) return { keys, baseURL: rawBase, emulator: true };
		throw new ModelCallError("auth", "ANTHROPIC_API_KEY is not set");
	}

	// Compared by origin (scheme, host, port), so "https://api.anthropic.com@evil.example" and
	// "http://api.anthropic.com" are refused, and a gateway path below an allowed origin is fine.
	if (!allowedOrigins(env.ANTHROPIC_ALLOWED_BASE_URLS).has(base.origin)) {
		throw new ModelCallError(
			"guard",
			`ANTHROPIC_BASE_URL points at ${base.host}, which may not receive ANTHROPIC_API_KEY: keys are only sent to ` +
				`api.anthropic.com or an origin listed in ANTHROPIC_ALLOWED_BASE_URLS; no request was sent`,
		);
	}
	return { keys, baseURL: rawBase, emulator: false };
}

