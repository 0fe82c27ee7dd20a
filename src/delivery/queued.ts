/**
 * A delivery as it waits in its agent's `deliveries` table: what its body is made of, not the body.
 * It is formatted for its target at each attempt, so the dashboard link it carries is the one the
 * deployment's PUBLIC_URL gives when it is sent: a retry after a redeploy that moved the dashboard
 * (or set or removed PUBLIC_URL) links to where it is now, not to where it was when the run ended.
 */
import { codePointLength, graphemeSlice } from "../shared/clip.ts";
import { formatDelivery, type DeliveryInput, type DeliveryJob, type DeliveryTarget, type FormattedBody } from "./format.ts";

/**
 * The row's content_type for a queued delivery: its body is this module's JSON, formatted when
 * sent. A row queued before (a body formatted when queued, `application/json`) is sent as it is.
 */
export const QUEUED_DELIVERY = "application/vnd.drover.delivery+json";

/**
 * UTF-16 units of an answer a queued delivery keeps: more than any target sends (a webhook body's
 * 100 KiB, Slack's 48 sections of 3,000, Discord's 2,000), and a row well within the 2 MB the
 * platform stores in one, even with every unit escaped to six bytes of JSON. An answer may be 8 MB.
 */
export const QUEUED_ANSWER_UNITS = 200_000;

interface Stored {
	agent: string;
	job: Pick<DeliveryJob, "id" | "agent" | "schedule" | "trigger_type" | "status" | "finished_at">;
	answer: string;
	cut_short: boolean;
	/** The whole answer's code points, when `answer` is its head. */
	answer_chars?: number;
}

/** The body a delivery waits with (`answer` redacted already), and its row's content_type. */
export function queuedDelivery(input: Omit<DeliveryInput, "dashboardUrl" | "answerChars">): FormattedBody {
	const { job, answer } = input;
	const head = answer.length > QUEUED_ANSWER_UNITS ? graphemeSlice(answer, QUEUED_ANSWER_UNITS) : answer;
	const stored: Stored = {
		agent: input.agent,
		job: { id: job.id, agent: job.agent, schedule: job.schedule, trigger_type: job.trigger_type, status: job.status, finished_at: job.finished_at },
		answer: head,
		cut_short: input.cutShort === true,
		...(head === answer ? {} : { answer_chars: codePointLength(answer) }),
	};
	return { body: JSON.stringify(stored), contentType: QUEUED_DELIVERY };
}

/** A queued delivery's body for its target now, with the dashboard link as the deployment gives it now. */
export function formatQueued(target: DeliveryTarget, body: string, dashboardUrl: string | null): FormattedBody {
	const stored = JSON.parse(body) as Stored;
	return formatDelivery(target, {
		agent: stored.agent,
		job: { ...stored.job, summary: null },
		answer: stored.answer,
		cutShort: stored.cut_short,
		dashboardUrl,
		...(stored.answer_chars === undefined ? {} : { answerChars: stored.answer_chars }),
	});
}
