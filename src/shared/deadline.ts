/**
 * A time limit for one piece of outbound work, released as soon as that work is done. workerd caps
 * the timers an isolate may have pending (10,000, shared by every Durable Object in it), and the
 * timer behind AbortSignal.timeout() stays pending until it fires: a job making thousands of tool
 * calls ran out, and the agent's work failed until the oldest expired.
 */
export interface Deadline {
	/** Aborts with a TimeoutError at the deadline, or when any of the other signals aborts. */
	readonly signal: AbortSignal;
	/** Releases the timer; call it once the work is over, however it ended. */
	clear(): void;
}

export function deadline(ms: number, ...also: (AbortSignal | undefined)[]): Deadline {
	const controller = new AbortController();
	const timer = setTimeout(() => controller.abort(new DOMException(`timed out after ${ms} ms`, "TimeoutError")), ms);
	const others = also.filter((s): s is AbortSignal => s !== undefined);
	return {
		signal: others.length > 0 ? AbortSignal.any([controller.signal, ...others]) : controller.signal,
		clear: () => clearTimeout(timer),
	};
}
