/** A byte range of a known total, as resolved from a `Range: bytes=…` header. */
export interface ByteRange {
	offset: number;
	length: number;
}

/** One range-spec of RFC 9110 §14.1.1: `first-last`, `first-`, or the suffix `-length`. */
const RANGE_SPEC = /^(?:(\d+)-(\d*)|-(\d+))$/;

/**
 * Resolves a `Range` header against a total size, per RFC 9110 §14.1-14.2. Returns null when the
 * header is to be ignored (serve the whole body with 200), or "unsatisfiable" (answer 416).
 *
 * Ignored, as §14.2 allows: no header; a unit other than `bytes` (compared case-insensitively); a
 * ranges-specifier that does not parse, including `bytes=10-5` (a last-pos below its first-pos
 * makes the spec invalid, §14.1.1, not unsatisfiable); and more than one range (served whole
 * rather than as multipart/byteranges). A zero-length body served whole for a suffix range, the
 * one form §14.1.2 calls satisfiable there, since Content-Range cannot describe zero bytes.
 */
export function resolveRange(header: string | null | undefined, total: number): ByteRange | null | "unsatisfiable" {
	const value = header?.trim();
	if (!value) return null;
	const eq = value.indexOf("=");
	if (eq < 0 || value.slice(0, eq).toLowerCase() !== "bytes") return null;
	// A list (§5.6.1): elements separated by commas with optional whitespace; empty ones don't count.
	const specs = value
		.slice(eq + 1)
		.split(",")
		.map((s) => s.trim())
		.filter((s) => s !== "");
	if (specs.length !== 1) return null;
	const m = RANGE_SPEC.exec(specs[0]!);
	if (!m) return null;
	const [, firstText, lastText = "", suffixText] = m;
	if (suffixText !== undefined) {
		const suffix = Number(suffixText);
		if (suffix === 0) return "unsatisfiable";
		if (total === 0) return null;
		const length = Math.min(suffix, total);
		return { offset: total - length, length };
	}
	// BigInt: digits past 2^53 must still compare exactly (…993-…992 is invalid, not equal).
	if (lastText !== "" && BigInt(lastText) < BigInt(firstText!)) return null;
	const first = Number(firstText);
	if (first >= total) return "unsatisfiable";
	const last = lastText === "" ? total - 1 : Math.min(Number(lastText), total - 1);
	return { offset: first, length: last - first + 1 };
}

/**
 * A request's `Range` and `If-Range` where they apply: GET only (RFC 9110 §14.2). A HEAD, which
 * Hono answers with the route's GET handler, gets the whole's headers whatever its Range.
 */
export function requestedRange(request: Request): { range: string | null; ifRange: string | null } {
	if (request.method !== "GET") return { range: null, ifRange: null };
	return { range: request.headers.get("range"), ifRange: request.headers.get("if-range") };
}
