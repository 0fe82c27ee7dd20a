/**
 * A shard's queue of minutes not called through (see durable-objects/shard/shard-do.ts): normally
 * only the latest tick's own minute, its overflow called by a follow-up seconds later. Nothing in it
 * is ever dropped, so a shard whose follow-ups cannot keep up with its ticks (more due agents a
 * minute than its invocations can call in one) only grows it, and its agents claim later and later.
 */

/**
 * A shard is behind once the oldest minute it has pending is this many minutes older than its newest
 * (the latest tick's): that many ticks came and went, with their follow-ups, without calling that
 * minute through. One minute's overflow (a span of 0) or a slow minute or two is ordinary.
 */
export const BEHIND_MINUTES = 3;

/**
 * Whether a shard with these pending minutes (oldest first) is behind. Once behind it stays so until
 * no minute older than its newest is left, so a backlog hovering at the threshold is one warning,
 * not one every other tick.
 */
export function isBehind(pending: readonly number[], wasBehind: boolean): boolean {
	if (pending.length === 0) return false;
	const span = pending.at(-1)! - pending[0]!;
	return span >= BEHIND_MINUTES * 60_000 || (wasBehind && span > 0);
}

/** What a heartbeat says of the shards' queues, as the latest tick left them. */
export interface Backlog {
	scheduled_time: string;
	deferred: number | null;
	oldest_deferred_at: string | null;
	shards_behind: number | null;
}

/** The warning GET /v1/status lists (and `drover doctor` and the dashboard show) while a shard is behind. */
export function backlogWarning(b: Backlog): string | null {
	if (!b.shards_behind || b.oldest_deferred_at === null) return null;
	const minutes = Math.round((Date.parse(b.scheduled_time) - Date.parse(b.oldest_deferred_at)) / 60_000);
	const shards = b.shards_behind === 1 ? "1 scheduler shard is" : `${b.shards_behind} scheduler shards are`;
	return (
		`${shards} behind: due agents still wait to be called for ${b.oldest_deferred_at}, ${minutes} minute${minutes === 1 ? "" : "s"} before the last tick, ` +
		`and ${b.deferred ?? 0} were left to follow-ups when it ended. None is dropped: each is called late and claims its slot once. ` +
		"Its agents fall due faster than its invocations call them (up to 8,000 an invocation at the default SUBREQUEST_LIMIT, 32 at a time): spread their schedules over more minutes, or raise [limits] subrequests and SUBREQUEST_LIMIT with it"
	);
}
