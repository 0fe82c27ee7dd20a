import { z } from "@hono/zod-openapi";

const ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
const SUFFIX_LENGTH = 6;
// The largest multiple of 36 that fits in a byte: bytes at or above it are redrawn, so every
// character is equally likely (a plain `byte % 36` would favour the first four).
const UNBIASED_BYTE_LIMIT = 256 - (256 % ID_ALPHABET.length);

/**
 * `job-YYYY-MM-DD-xxxxxx`. Anchored on both ends (and JS `$` never matches before a trailing
 * newline), so a path segment either is a job id or is rejected before any lookup.
 */
export const JOB_ID_PATTERN = /^job-\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])-[a-z0-9]{6}$/;

export const JOB_ID_FORMAT = "job-YYYY-MM-DD-xxxxxx (a UTC date, then 6 characters from a-z and 0-9)";

/** A new job id dated with the UTC day of `now`. */
export function newJobId(now: Date): string {
	let suffix = "";
	const bytes = new Uint8Array(16);
	while (suffix.length < SUFFIX_LENGTH) {
		crypto.getRandomValues(bytes);
		for (const byte of bytes) {
			if (byte >= UNBIASED_BYTE_LIMIT) continue;
			suffix += ID_ALPHABET[byte % ID_ALPHABET.length];
			if (suffix.length === SUFFIX_LENGTH) break;
		}
	}
	return `job-${now.toISOString().slice(0, 10)}-${suffix}`;
}

export function isJobId(value: unknown): value is string {
	return typeof value === "string" && JOB_ID_PATTERN.test(value);
}

export const JobIdSchema = z
	.string()
	.regex(JOB_ID_PATTERN, { error: `job id must be ${JOB_ID_FORMAT}` })
	.openapi({ description: `Job id: ${JOB_ID_FORMAT}`, example: "job-2025-01-15-k2x9qa" });
