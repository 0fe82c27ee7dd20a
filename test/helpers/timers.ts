/**
 * Watches the isolate's timers: workerd lets an isolate hold 10,000 pending timers, so a wait or a
 * deadline must release its timer once it no longer matters. Counts the timers set whose delay
 * `select` picks and those of them that fired, and keeps those still pending (neither fired nor cleared).
 */
export function trackTimers(select: (ms: number) => boolean, onSet?: (ms: number) => void) {
	const realSet = globalThis.setTimeout;
	const realClear = globalThis.clearTimeout;
	const tracked = { set: 0, fired: 0, pending: new Set<unknown>(), restore };
	globalThis.setTimeout = ((fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
		const id = realSet(() => {
			// Run to its end, not cleared: what a wait that really waited leaves.
			if (tracked.pending.delete(id)) tracked.fired++;
			fn(...args);
		}, ms);
		if (select(ms ?? 0)) {
			tracked.set++;
			tracked.pending.add(id);
			onSet?.(ms ?? 0);
		}
		return id;
	}) as typeof setTimeout;
	globalThis.clearTimeout = ((id?: Parameters<typeof clearTimeout>[0]) => {
		tracked.pending.delete(id);
		realClear(id);
	}) as typeof clearTimeout;
	function restore(): void {
		globalThis.setTimeout = realSet;
		globalThis.clearTimeout = realClear;
	}
	return tracked;
}
