import { BadRequestError } from "../errors.ts";

/** A conditional header's entity tags (RFC 9110 §13.1.1), or "*". */
function tagsOf(header: string | undefined): string[] {
	if (header === undefined) return [];
	return header.split(",").map((t) => t.trim()).filter((t) => t !== "");
}

/** RFC 9110's weak comparison, which If-None-Match uses on a GET: a W/ prefix is ignored on either side. */
export function weakMatch(ifNoneMatch: string | undefined, etag: string): boolean {
	const bare = etag.replace(/^W\//, "");
	return tagsOf(ifNoneMatch).some((tag) => tag === "*" || tag.replace(/^W\//, "") === bare);
}

/**
 * The one version a write's condition names: the opaque part of its single quoted entity tag, "*",
 * or undefined without the header. A write is made on one version, so a list of tags, a weak tag
 * or a tag of another form is refused (400) rather than read loosely: `what` says which are taken.
 */
export function oneTag(header: string | undefined, name: "If-Match" | "If-None-Match", form: RegExp, what: string): string | undefined {
	if (header === undefined) return undefined;
	const tags = tagsOf(header);
	if (tags.length === 1 && tags[0] === "*") return "*";
	const quoted = tags.length === 1 ? /^"([^"]*)"$/.exec(tags[0]!) : null;
	if (quoted && form.test(quoted[1]!)) return quoted[1];
	const message = `must be ${what}; not ${JSON.stringify(header.slice(0, 80))}`;
	throw new BadRequestError(`invalid header: ${name} ${message}`, { issues: [{ path: name, message }] });
}
