import { BadRequestError } from "../errors.ts";

/** A keyset position: the last row's sort key. Opaque to clients, so deep pages cost the same. */
export interface CursorKey {
	at: number;
	id: string;
}

export function encodeCursor(key: CursorKey): string {
	return btoa(JSON.stringify([key.at, key.id])).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function decodeCursor(cursor: string): CursorKey {
	const malformed = () => new BadRequestError("cursor is malformed; pass back the next_cursor of a previous page unchanged");
	if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw malformed();
	let parsed: unknown;
	try {
		parsed = JSON.parse(atob(cursor.replace(/-/g, "+").replace(/_/g, "/")));
	} catch {
		throw malformed();
	}
	if (!Array.isArray(parsed) || parsed.length !== 2 || !Number.isSafeInteger(parsed[0]) || typeof parsed[1] !== "string" || parsed[1].length > 64) {
		throw malformed();
	}
	return { at: parsed[0] as number, id: parsed[1] as string };
}
