import { bodyLimit } from "hono/body-limit";
import type { MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { matchedRoutes } from "hono/route";
import { BadRequestError, PayloadTooLargeError } from "../errors.ts";
import { clip } from "../shared/clip.ts";
import { MALFORMED_PERCENT_MESSAGE, malformedPathSegment } from "../shared/well-formed.ts";
import type { AppEnv } from "./context.ts";
import { bodySize, MAX_BODY_BYTES } from "./schemas.ts";

/**
 * A path with malformed percent-encoding is a 400 before auth and routing, as a request that is not
 * HTTP would be: which route a path names cannot be known until it decodes, and a webhook sender,
 * who has no token, deserves the same answer.
 */
export const wellFormedPath = createMiddleware<AppEnv>(async (c, next) => {
	const segment = malformedPathSegment(new URL(c.req.url).pathname);
	if (segment !== null) {
		const shown = JSON.stringify(clip(segment, 100));
		throw new BadRequestError(`the path segment ${shown} has malformed percent-encoding: ${MALFORMED_PERCENT_MESSAGE}`, {
			issues: [{ path: "path", message: `malformed percent-encoding in ${shown}` }],
		});
	}
	await next();
});

// The guards routes declare, which app.ts's backstop leaves a body to.
const routeGuards = new WeakSet<MiddlewareHandler>();

/**
 * A body limit, answered as drover's 413 naming it. Each route applies its own (withRole; the webhook
 * route its own).
 */
export function bodyWithinLimit(maxBytes: number = MAX_BODY_BYTES): MiddlewareHandler {
	const guard = limitSaying(maxBytes, "this route's limit");
	routeGuards.add(guard);
	return guard;
}

function limitSaying(maxBytes: number, which: string): MiddlewareHandler {
	return bodyLimit({
		maxSize: maxBytes,
		onError: () => {
			throw new PayloadTooLargeError(`request body exceeds ${bodySize(maxBytes)}, ${which}`);
		},
	});
}

/**
 * app.ts's guard on every /v1 path, at the most any route takes, so a path no route declares a limit
 * for never reads more. It runs before a route's own guard, so it leaves the body to that guard when
 * the route has one: answering first, it told a 2 MiB body to a 256 KiB route that 1.25 MiB was "this
 * route's limit".
 */
export function bodyBackstop(maxBytes: number): MiddlewareHandler<AppEnv> {
	const backstop = limitSaying(maxBytes, "the most any route takes");
	return createMiddleware<AppEnv>(async (c, next) => {
		if (matchedRoutes(c).some((route) => routeGuards.has(route.handler))) return next();
		return backstop(c, next);
	});
}
