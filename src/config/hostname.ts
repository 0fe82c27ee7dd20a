import { z } from "@hono/zod-openapi";

const isLocalhost = (h: string): boolean => h === "localhost" || h.endsWith(".localhost");
const LOCALHOST_REFUSED = "must be a public hostname, not localhost";

const HOSTNAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * What is wrong with an allow_hosts entry, with the host it stands for when there is one: the URL
 * parser's, lowercase and in punycode, as a fetched URL's hostname is compared ("bücher.de" is
 * "xn--bcher-kva.de" there, and would never match as written).
 */
function hostnameProblem(h: string): string {
	const problem = 'must be a bare lowercase hostname like "example.com" (no scheme, port or path)';
	const host = (/^https?:\/\//i.test(h) ? URL.parse(h) : URL.parse(`http://${h}`))?.hostname;
	if (!host || host === h || !HOSTNAME.test(host) || /^[0-9.]+$/.test(host)) return problem;
	// Not suggested where the next rule refuses it ("LOCALHOST" was told "did you mean localhost?"): that rule is said.
	if (isLocalhost(host)) return LOCALHOST_REFUSED;
	const punycode = host.split(".").some((label) => label.startsWith("xn--")) && !h.toLowerCase().includes("xn--");
	return `${problem}: did you mean "${host}"?${punycode ? " (a name beyond ASCII is listed in its punycode form, as URLs carry it)" : ""}`;
}

export const Hostname = z
	.string()
	.regex(HOSTNAME, { error: (iss) => hostnameProblem(String(iss.input)) })
	// The fetch refuses these at run time anyway; saying so here spares a run that can only fail.
	.refine((h) => !/^[0-9.]+$/.test(h), "must be a hostname, not an IP address (the tool never fetches IP addresses)")
	.refine((h) => !isLocalhost(h), LOCALHOST_REFUSED);
