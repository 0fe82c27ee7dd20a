import { BadRequestError } from "../errors.ts";

// A lone UTF-16 surrogate (`\ud800` in JSON) is a string no storage keeps: SQLite and R2 take UTF-8,
// where it becomes U+FFFD. It is refused at the boundary instead of changed silently.
const LONE_SURROGATE = /\p{Cs}/u;

/** The path of the first key or string in a parsed JSON value holding a lone surrogate, or null. */
export function loneSurrogatePath(value: unknown): string | null {
	const stack: [unknown, string][] = [[value, ""]];
	while (stack.length > 0) {
		const [v, path] = stack.pop()!;
		if (typeof v === "string") {
			if (LONE_SURROGATE.test(v)) return path || "(root)";
		} else if (Array.isArray(v)) {
			for (let i = 0; i < v.length; i++) stack.push([v[i], `${path}[${i}]`]);
		} else if (v !== null && typeof v === "object") {
			for (const [key, child] of Object.entries(v)) {
				const at = path ? `${path}.${key}` : key;
				if (LONE_SURROGATE.test(key)) return at;
				stack.push([child, at]);
			}
		}
	}
	return null;
}

export const LONE_SURROGATE_MESSAGE = "holds an unpaired UTF-16 surrogate (such as \\ud800), which no text can store";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** The first ill-formed sequence in UTF-8 bytes: where it starts, its bytes as far as they go wrong, and whether the input ended inside it. */
export interface Utf8Fault {
	offset: number;
	bytes: number[];
	cutShort: boolean;
}

/**
 * The first ill-formed sequence of `bytes`, per the Unicode Standard's table of well-formed UTF-8
 * (§3.9, table 3-7: no overlongs, no surrogates, nothing past U+10FFFF); null if there is none.
 */
export function utf8Fault(bytes: Uint8Array): Utf8Fault | null {
	let i = 0;
	while (i < bytes.length) {
		const lead = bytes[i]!;
		if (lead < 0x80) {
			i++;
			continue;
		}
		// How many continuation bytes the lead byte asks for, and the range the first of them must lie in.
		let n = 0;
		let lo = 0x80;
		let hi = 0xbf;
		if (lead >= 0xc2 && lead <= 0xdf) n = 1;
		else if (lead >= 0xe0 && lead <= 0xef) {
			n = 2;
			if (lead === 0xe0) lo = 0xa0;
			else if (lead === 0xed) hi = 0x9f;
		} else if (lead >= 0xf0 && lead <= 0xf4) {
			n = 3;
			if (lead === 0xf0) lo = 0x90;
			else if (lead === 0xf4) hi = 0x8f;
		} else return { offset: i, bytes: [lead], cutShort: false };
		for (let k = 1; k <= n; k++) {
			const next = bytes[i + k];
			if (next === undefined) return { offset: i, bytes: [...bytes.subarray(i)], cutShort: true };
			if (next < (k === 1 ? lo : 0x80) || next > (k === 1 ? hi : 0xbf)) return { offset: i, bytes: [...bytes.subarray(i, i + k + 1)], cutShort: false };
		}
		i += n + 1;
	}
	return null;
}

/**
 * A request body as text, or a 400 saying where it is not UTF-8. The lenient decoding of
 * Request.text() turns such bytes into U+FFFD, which drover would then store and act on as if the
 * caller had sent it. A leading byte order mark is dropped, as Request.text() drops it.
 */
export function decodeUtf8Body(bytes: Uint8Array): string {
	const decoded = decodeUtf8(bytes, "the body");
	if (typeof decoded === "string") return decoded;
	throw BadRequestError.ofBody(`${notUtf8("the request body", decoded)}; send the body as UTF-8 text`, notUtf8("", decoded).trimStart());
}

/** Why bytes are not UTF-8: where ("byte e9 at offset 12 is no UTF-8 character"), and whether they are UTF-16. */
export interface Utf8Refusal {
	where: string;
	/** They begin with UTF-16's byte order mark: a file saved as "Unicode" (Windows) or by PowerShell's `>`. */
	utf16: boolean;
}

/**
 * UTF-8 bytes as text, or where they are not UTF-8 ("byte e9 at offset 12 is no UTF-8 character"),
 * `what` naming the input in that text. For the API's bodies, fleet.yaml, and the CLI's files and
 * stdin alike.
 */
export function decodeUtf8(bytes: Uint8Array, what: string): string | Utf8Refusal {
	// Said as such: its first byte would be reported as no UTF-8 character, and Latin-1 suggested.
	const bom = bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff));
	if (bom) return { where: `it begins with ${hexBytes(bytes.subarray(0, 2))}, UTF-16's byte order mark`, utf16: true };
	try {
		return strictUtf8.decode(bytes);
	} catch {
		const fault = utf8Fault(bytes) ?? { offset: 0, bytes: [], cutShort: false };
		const one = fault.bytes.length === 1;
		const hex = hexBytes(fault.bytes);
		return { where: `${one ? "byte" : "bytes"} ${hex} at offset ${fault.offset} ${fault.cutShort ? `end${one ? "s" : ""} ${what} inside a UTF-8 character` : `${one ? "is" : "are"} no UTF-8 character`}`, utf16: false };
	}
}

const hexBytes = (bytes: ArrayLike<number>) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(" ");

/** The sentence refusing input that is not UTF-8, `subject` naming it: "stdin is not valid UTF-8: …", "x.yaml is UTF-16, not UTF-8 (…)". */
export function notUtf8(subject: string, refusal: Utf8Refusal): string {
	return refusal.utf16 ? `${subject} is UTF-16, not UTF-8 (${refusal.where})` : `${subject} is not valid UTF-8: ${refusal.where}`;
}

/** How a person turns a file that is not UTF-8 into one: from UTF-16 when it says it is, else most likely from Latin-1. */
export function saveAsUtf8(refusal: Utf8Refusal): string {
	return refusal.utf16 ? "save it as UTF-8 (iconv -f utf-16 -t utf-8 converts a UTF-16 file)" : "save it as UTF-8 (iconv -f latin1 -t utf-8 converts a Latin-1 file)";
}

/**
 * The first segment of a URL's path (as sent, still percent-encoded) whose escapes do not decode: a
 * `%` not followed by two hex digits, or escapes that spell no UTF-8. Hono hands such a segment to a
 * route as it stands, so `%ZZ` would be taken as the text "%ZZ", a key someone else may have stored.
 */
export function malformedPathSegment(pathname: string): string | null {
	for (const segment of pathname.split("/")) {
		if (!segment.includes("%")) continue;
		try {
			decodeURIComponent(segment);
		} catch {
			return segment;
		}
	}
	return null;
}

export const MALFORMED_PERCENT_MESSAGE = "each % must begin an escape of two hex digits (%XX), and the escapes must spell UTF-8; send a % itself as %25";
