import { refuse, type Refusal } from "../../src/shared/refusal.ts";

/** Hermes' limits: per value, per key name, and for the whole notepad. */
export const NOTEPAD_VALUE_BYTES = 16 * 1024;
export const NOTEPAD_KEY_CHARS = 128;
export const NOTEPAD_TOTAL_BYTES = 64 * 1024;

const bytes = (s: string) => new TextEncoder().encode(s).length;

export function readNotepad(sql: SqlStorage): Record<string, string> {
	const out: Record<string, string> = {};
	for (const row of sql.exec<{ key: string; value: string }>("SELECT key, value FROM notepad ORDER BY key")) out[row.key] = row.value;
	return out;
}

/** Sets one key; an oversized key, value or notepad is refused and changes nothing. */
export function setNote(sql: SqlStorage, key: string, value: string, now: number): Refusal | null {
	if (key.length === 0 || key.length > NOTEPAD_KEY_CHARS) return refuse(400, `notepad keys are 1-${NOTEPAD_KEY_CHARS} characters`);
	if (bytes(value) > NOTEPAD_VALUE_BYTES) return refuse(413, `a notepad value is at most ${NOTEPAD_VALUE_BYTES / 1024} KiB; this one is ${bytes(value)} bytes`);
	const others = sql
		.exec<{ key: string; value: string }>("SELECT key, value FROM notepad WHERE key != ?", key)
		.toArray()
		.reduce((n, r) => n + bytes(r.key) + bytes(r.value), 0);
	const total = others + bytes(key) + bytes(value);
	if (total > NOTEPAD_TOTAL_BYTES) {
		return refuse(413, `the notepad would hold ${total} bytes; at most ${NOTEPAD_TOTAL_BYTES / 1024} KiB in all`);
	}
	sql.exec("INSERT INTO notepad (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at", key, value, now);
	return null;
}

export function deleteNote(sql: SqlStorage, key: string | null): number {
	return (key === null ? sql.exec("DELETE FROM notepad") : sql.exec("DELETE FROM notepad WHERE key = ?", key)).rowsWritten;
}
