import { ConfigError } from "../../errors.ts";
import { log } from "../../log.ts";
import { parseApiTokens, type TokenEntry, type TokenIssue } from "./tokens.ts";

const UNSET_ISSUES = [{ path: "API_TOKENS", message: "the secret is not set" }];

// Secrets are fixed for an isolate's life; parse (and hash) them once per distinct value.
let cache: { secret: string; parsed: ReturnType<typeof parseApiTokens> } | undefined;

function parsed(secret: string): ReturnType<typeof parseApiTokens> {
	if (cache?.secret !== secret) {
		const promise = parseApiTokens(secret);
		cache = { secret, parsed: promise };
		// Once a value: the entries left out are the operator's to hear of, by place, never by token.
		promise.then(
			({ refused }) => {
				if (refused.length > 0) log.error("auth.tokens_refused", { issues: refused });
			},
			() => {},
		);
	}
	return cache.parsed;
}

// Said once an isolate a value: every authenticated request meets it, and each has its own
// request.failed line. Keyed by the value itself, which log.once keeps in memory only.
const configInvalid = (secret: string, issues: readonly unknown[]): void => log.once("error", "auth.config_invalid", secret, { issues });

const unset = (secret: string | undefined): secret is undefined => typeof secret !== "string" || secret.trim() === "";

/**
 * The API_TOKENS entries a request is checked against. A secret that does not load throws a
 * ConfigError whose issue names only the secret: its own issues go to the log and to /healthz.
 */
export async function loadApiTokens(secret: string | undefined): Promise<TokenEntry[]> {
	// Unset (a deploy without `wrangler secret put API_TOKENS`): no token can match, and the operator
	// must hear why rather than see every request refused as if its token were wrong.
	if (unset(secret)) {
		configInvalid("", UNSET_ISSUES);
		throw new ConfigError("the API_TOKENS secret is not set; set it with `wrangler secret put API_TOKENS` (npm start writes one to .dev.vars)", UNSET_ISSUES);
	}
	try {
		return (await parsed(secret)).entries;
	} catch (err) {
		if (!(err instanceof ConfigError)) throw err;
		configInvalid(secret, err.issues);
		throw new ConfigError("the API_TOKENS secret is misconfigured; /healthz and the Worker's logs say how", [
			{ path: "API_TOKENS", message: "the secret does not parse; /healthz and the Worker's logs say how" },
		]);
	}
}

/**
 * API_TOKENS as /healthz reports it: `ok` while the secret loads (the authenticated API answers),
 * with the entries it leaves out as issues; not ok, with why, when it does not load. Issues name
 * entries by place only, never a name or a token.
 */
export async function apiTokensHealth(secret: string | undefined): Promise<{ ok: boolean; issues?: TokenIssue[] }> {
	if (unset(secret)) return { ok: false, issues: UNSET_ISSUES };
	try {
		const { refused } = await parsed(secret);
		return refused.length === 0 ? { ok: true } : { ok: true, issues: refused };
	} catch (err) {
		if (!(err instanceof ConfigError)) throw err;
		return { ok: false, issues: err.issues };
	}
}
