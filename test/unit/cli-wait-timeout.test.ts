import { afterEach, describe, expect, it, vi } from "vitest";
import { giveUpAt, waitTimeoutOption } from "../../cli/commands/trigger.ts";

// `--wait-timeout`'s value and its timer (cli/commands/trigger.ts); test/e2e/cli-wait-timeout.test.ts
// runs it through the real command.

const DAY = 86_400_000;

describe("--wait-timeout's value", () => {
	const parse = (value: string) => waitTimeoutOption().parseArg!(value, undefined);

	it("is a duration as definitions write them, kept as given to be said back", () => {
		expect(parse("90s")).toEqual({ given: "90s", ms: 90_000 });
		expect(parse(" 1h30m ")).toEqual({ given: "1h30m", ms: 5_400_000 });
		expect(parse("1d")).toEqual({ given: "1d", ms: DAY });
	});

	it("refuses what is no duration, and a zero one", () => {
		for (const value of ["0s", "0m", "soon", "10", "1.5h", "-5m", ""]) expect(() => parse(value), value).toThrow(/not a duration of at least 1s/);
	});
});

describe("giveUpAt", () => {
	afterEach(() => {
		vi.useRealTimers();
	});

	it("fires at the time given, past setTimeout's 24.8-day ceiling too (an approval may wait 30 days)", () => {
		vi.useFakeTimers({ now: 0 });
		const fired = vi.fn();
		giveUpAt(30 * DAY, fired);
		vi.advanceTimersByTime(30 * DAY - 1);
		expect(fired).not.toHaveBeenCalled();
		vi.advanceTimersByTime(1);
		expect(fired).toHaveBeenCalledTimes(1);
	});

	it("fires at once for a time already past, and never once cancelled", () => {
		vi.useFakeTimers({ now: 10_000 });
		const past = vi.fn();
		giveUpAt(5_000, past);
		vi.advanceTimersByTime(0);
		expect(past).toHaveBeenCalledTimes(1);
		const cancelled = vi.fn();
		giveUpAt(10_000 + 30 * DAY, cancelled).cancel();
		vi.advanceTimersByTime(31 * DAY);
		expect(cancelled).not.toHaveBeenCalled();
	});

	it("cancels a long wait after its first re-arm too", () => {
		vi.useFakeTimers({ now: 0 });
		const fired = vi.fn();
		const timer = giveUpAt(30 * DAY, fired);
		vi.advanceTimersByTime(25 * DAY);
		timer.cancel();
		vi.advanceTimersByTime(10 * DAY);
		expect(fired).not.toHaveBeenCalled();
	});
});
