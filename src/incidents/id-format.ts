/**
 * An incident's id: its agent's name's first 6 characters (or fewer), `_` and its signature, 12 hex
 * digits (incidentId, src/incidents/signature.ts). Without zod, so the CLI checks its arguments by
 * it too.
 */
export const INCIDENT_ID_PATTERN = /^[a-z0-9-]{1,6}_[0-9a-f]{12}$/;

export const INCIDENT_ID_FORMAT = "<agent prefix>_<12 hex>";
