/**
 * An agent's name, checked alike by the fleet schema, the API's path parameters, the dashboard and
 * the CLI (before a request, so a bad one is said as the user gave it). Kept free of zod, so the CLI
 * takes it without the fleet schema.
 */

/** An agent name becomes a Durable Object name, an R2 key segment and a URL segment. */
export const AGENT_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** AGENT_NAME_PATTERN in words, as every refusal of a name says it. */
export const AGENT_NAME_RULE = "1-63 lowercase letters, digits or -, starting with a letter or digit";

/** A character as a message names it: itself when printable ASCII, else its code point (U+2010). */
export function charName(c: string): string {
	const hex = `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
	return /^[\x21-\x7e]$/.test(c) ? `"${c}"` : hex;
}

/**
 * Where a name breaks AGENT_NAME_PATTERN, said by code point and 1-based position ("has U+2010 at
 * character 6"): the character that does is often one nobody can see, a non-ASCII dash, a zero-width
 * space, a fullwidth letter. With the name it looks like, when that is one.
 */
export function agentNameProblem(name: string): string {
	const chars = [...name];
	const at = chars.findIndex((c, i) => !(i === 0 ? /^[a-z0-9]$/ : /^[a-z0-9-]$/).test(c));
	const what = chars.length === 0 ? "is empty" : at >= 0 ? `has ${charName(chars[at]!)} at character ${at + 1}` : `is ${chars.length} characters long, over 63`;
	const plain = name
		.normalize("NFKC")
		.replace(/[\u2010-\u2015\u2212\ufe58\ufe63]/g, "-")
		.replace(/[\u00ad\u200b-\u200f\u2060\ufeff]/g, "")
		.toLowerCase();
	return plain !== name && AGENT_NAME_PATTERN.test(plain) ? `${what} (did you mean "${plain}"?)` : what;
}
