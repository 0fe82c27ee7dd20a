/**
 * Request bodies for an agent's delivery (its final answer, sent to a webhook, Slack or Discord) and
 * for after_run/on_error hooks. Pure: the caller redacts first. A hook's body is queued as it is sent;
 * a delivery is queued as what its body is made of (queued.ts) and formatted here at each attempt, so
 * a retry sends the same bytes but for the dashboard link, which is the deployment's at the time.
 *
 * Each target's limits are enforced here rather than left to the receiver, because an over-long
 * message is refused whole (Slack answers 400 invalid_blocks, Discord 400 "Invalid Form Body") and a
 * refused delivery is a lost answer, not a shorter one.
 */
import { clip, ELLIPSIS, graphemeEnd, graphemeSlice } from "../shared/clip.ts";
import { escapeSlack, FENCE, markdownToMrkdwn } from "./mrkdwn.ts";
import { webhookBody } from "./webhook-body.ts";

export { escapeSlack };

export type DeliveryTarget = "webhook" | "slack" | "discord";
export type HookEvent = "completed" | "failed" | "cancelled" | "indeterminate";

export interface DeliveryJob {
	id: string;
	agent: string;
	schedule: string | null;
	trigger_type: string;
	status: string;
	finished_at: string | null;
	summary: string | null;
	usage?: unknown;
}

export interface DeliveryInput {
	agent: string;
	job: DeliveryJob;
	answer: string;
	dashboardUrl?: string | null;
	/** The answer stopped at max_tokens: the receiver is told, or it would read a cut answer as whole. */
	cutShort?: boolean;
	/**
	 * The whole answer's code points when `answer` is only its head (a queued delivery keeps no more
	 * than a target sends): every target then says the answer is cut, and where the rest is.
	 */
	answerChars?: number;
}

/** Ends an answer cut short at max_tokens, whatever the target. */
const CUT_SHORT_NOTE = "\n\n(cut short at max_tokens)";

export interface FormattedBody {
	body: string;
	contentType: string;
}

const JSON_CONTENT_TYPE = "application/json";

/** Slack: characters in one text object of a section block. */
export const SLACK_TEXT_LIMIT = 3000;
/** Slack: blocks in one message. */
export const SLACK_MAX_BLOCKS = 50;
/** Slack: characters of a header block's plain_text. */
const SLACK_HEADER_LIMIT = 150;
/** Characters of the answer in Slack's top-level `text`, which is only the notification fallback. */
const SLACK_FALLBACK_CHARS = 300;
/** Discord: characters of a message's content. */
export const DISCORD_CONTENT_LIMIT = 2000;
/** Discord: characters of an embed title. */
const DISCORD_TITLE_LIMIT = 256;
/** Discord: characters of an embed description. */
const DISCORD_DESCRIPTION_LIMIT = 4096;
/** Discord: characters of an embed footer. */
const DISCORD_FOOTER_LIMIT = 2048;

/**
 * How many units of `text` from `start` go in a piece of at most `limit`: to the last line break in
 * the second half of the window, else the last space, else a hard cut that splits neither an entity
 * (&amp;) nor a character a reader sees as one (an emoji, a family or a flag of several, a letter
 * and its accent: the next section would start with the rest); and never inside a link
 * (`<url|text>`), which would show as text.
 */
function pieceLength(text: string, start: number, limit: number): number {
	const window = text.slice(start, start + limit);
	let cut = window.lastIndexOf("\n") + 1;
	if (cut <= limit / 2) cut = window.lastIndexOf(" ") + 1;
	if (cut <= limit / 2) {
		cut = graphemeEnd(text, start + limit, start) - start;
		// An entity is at most 5 units (&amp;); back up to its "&" if the cut falls inside one.
		const amp = window.lastIndexOf("&", cut - 1);
		if (amp !== -1 && amp > cut - 5 && !window.slice(amp, cut).includes(";")) cut = amp;
	}
	// Escaped text has no "<" of its own: one is a link's, open if its ">" is past the cut.
	const link = window.lastIndexOf("<", cut - 1);
	if (link > 0 && window.lastIndexOf(">", cut - 1) < link) cut = link;
	return cut;
}

/** Splits already-escaped mrkdwn into pieces of at most `limit` units whose concatenation is the input. */
export function splitForSlack(text: string, limit = SLACK_TEXT_LIMIT): string[] {
	const chunks: string[] = [];
	let start = 0;
	while (text.length - start > limit) {
		const cut = pieceLength(text, start, limit);
		chunks.push(text.slice(start, start + cut));
		start += cut;
	}
	chunks.push(text.slice(start));
	return chunks;
}

/**
 * splitForSlack for converted mrkdwn, whose fences are each FENCE alone on a line: a code block cut
 * between two sections is closed at the end of the first and opened again at the start of the next,
 * or the second half would show as mrkdwn, its * and _ taken for formatting.
 */
export function splitMrkdwn(text: string, limit = SLACK_TEXT_LIMIT): string[] {
	const fenceEnds: number[] = [];
	for (let at = 0; at < text.length; at = text.indexOf("\n", at) + 1 || text.length) {
		if (text.startsWith(FENCE, at) && (at + FENCE.length === text.length || text[at + FENCE.length] === "\n")) fenceEnds.push(at + FENCE.length);
	}
	const inCode = (offset: number) => {
		let passed = 0; // fences ending at or before offset, by binary search
		for (let hi = fenceEnds.length; passed < hi; ) {
			const mid = (passed + hi) >> 1;
			if (fenceEnds[mid]! <= offset) passed = mid + 1;
			else hi = mid;
		}
		return passed % 2 === 1;
	};
	const close = (piece: string) => (piece.endsWith("\n") ? FENCE : `\n${FENCE}`);

	const chunks: string[] = [];
	let start = 0;
	for (;;) {
		const reopen = inCode(start) ? `${FENCE}\n` : "";
		const room = limit - reopen.length;
		if (text.length - start <= room) {
			chunks.push(reopen + text.slice(start));
			return chunks;
		}
		let cut = pieceLength(text, start, room);
		if (inCode(start + cut)) cut = pieceLength(text, start, room - FENCE.length - 1);
		// A piece ending in a block's opening fence would close it at once: the block starts the next piece.
		if (inCode(start + cut) && cut > FENCE.length + 1 && text.startsWith(`${FENCE}\n`, start + cut - FENCE.length - 1)) cut -= FENCE.length + 1;
		const piece = text.slice(start, start + cut);
		chunks.push(reopen + piece + (inCode(start + cut) ? close(piece) : ""));
		start += cut;
	}
}

function webhook(input: DeliveryInput, note: string): string {
	const { job } = input;
	const fields = { agent: input.agent, job_id: job.id, schedule: job.schedule, trigger_type: job.trigger_type, status: job.status, finished_at: job.finished_at, cut_short: input.cutShort === true };
	return webhookBody(fields, input.answer, input.dashboardUrl, input.answerChars, note);
}

type SlackBlock =
	| { type: "header"; text: { type: "plain_text"; text: string; emoji: true } }
	| { type: "section"; text: { type: "mrkdwn"; text: string } }
	| { type: "context"; elements: { type: "mrkdwn"; text: string }[] };

const section = (text: string): SlackBlock => ({ type: "section", text: { type: "mrkdwn", text } });

function slackBody(input: DeliveryInput): unknown {
	const { job } = input;
	const header: SlackBlock = {
		type: "header",
		// plain_text is shown as typed: no escaping, and no mrkdwn to break.
		text: { type: "plain_text", text: clip(`${input.agent} · ${job.schedule ?? job.trigger_type}`, SLACK_HEADER_LIMIT), emoji: true },
	};
	const link = input.dashboardUrl ? ` · <${escapeSlack(input.dashboardUrl)}|Open in drover>` : "";
	const context: SlackBlock = {
		type: "context",
		// Said here too: the note that ends a cut answer goes with the answer's last blocks if Slack's cap cuts them.
		elements: [{ type: "mrkdwn", text: `Job \`${escapeSlack(job.id)}\` · ${escapeSlack(job.trigger_type)} · ${escapeSlack(job.status)}${input.cutShort ? " · cut short at max_tokens" : ""}${link}` }],
	};

	// The model writes standard Markdown; a section shows mrkdwn. The note goes after the conversion,
	// which closes a code block the cut answer left open, so the note is not shown as code. (Not after
	// a head: the context line says it.)
	const mrkdwn = markdownToMrkdwn(input.answer) + (input.cutShort && input.answerChars === undefined ? CUT_SHORT_NOTE : "");
	// Slack refuses a section with empty text; an empty answer still gets a visible section.
	let chunks = mrkdwn.trim() === "" ? ["_(empty answer)_"] : splitMrkdwn(mrkdwn);
	const room = SLACK_MAX_BLOCKS - 2; // the header and the context
	const overflow = chunks.length > room;
	if (overflow || input.answerChars !== undefined) {
		const where = input.dashboardUrl ? `<${escapeSlack(input.dashboardUrl)}|in drover>` : `in job \`${escapeSlack(job.id)}\`'s output`;
		const why = overflow ? `: Slack shows at most ${SLACK_MAX_BLOCKS} blocks` : "";
		chunks = [...chunks.slice(0, room - 1), `_…answer truncated${why}. The full answer is ${where}._`];
	}

	const answer = input.cutShort && input.answerChars === undefined ? input.answer + CUT_SHORT_NOTE : input.answer;
	const head = answer.length > SLACK_FALLBACK_CHARS ? graphemeSlice(answer, SLACK_FALLBACK_CHARS) + ELLIPSIS : answer;
	return {
		text: escapeSlack(`${input.agent}: ${head}`),
		blocks: [header, ...chunks.map(section), context],
	};
}

function discordBody(input: DeliveryInput): unknown {
	const { job } = input;
	const origin = job.schedule !== null ? `schedule: ${job.schedule} (${job.trigger_type})` : `trigger: ${job.trigger_type}`;
	// As Slack's body does: a reader of a cut answer is told so, and where the rest is.
	const cut = input.answer.length > DISCORD_CONTENT_LIMIT || input.answerChars !== undefined;
	// The note that ends an answer cut short at max_tokens is past the content's limit when the answer is long.
	const shortened = input.cutShort ? `${origin}\nThe model's answer was cut short at max_tokens.` : origin;
	const description = cut ? `${shortened}\nThe answer is cut to ${DISCORD_CONTENT_LIMIT} characters; the full answer is in job ${job.id}'s output${input.dashboardUrl ? " (the link above)" : ""}.` : shortened;
	return {
		content: clip(input.answer, DISCORD_CONTENT_LIMIT),
		embeds: [
			{
				title: clip(input.agent, DISCORD_TITLE_LIMIT),
				description: clip(description, DISCORD_DESCRIPTION_LIMIT),
				...(input.dashboardUrl ? { url: input.dashboardUrl } : {}),
				...(job.finished_at ? { timestamp: job.finished_at } : {}),
				footer: { text: clip(job.id, DISCORD_FOOTER_LIMIT) },
			},
		],
		// Nothing in an answer may ping: not @everyone/@here, not users, not roles.
		allowed_mentions: { parse: [] },
	};
}

/** The body of an agent's delivery to its configured target. `answer` should already be redacted. */
export function formatDelivery(target: DeliveryTarget, given: DeliveryInput): FormattedBody {
	if (target === "slack") return { body: JSON.stringify(slackBody(given)), contentType: JSON_CONTENT_TYPE };
	// A head's end is not the answer's: the note would follow text the answer goes on from.
	const note = given.cutShort && given.answerChars === undefined ? CUT_SHORT_NOTE : "";
	const body = target === "discord" ? JSON.stringify(discordBody({ ...given, answer: given.answer + note })) : webhook(given, note);
	return { body, contentType: JSON_CONTENT_TYPE };
}

/** The body of an after_run/on_error hook call: the event and the (redacted) job record. */
export function formatHook(event: HookEvent, job: unknown): FormattedBody {
	return { body: JSON.stringify({ type: `drover.job.${event}`, job }), contentType: JSON_CONTENT_TYPE };
}
