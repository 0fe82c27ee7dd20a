import { exports } from "cloudflare:workers";
import { TOKENS } from "./tokens.ts";
import { contractBreach } from "./contract-check.ts";

export interface CallOptions {
	method?: string;
	/** A role whose token to send, a literal token, or null for none. */
	as?: keyof typeof TOKENS | { token: string } | null;
	/** A string or bytes are sent as they are; anything else as its JSON. */
	body?: unknown;
	headers?: Record<string, string>;
}

/** Calls the real Worker (its default export), as a client over HTTP would. */
export async function call(path: string, options: CallOptions = {}): Promise<Response> {
	const headers = new Headers(options.headers);
	const as = options.as === undefined ? "read" : options.as;
	if (as !== null) headers.set("authorization", `Bearer ${typeof as === "string" ? TOKENS[as] : as.token}`);
	let body: BodyInit | undefined;
	if (options.body !== undefined) {
		body = typeof options.body === "string" || options.body instanceof Uint8Array ? options.body : JSON.stringify(options.body);
		if (!headers.has("content-type")) headers.set("content-type", "application/json");
	}
	// A redirect is the answer, as a client sees it (a service binding's fetch would follow it).
	const res = await exports.default.fetch(new Request(`https://drover.test${path}`, { method: options.method ?? "GET", headers, body, redirect: "manual" }));
	const breach = await contractBreach(options.method ?? "GET", `https://drover.test${path}`, res);
	if (breach !== null) throw new Error(`the answer breaks the API's published contract (GET /openapi.json): ${breach}`);
	return res;
}

export interface ErrorBody {
	error: { code: string; message: string; details?: { issues?: { path: string; message: string }[] }; request_id?: string };
}

/** An error answer's `error`, its request_id (checked to be the X-Request-Id the answer carries) left out. */
export async function errorOf(res: Response): Promise<ErrorBody["error"]> {
	const { request_id, ...error } = ((await res.json()) as ErrorBody).error;
	if ((request_id ?? null) !== res.headers.get("x-request-id")) throw new Error(`the error body's request_id ${request_id} is not its X-Request-Id ${res.headers.get("x-request-id")}`);
	return error;
}
