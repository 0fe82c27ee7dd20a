/** A stored instant (ms since the epoch) as the API writes it: ISO 8601, or null for none. */
export const isoOrNull = (ms: number | null | undefined): string | null => (ms == null ? null : new Date(ms).toISOString());
