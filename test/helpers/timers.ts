import { env, runInDurableObject } from "cloudflare:test";
import type { AgentDO } from "../../durable-objects/agent/agent-do.ts";
import type { WakeTimers } from "../../durable-objects/agent/pass.ts";

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

/**
 * Holds the isolate's timers whose delay `select` picks instead of arming them: each fires only when
 * the test calls `fire`, after moving its clock on (vi.setSystemTime), so that a deadline comes when
 * the test says, not after real time has passed. A timer cleared before is dropped. Call `fire` in
 * the object whose work set the timer (runInDurableObject): what it aborts is that object's I/O.
 */
export function timersByHand(select: (ms: number) => boolean) {
	const realSet = globalThis.setTimeout;
	const realClear = globalThis.clearTimeout;
	const held = new Map<object, { fn: () => void; ms: number }>();
	globalThis.setTimeout = ((fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
		if (!select(ms ?? 0)) return realSet(fn, ms, ...args);
		const id = {};
		held.set(id, { fn: () => fn(...args), ms: ms ?? 0 });
		return id;
	}) as typeof setTimeout;
	globalThis.clearTimeout = ((id?: Parameters<typeof clearTimeout>[0]) => {
		if (!held.delete(id as object)) realClear(id);
	}) as typeof clearTimeout;
	return {
		/** The delays of the timers held and neither fired nor cleared, in the order they were set. */
		pending: (): number[] => [...held.values()].map((t) => t.ms),
		/** Fires every timer held, as the isolate would once their delays had passed. */
		fire(): void {
			const due = [...held.values()];
			held.clear();
			for (const { fn } of due) fn();
		},
		restore(): void {
			globalThis.setTimeout = realSet;
			globalThis.clearTimeout = realClear;
		},
	};
}

/**
 * Takes over an agent object's mid-pass wakeups (Passes.wakeTimers, see pass.ts workAt): each timer a
 * pass sets for a wait that comes due while its loops run is kept, with its delay, and fires only
 * when the test calls `fire`, after moving its clock on (vi.setSystemTime): the test, not the wall
 * clock, decides when the wait is over. `restore` gives the object its isolate's timers back. Each
 * call takes a stub of its own: a test may go on in the object's context (a fake it answered) and
 * use none made in another.
 */
export async function wakeupsByHand(agent: string): Promise<{
	/** The delays of the timers set and neither fired nor cleared, in the order they were set. */
	pending: () => number[];
	/** Fires every pending timer in the object, as the isolate would once their delays had passed. */
	fire: () => Promise<void>;
	restore: () => Promise<void>;
}> {
	const timers = new Map<object, { wake: () => void; ms: number }>();
	const byHand: WakeTimers = {
		set: (wake, ms) => {
			const timer = {};
			timers.set(timer, { wake, ms });
			return timer;
		},
		clear: (timer) => void timers.delete(timer as object),
	};
	const passesOf = (instance: AgentDO) => (instance as unknown as { passes: { wakeTimers: WakeTimers } }).passes;
	let original: WakeTimers | undefined;
	const inObject = <T>(run: (instance: AgentDO) => T) => runInDurableObject(env.AGENT.getByName(agent), run);
	await inObject((instance) => {
		original = passesOf(instance).wakeTimers;
		passesOf(instance).wakeTimers = byHand;
	});
	return {
		pending: () => [...timers.values()].map((t) => t.ms),
		// In the object, as its own timers fire: what a wake starts does its I/O there.
		fire: () =>
			inObject(() => {
				const due = [...timers.values()];
				timers.clear();
				for (const { wake } of due) wake();
			}),
		restore: () =>
			inObject((instance) => {
				passesOf(instance).wakeTimers = original!;
			}),
	};
}
