import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { PatternRouter } from "hono/router/pattern-router";
import type { RouterRoute } from "hono/types";
import { AppError, RateLimitedError, UnsupportedMediaTypeError } from "../errors.ts";
import { errorFields, log } from "../log.ts";
import type { AppEnv } from "./context.ts";

/** The single place a thrown error becomes a response: `{ error: { code, message, details? } }`. */
export const onError: ErrorHandler<AppEnv> = (err, c) => {
	const answer = (e: AppError) => c.json({ error: { code: e.code, message: e.message, ...(e.details === undefined ? {} : { details: e.details }) } }, e.status);
	if (err instanceof AppError) {
		// RFC 6750: a 401 names the scheme it wants, so a client knows to send a bearer token.
		if (err.status === 401) c.header("WWW-Authenticate", 'Bearer realm="drover"');
		if (err instanceof RateLimitedError) c.header("Retry-After", String(err.retryAfterSeconds));
		if (err.status >= 500) log.error("request.failed", { ...requestFields(c), code: err.code, ...errorFields(err) });
		return answer(err);
	}
	if (err instanceof HTTPException) {
		// Hono raises these for framework-level problems, such as a body that is not valid JSON.
		const status = err.status;
		// @hono/zod-openapi's gate before a route's body validator: every body drover takes is JSON.
		if (status === 415) return answer(UnsupportedMediaTypeError.jsonRequired(c.req.header("content-type")));
		// Its message is the framework's, or a library's: an internal one is logged, never answered.
		if (status >= 500) {
			log.error("request.crashed", { ...requestFields(c), ...errorFields(err) });
			return c.json({ error: { code: "internal", message: "internal error" } }, status);
		}
		const code = status === 413 ? "payload_too_large" : "bad_request";
		const message = err.message || "bad request";
		// A body that is not JSON at all: the body is the field at fault, named as every 400 names them.
		const details = status === 400 ? { details: { issues: [{ path: "body", message }] } } : {};
		return c.json({ error: { code, message, ...details } }, status);
	}
	log.error("request.crashed", { ...requestFields(c), ...errorFields(err) });
	return c.json({ error: { code: "internal", message: "internal error" } }, 500);
};

/**
 * What a failed request's log line is found by: the X-Request-Id its caller was answered with, and
 * the agent and job the path names.
 */
function requestFields(c: Context<AppEnv>): Record<string, string> {
	let params: Record<string, string> = {};
	try {
		params = c.req.param() as Record<string, string>;
	} catch {
		// No route matched: no parameters to read.
	}
	const fields: Record<string, string> = { method: c.req.method, path: c.req.path, request_id: c.get("requestId") };
	if (params.agent) fields.agent = params.agent;
	if (params.id) fields[c.req.path.startsWith("/v1/jobs/") ? "job_id" : "id"] = params.id;
	return fields;
}

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/**
 * The answer when no route matched: a 405 with `Allow` when the path is a route under other methods
 * (a client that sent DELETE to a job learns it is POST /cancel, not that the job is missing), else a 404.
 * `routes` is read on the first miss, when every sub-app is mounted; middleware (method ALL) is no route.
 */
export function notFoundHandler(routes: () => readonly RouterRoute[], page?: (c: Context<AppEnv>) => Response | Promise<Response>): NotFoundHandler<AppEnv> {
	let router: PatternRouter<string> | undefined;
	const allowed = (path: string): string[] => {
		if (!router) {
			router = new PatternRouter<string>();
			for (const r of routes()) if (r.method !== "ALL") router.add(r.method, r.path, r.method);
		}
		const found = METHODS.filter((m) => router!.match(m, path)[0].length > 0);
		return found.includes("GET") ? ["GET", "HEAD", ...found.filter((m) => m !== "GET")] : found;
	};
	return (c) => {
		const allow = allowed(c.req.path);
		if (allow.length > 0 && !allow.includes(c.req.method)) {
			c.header("Allow", allow.join(", "));
			return c.json({ error: { code: "method_not_allowed", message: `${c.req.method} is not allowed on ${c.req.path}; allowed: ${allow.join(", ")}` } }, 405);
		}
		// A person's browser at a mistyped dashboard address gets a page with the way back; the API
		// (and any client that does not ask for HTML) keeps its JSON error.
		const browser = c.req.method === "GET" && (c.req.header("accept") ?? "").includes("text/html") && !c.req.path.startsWith("/v1/");
		if (page && browser) return page(c);
		return c.json({ error: { code: "not_found", message: `no route for ${c.req.method} ${c.req.path}` } }, 404);
	};
}
