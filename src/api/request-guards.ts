import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import { BadRequestError, PayloadTooLargeError } from "../errors.ts";
import { clip } from "../shared/clip.ts";
import { MALFORMED_PERCENT_MESSAGE, malformedPathSegment } from "../shared/well-formed.ts";
import type { AppEnv } from "./context.ts";
import { MAX_BODY_BYTES } from "./schemas.ts";

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

/** The body limit of every route, answered as drover's 413. */
export const bodyWithinLimit = bodyLimit({
	maxSize: MAX_BODY_BYTES,
	onError: () => {
		throw new PayloadTooLargeError(`request body exceeds ${MAX_BODY_BYTES / 1024} KiB`);
	},
});
