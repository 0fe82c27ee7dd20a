import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * The only errors whose message reaches a user. Anything else is logged and answered as a
 * generic 500, so internals (stack traces, SQL, upstream bodies) never leak into a response.
 */
// Each class names itself: the deployed bundle is minified, so new.target.name would be a mangled identifier.
export class AppError extends Error {
	readonly status: ContentfulStatusCode;
	readonly code: string;
	readonly details: unknown;

	constructor(status: ContentfulStatusCode, code: string, message: string, details?: unknown) {
		super(message);
		this.name = "AppError";
		this.status = status;
		this.code = code;
		this.details = details;
	}

	/**
	 * Headers the answer carries beside its body (a 401's scheme, a 429's Retry-After, a 416's size),
	 * set alike by the Worker's onError and the agent's errorResponse.
	 */
	get headers(): Record<string, string> {
		return {};
	}
}

export class BadRequestError extends AppError {
	override readonly name = "BadRequestError";
	constructor(message: string, details?: unknown) {
		super(400, "bad_request", message, details);
	}

	/** A 400 for the body as a whole, named as the field at fault as every 400 names its fields. */
	static ofBody(message: string, issue = message): BadRequestError {
		return new BadRequestError(message, { issues: [{ path: "body", message: issue }] });
	}
}

export class UnauthorizedError extends AppError {
	override readonly name = "UnauthorizedError";
	constructor(message = "a valid bearer token is required") {
		super(401, "unauthorized", message);
	}

	/** RFC 6750: a 401 names the scheme it wants, so a client knows to send a bearer token. */
	override get headers(): Record<string, string> {
		return { "www-authenticate": 'Bearer realm="drover"' };
	}
}

export class ForbiddenError extends AppError {
	override readonly name = "ForbiddenError";
	constructor(message: string) {
		super(403, "forbidden", message);
	}
}

export class NotFoundError extends AppError {
	override readonly name = "NotFoundError";
	constructor(message: string) {
		super(404, "not_found", message);
	}
}

/** A 409: `conflict`, or a narrower code a client acts on (`agent_paused`, `agent_disabled`: the run was not queued). */
export class ConflictError extends AppError {
	override readonly name = "ConflictError";
	constructor(message: string, details?: unknown, code = "conflict") {
		super(409, code, message, details);
	}
}

/** A 412: a write made on a version of the resource that is no longer the current one (If-Match). */
export class PreconditionFailedError extends AppError {
	override readonly name = "PreconditionFailedError";
	constructor(message: string) {
		super(412, "precondition_failed", message);
	}
}

export class PayloadTooLargeError extends AppError {
	override readonly name = "PayloadTooLargeError";
	constructor(message: string) {
		super(413, "payload_too_large", message);
	}
}

/**
 * A 416: a byte range starting at or past the end of a job's output or log (or `bytes=-0`). Its
 * size goes out in Content-Range (the unsatisfied-range form of RFC 9110 §15.5.17) beside the
 * error body.
 */
export class RangeNotSatisfiableError extends AppError {
	override readonly name = "RangeNotSatisfiableError";
	readonly size: number;
	/** `what` names the body, as "job <id>'s output". */
	constructor(header: string, size: number, what: string) {
		const extent = size === 0 ? "empty (0 bytes)" : `${size} bytes (0-${size - 1})`;
		super(416, "range_not_satisfiable", `Range "${header.trim().slice(0, 100)}" is outside ${what}, which is ${extent}`);
		this.size = size;
	}

	override get headers(): Record<string, string> {
		return { "content-range": `bytes */${this.size}` };
	}
}

const sentType = (sent: string | undefined) => (sent ? `, not ${JSON.stringify(sent.slice(0, 100))}` : " (the request had none)");

/** A body drover cannot read: every body it takes is JSON (an agent's definition YAML too), sent as such. */
export class UnsupportedMediaTypeError extends AppError {
	override readonly name = "UnsupportedMediaTypeError";
	constructor(message: string) {
		super(415, "unsupported_media_type", message);
	}

	/** Says what the request sent instead of application/json (its Content-Type, cut short, or none). */
	static jsonRequired(sent: string | undefined): UnsupportedMediaTypeError {
		return new UnsupportedMediaTypeError(`the request body must be JSON, sent with Content-Type: application/json${sentType(sent)}`);
	}

	/** The same, for a route that takes YAML too (an agent's definition). */
	static jsonOrYamlRequired(sent: string | undefined): UnsupportedMediaTypeError {
		return new UnsupportedMediaTypeError(`the request body must be JSON or YAML, sent with Content-Type: application/json or application/yaml${sentType(sent)}`);
	}
}

/**
 * When to try a full queue again. It drains as the agent's running jobs end, which drover cannot
 * foresee; half a minute is a retry that neither hammers the agent nor leaves a client idle long.
 */
export const QUEUE_RETRY_AFTER_SECONDS = 30;

/** A 429; `retryAfterSeconds` goes out as its Retry-After header (RFC 9110), so a client knows when to come back. */
export class RateLimitedError extends AppError {
	override readonly name = "RateLimitedError";
	readonly retryAfterSeconds: number;
	constructor(message: string, retryAfterSeconds = QUEUE_RETRY_AFTER_SECONDS) {
		super(429, "rate_limited", message);
		this.retryAfterSeconds = retryAfterSeconds;
	}

	override get headers(): Record<string, string> {
		return { "retry-after": String(this.retryAfterSeconds) };
	}
}

/**
 * Something the Worker's operator has not set up (a secret unset or unusable). Its message is for
 * anyone who calls, so it names no secret and says nothing of its value: the details go to the log.
 */
export class ServiceUnavailableError extends AppError {
	override readonly name = "ServiceUnavailableError";
	constructor(message: string) {
		super(503, "unavailable", message);
	}
}

/** A fleet configuration that cannot be loaded; `issues` name each offending field path. */
export class ConfigError extends AppError {
	override readonly name = "ConfigError";
	readonly issues: { path: string; message: string }[];

	constructor(message: string, issues: { path: string; message: string }[]) {
		super(500, "config_invalid", message, { issues });
		this.issues = issues;
	}
}
