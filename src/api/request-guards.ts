import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
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

/**
 * A body limit, answered as drover's 413 naming it. Each route applies its own (withRole; the webhook
 * route its own); app.ts applies the largest to every /v1 path as well, so a path no route declares
 * a limit for never reads more.
 */
export function bodyWithinLimit(maxBytes: number = MAX_BODY_BYTES) {
	return bodyLimit({
		maxSize: maxBytes,
		onError: () => {
			throw new PayloadTooLargeError(`request body exceeds ${bodySize(maxBytes)}, this route's limit`);
		},
	});
}
