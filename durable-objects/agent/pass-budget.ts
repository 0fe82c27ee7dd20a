/** An alarm run hands over to a fresh one after this long, well inside the 15-minute wall-time limit. */
export const ALARM_BUDGET_MS = 10 * 60_000;

/**
 * What one pass may spend of the invocation that runs it. Cloudflare ends an alarm invocation at 15
 * minutes of wall time, and every call then in flight with it: a tool call cut off that way leaves
 * its job indeterminate. Loops take no step, and a step makes no further tool call, once it is
 * spent; what is left is due at once, and the next alarm run takes it up in a fresh invocation.
 */
export class PassBudget {
	/** When the pass began: the loops it launches, and those launched while it runs, share its budget. */
	readonly began: number;

	constructor(began: number) {
		this.began = began;
	}

	/** Whether the pass should hand over: no new step, no new tool call. */
	spent(now = Date.now()): boolean {
		return now - this.began >= ALARM_BUDGET_MS;
	}

	/** Whether a wait that comes due at `at` still falls within the pass's time. */
	covers(at: number): boolean {
		return at < this.began + ALARM_BUDGET_MS;
	}
}
