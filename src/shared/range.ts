/** A byte range of a known total, as resolved from a `Range: bytes=…` header. */
export interface ByteRange {
	offset: number;
	length: number;
}

/**
 * Resolves a single-range `Range` header against a total size. Returns null when there is no usable
 * header (serve the whole body), or "unsatisfiable" (answer 416). Multiple ranges are served whole,
 * which RFC 9110 allows.
 */
export function resolveRange(header: string | null | undefined, total: number): ByteRange | null | "unsatisfiable" {
	if (!header) return null;
	const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
	if (!m) return null;
	const [, startText = "", endText = ""] = m;
	if (startText === "" && endText === "") return null;
	if (startText === "") {
		const suffix = Number(endText);
		if (suffix === 0) return "unsatisfiable";
		const length = Math.min(suffix, total);
		return total === 0 ? "unsatisfiable" : { offset: total - length, length };
	}
	const start = Number(startText);
	if (start >= total) return "unsatisfiable";
	const end = endText === "" ? total - 1 : Math.min(Number(endText), total - 1);
	if (end < start) return "unsatisfiable";
	return { offset: start, length: end - start + 1 };
}
