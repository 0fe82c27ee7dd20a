import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { bundleFleetForTest } from "../../src/config/bundled.ts";
import { REDACTED } from "../../src/security/redact.ts";
import { runTick } from "../../src/scheduler/tick.ts";
import { call } from "../helpers/http.ts";
import { captureLogs } from "../helpers/logs.ts";
import { fake } from "../helpers/outbound.ts";
import { dayFromToday } from "../helpers/ticks.ts";
import { TOKENS } from "../helpers/tokens.ts";

// Values of the Worker's secrets (vitest.config.mts's bindings).
const TICKETS_URL = "https://tickets.example.test/hook";

afterEach(() => {
	vi.restoreAllMocks();
	bundleFleetForTest(undefined);
});

describe("the tick heartbeat's error (GET /v1/status's scheduler.error), when fleet.yaml's faults quote a secret's value", () => {
	it("shows the marker in the value's place there, in the scheduler incident and its alert, and in the tick's log line", async () => {
		// A value pasted into the wrong field: the file's check quotes what it could not read.
		bundleFleetForTest(
			new TextEncoder().encode(
				["version: 1", "agents:", "  - name: nightly", "    prompt: Sum up.", "    schedules:", `      morning: { cron: "${TICKETS_URL}" }`, `      evening: { cron: "${TOKENS.admin}" }`, ""].join("\n"),
			),
		);
		const alerts: string[] = [];
		fake("https://alerts.example.test", async (req) => {
			alerts.push(await req.text());
			return new Response("ok");
		});
		await env.DB.prepare("DELETE FROM scheduler_heartbeat").run();
		const lines = captureLogs();
		const at = dayFromToday(5) + 9 * 3_600_000;
		await expect(runTick(env, at, at)).resolves.toMatchObject({ outcome: "failed" });
		vi.restoreAllMocks();
		bundleFleetForTest(undefined);

		const { scheduler } = (await (await call("/v1/status")).json()) as { scheduler: { outcome: string; error: string } };
		expect(scheduler.outcome).toBe("failed");
		// What a reader needs is kept: which field, and that its value was no cron.
		expect(scheduler.error).toMatch(/agents\[0\]\.schedules\.morning\.cron: invalid cron "\[REDACTED\]"/);
		expect(scheduler.error).toContain(`invalid cron "${REDACTED}"`);
		const { incidents } = (await (await call("/v1/incidents?agent=scheduler")).json()) as { incidents: { error: string; first_seen_at: string }[] };
		const mine = incidents.filter((i) => i.first_seen_at === new Date(at).toISOString());
		expect(mine).toHaveLength(1);
		expect(alerts).toHaveLength(1);
		for (const text of [scheduler.error, mine[0]!.error, JSON.stringify(lines), ...alerts]) {
			expect(text).not.toContain("tickets.example.test/hook");
			expect(text).not.toContain(TOKENS.admin);
		}
		expect(lines.filter((l) => l.event === "tick.fleet_invalid")).toHaveLength(1);
	});
});
