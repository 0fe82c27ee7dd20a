import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { PatternRouter } from "hono/router/pattern-router";
import type { RouterRoute } from "hono/types";
import { AppError, UnsupportedMediaTypeError } from "../errors.ts";
import { errorFields, log, logs } from "../log.ts";
import type { AppEnv } from "./context.ts";
import { elapsed, requestFields } from "./request-log.ts";

/**
 * An error's body, `{ error: { code, message, details?, request_id } }`: the request id (also the
 * X-Request-Id header) is what a caller quotes to an operator, who finds the request's log lines by it.
 */
export function errorBody(c: Context<AppEnv>, code: string, message: string, details?: unknown) {
	c.set("errorCode", code);
	c.set("errorMessage", message);
	return { error: { code, message, ...(details === undefined ? {} : { details }), request_id: c.get("requestId") } };
}

/** The single place a thrown error becomes a response (see errorBody). */
export const onError: ErrorHandler<AppEnv> = (err, c) => {
	const answer = (e: AppError) => c.json(errorBody(c, e.code, e.message, e.details), e.status);
	if (err instanceof AppError) {
		for (const [name, value] of Object.entries(err.headers)) c.header(name, value);
		if (err.status >= 500) {
			// An expected error (an unset secret, a bad API_TOKENS): its code and message say what and
			// where, and anyone may cause one, request after request; its stack is a debug field.
			const { stack, ...fields } = errorFields(err);
			(c.get("failureLevel") === "warn" ? log.warn : log.error)("request.failed", { ...requestFields(c), status: err.status, code: err.code, ...elapsed(c), ...fields, ...(logs("debug") ? { stack } : {}) });
			c.set("errorLogged", true);
		}
		return answer(err);
	}
	if (err instanceof HTTPException) {
		// Hono raises these for framework-level problems, such as a body that is not valid JSON.
		const status = err.status;
		// @hono/zod-openapi's gate before a route's body validator: every body drover takes is JSON.
		if (status === 415) return answer(UnsupportedMediaTypeError.jsonRequired(c.req.header("content-type")));
		// Its message is the framework's, or a library's: an internal one is logged, never answered.
		if (status >= 500) {
			log.error("request.crashed", { ...requestFields(c), status, code: "internal", ...elapsed(c), ...errorFields(err) });
			c.set("errorLogged", true);
			return c.json(errorBody(c, "internal", "internal error"), status);
		}
		const code = status === 413 ? "payload_too_large" : "bad_request";
		const message = err.message || "bad request";
		// A body that is not JSON at all: the body is the field at fault, named as every 400 names them.
		const details = status === 400 ? { issues: [{ path: "body", message }] } : undefined;
		return c.json(errorBody(c, code, message, details), status);
	}
	// Its code is the answer's, as a `request` line's is.
	log.error("request.crashed", { ...requestFields(c), status: 500, code: "internal", ...elapsed(c), ...errorFields(err) });
	c.set("errorLogged", true);
	return c.json(errorBody(c, "internal", "internal error"), 500);
};

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
			return c.json(errorBody(c, "method_not_allowed", `${c.req.method} is not allowed on ${c.req.path}; allowed: ${allow.join(", ")}`), 405);
		}
		// A person's browser at a mistyped dashboard address gets a page with the way back; the API
		// (and any client that does not ask for HTML) keeps its JSON error.
		const browser = c.req.method === "GET" && (c.req.header("accept") ?? "").includes("text/html") && !c.req.path.startsWith("/v1/");
		if (page && browser) return page(c);
		return c.json(errorBody(c, "not_found", `no route for ${c.req.method} ${c.req.path}`), 404);
	};
}
