import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./context.ts";

type Doc = ReturnType<OpenAPIHono<AppEnv>["getOpenAPI31Document"]>;

const REQUEST_ID_HEADER = { $ref: "#/components/headers/RequestId" };
const ETAG_HEADER = { $ref: "#/components/headers/ETag" };
const CACHE_CONTROL_HEADER = { $ref: "#/components/headers/CacheControl" };

interface Revalidated {
	parameters?: unknown[];
	responses?: Record<string, { description?: string; headers?: Record<string, unknown>; content?: Record<string, unknown> }>;
}

/**
 * The groups Swagger UI and Redoc list operations under, and client generators name their classes
 * by: the first whose pattern a path matches tags it.
 */
const TAGS: [RegExp, string, string][] = [
	[/^\/v1\/agents\/\{agent\}\/notepad/, "notepad", "An agent's notepad: keys it and operators keep between runs"],
	[/^\/v1\/(agents\/\{agent\}\/)?sessions/, "sessions", "Conversations that runs continue, and an agent's persistent session"],
	[/^\/v1\/(jobs|agents\/\{agent\}\/(jobs|runs)$)/, "jobs", "Runs: trigger, list, read, follow, cancel, approve, continue and fork them; an agent's occurrence ledger"],
	[/^\/v1\/agents/, "agents", "The fleet: fleet.yaml's agents and those defined through the API"],
	[/^\/v1\/hooks\//, "webhooks", "Signed webhook triggers (no bearer token)"],
	[/^\/v1\/incidents/, "incidents", "Failure incidents"],
	[/^\/v1\/usage/, "usage", "Tokens and cost by agent and day"],
	[/^\//, "system", "Health, scheduler status, a tick on demand and the caller's token"],
];

/**
 * What every answer has in common, added here once rather than route by route: each carries
 * X-Request-Id (src/api/request-log.ts), and a path asked with a method it does not list answers 405
 * (src/api/error-handler.ts, notFoundHandler), which no operation of the document can hold; each
 * JSON read under /v1 carries an ETag and answers a matching If-None-Match 304 (src/api/conditional-get.ts).
 */
function withSharedAnswers(doc: Doc): Doc {
	doc.components ??= {};
	doc.components.headers = {
		...doc.components.headers,
		RequestId: {
			description: "The request's id (Cloudflare's cf-ray when there is one), also an error body's request_id: the Worker's log lines for the request carry it. A client's own X-Request-Id is not taken, only logged",
			schema: { type: "string", example: "8f1a2b3c4d5e6f70-LHR" },
		},
	};
	doc.components.responses = {
		...doc.components.responses,
		MethodNotAllowed: {
			description: "method_not_allowed: any path of this document asked with a method it does not list (HEAD is taken wherever GET is)",
			headers: {
				Allow: { description: "The methods the path takes, such as `GET, HEAD, PUT, DELETE`", schema: { type: "string" } },
				"X-Request-Id": REQUEST_ID_HEADER,
			},
			content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
		},
	};
	doc.components.headers.ETag = {
		description: "A digest of the JSON answer's bytes: sent back in If-None-Match, it is answered 304 with no body while the answer is unchanged (src/api/conditional-get.ts)",
		schema: { type: "string", example: '"2jmj7l5rSw0yVb_vlWAYkK_YBwk"' },
	};
	doc.components.headers.CacheControl = { description: "`private, no-cache`: a browser may keep the answer but must revalidate it; a shared cache must not keep it", schema: { type: "string" } };
	doc.components.parameters = {
		...doc.components.parameters,
		IfNoneMatch: {
			name: "If-None-Match",
			in: "header",
			required: false,
			description: "The ETag of an answer to the same request: while the answer is unchanged it is 304 with no body (weak comparison; `*` matches any)",
			schema: { type: "string" },
		},
	};
	for (const [path, item] of Object.entries(doc.paths ?? {})) {
		// The API's JSON reads revalidate; /openapi.json and /healthz are outside /v1 and do not.
		const get = path.startsWith("/v1/") ? (item as { get?: Revalidated }).get : undefined;
		if (get?.responses?.["200"]?.content?.["application/json"]) {
			get.parameters = [...(get.parameters ?? []), { $ref: "#/components/parameters/IfNoneMatch" }];
			get.responses["200"] = { ...get.responses["200"], headers: { ...get.responses["200"].headers, ETag: ETAG_HEADER, "Cache-Control": CACHE_CONTROL_HEADER } };
			get.responses["304"] = { description: "Not modified: the answer is the one whose ETag If-None-Match names; no body", headers: { ETag: ETAG_HEADER, "Cache-Control": CACHE_CONTROL_HEADER } };
		}
	}
	for (const [path, item] of Object.entries(doc.paths ?? {})) {
		const tag = TAGS.find(([pattern]) => pattern.test(path))![1];
		for (const op of Object.values(item as Record<string, { tags?: string[] }>)) op.tags = [tag];
	}
	doc.tags = TAGS.map(([, name, description]) => ({ name, description }));
	for (const item of Object.values(doc.paths ?? {})) {
		for (const op of Object.values(item as Record<string, { responses?: Record<string, { headers?: Record<string, unknown>; $ref?: string }> }>)) {
			if (typeof op !== "object" || op === null || !op.responses) continue;
			for (const [status, response] of Object.entries(op.responses)) {
				if (response.$ref === undefined) op.responses[status] = { ...response, headers: { ...response.headers, "X-Request-Id": REQUEST_ID_HEADER } };
			}
		}
	}
	return doc;
}

/** Serves /openapi.json from the same zod schemas the routes validate with. */
export function mountOpenApi(app: OpenAPIHono<AppEnv>): void {
	app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
		type: "http",
		scheme: "bearer",
		description: "A token from the API_TOKENS secret; roles read < operate < admin. Never in the query string.",
	});
	app.get("/openapi.json", (c) =>
		c.json(
			withSharedAnswers(
				app.getOpenAPI31Document({
					openapi: "3.1.0",
					info: {
						title: "drover",
						version: c.env.DROVER_VERSION,
						description:
							"Runs a fleet of Claude agents on schedules, on Cloudflare Workers and Durable Objects. Every answer carries X-Request-Id (components.headers.RequestId); a path asked with a method it does not list answers 405 method_not_allowed with Allow (components.responses.MethodNotAllowed). A JSON answer to a GET under /v1 carries an ETag: sent back in If-None-Match, it is answered 304 with no body while the answer is unchanged.",
					},
				}),
			),
		),
	);
}
