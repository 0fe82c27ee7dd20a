import { describe, expect, it } from "vitest";
import { planTick } from "../../src/scheduler/occurrences.ts";

// README: a slot is fired `on_time` within its minute, `late` within the grace window. The job and
// its ledger row carry the word, so where one ends and the other begins is what a user reads.

const hourly = { cron: "0 * * * *", timezone: "UTC", catch_up: false, enabled: true };
const cursor = new Date("2026-01-15T09:59:30Z");
const dispatchAt = (iso: string) => planTick(hourly, cursor, new Date(iso)).fires.map((f) => f.dispatch);

describe("on_time ends with the slot's minute", () => {
	it("a tick in the slot's last millisecond fires it on time", () => {
		expect(dispatchAt("2026-01-15T10:00:59.999Z")).toEqual(["on_time"]);
	});

	it("a tick a whole minute after the slot, in the next minute, fires it late", () => {
		expect(dispatchAt("2026-01-15T10:01:00.000Z")).toEqual(["late"]);
	});
});
