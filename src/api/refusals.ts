import { AppError, BadRequestError, ConflictError, NotFoundError, PayloadTooLargeError, PreconditionFailedError, RateLimitedError } from "../errors.ts";
import { isRefusal, type Refusal } from "../shared/refusal.ts";

/** A Durable Object's refusal as the error class the API answers it with. */
function errorOf({ status, message, issues, code }: Refusal["refused"]): AppError {
	switch (status) {
		case 400:
			return new BadRequestError(message, issues ? { issues } : undefined);
		case 404:
			return new NotFoundError(message);
		case 409:
			return new ConflictError(message, issues ? { issues } : undefined, code);
		case 412:
			return new PreconditionFailedError(message);
		case 413:
			return new PayloadTooLargeError(message);
		case 429:
			return new RateLimitedError(message);
	}
}

/** Unwraps a Durable Object's answer, turning its refusal into the matching 4xx. */
export function unwrap<T extends object>(result: T): Exclude<T, Refusal> {
	if (isRefusal(result)) throw errorOf(result.refused);
	return result as Exclude<T, Refusal>;
}
