import { ConfigError } from "../../errors.ts";
import { isRole, type Role } from "./roles.ts";

/** Shorter tokens are refused at load: a guessable token is worse than a server that will not start. */
const MIN_TOKEN_LENGTH = 16;

/** Whether a token holds only printable ASCII, what every HTTP client sends in a header as it is. */
export const tokenCharsOk = (token: string): boolean => /^[\x21-\x7e]+$/.test(token);
/** Said alike by the Worker of API_TOKENS and by the CLI of DROVER_TOKEN. */
export const TOKEN_CHARS_MESSAGE = "holds characters no token has: a space, a line break or a character beyond ASCII";

export interface TokenIssue {
	path: string;
	message: string;
}

export interface ParsedTokens {
	entries: TokenEntry[];
	/** Entries left out, each by its place, while the others load. */
	refused: TokenIssue[];
}

export interface TokenEntry {
	name: string;
	role: Role;
	digest: ArrayBuffer;
}

const encoder = new TextEncoder();

export async function sha256(value: string): Promise<ArrayBuffer> {
	return crypto.subtle.digest("SHA-256", encoder.encode(value));
}

/**
 * Parses the API_TOKENS secret: comma-separated `name:role:token`. The token may itself hold
 * colons. The entries hold digests, not tokens: a token is compared by its digest only (the
 * middleware keeps the secret itself, to know when it changes).
 * Problems name the entry by its position only: its name slot may hold the token (an entry written
 * token first), and they reach the logs and /healthz.
 *
 * A token outside printable ASCII refuses its own entry only (`refused`), the others load: the rule
 * came after such tokens were accepted, and refusing the whole secret for one took down every
 * authenticated route of a deployment that upgraded with one. Any other problem, or no entry left,
 * refuses the whole secret (a ConfigError), as before.
 */
export async function parseApiTokens(secret: string | undefined): Promise<ParsedTokens> {
	const issues: TokenIssue[] = [];
	const refused: TokenIssue[] = [];
	const entries: TokenEntry[] = [];
	const places: number[] = [];
	const seen = new Map<string, number>();
	const raw = (secret ?? "").split(",").map((s) => s.trim()).filter((s) => s.length > 0);
	for (const [i, item] of raw.entries()) {
		const first = item.indexOf(":");
		const second = first < 0 ? -1 : item.indexOf(":", first + 1);
		const path = `API_TOKENS[${i}]`;
		if (second < 0) {
			issues.push({ path, message: "expected name:role:token" });
			continue;
		}
		const name = item.slice(0, first);
		const role = item.slice(first + 1, second);
		const token = item.slice(second + 1);
		// Entries are named by their place, never by their name slot: an entry written token first
		// ("<token>:admin:ci") has the token there, and these messages reach the logs.
		if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) issues.push({ path, message: "name must be 1-64 of [A-Za-z0-9_.-]" });
		else if (seen.has(name)) issues.push({ path, message: `name is used twice (as API_TOKENS[${seen.get(name)}])` });
		if (!isRole(role)) issues.push({ path, message: "role must be read, operate or admin" });
		if (token.length < MIN_TOKEN_LENGTH) issues.push({ path, message: `token is shorter than ${MIN_TOKEN_LENGTH} characters` });
		// Only curl sends such a token as written: a browser's fetch sends a header value past U+00FF
		// never and one up to it as Latin-1, not the UTF-8 it is compared as, and the CLI refuses it.
		if (tokenCharsOk(token)) {
			if (isRole(role)) {
				entries.push({ name, role, digest: await sha256(token) });
				places.push(i);
			}
		} else {
			issues.push({ path, message: `token ${TOKEN_CHARS_MESSAGE}` });
			refused.push({ path, message: `token ${TOKEN_CHARS_MESSAGE}; this entry is refused, the others work` });
		}
		if (!seen.has(name)) seen.set(name, i);
	}
	// One token under two roles (an entry copied and its role changed, a token pasted twice): its
	// holder got the role of whichever entry came first, so `ops:admin:X,grafana:read:X` gave Grafana
	// admin. Which the operator meant cannot be told: each such entry is refused, the others work.
	const groups = new Map<string, number[]>();
	entries.forEach((entry, k) => {
		const key = String.fromCharCode(...new Uint8Array(entry.digest));
		groups.set(key, [...(groups.get(key) ?? []), k]);
	});
	const dropped = new Set<number>();
	for (const group of groups.values()) {
		if (new Set(group.map((k) => entries[k]!.role)).size < 2) continue;
		for (const k of group) {
			const other = places[group.find((j) => entries[j]!.role !== entries[k]!.role)!]!;
			const message = `token is also API_TOKENS[${other}]'s, under another role: a token has one role`;
			issues.push({ path: `API_TOKENS[${places[k]}]`, message });
			refused.push({ path: `API_TOKENS[${places[k]}]`, message: `${message}; this entry is refused, the others work` });
			dropped.add(k);
		}
	}
	if (dropped.size > 0) {
		const kept = entries.filter((_, k) => !dropped.has(k));
		entries.length = 0;
		entries.push(...kept);
		refused.sort((a, b) => placeOf(a.path) - placeOf(b.path));
	}
	if (raw.length === 0) issues.push({ path: "API_TOKENS", message: "no tokens configured" });
	else if (issues.length === refused.length && entries.length === 0) issues.push({ path: "API_TOKENS", message: "no entry is left to use" });
	// Only refused entries, and others left: the secret loads without them.
	if (issues.length > refused.length || entries.length === 0) {
		throw new ConfigError(`API_TOKENS is invalid: ${issues.map((x) => `${x.path}: ${x.message}`).join("; ")}`, issues);
	}
	return { entries, refused };
}

const placeOf = (path: string): number => Number(/\[(\d+)\]/.exec(path)?.[1] ?? -1);

export type DigestCompare = (a: ArrayBuffer, b: ArrayBuffer) => boolean;

const timingSafeEqualDigests: DigestCompare = (a, b) => crypto.subtle.timingSafeEqual(a, b);

/**
 * Finds the entry whose token matches. Comparing fixed-length digests (not the raw strings) and
 * visiting every entry whatever the outcome keeps the time independent of the token's length,
 * its prefix, and of which entry (if any) matches.
 */
export async function findToken(
	entries: readonly TokenEntry[],
	presented: string,
	compare: DigestCompare = timingSafeEqualDigests,
): Promise<TokenEntry | undefined> {
	const digest = await sha256(presented);
	let match: TokenEntry | undefined;
	for (const entry of entries) {
		if (compare(entry.digest, digest) && match === undefined) match = entry;
	}
	return match;
}
