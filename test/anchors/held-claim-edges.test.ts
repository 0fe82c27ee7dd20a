import { describe, expect, it } from "vitest";
import { heldClaim } from "../../durable-objects/agent/held-claims.ts";
import type { AgentDefinition } from "../../src/config/schema.ts";
import { createJob, type JobRecord } from "../../src/jobs/model.ts";

// A scheduled run held before it started (paused, disabled, queued behind capacity) is judged when it
// starts as a slot missed by that much (Hermes' grace window max(120 s, min(period / 2, 2 h))): within
// the window it runs as claimed, past it by a millisecond it runs late (catch_up on) or not at all.
// held-claims.test.ts judges it 28 and 32 minutes after an hourly slot; these pin the edges exactly.
const SLOT = Date.parse("2027-01-05T10:10:00Z");
const MIN = 60_000;

function claimed(schedule = "hourly", dispatch: "on_time" | "catch_up" = "on_time"): JobRecord {
	return createJob(
		{ agent: "held-edge", trigger_type: "schedule", definition_revision: "rev", schedule, scheduled_instant: new Date(SLOT), dispatch },
		new Date(SLOT),
	);
}

function agent(schedules: Record<string, { cron: string; catch_up: boolean; enabled?: boolean }>): AgentDefinition {
	const full = Object.fromEntries(Object.entries(schedules).map(([name, s]) => [name, { timezone: "UTC", enabled: true, ...s }]));
	return { name: "held-edge", schedules: full } as unknown as AgentDefinition;
}

const at = (ms: number) => () => ms;

describe("a held run at its grace window's edge", () => {
	it("an hourly slot held exactly 30 min runs as claimed; 30 min and 1 ms with catch_up off is not run", () => {
		const def = agent({ hourly: { cron: "10 * * * *", catch_up: false } });
		expect(heldClaim(claimed(), def, at(SLOT + 30 * MIN))).toEqual({ run: true, late: false, note: null });
		const past = heldClaim(claimed(), def, at(SLOT + 30 * MIN + 1));
		expect(past).toEqual({ run: false, reason: expect.stringMatching(/grace window of 30m; schedule hourly has catch_up: false$/) });
	});

	it("with catch_up on, one held past the window runs labelled late; a catch-up run stays one", () => {
		const def = agent({ hourly: { cron: "10 * * * *", catch_up: true } });
		expect(heldClaim(claimed(), def, at(SLOT + 30 * MIN + 1))).toMatchObject({ run: true, late: true });
		expect(heldClaim(claimed("hourly", "catch_up"), def, at(SLOT + 30 * MIN + 1))).toMatchObject({ run: true, late: false });
	});

	it("a daily slot's window is capped at 2 h, and an every-minute slot's floored at 120 s", () => {
		const daily = agent({ hourly: { cron: "10 10 * * *", catch_up: false } });
		expect(heldClaim(claimed(), daily, at(SLOT + 120 * MIN))).toMatchObject({ run: true, late: false });
		expect(heldClaim(claimed(), daily, at(SLOT + 120 * MIN + 1))).toMatchObject({ run: false });
		const minutely = agent({ hourly: { cron: "* * * * *", catch_up: false } });
		expect(heldClaim(claimed(), minutely, at(SLOT + 2 * MIN))).toMatchObject({ run: true, late: false });
		expect(heldClaim(claimed(), minutely, at(SLOT + 2 * MIN + 1))).toMatchObject({ run: false });
	});

	it("a run whose schedule was removed since its claim has the shortest window, 2 min, and is then not run", () => {
		const def = agent({ other: { cron: "10 * * * *", catch_up: true } });
		expect(heldClaim(claimed(), def, at(SLOT + 2 * MIN))).toEqual({ run: true, late: false, note: null });
		expect(heldClaim(claimed(), def, at(SLOT + 2 * MIN + 1))).toEqual({ run: false, reason: expect.stringMatching(/grace window of 2m; schedule hourly no longer exists$/) });
	});

	it("a run whose schedule was disabled since is judged by its schedule's window, and past it is not run even with catch_up on", () => {
		const def = agent({ hourly: { cron: "10 * * * *", catch_up: true, enabled: false } });
		expect(heldClaim(claimed(), def, at(SLOT + 30 * MIN))).toMatchObject({ run: true, late: false });
		expect(heldClaim(claimed(), def, at(SLOT + 30 * MIN + 1))).toEqual({ run: false, reason: expect.stringMatching(/schedule hourly is disabled$/) });
	});

	it("a manual run is never judged: it has no slot", () => {
		const manual = createJob({ agent: "held-edge", trigger_type: "manual", definition_revision: "rev" }, new Date(SLOT));
		expect(heldClaim(manual, agent({}), at(SLOT + 30 * 24 * 60 * MIN))).toEqual({ run: true, late: false, note: null });
	});
});
