import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { matchedRoutes } from "hono/route";
import { log, withLogContext } from "../log.ts";
import { clip } from "../shared/clip.ts";
import { redact } from "../security/redact.ts";
import type { AppEnv } from "./context.ts";

/** How much of an error's public message a request line keeps: the cause, not a long list of issues. */
const MESSAGE_CHARS = 300;

/** A cf-ray (`8f1a2b3c4d5e6f70-LHR`), or a client's own request id worth naming: letters, digits and a few marks, short. */
const ID_SHAPE = /^[\w.:=-]{1,100}$/;

/**
 * Names each request: the id it is answered with in X-Request-Id and in an error's body, and that
 * every line logged while it runs carries (request_id). It is Cloudflare's cf-ray when there is one,
 * so the Workers invocation log's own entry matches it; a client's X-Request-Id is never adopted (a
 * client could make two requests look like one), only logged, as client_request_id.
 */
export const requestLog = createMiddleware<AppEnv>(async (c, next) => {
	const started = Date.now();
	const ray = c.req.header("cf-ray");
	const id = ray !== undefined && ID_SHAPE.test(ray) ? ray : crypto.randomUUID();
	c.set("requestId", id);
	c.set("startedAt", started);
	c.header("X-Request-Id", id);
	await withLogContext({ request_id: id }, next);
	// Again on the answer itself: a header set before it exists is kept only by answers Hono builds,
	// and a handler's own Response (an R2 body, the agent's forwarded output or stream) dropped it.
	c.header("X-Request-Id", id);
	const status = c.res.status;
	// A success is in Workers' own invocation log (its id is the cf-ray); a failure's line is logged
	// once, here, unless onError logged it already (request.failed, request.crashed).
	if (status < 400 || c.get("errorLogged")) return;
	// The message the client got: a 401's cause (no header, a wrong token, a token in the query
	// string), a body the injection scan refused. Without what the request itself sent, quoted in it
	// (a value, a "did you mean" made of it): a token pasted into a filter would reach the log
	// lowercased, past redaction by value. Redacted before it is cut, as a secret cut in two would not be.
	const said = c.get("errorMessage");
	const message = said === undefined ? undefined : clip(redact(said).replace(/"(?:[^"\\]|\\.)*"/g, '"…"'), MESSAGE_CHARS);
	const fields = {
		...requestFields(c),
		status,
		...elapsed(c),
		...(c.get("errorCode") ? { code: c.get("errorCode") } : {}),
		...(message ? { error_message: message } : {}),
	};
	const client = c.req.header("x-request-id");
	if (client !== undefined && ID_SHAPE.test(client) && client !== id) Object.assign(fields, { client_request_id: client });
	if (c.get("failureLevel") === "warn") log.warn("request", fields);
	else if (status >= 500) log.error("request", fields);
	else if (status === 401 || status === 403) log.warn("request", fields);
	else log.info("request", fields);
});

/** How long the request has taken, as its `request` line and request.failed / request.crashed say it. */
export function elapsed(c: Context<AppEnv>): { ms?: number } {
	const started = c.get("startedAt");
	return started === undefined ? {} : { ms: Date.now() - started };
}

/**
 * What a request's log line is found by: its method, the route it matched (a pattern) and its path,
 * its id, the token's name (by, as job.cancelled's), and the
 * agent and job the path names.
 */
export function requestFields(c: Context<AppEnv>): Record<string, string> {
	let params: Record<string, string> = {};
	try {
		params = c.req.param() as Record<string, string>;
	} catch {
		// No route matched: no parameters to read.
	}
	const route = matchedRoutes(c).findLast((r) => r.method !== "ALL")?.path;
	const fields: Record<string, string> = { method: c.req.method, ...(route ? { route } : {}), path: c.req.path, request_id: c.get("requestId") };
	const principal = c.get("principal");
	if (principal) fields.by = principal.name;
	if (params.agent) fields.agent = params.agent;
	if (params.id) fields[c.req.path.startsWith("/v1/jobs/") ? "job_id" : c.req.path.startsWith("/v1/incidents/") ? "incident" : "id"] = params.id;
	return fields;
}
