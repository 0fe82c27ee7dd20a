// @ts-check
// ── polling: a view's reloads, and which answer may draw ──
let viewAbort = new AbortController();
const POLL_STALL_MS = 120000;
const LIVE_MS = 10000;
/** Whether a view's poll keeps the scheduler pill current (else start() polls it on its own). */
let statusPolled = false;
/** Redraws the scheduler pill from /v1/status; a failure leaves it as it was (the view's own poll says what is down). */
const refreshScheduler = () => api("/v1/status").then(showScheduler, () => {});
/**
 * Calls fn every ms while the tab is shown: the next call is timed from the end of the last, so loads
 * never overlap. The scheduler pill is read with each call, unless fn shows it itself (showsStatus).
 * ms may be a function, read as each next call is set: a view whose load grows can poll less often.
 * @param {() => Promise<unknown>} fn @param {number | (() => number)} ms @param {boolean} [showsStatus]
 */
function poll(fn, ms, showsStatus) {
	const signal = viewAbort.signal;
	statusPolled = true;
	let t = 0;
	// Said on the view (data-poll: "set", the next poll timed; "loading", its loads under way): the
	// next is timed only once the loads answer, so whoever moves the page's clock (the dashboard's
	// tests) must wait for "set", or the clock passes no timer.
	const view = $("#view");
	const next = () => {
		t = setTimeout(again, typeof ms === "number" ? ms : ms());
		view.dataset.poll = "set";
	};
	const again = async () => {
		view.dataset.poll = "loading";
		if (!document.hidden && token()) {
			// A load that never answers (a half-open connection) must not end the polling for good:
			// past POLL_STALL_MS the next is set anyway, and whichever answers last is ignored.
			// A failure's notice stays only until a later poll of the view succeeds.
			const load = Promise.all([fn().then(pollSucceeded, pollFailed), showsStatus ? null : refreshScheduler()]);
			await Promise.race([load, new Promise((resolve) => setTimeout(resolve, POLL_STALL_MS))]);
		}
		if (!signal.aborted) next();
	};
	next();
	signal.addEventListener("abort", () => clearTimeout(t));
}
/**
 * A view's load where a poll, an action's reload or a filter change can overlap: the answer to an
 * older request must not replace what a newer one already drew. load(fresh) calls fresh() once
 * its data is in, and draws only if it answers true.
 */
/** @param {(fresh: () => boolean) => Promise<void>} load @returns {() => Promise<void>} */
function newestWins(load) {
	let started = 0;
	let drawn = 0;
	return () => {
		const n = ++started;
		return load(() => {
			if (n < drawn) return false;
			drawn = n;
			return true;
		});
	};
}
