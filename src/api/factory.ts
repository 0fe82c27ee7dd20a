import { OpenAPIHono, type RouteConfig, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { ZodError } from "zod";
import { BadRequestError } from "../errors.ts";
import { decodeUtf8Body, LONE_SURROGATE_MESSAGE, loneSurrogatePath } from "../shared/well-formed.ts";
import { type Issue, issuesOf } from "../shared/zod-issues.ts";
import { requireRole } from "./auth/middleware.ts";
import { requireUtf8Charset } from "./media-type.ts";
import type { Role } from "./auth/roles.ts";
import type { AppEnv } from "./context.ts";
import { bodyWithinLimit } from "./request-guards.ts";
import { yamlBody } from "./yaml-body.ts";
import { MAX_BODY_BYTES, payloadTooLarge, standardErrors, unsupportedMediaTypeJsonOrYamlResponse, unsupportedMediaTypeResponse } from "./schemas.ts";

/**
 * A query parameter given more than once reaches its schema as an array, and one given empty as "",
 * so zod would speak of what coercing it gave ("received NaN", "expected number to be >=1"); such a
 * parameter's issues become one that says what the request did.
 */
function queryIssues(values: Record<string, string[]>, error: ZodError): Issue[] {
	const issues = issuesOf(error);
	const said = new Set<string>();
	const out: Issue[] = [];
	error.issues.forEach((iss, i) => {
		const key = iss.path.length > 0 ? iss.path[0] : undefined;
		const given = typeof key === "string" && Object.hasOwn(values, key) ? values[key]! : [];
		const message = given.length > 1 ? "given more than once; give it once" : given[0] === "" ? "given empty; give it a value or leave it out" : undefined;
		if (message === undefined) out.push(issues[i]!);
		else if (!said.has(key as string)) {
			said.add(key as string);
			out.push({ path: key as string, message });
		}
	});
	return out;
}

/** Turns a zod failure into a 400 whose message names each offending field. */
export function validationError(target: string, error: ZodError, query?: Record<string, string[]>): BadRequestError {
	const issues = query ? queryIssues(query, error) : issuesOf(error);
	const summary = issues.map((i) => `${i.path}: ${i.message}`).join("; ");
	return new BadRequestError(`invalid ${target}: ${summary}`, { issues });
}

/** Every sub-app is built here so they all validate and answer errors the same way. */
export function createApi() {
	return new OpenAPIHono<AppEnv>({
		defaultHook: (result, c) => {
			if (!result.success) throw validationError(result.target === "json" ? "body" : result.target, result.error, result.target === "query" ? c.req.queries() : undefined);
			if (result.target === "json") {
				const path = loneSurrogatePath(result.data);
				if (path !== null) throw new BadRequestError(`invalid body: ${path}: ${LONE_SURROGATE_MESSAGE}`, { issues: [{ path, message: LONE_SURROGATE_MESSAGE }] });
			}
		},
	});
}

/**
 * Every body is decoded strictly, once, before anything reads it (a body declared in another
 * charset is a 415, as on the webhook route): the validators, noBody and
 * blankBodyIsEmpty all read Hono's cached text, which would otherwise be Request.text()'s, where
 * bytes that are not UTF-8 silently become U+FFFD.
 * The charset is checked only where it names something: a body sent to a route that takes one. An
 * empty body, or the `{}` a route that takes none accepts, reads the same in any charset, and such
 * a route documents no 415 (clients that send one Content-Type on every request got one there).
 */
function utf8Body(takesBody: boolean): MiddlewareHandler<AppEnv> {
	return async (c, next) => {
		if (c.req.raw.body !== null) {
			const bytes = new Uint8Array(await c.req.arrayBuffer());
			if (takesBody && bytes.byteLength > 0) requireUtf8Charset(c.req.header("content-type"));
			const text = decodeUtf8Body(bytes);
			// bodyCache holds the promises Hono's body readers return (its type says the values).
			(c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
		}
		await next();
	};
}

/**
 * A route that takes no body refuses one, rather than act on a request that meant something else
 * (a DELETE of the whole notepad sent `{"key": …}`, a resume sent garbage). Nothing, whitespace or
 * `{}` is no body: clients send an empty object with a POST.
 */
const noBody: MiddlewareHandler<AppEnv> = async (c, next) => {
	const text = (await c.req.text()).trim();
	if (text !== "" && text !== "{}" && !/^\{\s*\}$/.test(text)) {
		const message = `${c.req.method} ${routePath(c)} takes no body; send none (or {})`;
		throw BadRequestError.ofBody(message, "must be empty (or {})");
	}
	await next();
};

/**
 * A route whose body is optional reads a blank one as `{}`, as it reads none: clients that send
 * Content-Type: application/json on every request send it with no body too, which the JSON
 * validator would refuse as malformed. (Hono's json() parses its cached text.)
 */
const blankBodyIsEmpty: MiddlewareHandler<AppEnv> = async (c, next) => {
	// bodyCache holds the promises Hono's body readers return (its type says the values).
	if ((await c.req.text()).trim() === "") (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve("{}");
	await next();
};

/** The conditions a write can be made on (RFC 9110 §13.1); If-Modified-Since is a GET's only. */
const CONDITIONS = ["If-Match", "If-None-Match", "If-Unmodified-Since"] as const;

/**
 * A write refuses a condition it does not read, rather than make its change whatever the condition
 * said (a DELETE of the whole notepad sent If-Match cleared it; a key's DELETE sent If-None-Match: *
 * deleted a key that was set), as NO_QUERY refuses a parameter a route does not read.
 */
function onlyConditions(declared: readonly string[]): MiddlewareHandler<AppEnv> {
	const taken = CONDITIONS.filter((name) => declared.includes(name.toLowerCase()));
	return async (c, next) => {
		const sent = CONDITIONS.find((name) => !taken.includes(name) && c.req.header(name) !== undefined);
		if (sent !== undefined) {
			const message = `${c.req.method} ${routePath(c)} takes ${taken.length > 0 ? `only ${taken.join(" and ")}` : "no condition"}: ${sent} would not be checked; send it without`;
			throw new BadRequestError(`invalid header: ${message}`, { issues: [{ path: sent, message: "not taken by this route" }] });
		}
		await next();
	};
}

/**
 * The query of a route that reads none: a parameter given to it is refused as on every list
 * (`?limit=5` on a job's record, `?lines=20` meant for its output), not silently ignored.
 */
const NO_QUERY = z.strictObject({});

/**
 * Declares the role a route needs: the middleware enforces it and the OpenAPI document states it,
 * from one place, so the two cannot drift.
 */
export function withRole<R extends Omit<RouteConfig, "middleware" | "security">>(role: Role, route: R, { maxBodyBytes = MAX_BODY_BYTES }: { maxBodyBytes?: number } = {}) {
	const write = route.method !== "get" && route.method !== "head";
	const bodiless = !route.request?.body && write;
	const yaml = (route.request?.body?.content as Record<string, { schema?: unknown }> | undefined)?.["application/yaml"]?.schema;
	const headers = route.request?.headers;
	return {
		...route,
		request: { ...route.request, query: route.request?.query ?? NO_QUERY },
		// The body's size first, as before auth: an oversized body is refused unread whoever sends it.
		middleware: [bodyWithinLimit(maxBodyBytes), requireRole(role), ...(write ? [onlyConditions(headers instanceof z.ZodObject ? Object.keys(headers.shape as object) : [])] : []), utf8Body(route.request?.body !== undefined), ...(yaml instanceof z.ZodType ? [yamlBody(yaml)] : []), ...(bodiless ? [noBody] : route.request?.body?.required === false ? [blankBodyIsEmpty] : [])],
		security: [{ bearer: [] }],
		"x-drover-role": role,
		// Every /v1 route answers a body over its limit with a 413, one that takes none too; a route
		// with a body refuses any other Content-Type than JSON with a 415 (see onError).
		responses: { ...standardErrors, ...payloadTooLarge(maxBodyBytes), ...(route.request?.body ? (yaml ? unsupportedMediaTypeJsonOrYamlResponse : unsupportedMediaTypeResponse) : {}), ...route.responses },
	} as R & { middleware: MiddlewareHandler<AppEnv>[] };
}
