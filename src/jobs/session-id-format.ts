/**
 * A session id's form, without zod, which the CLI checks its arguments by too (as id-format.ts is
 * for job ids). A session's id is its first job's id behind `ses-`; sessions started before that
 * scheme are `ses-<uuid>`.
 */
export const SESSION_PREFIX = "ses-";

/** Characters after `ses-` a prefix must give: fewer would name too many sessions to be of use. */
export const MIN_SESSION_PREFIX = 8;

/** Job ids and uuids use only these; anything else is no session id and is refused, not looked up. */
export const SESSION_ID_PATTERN = /^ses-[a-z0-9-]{8,64}$/;

export const SESSION_ID_FORMAT = `ses-<first job's id> (older sessions: ses-<uuid>), or a prefix of one with at least ${MIN_SESSION_PREFIX} characters after ses-`;
