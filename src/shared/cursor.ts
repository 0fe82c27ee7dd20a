import { BadRequestError } from "../errors.ts";
import { fnv1a32, toBase64Url } from "./hash.ts";

/** A keyset position: the last row's sort key. Opaque to clients, so deep pages cost the same. */
export interface CursorKey {
	at: number;
	id: string;
}

/**
 * What a cursor belongs to: the list and its filters. A cursor carries a tag of it, so one passed to
 * another list, or with other filters, is refused instead of silently paging from an unrelated
 * position.
 */
export function cursorScope(list: string, filters: Record<string, string | number | undefined> = {}): string {
	const defined = Object.keys(filters)
		.filter((key) => filters[key] !== undefined)
		.sort()
		.map((key) => [key, filters[key]]);
	return JSON.stringify([list, defined]);
}

// A tag against mistakes, not a signature (a cursor grants nothing the filters don't).
function scopeTag(scope: string): string {
	return fnv1a32(scope).toString(36);
}

export function encodeCursor(key: CursorKey, scope: string): string {
	return toBase64Url(JSON.stringify([key.at, key.id, scopeTag(scope)]));
}

export function decodeCursor(cursor: string, scope: string): CursorKey {
	const malformed = () => {
		const message = "cursor is malformed; pass back the next_cursor of a previous page unchanged";
		return new BadRequestError(message, { issues: [{ path: "cursor", message }] });
	};
	if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw malformed();
	let parsed: unknown;
	try {
		parsed = JSON.parse(atob(cursor.replace(/-/g, "+").replace(/_/g, "/")));
	} catch {
		throw malformed();
	}
	if (
		!Array.isArray(parsed) ||
		(parsed.length !== 2 && parsed.length !== 3) ||
		!Number.isSafeInteger(parsed[0]) ||
		typeof parsed[1] !== "string" ||
		parsed[1].length > 64 ||
		(parsed.length === 3 && typeof parsed[2] !== "string")
	) {
		throw malformed();
	}
	// Every cursor drover hands out carries its list's tag. One without (an untagged cursor from before
	// they did, or one whose tag was cut off) could be from any list: paging from it would start at an
	// unrelated position, so it is refused as a foreign one is.
	if (parsed.length === 2) {
		const message = "cursor does not belong to this list: it names none (a cursor from before cursors named their list, or one cut short); drop the cursor to start over";
		throw new BadRequestError(message, { issues: [{ path: "cursor", message }] });
	}
	if (parsed[2] !== scopeTag(scope)) {
		const message = "cursor belongs to another list or to other filters; page with the same filters that gave it, or drop the cursor to start over";
		throw new BadRequestError(message, { issues: [{ path: "cursor", message }] });
	}
	return { at: parsed[0] as number, id: parsed[1] as string };
}
