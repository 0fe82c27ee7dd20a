// What a definition and the Worker's vars are warned of, at the boundaries README.md states (storage
// "from 8 GB", var ranges 1..3650 and 120..604800, a model's end-of-life day, an approval wait "not
// shorter than" the timeout): a mutation walk found each end unchecked.
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { modelWarnings, parseFleet } from "../../src/config/fleet.ts";
import { modelIdProblem } from "../../src/config/models.ts";
import { d1StorageWarning, storageWarning } from "../../src/config/storage.ts";
import { numberVar, numberVarIssues, varIssues } from "../../src/config/vars.ts";
import { definitionWarnings, scheduleWarnings, sharedWebhookSecrets } from "../../src/config/warnings.ts";

describe("storage, from 8 GB", () => {
	it("is warned of at exactly 8 GB, an object's and D1's alike", () => {
		expect(storageWarning(8_000_000_000)).toMatch(/^storage: the agent's Durable Object holds 8\.0 GB of the 10 GB/);
		expect(d1StorageWarning(8_000_000_000)).toMatch(/^storage: D1 holds 8\.0 GB of the 10 GB/);
	});
});

describe("the Worker's numeric vars at the ends of their ranges", () => {
	it("take RETENTION_DAYS 1 and 3650, HEARTBEAT_STALE_SECONDS 120 and 604800, as set", () => {
		expect(numberVar({ RETENTION_DAYS: "1" }, "RETENTION_DAYS")).toBe(1);
		expect(numberVar({ RETENTION_DAYS: "3650" }, "RETENTION_DAYS")).toBe(3650);
		expect(numberVar({ HEARTBEAT_STALE_SECONDS: "120" }, "HEARTBEAT_STALE_SECONDS")).toBe(120);
		expect(numberVar({ HEARTBEAT_STALE_SECONDS: "604800" }, "HEARTBEAT_STALE_SECONDS")).toBe(604_800);
		expect(numberVarIssues({ RETENTION_DAYS: "1", HEARTBEAT_STALE_SECONDS: "604800" })).toEqual([]);
	});

	it("read a heartbeat staleness that is no whole number as the default, not as the minimum (README: anything else invalid as the default)", () => {
		for (const bad of ["-5", "1e2"]) {
			expect(numberVar({ HEARTBEAT_STALE_SECONDS: bad }, "HEARTBEAT_STALE_SECONDS"), bad).toBe(180);
			expect(numberVarIssues({ HEARTBEAT_STALE_SECONDS: bad })[0]?.message, bad).toMatch(/; the default 180 is used$/);
		}
	});

	it("refuse a PUBLIC_URL carrying a password without a user, as one with a user", () => {
		expect(varIssues({ PUBLIC_URL: "https://:s3cret-pass-0123@drover.example.test" })).toEqual([{ path: "PUBLIC_URL", message: expect.stringContaining("is not an http(s) origin") }]);
	});
});

describe("a definition's warnings at their edges", () => {
	const gated = { tools: [{ type: "http_fetch" as const, requires_approval: true }], model: "claude-sonnet-5-5", fallback_models: [] };

	it("warn of an approval wait as long as the timeout (not shorter than it), not of one a second shorter", () => {
		expect(definitionWarnings({ ...gated, approval_timeout: "30m", timeout: "30m" })).toEqual([expect.stringMatching(/^approval_timeout 30m is not shorter than timeout 30m \(tool http_fetch needs approval\)/)]);
		expect(definitionWarnings({ ...gated, approval_timeout: "29m59s", timeout: "30m" })).toEqual([]);
	});

	it("say a model retired from the first moment of its end-of-life day", () => {
		const fleet = parseFleet(stringify({ version: 1, agents: [{ name: "old", prompt: "p", model: "claude-sonnet-4-5" }] }));
		expect(modelWarnings(fleet, new Date("2026-11-30T00:00:00.000Z"))).toEqual(['agent "old": model claude-sonnet-4-5 was retired on 2026-11-30; its requests fail, switch to a current model']);
		expect(modelWarnings(fleet, new Date("2026-11-29T23:59:59.999Z"))).toEqual(['agent "old": model claude-sonnet-4-5 is deprecated and will be retired on 2026-11-30']);
	});

	it("suggest the id a long or upper-case misspelling is near", () => {
		expect(modelIdProblem("claude-mythos-preveiw")).toContain("(did you mean claude-mythos-preview?)");
		expect(modelIdProblem("CLAUDE-OPUS-5-5")).toContain("(did you mean claude-opus-5-5?)");
	});

	it("say nothing of day 29 in months that all have one, nor of a webhook secret one agent alone holds", () => {
		const cron = (expression: string) => scheduleWarnings({ schedules: { s: { cron: expression, timezone: "UTC", catch_up: true, enabled: true } } });
		expect(cron("0 9 29 1,3 *")).toEqual([]);
		expect(cron("0 9 29 1,2 *")).toEqual(['schedule s: cron "0 9 29 1,2 *" runs in Feb only in leap years; for the last day of every month write "0 9 L 1,2 *"']);
		expect(sharedWebhookSecrets([{ name: "alone", webhook: { secret: "ALONE_SECRET" } }])).toEqual([]);
		expect(sharedWebhookSecrets([{ name: "one", webhook: { secret: "S" } }, { name: "two", webhook: { secret: "S" } }])).toHaveLength(1);
	});
});
