import { refuse, type Refusal } from "../../src/shared/refusal.ts";
import { utf8Length } from "../../src/shared/clip.ts";
import { noteVersion } from "../../src/shared/note-version.ts";

/** Hermes' limits: per value, per key name, and for the whole notepad. */
export const NOTEPAD_VALUE_BYTES = 16 * 1024;
/** Characters (Unicode code points), not UTF-16 code units: an emoji is one. At most 512 bytes as UTF-8. */
export const NOTEPAD_KEY_CHARS = 128;
const NOTEPAD_TOTAL_BYTES = 64 * 1024;

/**
 * A notepad, key → value in key order. Keys are whatever an operator chose, `__proto__` and
 * `toString` included, so it is a Map, never a plain object: no key is inherited or shadowed, and
 * a Map crosses RPC as it is (a null-prototype object cannot be serialized).
 */
export type Notepad = ReadonlyMap<string, string>;


/**
 * A key as it is stored and looked up: NFC. "café" typed precomposed (U+00E9) and decomposed
 * (e + U+0301) print alike in the CLI, the dashboard and the prompt, so they must name one key, not two.
 */
export function notepadKey(key: string): string {
	return key.normalize("NFC");
}

/**
 * The stored keys a key names: its NFC form, and any spelling of it stored before keys were
 * normalized (a notepad is at most 64 KiB, so reading its keys is cheap). The NFC one comes first.
 */
function storedSpellings(keys: readonly string[], key: string): string[] {
	const nfc = notepadKey(key);
	return keys.filter((k) => notepadKey(k) === nfc).sort((a, b) => Number(b === nfc) - Number(a === nfc));
}

const storedNotes = (sql: SqlStorage) => sql.exec<{ key: string; value: string }>("SELECT key, value FROM notepad ORDER BY key").toArray();

/**
 * The entry a key names in a notepad read whole, whichever Unicode spelling either was written in:
 * the NFC key's, else a spelling stored before keys were normalized. The key is the one stored.
 */
export function findNote(notepad: Notepad, key: string): { key: string; value: string } | null {
	const nfc = notepadKey(key);
	const exact = notepad.get(nfc);
	if (exact !== undefined) return { key: nfc, value: exact };
	for (const [stored, value] of notepad) if (notepadKey(stored) === nfc) return { key: stored, value };
	return null;
}

/** What a write is conditioned on: the version it was made on (If-Match: a tag, or "*" for any), or that the key is not set (If-None-Match: *). */
export interface NoteCondition {
	ifMatch?: string;
	ifNoneMatch?: "*";
}

/** Why a write's condition fails on the value stored under its key (null: none is), or null when it holds. */
function conditionFails(key: string, current: string | null, condition: NoteCondition | undefined): Refusal | null {
	const named = JSON.stringify(key);
	if (condition?.ifNoneMatch === "*" && current !== null) return refuse(412, `notepad key ${named} is already set (If-None-Match: *); read it and write on its version, or leave the condition out to replace it`);
	const ifMatch = condition?.ifMatch;
	if (ifMatch === undefined) return null;
	if (current === null) return refuse(412, `notepad key ${named} is not set (If-Match names a version of it); nothing was changed`);
	if (ifMatch === "*") return null;
	const version = noteVersion(current);
	if (version !== ifMatch) return refuse(412, `notepad key ${named} was changed since it was read: it is at version "${version}", not "${ifMatch}"; nothing was changed`);
	return null;
}

/** A key's length in characters (code points), as the limit's message counts it. */
function keyChars(key: string): number {
	let n = 0;
	for (const _ of key) n++;
	return n;
}

/** C0 controls (NUL, tab, line feed, carriage return, escape…), DEL, C1 controls, U+2028 and U+2029. */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u;

/** Why a key cannot be looked up or deleted (its length), or null. */
export function keyLengthProblem(key: string): string | null {
	const chars = keyChars(key);
	if (chars === 0 || chars > NOTEPAD_KEY_CHARS) return `notepad keys are 1-${NOTEPAD_KEY_CHARS} characters; this one is ${chars}`;
	return null;
}

/**
 * Why a key cannot be written, or null. A key is rendered into the model's prompt as a list item's
 * label, so it is one line of printable text: no control characters or line separators.
 */
export function keyProblem(key: string): string | null {
	const length = keyLengthProblem(key);
	if (length !== null) return length;
	const bad = UNPRINTABLE.exec(key);
	if (bad === null) return null;
	const at = keyChars(key.slice(0, bad.index)) + 1;
	const code = `U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
	return `notepad keys may not contain a control character or line separator (${code} at character ${at})`;
}

/** The whole notepad, in key order. */
export function readNotepad(sql: SqlStorage): Notepad {
	const out = new Map<string, string>();
	for (const row of sql.exec<{ key: string; value: string }>("SELECT key, value FROM notepad ORDER BY key")) out.set(row.key, row.value);
	return out;
}

/**
 * The notepad as the API's JSON object. It has no prototype, so a key such as `__proto__` is an
 * own property like any other and JSON.stringify writes it out.
 */
export function notepadJson(notepad: Notepad): Record<string, string> {
	const out = Object.create(null) as Record<string, string>;
	for (const [key, value] of notepad) out[key] = value;
	return out;
}

/**
 * Sets one key, stored NFC; a bad key or an oversized value or notepad is refused and changes nothing.
 * The key's other spellings stored before keys were normalized are replaced with it: they print as
 * the same key, and the write is to that key.
 */
export function setNote(sql: SqlStorage, given: string, value: string, now: number, condition?: NoteCondition): Refusal | null {
	const key = notepadKey(given);
	const problem = keyProblem(key);
	if (problem !== null) return refuse(400, problem, [{ path: "key", message: problem }]);
	if (utf8Length(value) > NOTEPAD_VALUE_BYTES) return refuse(413, `a notepad value is at most ${NOTEPAD_VALUE_BYTES / 1024} KiB; this one is ${utf8Length(value)} bytes`);
	const notes = storedNotes(sql);
	const replaced = storedSpellings(notes.map((r) => r.key), key);
	const current = replaced.length > 0 ? notes.find((r) => r.key === replaced[0])!.value : null;
	const failed = conditionFails(key, current, condition);
	if (failed) return failed;
	const others = notes
		.filter((r) => !replaced.includes(r.key))
		.reduce((n, r) => n + utf8Length(r.key) + utf8Length(r.value), 0);
	const total = others + utf8Length(key) + utf8Length(value);
	if (total > NOTEPAD_TOTAL_BYTES) {
		return refuse(413, `the notepad would hold ${total} bytes; at most ${NOTEPAD_TOTAL_BYTES / 1024} KiB in all`);
	}
	for (const old of replaced) if (old !== key) sql.exec("DELETE FROM notepad WHERE key = ?", old);
	sql.exec("INSERT INTO notepad (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at", key, value, now);
	return null;
}

/**
 * Deletes a key, in every Unicode spelling it is stored under, or (null) the whole notepad; the rows
 * deleted (0: no such key, and then no condition is checked: the answer is a 404, not a 412).
 */
export function deleteNote(sql: SqlStorage, key: string | null, condition?: NoteCondition): number | Refusal {
	if (key === null) return sql.exec("DELETE FROM notepad").rowsWritten;
	const notes = storedNotes(sql);
	const spellings = storedSpellings(notes.map((r) => r.key), key);
	if (spellings.length === 0) return 0;
	const failed = conditionFails(notepadKey(key), notes.find((r) => r.key === spellings[0])!.value, condition);
	if (failed) return failed;
	let deleted = 0;
	for (const stored of spellings) deleted += sql.exec("DELETE FROM notepad WHERE key = ?", stored).rowsWritten;
	return deleted;
}
