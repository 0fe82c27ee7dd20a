// npm start's cron ticks: workerd locally has no Cron Triggers, so scripts/start.mjs calls the
// Worker's scheduled handler itself, once for each minute, as Cloudflare fires `* * * * *`.

const MINUTE = 60_000;

/**
 * The tick after the one for `last` (the last minute ticked, epoch ms): the next minute, and how long
 * to wait at `now` before sending it (0 once its time has come). Counted from the last minute ticked,
 * not from the clock: a tick whose request ran past a minute boundary is followed at once by the
 * minute it ran into, not by the one after it (which skipped a minute); and a timer that wakes a
 * little early waits out the rest rather than ticking the same minute again.
 * @param {number} last
 * @param {number} now
 * @returns {{ minute: number, wait: number }}
 */
export function nextTick(last, now) {
	const minute = last + MINUTE;
	return { minute, wait: Math.max(0, minute - now) };
}

/**
 * Ticks every minute after `first` (already ticked), each once, in order, each when its time has come
 * and never before, awaiting each tick before the next, until `running()` says stop. A wait that
 * wakes over a minute late means the process or machine was suspended (a laptop asleep): the minutes
 * it slept through are not ticked, as Cloudflare fires none for a Worker that was down, and the
 * scheduler's catch-up rules decide from the current minute; `skipped` is told which were.
 * @param {number} first
 * @param {{ tick: (minute: number) => Promise<void>, running: () => boolean, now?: () => number, sleep?: (ms: number) => Promise<void>, skipped?: (from: number, to: number) => void }} io
 */
export async function tickEachMinute(first, { tick, running, now = Date.now, sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms)), skipped = () => {} }) {
	let last = first;
	while (running()) {
		const { minute, wait } = nextTick(last, now());
		if (wait > 0) {
			await sleep(wait);
			const current = Math.floor(now() / MINUTE) * MINUTE;
			if (current - minute > MINUTE) {
				skipped(minute, current - MINUTE);
				last = current - MINUTE;
			}
			continue;
		}
		await tick(minute);
		last = minute;
	}
}
