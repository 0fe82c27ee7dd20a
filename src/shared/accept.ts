/** One representation a route can give: its media type, and other names a client may ask for it by. */
export interface Offer<T extends string> {
	key: T;
	type: string;
	aliases?: readonly string[];
}

interface MediaRange {
	type: string;
	subtype: string;
	q: number;
	order: number;
}

// RFC 9110 §12.4.2: a qvalue has at most three decimals and is at most 1.
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Parses an Accept header into its media ranges; an element that does not parse is left out. */
function parseAccept(header: string): MediaRange[] {
	const ranges: MediaRange[] = [];
	header.split(",").forEach((element, order) => {
		const [range = "", ...params] = element.split(";").map((p) => p.trim());
		const [type = "", subtype = "", ...extra] = range.toLowerCase().split("/");
		if (extra.length > 0 || !TOKEN.test(type) || !TOKEN.test(subtype) || (type === "*" && subtype !== "*")) return;
		let q = 1;
		for (const param of params) {
			const eq = param.indexOf("=");
			if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== "q") continue;
			const value = param.slice(eq + 1).trim();
			if (!QVALUE.test(value)) return;
			q = Number(value);
			// Parameters after the weight are accept-ext, not the media type's: nothing more to read.
			break;
		}
		ranges.push({ type, subtype, q, order });
	});
	return ranges;
}

/** How specifically a range names a type: 2 for type/subtype, 1 for type/*, 0 for the any-type wildcard, -1 if it does not match. */
function specificity(range: MediaRange, type: string, exactOnly: boolean): number {
	const [t, s] = type.split("/");
	if (range.type === t && range.subtype === s) return 2;
	if (exactOnly) return -1;
	if (range.type === t && range.subtype === "*") return 1;
	if (range.type === "*") return 0;
	return -1;
}

function beats(a: readonly number[], b: readonly number[]): boolean {
	for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! > b[i]!;
	return false;
}

/**
 * Proactive negotiation (RFC 9110 §12.5.1): the offer the Accept header weights highest. An offer's
 * weight is that of the most specific range matching it (a wildcard matches its type, never an
 * alias), so `application/yaml;q=0` refuses YAML even beside a wildcard. Ties go to the more specific
 * match, then to the range listed first, then to the order of `offers`. With no Accept header, or
 * none that finds an acceptable offer, the first offer is given: the header is disregarded rather
 * than answered 406, which §12.5.1 allows.
 */
export function negotiate<T extends string>(header: string | null | undefined, offers: readonly [Offer<T>, ...Offer<T>[]]): T {
	const fallback = offers[0].key;
	if (!header?.trim()) return fallback;
	const ranges = parseAccept(header);
	// Compared in this order: weight, then specificity (higher first), then header order and rank (lower first).
	let best: { key: T; score: [number, number, number, number] } | undefined;
	offers.forEach((offer, rank) => {
		let match: MediaRange | undefined;
		let matchSpecificity = -1;
		for (const name of [offer.type, ...(offer.aliases ?? [])]) {
			for (const range of ranges) {
				const s = specificity(range, name, name !== offer.type);
				if (s > matchSpecificity || (s >= 0 && s === matchSpecificity && range.order < match!.order)) {
					match = range;
					matchSpecificity = s;
				}
			}
		}
		if (!match || match.q === 0) return;
		const score: [number, number, number, number] = [match.q, matchSpecificity, -match.order, -rank];
		if (!best || beats(score, best.score)) best = { key: offer.key, score };
	});
	return best?.key ?? fallback;
}
