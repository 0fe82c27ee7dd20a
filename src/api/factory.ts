import { OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { ZodError } from "zod";
import { BadRequestError } from "../errors.ts";
import { issuesOf } from "../shared/zod-issues.ts";
import { requireRole } from "./auth/middleware.ts";
import type { Role } from "./auth/roles.ts";
import type { AppEnv } from "./context.ts";
import { standardErrors, unsupportedMediaTypeResponse } from "./schemas.ts";

/** Turns a zod failure into a 400 whose message names each offending field. */
export function validationError(target: string, error: ZodError): BadRequestError {
	const issues = issuesOf(error);
	const summary = issues.map((i) => `${i.path}: ${i.message}`).join("; ");
	return new BadRequestError(`invalid ${target}: ${summary}`, { issues });
}

/** Every sub-app is built here so they all validate and answer errors the same way. */
export function createApi() {
	return new OpenAPIHono<AppEnv>({
		defaultHook: (result) => {
			if (!result.success) throw validationError(result.target === "json" ? "body" : result.target, result.error);
		},
	});
}

/**
 * Declares the role a route needs: the middleware enforces it and the OpenAPI document states it,
 * from one place, so the two cannot drift.
 */
export function withRole<R extends Omit<RouteConfig, "middleware" | "security">>(role: Role, route: R) {
	return {
		...route,
		middleware: [requireRole(role)],
		security: [{ bearer: [] }],
		"x-drover-role": role,
		// A route with a body refuses any other Content-Type than JSON with a 415 (see onError).
		responses: { ...standardErrors, ...(route.request?.body ? unsupportedMediaTypeResponse : {}), ...route.responses },
	} as R & { middleware: ReturnType<typeof requireRole>[] };
}
