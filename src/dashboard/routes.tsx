/** @jsxImportSource hono/jsx */
import { Hono, type Context } from "hono";
import type { AppEnv } from "../api/context.ts";
import { APP_JS } from "./client/index.ts";
import { Page, type View } from "./pages.tsx";
import { APP_CSS, FAVICON_SVG } from "./styles.ts";
import { printable } from "../shared/printable.ts";
import { fnv1a32 } from "../shared/hash.ts";

/**
 * Everything the pages load comes from this origin and nothing runs inline, so an injected string
 * can neither execute nor pull anything in. connect-src 'self' is what the client's fetch() calls need.
 */
const CSP = [
	"default-src 'none'",
	"script-src 'self'",
	"style-src 'self'",
	"img-src 'self'",
	"connect-src 'self'",
	"base-uri 'none'",
	"form-action 'self'",
	"frame-ancestors 'none'",
].join("; ");

function securityHeaders(c: Context<AppEnv>): void {
	c.header("content-security-policy", CSP);
	c.header("x-content-type-options", "nosniff");
	c.header("referrer-policy", "no-referrer");
	// For browsers that predate frame-ancestors.
	c.header("x-frame-options", "DENY");
}

/** A content hash for cache-busting asset URLs, computed once at load (no async crypto needed). */
const contentVersion = (text: string): string => fnv1a32(text).toString(16).padStart(8, "0");

interface Asset {
	path: string;
	body: string;
	type: string;
	version: string;
}

const asset = (path: string, body: string, type: string): Asset => ({ path, body, type, version: contentVersion(body) });
const ASSETS = [
	asset("/ui/app.js", APP_JS, "text/javascript; charset=utf-8"),
	asset("/ui/app.css", APP_CSS, "text/css; charset=utf-8"),
	asset("/ui/favicon.svg", FAVICON_SVG, "image/svg+xml"),
] as const;
const [js, css, icon] = ASSETS;
const versioned = (a: Asset) => `${a.path}?v=${a.version}`;
const PAGE_ASSETS = { js: versioned(js), css: versioned(css), icon: versioned(icon) };

function page(c: Context<AppEnv>, view: View, title: string, subject?: string, status: 200 | 404 = 200) {
	securityHeaders(c);
	// The shell holds no data, but a stale one could reference assets a deploy removed.
	c.header("cache-control", "no-cache");
	// The title comes from the address: a bidi control in a crafted link (%E2%80%AE) would make it read
	// reversed. Escaped as everywhere else text from outside is shown; the subject is passed as sent,
	// for the page's script to ask the API of (Page escapes it where it shows it).
	return c.html(`<!doctype html>${(<Page view={view} title={printable(title)} assets={PAGE_ASSETS} subject={subject} />).toString()}`, status);
}

/** The 404 a browser gets for an address that is no page (the app's not-found handler asks for it). */
export const notFoundPage = (c: Context<AppEnv>) => page(c, "missing", "Not found", c.req.path, 404);

/**
 * The web dashboard: server-rendered shells plus one script and one stylesheet. Only these paths
 * are served, so /healthz, /openapi.json and /v1/* are never shadowed; the pages are not API routes
 * and are not in the OpenAPI document (a plain Hono app contributes nothing to it).
 */
export const dashboardApp = new Hono<AppEnv>()
	.get("/", (c) => page(c, "fleet", "Fleet"))
	.get("/jobs", (c) => page(c, "jobs", "Jobs"))
	.get("/jobs/:id", (c) => page(c, "job", c.req.param("id"), c.req.param("id")))
	// The addresses a person types for the fleet and for an agent: an agent's page is its runs (its
	// schedules, state, definition and ledger). Found, not moved for good: a later page may take them.
	.get("/agents", (c) => c.redirect("/", 302))
	.get("/agents/:name", (c) => c.redirect(`/agents/${encodeURIComponent(c.req.param("name"))}/runs`, 302))
	.get("/agents/:name/runs", (c) => page(c, "runs", `Runs · ${c.req.param("name")}`, c.req.param("name")))
	.get("/agents/:name/logs", (c) => page(c, "logs", `Logs · ${c.req.param("name")}`, c.req.param("name")))
	.get("/usage", (c) => page(c, "usage", "Usage"))
	.get("/incidents", (c) => page(c, "incidents", "Incidents"));

for (const a of ASSETS) {
	dashboardApp.get(a.path, (c) => {
		c.header("x-content-type-options", "nosniff");
		c.header("content-type", a.type);
		// A URL carrying the current version never changes; any other (an old page, a bare link) revalidates.
		c.header("cache-control", c.req.query("v") === a.version ? "public, max-age=31536000, immutable" : "no-cache");
		c.header("etag", `"${a.version}"`);
		if (c.req.header("if-none-match") === `"${a.version}"`) return c.body(null, 304);
		return c.body(a.body);
	});
}
