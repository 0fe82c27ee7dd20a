/**
 * The SSRF guard for http_fetch: every URL the model asks for, and every redirect Location, is
 * checked here before a request is made.
 *
 * Workers cannot resolve DNS before fetching, so this check sees names, not addresses: a public
 * hostname that resolves to a private address is covered by the allowlist (operators list only
 * public hosts they trust) and by Cloudflare's egress (a Worker's subrequests leave from
 * Cloudflare's network, not from the operator's; under `wrangler dev` they leave from the
 * operator's machine, as README says), not by this check. What it does catch is every
 * address the model can spell directly, however it spells it.
 */
export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

// Names that always mean "this machine" or "this private network", whatever DNS says.
const BLOCKED_NAMES = new Set(["localhost", "metadata.google.internal"]);
const BLOCKED_SUFFIXES = [".localhost", ".internal", ".local"];

// [first address, prefix length, what it is]; checked in order, the first match names the reason.
const IPV4_BLOCKED: readonly (readonly [string, number, string])[] = [
	["0.0.0.0", 8, "an unspecified (\"this network\") address"],
	["10.0.0.0", 8, "a private address"],
	["100.64.0.0", 10, "a carrier-grade NAT (shared) address"],
	["127.0.0.0", 8, "a loopback address"],
	["169.254.0.0", 16, "a link-local address (where cloud metadata services live)"],
	["172.16.0.0", 12, "a private address"],
	["192.0.0.0", 24, "an IETF protocol-assignment address"],
	["192.168.0.0", 16, "a private address"],
	["198.18.0.0", 15, "a benchmarking address"],
	["224.0.0.0", 4, "a multicast address"],
	["240.0.0.0", 4, "a reserved or broadcast address"],
];

/**
 * Checks `url` for http_fetch: http(s) only, no credentials, no explicit port, no private or
 * special address in any spelling, no local name, and the host on `allowHosts` (exact match).
 */
export function checkUrl(url: string, allowHosts: readonly string[]): UrlCheck {
	let parsed: URL;
	try {
		// The WHATWG parser normalizes the host: 2130706433, 0177.0.0.1, 0x7f.1, 127.1, %31%32%37.0.0.1
		// and full-width digits all become 127.0.0.1, and IPv6 is serialized in one canonical form, so
		// classifying the parsed hostname covers every spelling that fetch would connect to.
		parsed = new URL(url);
	} catch {
		return refused(`"${url}" is not a valid absolute URL`);
	}
	if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
		return refused(`only http and https URLs are fetched, not ${parsed.protocol.replace(/:$/, "")}`);
	}
	if (parsed.username !== "" || parsed.password !== "") {
		return refused("URLs with credentials (user:password@) are refused");
	}
	// The parser drops a port equal to the scheme's default, so any port left here is non-default.
	if (parsed.port !== "") {
		return refused(`port ${parsed.port} is refused; only the default ports (80, 443) are fetched`);
	}

	const host = normalizeHost(parsed.hostname);
	const addressProblem = host.startsWith("[") ? ipv6Problem(host.slice(1, -1)) : ipv4Problem(host);
	if (addressProblem) return refused(`${host} is ${addressProblem}; such addresses are never fetched`);
	if (BLOCKED_NAMES.has(host) || BLOCKED_SUFFIXES.some((suffix) => host.endsWith(suffix))) {
		return refused(`${host} is a local or internal name; such hosts are never fetched`);
	}

	if (!allowHosts.some((allowed) => normalizeHost(allowed) === host)) {
		return refused(`host ${host} is not allowed; allowed hosts: ${allowHosts.join(", ")}`);
	}
	return { ok: true, url: parsed };
}

function refused(reason: string): UrlCheck {
	return { ok: false, reason };
}

/** Lowercase, trailing dots dropped: "Example.COM." and "example.com" name the same host. */
function normalizeHost(host: string): string {
	return host.toLowerCase().replace(/\.+$/, "");
}

/** Why a dotted-quad host is refused, or undefined (also for hosts that are not IPv4 literals). */
function ipv4Problem(host: string): string | undefined {
	const value = parseIpv4(host);
	if (value === undefined) return undefined;
	for (const [base, prefix, what] of IPV4_BLOCKED) {
		if (inPrefix(value, parseIpv4(base) ?? 0, prefix)) return what;
	}
	return undefined;
}

// Only the canonical form: the URL parser has already turned every other spelling into this one.
function parseIpv4(host: string): number | undefined {
	const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
	if (!m) return undefined;
	const octets = m.slice(1).map(Number);
	if (octets.some((o) => o > 255)) return undefined;
	return octets.reduce((acc, o) => acc * 256 + o, 0);
}

function inPrefix(value: number, base: number, prefix: number): boolean {
	const size = 2 ** (32 - prefix);
	return Math.floor(value / size) === Math.floor(base / size);
}

/** Why an IPv6 literal (without brackets) is refused, or undefined. */
function ipv6Problem(literal: string): string | undefined {
	const g = parseIpv6(literal);
	// An IPv6 literal can never match the allowlist (its entries are hostnames), so one this parser
	// does not understand is refused rather than waved through to the allowlist check.
	if (!g) return "an IPv6 address this guard cannot classify";
	const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
	const embedded = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
	const firstSix = [g0, g1, g2, g3, g4, g5];
	if (firstSix.every((x) => x === 0) && g6 === 0 && g7 === 0) return "the unspecified address";
	if (firstSix.every((x) => x === 0) && g6 === 0 && g7 === 1) return "a loopback address";
	// IPv4-mapped (::ffff:a.b.c.d) reaches the IPv4 address itself: refused whatever that address is.
	if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) {
		return `an IPv4-mapped address (${embedded(g6, g7)})`;
	}
	// IPv4-compatible (::a.b.c.d, deprecated) and NAT64 (64:ff9b::a.b.c.d) carry an IPv4 address too.
	const nat64 = g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0;
	if (firstSix.every((x) => x === 0) || nat64) {
		const inner = ipv4Problem(embedded(g6, g7));
		if (inner) return `an IPv6 address embedding ${embedded(g6, g7)}, ${inner}`;
	}
	// 6to4 (2002:AABB:CCDD::/48) routes to the IPv4 address in its second and third groups.
	if (g0 === 0x2002) {
		const inner = ipv4Problem(embedded(g1, g2));
		if (inner) return `a 6to4 address embedding ${embedded(g1, g2)}, ${inner}`;
	}
	if ((g0 & 0xffc0) === 0xfe80) return "a link-local address";
	if ((g0 & 0xffc0) === 0xfec0) return "a site-local address";
	if ((g0 & 0xfe00) === 0xfc00) return "a unique-local (private) address";
	if ((g0 & 0xff00) === 0xff00) return "a multicast address";
	return undefined;
}

/** Eight 16-bit groups, or null. Accepts "::" compression and a dotted IPv4 tail. */
function parseIpv6(literal: string): number[] | null {
	let text = literal.toLowerCase();
	// A dotted IPv4 tail ("::ffff:1.2.3.4") is the last two groups written differently.
	const dotted = /^(.*:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
	if (dotted) {
		const v4 = parseIpv4(dotted[2] ?? "");
		if (v4 === undefined) return null;
		text = `${dotted[1] ?? ""}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
	}
	const halves = text.split("::");
	if (halves.length > 2) return null;
	const groups = (part: string) => (part === "" ? [] : part.split(":").map((h) => (/^[0-9a-f]{1,4}$/.test(h) ? Number.parseInt(h, 16) : Number.NaN)));
	const head = groups(halves[0] ?? "");
	const rest = halves.length === 2 ? groups(halves[1] ?? "") : [];
	const explicit = head.length + rest.length;
	if ([...head, ...rest].some(Number.isNaN)) return null;
	if (halves.length === 1 ? explicit !== 8 : explicit > 7) return null;
	return [...head, ...Array.from({ length: 8 - explicit }, () => 0), ...rest];
}
