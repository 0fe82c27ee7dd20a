import { SubrequestBudget } from "../../src/shared/subrequests.ts";

/** An alarm run hands over to a fresh one after this long, well inside the 15-minute wall-time limit. */
export const ALARM_BUDGET_MS = 10 * 60_000;

/**
 * What one pass may spend of the invocation that runs it. Cloudflare ends an alarm invocation at 15
 * minutes of wall time, and every call then in flight with it: a tool call cut off that way leaves
 * its job indeterminate. Past the invocation's subrequest limit every fetch, R2 and D1 call throws.
 * Loops take no step, and a step makes no further tool call, once the pass's budget is spent; what
 * is left is due at once, and the next alarm run takes it up in a fresh invocation.
 *
 * A Durable Object's concurrent requests share its I/O, so which invocation the platform charges a
 * subrequest to is not something the object can see: a pass counts everything it sends from its
 * start, which is what an alarm's own invocation makes at the least.
 */
export class PassBudget {
	/** When the pass began: the loops it launches, and those launched while it runs, share its budget. */
	readonly began: number;
	/** Subrequests made since the pass began (see countedEnv), against SUBREQUEST_SHARE of the limit. */
	readonly subrequests: SubrequestBudget;

	constructor(began: number, subrequestLimit: number) {
		this.began = began;
		this.subrequests = new SubrequestBudget(subrequestLimit);
	}

	note(): void {
		this.subrequests.note();
	}

	/** Whether the pass should hand over: no new step, no new tool call. */
	spent(now = Date.now()): boolean {
		return now - this.began >= ALARM_BUDGET_MS || this.subrequests.left === 0;
	}

	/** Whether a wait that comes due at `at` still falls within the pass's time. */
	covers(at: number): boolean {
		return at < this.began + ALARM_BUDGET_MS;
	}
}
