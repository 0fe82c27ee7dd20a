/**
 * The values of the Worker's own secrets (its API tokens, API keys, webhook secrets, signing keys and
 * URL secrets), for redact() to replace wherever they appear: a token pasted into a prompt or a
 * notepad value is stored and shown to every read token, and no pattern can tell a drover token,
 * an HMAC key or a webhook URL's path from ordinary text. Read once an isolate from its bindings
 * (a secret changed is a new deployment, so a new isolate).
 */
import { env } from "cloudflare:workers";

/**
 * wrangler.toml's [vars] (and those npm start passes), which are no secrets: a job's answer quoting
 * the Worker's public URL keeps it.
 */
const PUBLIC_VARS = new Set([
	"DROVER_VERSION",
	"ANTHROPIC_BASE_URL",
	"ANTHROPIC_ALLOWED_BASE_URLS",
	"RETENTION_DAYS",
	"HEARTBEAT_STALE_SECONDS",
	"SUBREQUEST_LIMIT",
	"PUBLIC_URL",
	"LOG_LEVEL",
	"DROVER_DEV_BUILD",
]);

/** Shorter pieces are not looked for: they could be words (the tokens and keys drover takes are 16 characters or more). */
const MIN_CHARS = 12;

/** Each secret whole, and its parts: API_TOKENS' and ANTHROPIC_API_KEY's comma-separated entries, and an entry's `name:role:token` token. */
export function secretValues(bindings: Record<string, unknown>): string[] {
	const values = new Set<string>();
	for (const [name, value] of Object.entries(bindings)) {
		if (typeof value !== "string" || PUBLIC_VARS.has(name)) continue;
		const whole = value.trim();
		const candidates = [whole];
		for (const piece of whole.split(/[\s,]+/)) {
			const second = piece.indexOf(":", piece.indexOf(":") + 1);
			candidates.push(piece, second > 0 && !piece.includes("://") ? piece.slice(second + 1) : "");
		}
		for (const candidate of candidates) if (candidate.length >= MIN_CHARS) values.add(candidate);
	}
	// The longest first: a token that is part of its whole entry is replaced with it.
	return [...values].sort((a, b) => b.length - a.length);
}

let pattern: RegExp | null | undefined;

/** One expression matching any of the Worker's secret values; null when it has none. */
export function secretValuesPattern(): RegExp | null {
	if (pattern === undefined) {
		const values = secretValues(env as unknown as Record<string, unknown>);
		pattern = values.length === 0 ? null : new RegExp(values.map((v) => v.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")).join("|"), "g");
	}
	return pattern;
}
