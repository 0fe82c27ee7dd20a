import { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { requestId } from "hono/request-id";
import { agentActionsApi } from "./api/agent-actions.ts";
import { agentsApi } from "./api/agents.ts";
import type { AppEnv } from "./api/context.ts";
import { notFoundHandler, onError } from "./api/error-handler.ts";
import { healthApi } from "./api/health.ts";
import { hooksApi } from "./api/hooks.ts";
import { incidentsApi } from "./api/incidents.ts";
import { jobsApi } from "./api/jobs.ts";
import { meApi } from "./api/me.ts";
import { notepadApi } from "./api/notepad.ts";
import { mountOpenApi } from "./api/openapi.ts";
import { statusApi } from "./api/status.ts";
import { usageApi } from "./api/usage.ts";
import { dashboardApp, notFoundPage } from "./dashboard/routes.tsx";
import { PayloadTooLargeError } from "./errors.ts";

/** The largest request body any route takes (an agent definition or a prompt, with room to spare). */
export const MAX_BODY_BYTES = 256 * 1024;

export const app = new OpenAPIHono<AppEnv>();
app.use(requestId());
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
app.route("/v1/me", meApi);
app.route("/v1/agents", agentsApi);
app.route("/v1/agents", agentActionsApi);
app.route("/v1/agents", notepadApi);
app.route("/v1/hooks", hooksApi);
app.route("/v1/jobs", jobsApi);
app.route("/v1/incidents", incidentsApi);
app.route("/v1/usage", usageApi);
app.route("/", dashboardApp);
mountOpenApi(app);
app.onError(onError);
app.notFound(notFoundHandler(() => app.routes, notFoundPage));
