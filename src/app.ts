import { OpenAPIHono } from "@hono/zod-openapi";
import { requestId } from "hono/request-id";
import { agentsApi } from "./api/agents.ts";
import type { AppEnv } from "./api/context.ts";
import { onError, onNotFound } from "./api/error-handler.ts";
import { healthApi } from "./api/health.ts";
import { jobsApi } from "./api/jobs.ts";
import { mountOpenApi } from "./api/openapi.ts";

export const app = new OpenAPIHono<AppEnv>();
app.use(requestId());
app.route("/", healthApi);
app.route("/v1/agents", agentsApi);
app.route("/v1/jobs", jobsApi);
mountOpenApi(app);
app.onError(onError);
app.notFound(onNotFound);
