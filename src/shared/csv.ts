/**
 * Rows as CSV (RFC 4180): a header of `fields`, then a line a row, CRLF-ended; a field holding a
 * comma, a quote or a line break quoted, its quotes doubled; null and undefined empty (an unpriced
 * cost is not 0). Used by `drover usage --csv` and the dashboard's usage download, so the two files
 * are alike.
 *
 * Self-contained (no import, no module-level name): the dashboard gets it by its source, as it gets
 * the SSE parser (src/dashboard/client/index.ts).
 */
export function csvOf(fields: readonly string[], rows: readonly Record<string, unknown>[]): string {
	const cell = (v: unknown) => {
		const s = v === null || v === undefined ? "" : String(v);
		return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
	};
	const line = (cells: unknown[]) => `${cells.map(cell).join(",")}\r\n`;
	return line([...fields]) + rows.map((r) => line(fields.map((f) => r[f]))).join("");
}
