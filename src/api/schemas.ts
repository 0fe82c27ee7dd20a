import { z } from "@hono/zod-openapi";

export const ErrorSchema = z
	.object({
		error: z.object({
			code: z.string().openapi({ example: "bad_request" }),
			message: z.string().openapi({ example: "limit: must be at most 200" }),
			details: z.unknown().optional(),
		}),
	})
	.openapi("Error");

const errorResponse = (description: string) => ({
	description,
	content: { "application/json": { schema: ErrorSchema } },
});

/** The error answers every authenticated route can give, for the OpenAPI document. */
export const standardErrors = {
	400: errorResponse("The request was malformed; the message says what was wrong"),
	401: errorResponse("No valid bearer token"),
	403: errorResponse("The token's role is too weak for this route"),
} as const;

export const notFoundResponse = { 404: errorResponse("No such resource") } as const;
export const conflictResponse = { 409: errorResponse("The resource is in the wrong state for this") } as const;
