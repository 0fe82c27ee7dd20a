/**
 * Redaction of a text a cap cut short (a tool's answer read up to its size): the cut can end
 * partway through a credential, and the piece left, an API key's first characters or a URL
 * secret's path without its end, is matched by no pattern and no value, so it reached the model,
 * the job's output and the API as it was. Every place that cuts before it redacts comes here; one
 * that redacts first and cuts after (clip of a stored text) leaks nothing, the cut piece being
 * redacted already.
 */
import { REDACTED, redact } from "./redact.ts";
import { secretPrefixAtEnd } from "./secret-values.ts";

/** `text`, which a cap cut short, redacted, its end dropped for the marker where it may be the start of a secret. */
export function redactCut(text: string): string {
	return dropSecretTail(redact(text));
}

/**
 * How far back from the cut the patterns are tried again: more than any credential they know
 * (a JWT with its claims, a long URL), few enough that it costs the same for any text.
 */
const WINDOW = 4096;

/**
 * What the cut text is continued with to ask the patterns whether its end is a credential's start:
 * characters every credential pattern takes (letters of both cases and digits, at least 35 of them
 * for a Google key), a `.` (a JWT's next part) and an `@` (a URL's password ends there). No pattern
 * matches it alone, nor after ordinary text.
 */
const FILLER = `${"Zz0".repeat(16)}.${"Zz0".repeat(16)}@`;

/** An AWS access key id cut short: its pattern takes exactly 16 characters after the prefix, which no one continuation gives. */
const AWS_KEY_ID_START = /(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{1,15}$/;

/**
 * `redacted` (already redact()'s result, cut short) with its end replaced by the marker where it
 * is the start of a secret: one of the Worker's own values (as secretPrefixAtEnd finds it), or a
 * credential a pattern would redact had the text gone on. Constant work beyond the text's length:
 * a string search a value, and two redactions of its last WINDOW characters.
 */
export function dropSecretTail(redacted: string): string {
	const own = secretPrefixAtEnd(redacted);
	const text = own > 0 ? redacted.slice(0, redacted.length - own) + REDACTED : redacted;
	const aws = AWS_KEY_ID_START.exec(text);
	if (aws) return `${text.slice(0, aws.index + 4)}${REDACTED}`;
	// From a whitespace inside the window, where there is one: a window opening inside a word could
	// make one a pattern matches that the whole text's redaction did not (more redaction, not less).
	let start = Math.max(0, text.length - WINDOW);
	if (start > 0) {
		const space = text.slice(start).search(/\s/);
		if (space >= 0) start += space + 1;
	}
	const window = text.slice(start);
	const plain = redact(window);
	const continued = redact(window + FILLER);
	const expected = plain + FILLER;
	if (continued === expected) return text;
	let same = 0;
	while (same < plain.length && continued[same] === expected[same]) same++;
	// Only the continuation was redacted (the text ends on `password=`): nothing of a secret is in it.
	if (same >= plain.length) return text;
	return text.slice(0, start) + plain.slice(0, same) + REDACTED;
}
