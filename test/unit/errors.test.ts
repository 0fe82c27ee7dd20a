import { describe, expect, it } from "vitest";
import { AppError, BadRequestError, ConfigError, ConflictError, ForbiddenError, NotFoundError, PayloadTooLargeError, RateLimitedError, UnauthorizedError } from "../../src/errors.ts";
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
		[new ConfigError("fleet.yaml is invalid", []), "ConfigError"],
	] as const)("%s logs its own name, written in the source", (err, name) => {
		expect(errorFields(err)).toMatchObject({ error_name: name, error_message: err.message });
		expect(err).toBeInstanceOf(AppError);
	});
});
