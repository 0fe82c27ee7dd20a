import type { ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { AppError, UnsupportedMediaTypeError } from "../errors.ts";
import { errorFields, log } from "../log.ts";
import type { AppEnv } from "./context.ts";

/** The single place a thrown error becomes a response: `{ error: { code, message, details? } }`. */
export const onError: ErrorHandler<AppEnv> = (err, c) => {
	const answer = (e: AppError) => c.json({ error: { code: e.code, message: e.message, ...(e.details === undefined ? {} : { details: e.details }) } }, e.status);
	if (err instanceof AppError) {
		if (err.status >= 500) log.error("request.failed", { path: c.req.path, code: err.code, ...errorFields(err) });
		return answer(err);
	}
	if (err instanceof HTTPException) {
		// Hono raises these for framework-level problems, such as a body that is not valid JSON.
		const status = err.status;
		// @hono/zod-openapi's gate before a route's body validator: every body drover takes is JSON.
		if (status === 415) return answer(UnsupportedMediaTypeError.jsonRequired(c.req.header("content-type")));
		const code = status === 413 ? "payload_too_large" : status >= 500 ? "internal" : "bad_request";
		const message = err.message || "bad request";
		// A body that is not JSON at all: the body is the field at fault, named as every 400 names them.
		const details = status === 400 ? { details: { issues: [{ path: "body", message }] } } : {};
		return c.json({ error: { code, message, ...details } }, status);
	}
	log.error("request.crashed", { method: c.req.method, path: c.req.path, ...errorFields(err) });
	return c.json({ error: { code: "internal", message: "internal error" } }, 500);
};

export const onNotFound: NotFoundHandler<AppEnv> = (c) =>
	c.json({ error: { code: "not_found", message: `no route for ${c.req.method} ${c.req.path}` } }, 404);
