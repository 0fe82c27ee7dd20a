import { describe, expect, it } from "vitest";
import { nextTick, tickEachMinute } from "../../scripts/ticks.mjs";

// npm start ticks the Worker's scheduled handler itself, once for each minute, as Cloudflare fires the
// `* * * * *` trigger once for each. Driven here by a clock of the test's own: no waiting.
const MINUTE = 60_000;
const at = (hms: string) => Date.parse(`2025-06-01T${hms}Z`);

/**
 * Runs tickEachMinute from `first` on a fake clock starting at `start`, each tick's request taking the
 * next of `takes` (ms; 200 once they run out), and each sleep waking `early` ms before its time, until
 * `count` ticks went out. Returns each tick's minute and when it was sent.
 */
async function run(first: number, start: number, count: number, { takes = [] as number[], early = 0 } = {}) {
	let t = start;
	const sent: { minute: string; at: number }[] = [];
	await tickEachMinute(first, {
		now: () => t,
		sleep: async (ms) => {
			t += Math.max(1, ms - early);
		},
		tick: async (minute) => {
			sent.push({ minute: new Date(minute).toISOString().slice(11, 19), at: t });
			t += takes.shift() ?? 200;
		},
		// A day of the fake clock at most: a wrong schedule fails here rather than running on.
		running: () => sent.length < count && t < start + 24 * 60 * MINUTE,
	});
	return sent;
}

describe("npm start's ticks", () => {
	it("ticks the minute after the last one ticked, at once when its time has passed, else when it comes", () => {
		expect(nextTick(at("22:28:00"), at("22:29:00.283"))).toEqual({ minute: at("22:29:00"), wait: 0 });
		expect(nextTick(at("22:28:00"), at("22:28:10"))).toEqual({ minute: at("22:29:00"), wait: 50_000 });
		// Minutes behind (a tick's request that took that long): the next one still, not the clock's.
		expect(nextTick(at("22:28:00"), at("22:31:30"))).toEqual({ minute: at("22:29:00"), wait: 0 });
	});

	it("ticks the minute a first tick's slow request ran into, not the one after it (22:28's tick answered at 22:29:00.283 skipped 22:29)", async () => {
		const sent = await run(at("22:28:00"), at("22:29:00.283"), 3);
		expect(sent.map((s) => s.minute)).toEqual(["22:29:00", "22:30:00", "22:31:00"]);
		expect(sent[0]!.at).toBe(at("22:29:00.283"));
		expect(sent[1]!.at).toBe(at("22:30:00"));
	});

	it("ticks every minute once, in order, each no earlier than its minute, whatever a tick's request takes", async () => {
		// 150 s, then 61 s, then quick: the minutes it ran past go out one after another, none twice.
		const sent = await run(at("10:00:00"), at("10:00:00.300"), 8, { takes: [200, 150_000, 61_000] });
		expect(sent.map((s) => s.minute)).toEqual(["10:01:00", "10:02:00", "10:03:00", "10:04:00", "10:05:00", "10:06:00", "10:07:00", "10:08:00"]);
		for (const s of sent) expect(s.at).toBeGreaterThanOrEqual(at(`${s.minute}`));
		// Caught up, each minute's tick goes out on its minute again.
		expect(sent.at(-1)!.at).toBe(at("10:08:00"));
	});

	it("waits out a timer that wakes early rather than ticking a minute twice or before it comes", async () => {
		const sent = await run(at("10:00:00"), at("10:00:00.300"), 3, { early: 2 });
		expect(sent.map((s) => s.minute)).toEqual(["10:01:00", "10:02:00", "10:03:00"]);
		for (const s of sent) expect(s.at).toBeGreaterThanOrEqual(at(s.minute));
	});

	it("ticks none of the minutes a suspended machine slept through, going on from the minute it wakes in, and says which it left", async () => {
		let t = at("10:00:30");
		let slept = false;
		const sent: string[] = [];
		const left: string[][] = [];
		const hms = (ms: number) => new Date(ms).toISOString().slice(11, 19);
		await tickEachMinute(at("10:00:00"), {
			now: () => t,
			// The first wait's timer fires on waking, 8 hours of the wall clock later.
			sleep: async (ms) => {
				t += ms + (slept ? 0 : 8 * 60 * MINUTE);
				slept = true;
			},
			tick: async (minute) => {
				sent.push(hms(minute));
				t += 200;
			},
			skipped: (from, to) => void left.push([hms(from), hms(to)]),
			running: () => sent.length < 2,
		});
		// Replayed, each of the 480 would have been dated its own minute, an on-time run of every slot.
		expect(sent).toEqual(["18:01:00", "18:02:00"]);
		expect(left).toEqual([["10:01:00", "18:00:00"]]);
	});

	it("stops when told to, sending nothing more", async () => {
		let t = at("10:00:30");
		const sent: number[] = [];
		let running = true;
		await tickEachMinute(at("10:00:00"), {
			now: () => t,
			sleep: async (ms) => {
				t += ms;
				running = false;
			},
			tick: async (minute) => void sent.push(minute),
			running: () => running,
		});
		expect(sent).toEqual([]);
	});
});
