import { UnsupportedMediaTypeError } from "../errors.ts";

/** The labels a body read as UTF-8 may carry: UTF-8's own (WHATWG's names for it) and ASCII, a subset. */
const UTF8_LABELS = new Set(["utf-8", "utf8", "unicode-1-1-utf-8", "us-ascii"]);

/** A media type's parameters (RFC 9110: token=token or token="quoted"), read so a quoted ";" or "charset=" is not one. */
const MEDIA_PARAM = /;[ \t]*([!#$%&'*+.^_`|~0-9A-Za-z-]+)=("(?:[^"\\]|\\.)*"|[!#$%&'*+.^_`|~0-9A-Za-z-]*)/g;

/** Every charset a content type names (a sender naming two is refused, not read by the first). */
function charsetsOf(contentType: string): string[] {
	const charsets: string[] = [];
	for (const [, name, value] of contentType.matchAll(MEDIA_PARAM)) {
		if (name!.toLowerCase() === "charset") charsets.push(value!.startsWith('"') ? value!.slice(1, -1).replace(/\\(.)/g, "$1") : value!);
	}
	return charsets;
}

/**
 * Every body is read as UTF-8 (JSON's only encoding, RFC 8259): one declared in another charset
 * would be read as text it is not (Latin-1 "Ã©" as "é"), so it is a 415 rather than a guess.
 */
export function requireUtf8Charset(contentType: string | undefined): void {
	if (contentType === undefined) return;
	const charsets = charsetsOf(contentType);
	if (charsets.length > 1) throw new UnsupportedMediaTypeError("the content type names its charset more than once");
	const [charset] = charsets;
	if (charset !== undefined && !UTF8_LABELS.has(charset.toLowerCase())) {
		throw new UnsupportedMediaTypeError(`the request body must be UTF-8: charset ${JSON.stringify(charset.slice(0, 40))} is not taken (send charset=utf-8, or none)`);
	}
}
