import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./context.ts";

/** Serves /openapi.json from the same zod schemas the routes validate with. */
export function mountOpenApi(app: OpenAPIHono<AppEnv>): void {
	app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
		type: "http",
		scheme: "bearer",
		description: "A token from the API_TOKENS secret; roles read < operate < admin. Never in the query string.",
	});
	app.doc31("/openapi.json", (c) => ({
		openapi: "3.1.0",
		info: {
			title: "drover",
			version: c.env.DROVER_VERSION,
			description: "Runs a fleet of Claude agents on schedules, on Cloudflare Workers and Durable Objects.",
		},
	}));
}
