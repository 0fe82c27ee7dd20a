export function nextTick(last: number, now: number): { minute: number; wait: number };
export function tickEachMinute(
	first: number,
	io: { tick: (minute: number) => Promise<void>; running: () => boolean; now?: () => number; sleep?: (ms: number) => Promise<void>; skipped?: (from: number, to: number) => void },
): Promise<void>;
