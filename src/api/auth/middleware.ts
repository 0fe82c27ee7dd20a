import { createMiddleware } from "hono/factory";
import { ForbiddenError, UnauthorizedError } from "../../errors.ts";
import type { AppEnv } from "../context.ts";
import { roleAllows, type Role } from "./roles.ts";
import { loadApiTokens } from "./secret.ts";
import { findToken } from "./tokens.ts";

const QUERY_TOKEN_PARAMS = ["token", "access_token", "api_key", "apikey", "key", "auth"];

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
		const entry = await findToken(await loadApiTokens(c.env.API_TOKENS), match[1]);
		if (!entry) throw new UnauthorizedError("invalid token");
		// Set before the role is checked: a 403's request line names whose token was too weak.
		c.set("principal", { name: entry.name, role: entry.role });
		if (!roleAllows(entry.role, role)) {
			throw new ForbiddenError(`this route needs the ${role} role; token "${entry.name}" has ${entry.role}`);
		}
		await next();
	});
}
