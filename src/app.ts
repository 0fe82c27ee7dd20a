import { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { requestId } from "hono/request-id";
import { agentsApi } from "./api/agents/index.ts";
import type { AppEnv } from "./api/context.ts";
import { notFoundHandler, onError } from "./api/error-handler.ts";
import { healthApi } from "./api/health.ts";
import { hooksApi } from "./api/hooks.ts";
import { incidentsApi } from "./api/incidents.ts";
import { jobsApi } from "./api/jobs/index.ts";
import { meApi } from "./api/me.ts";
import { mountOpenApi } from "./api/openapi.ts";
import { sessionsApi } from "./api/sessions.ts";
import { statusApi } from "./api/status.ts";
import { tickApi } from "./api/tick.ts";
import { usageApi } from "./api/usage.ts";
import { dashboardApp, notFoundPage } from "./dashboard/routes.tsx";
import { BadRequestError, PayloadTooLargeError } from "./errors.ts";
import { clip } from "./shared/clip.ts";
import { MALFORMED_PERCENT_MESSAGE, malformedPathSegment } from "./shared/well-formed.ts";
import { MAX_BODY_BYTES } from "./api/schemas.ts";

export const app = new OpenAPIHono<AppEnv>();
app.use(requestId());
// Before auth and routing, as a request that is not HTTP would be: which route a path names cannot be
// known until it decodes, and a webhook sender, who has no token, deserves the same answer.
app.use("/v1/*", async (c, next) => {
	const segment = malformedPathSegment(new URL(c.req.url).pathname);
	if (segment !== null) {
		const message = `the path segment ${JSON.stringify(clip(segment, 100))} has malformed percent-encoding: ${MALFORMED_PERCENT_MESSAGE}`;
		throw new BadRequestError(message, { issues: [{ path: "path", message: `malformed percent-encoding in ${JSON.stringify(clip(segment, 100))}` }] });
	}
	await next();
});
app.use(
	"/v1/*",
	bodyLimit({
		maxSize: MAX_BODY_BYTES,
		onError: () => {
			throw new PayloadTooLargeError(`request body exceeds ${MAX_BODY_BYTES / 1024} KiB`);
		},
	}),
);
app.route("/", healthApi);
app.route("/v1/status", statusApi);
app.route("/v1/tick", tickApi);
app.route("/v1/me", meApi);
app.route("/v1/agents", agentsApi);
app.route("/v1/hooks", hooksApi);
app.route("/v1/jobs", jobsApi);
app.route("/v1/sessions", sessionsApi);
app.route("/v1/incidents", incidentsApi);
app.route("/v1/usage", usageApi);
app.route("/", dashboardApp);
mountOpenApi(app);
app.onError(onError);
app.notFound(notFoundHandler(() => app.routes, notFoundPage));
