/**
 * The generic webhook delivery's body (`delivery.type: webhook`), kept within WEBHOOK_BODY_LIMIT:
 * a receiver refuses an oversized POST whole (a 413, a 4xx drover does not retry), and a refused
 * delivery is a lost answer, not a shorter one. A long answer is cut, said so in the payload, and
 * the dashboard link (when PUBLIC_URL is set) leads to all of it.
 */
import { codePointLength, graphemeEnd, isHighSurrogate, utf8Length } from "../shared/clip.ts";

/**
 * Bytes of a webhook delivery's body at most (100 KiB): the default limit of common JSON body
 * parsers (Express's body-parser, among others) and well under any proxy's.
 */
export const WEBHOOK_BODY_LIMIT = 100 * 1024;

/** What the webhook body says of its job (the fields the caller fills in, the answer aside). */
export interface WebhookFields {
	agent: string;
	job_id: string;
	schedule: string | null;
	trigger_type: string;
	status: string;
	finished_at: string | null;
	cut_short: boolean;
}

/** The bytes one UTF-16 unit takes inside a JSON string as JSON.stringify writes it, a surrogate pair's 4 counted on its first half. */
function escapedBytes(text: string, i: number): number {
	const c = text.charCodeAt(i);
	if (c === 0x22 || c === 0x5c) return 2; // \" and \\
	if (c < 0x20) return c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? 2 : 6; // \n, or \u0001
	if (c < 0x80) return 1;
	if (c < 0x800) return 2;
	if (isHighSurrogate(c) && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) return 4;
	if (c >= 0xd800 && c <= 0xdfff) return 6; // a lone half: \ud83d
	return 3;
}

/** The longest head of `text` (never half a surrogate pair) whose JSON string content takes at most `room` bytes. */
function headFitting(text: string, room: number): number {
	let used = 0;
	let i = 0;
	while (i < text.length) {
		const n = escapedBytes(text, i);
		if (used + n > room) break;
		used += n;
		i += n === 4 ? 2 : 1;
	}
	return i;
}

/**
 * The body: the answer whole, and `note` after it, when the body fits WEBHOOK_BODY_LIMIT, else the
 * answer's head, cut between characters a reader sees as one, with `truncated: true` and
 * `full_answer_chars` (the answer's, never the note's). `fullChars`: the whole answer's code points
 * when `answer` is already only its head (a queued delivery's).
 */
export function webhookBody(fields: WebhookFields, answer: string, dashboardUrl: string | null | undefined, fullChars?: number, note = ""): string {
	const link = dashboardUrl ? { dashboard_url: dashboardUrl } : {};
	const { cut_short, ...job } = fields;
	const body = (text: string, full: number | null) =>
		JSON.stringify({
			type: "drover.delivery",
			...job,
			answer: text,
			cut_short,
			truncated: full !== null,
			...(full === null ? {} : { full_answer_chars: full }),
			...link,
		});
	// The answer's own bytes are measured, never the whole body built first: it may be megabytes.
	const whole = answer + note;
	if (fullChars === undefined && headFitting(whole, WEBHOOK_BODY_LIMIT - utf8Length(body("", null))) === whole.length) return body(whole, null);
	const full = fullChars ?? codePointLength(answer);
	const room = WEBHOOK_BODY_LIMIT - utf8Length(body("", full));
	return body(answer.slice(0, graphemeEnd(answer, headFitting(answer, room))), full);
}
