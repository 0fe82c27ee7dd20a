// The API's error bodies and JSON answers.
import type { ApiErrorType, EmulatorErrorStatus } from "./wire.ts";
import { newId } from "./text.ts";

export const ERROR_TYPES: Record<EmulatorErrorStatus, ApiErrorType> = {
	400: "invalid_request_error",
	401: "authentication_error",
	404: "not_found_error",
	429: "rate_limit_error",
	500: "api_error",
	529: "overloaded_error",
};

const ERROR_MESSAGES: Record<EmulatorErrorStatus, string> = {
	400: "Invalid request (emulated)",
	401: "invalid x-api-key",
	404: "model: not found (emulated)",
	429: "Number of request tokens has exceeded your per-minute rate limit (emulated)",
	500: "Internal server error",
	529: "Overloaded",
};

export function errorBody(type: ApiErrorType, message: string, requestId: string, errorCode?: string) {
	return { type: "error" as const, error: { type, message, ...(errorCode === undefined ? {} : { details: { error_code: errorCode } }) }, request_id: requestId };
}

/** The cause the API names (`error.details.error_code`) on the 429 of an organisation past its monthly spend cap. */
export const SPEND_LIMIT_CODE = "enforced_spend_limit_reached";

/** A scripted error's message: its own, else the API's for its cause or status. */
export function errorMessage(step: { status: EmulatorErrorStatus; message: string | undefined; errorCode: string | undefined }): string {
	if (step.message !== undefined) return step.message;
	if (step.errorCode === SPEND_LIMIT_CODE) {
		const now = new Date();
		const reset = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
		return `You have reached your API usage limits: your organization has crossed its monthly API usage threshold, set based on your organization's API tier. You will regain access on ${reset} at 00:00 UTC.`;
	}
	return ERROR_MESSAGES[step.status];
}

export function jsonHeaders(requestId: string): Record<string, string> {
	return { "content-type": "application/json", "request-id": requestId };
}

export function json(status: number, body: unknown): Response {
	return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

/** An error in the API's shape: `{type:"error", error:{type, message, details?}, request_id}` plus a request-id header. */
export function apiError(status: number, type: ApiErrorType, message: string, headers: Record<string, string> = {}, errorCode?: string): Response {
	const requestId = newId("req_011C", 20);
	return new Response(JSON.stringify(errorBody(type, message, requestId, errorCode)), {
		status,
		headers: { ...jsonHeaders(requestId), ...headers },
	});
}
