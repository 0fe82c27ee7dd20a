/**
 * A session's id is its first job's id behind `ses-` (`ses-job-2026-12-02-k2x9qa`): a session id, or
 * a prefix of one, names its first job, which the D1 index finds by its primary key and whose agent
 * holds the session's jobs. Nothing is written per job to find a session (the index's rows are the
 * benchmark's cost). Sessions started before this scheme are `ses-<uuid>`: still valid, found
 * through their agent (see src/api/sessions.ts).
 */
import { z } from "@hono/zod-openapi";
import { SESSION_ID_FORMAT, SESSION_ID_PATTERN, SESSION_PREFIX } from "./session-id-format.ts";

/** The id of the session a job starts (one that does not continue another's). */
export function sessionIdFor(jobId: string): string {
	return `${SESSION_PREFIX}${jobId}`;
}

/**
 * The job-id prefix a session-id prefix names, when it is of the job-id form; null for a uuid one.
 * Only a session started by this scheme is found through the D1 index.
 */
export function firstJobPrefix(sessionPrefix: string): string | null {
	const rest = sessionPrefix.slice(SESSION_PREFIX.length);
	return rest.startsWith("job-") ? rest : null;
}

/**
 * The half-open range of strings that start with `prefix`, for a range query on an index (a LIKE
 * would not use one as bound parameter). Ids are drawn from [a-z0-9-], all below `~`.
 */
export function prefixRange(prefix: string): [from: string, to: string] {
	return [prefix, `${prefix}~`];
}

export const SessionIdParam = z
	.string()
	.regex(SESSION_ID_PATTERN, { error: `must be a session id: ${SESSION_ID_FORMAT}, in a-z, 0-9 and -` })
	.openapi({ description: `A session id or a unique prefix of one: ${SESSION_ID_FORMAT}`, example: "ses-job-2026-12-02-k2x9qa" });
