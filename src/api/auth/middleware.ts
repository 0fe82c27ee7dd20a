import { createMiddleware } from "hono/factory";
import { ConfigError, ForbiddenError, UnauthorizedError } from "../../errors.ts";
import { log } from "../../log.ts";
import type { AppEnv } from "../context.ts";
import { roleAllows, type Role } from "./roles.ts";
import { findToken, parseApiTokens, type TokenEntry } from "./tokens.ts";

const QUERY_TOKEN_PARAMS = ["token", "access_token", "api_key", "apikey", "key", "auth"];

// Secrets are fixed for an isolate's life; parse (and hash) them once per distinct value.
let cache: { secret: string; entries: Promise<TokenEntry[]> } | undefined;
async function tokensFor(secret: string | undefined): Promise<TokenEntry[]> {
	// Unset (a deploy without `wrangler secret put API_TOKENS`): no token can match, and the operator
	// must hear why rather than see every request refused as if its token were wrong.
	if (typeof secret !== "string" || secret.trim() === "") {
		const issues = [{ path: "API_TOKENS", message: "the secret is not set" }];
		log.error("auth.config_invalid", { issues });
		throw new ConfigError("the API_TOKENS secret is not set; set it with `wrangler secret put API_TOKENS` (npm start writes one to .dev.vars)", issues);
	}
	if (cache?.secret !== secret) cache = { secret, entries: parseApiTokens(secret) };
	try {
		return await cache.entries;
	} catch (err) {
		if (!(err instanceof ConfigError)) throw err;
		// The details (entry positions and names) are for the operator's logs, not for any caller.
		log.error("auth.config_invalid", { issues: err.issues });
		// The public issue says only which secret; its own issues name entries and token names.
		throw new ConfigError("the API_TOKENS secret is misconfigured; the Worker's logs say how", [{ path: "API_TOKENS", message: "the secret does not parse; the Worker's logs say how" }]);
	}
}

/**
 * Requires a bearer token of at least `role`. Tokens in the query string are refused outright:
 * URLs end up in logs, browser history and Referer headers.
 */
export function requireRole(role: Role) {
	return createMiddleware<AppEnv>(async (c, next) => {
		const params = new URL(c.req.url).searchParams;
		if (QUERY_TOKEN_PARAMS.some((p) => params.has(p))) {
			throw new UnauthorizedError("tokens are not accepted in the query string; send an Authorization: Bearer header");
		}
		const header = c.req.header("authorization");
		if (!header) throw new UnauthorizedError("missing Authorization header; send Authorization: Bearer <token>");
		const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
		if (!match?.[1]) throw new UnauthorizedError("Authorization header must be: Bearer <token>");
		const entry = await findToken(await tokensFor(c.env.API_TOKENS), match[1]);
		if (!entry) throw new UnauthorizedError("invalid token");
		if (!roleAllows(entry.role, role)) {
			throw new ForbiddenError(`this route needs the ${role} role; token "${entry.name}" has ${entry.role}`);
		}
		c.set("principal", { name: entry.name, role: entry.role });
		await next();
	});
}
