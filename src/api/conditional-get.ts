import { createMiddleware } from "hono/factory";
import { toBase64Url } from "../shared/hash.ts";
import type { AppEnv } from "./context.ts";
import { weakMatch } from "./preconditions.ts";

/**
 * Revalidation for the API's JSON answers: each GET's JSON carries an ETag (a digest of its bytes),
 * and a request whose If-None-Match names it is answered 304 with no body. The dashboard polls
 * whole lists every few seconds; an unchanged fleet of 1,000 agents is then a few hundred bytes a
 * poll instead of its whole answer. The answer is still computed (its state is in the agents'
 * objects, not here), only not sent again.
 *
 * JSON only: a job's output (up to 100 MB) and its event stream must not be buffered to be hashed,
 * and R2's own ETag is not a digest of what the route answers (a tail, a range).
 */
export const conditionalGet = createMiddleware<AppEnv>(async (c, next) => {
	await next();
	if ((c.req.method !== "GET" && c.req.method !== "HEAD") || c.res.status !== 200) return;
	if (!c.res.headers.get("content-type")?.startsWith("application/json")) return;
	// A route whose answer has a version of its own (a notepad value's, which a write's If-Match names) keeps its ETag.
	const etag = c.res.headers.get("etag") ?? (await digestTag(c.res));
	// An answer a token can read must not be kept by a shared cache; a browser keeping it must ask again.
	const headers = { ETag: etag, "Cache-Control": "private, no-cache" };
	if (weakMatch(c.req.header("if-none-match"), etag)) {
		const notModified = new Response(null, { status: 304, headers });
		const vary = c.res.headers.get("vary");
		if (vary) notModified.headers.set("Vary", vary);
		// Cleared first: Hono's setter copies every header but Content-Type of the answer it replaces
		// onto the new one, and the 304 carries only those a 200 of it would have to (RFC 9110 15.4.5).
		c.res = undefined;
		c.res = notModified;
		return;
	}
	for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
});

async function digestTag(res: Response): Promise<string> {
	const digest = new Uint8Array(await crypto.subtle.digest("SHA-1", await res.clone().arrayBuffer()));
	return `"${toBase64Url(String.fromCharCode(...digest))}"`;
}
