import { describe, expect, it } from "vitest";
import { unwrap } from "../../src/api/refusals.ts";
import {
	AppError,
	BadRequestError,
	ConfigError,
	ConflictError,
	ForbiddenError,
	NotFoundError,
	PayloadTooLargeError,
	RangeNotSatisfiableError,
	RateLimitedError,
	ServiceUnavailableError,
	UnauthorizedError,
	UnsupportedMediaTypeError,
} from "../../src/errors.ts";
import { refuse } from "../../src/shared/refusal.ts";
import { errorFields } from "../../src/log.ts";

describe("error classes", () => {
	// The deployed bundle is minified: a name taken from the class itself would log as "uS" there.
	it.each([
		[new AppError(500, "internal", "x"), "AppError"],
		[new BadRequestError("x"), "BadRequestError"],
		[new UnauthorizedError(), "UnauthorizedError"],
		[new ForbiddenError("x"), "ForbiddenError"],
		[new NotFoundError("x"), "NotFoundError"],
		[new ConflictError("x"), "ConflictError"],
		[new PayloadTooLargeError("x"), "PayloadTooLargeError"],
		[new RateLimitedError("x"), "RateLimitedError"],
		[new RangeNotSatisfiableError("bytes=5-", 5, "x"), "RangeNotSatisfiableError"],
		[new UnsupportedMediaTypeError("x"), "UnsupportedMediaTypeError"],
		[new ServiceUnavailableError("x"), "ServiceUnavailableError"],
		[new ConfigError("fleet.yaml is invalid", []), "ConfigError"],
	] as const)("%s logs its own name, written in the source", (err, name) => {
		expect(errorFields(err)).toMatchObject({ error_name: name, error_message: err.message });
		expect(err).toBeInstanceOf(AppError);
	});
});

describe("a Durable Object's refusal", () => {
	it.each([
		[refuse(400, "x", [{ path: "tool_input", message: "x" }]), BadRequestError, 400, "bad_request", { issues: [{ path: "tool_input", message: "x" }] }],
		[refuse(404, "x"), NotFoundError, 404, "not_found", undefined],
		[refuse(409, "x"), ConflictError, 409, "conflict", undefined],
		[refuse(409, "x", undefined, "agent_paused"), ConflictError, 409, "agent_paused", undefined],
		[refuse(413, "x"), PayloadTooLargeError, 413, "payload_too_large", undefined],
		[refuse(429, "x"), RateLimitedError, 429, "rate_limited", undefined],
	] as const)("is thrown as one of drover's error classes (%#)", (refusal, cls, status, code, details) => {
		let thrown: unknown;
		try {
			unwrap(refusal);
		} catch (err) {
			thrown = err;
		}
		expect(thrown).toBeInstanceOf(cls);
		expect(thrown).toMatchObject({ status, code, message: "x", details });
	});
});
