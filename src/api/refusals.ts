import { AppError } from "../errors.ts";
import { isRefusal, type Refusal } from "../shared/refusal.ts";

const CODES = { 400: "bad_request", 404: "not_found", 409: "conflict", 413: "payload_too_large", 429: "rate_limited" } as const;

/** Unwraps a Durable Object's answer, turning its refusal into the matching 4xx. */
export function unwrap<T extends object>(result: T): Exclude<T, Refusal> {
	if (isRefusal(result)) {
		const { status, message, issues } = result.refused;
		throw new AppError(status, CODES[status], message, issues ? { issues } : undefined);
	}
	return result as Exclude<T, Refusal>;
}
