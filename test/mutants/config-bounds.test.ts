// The boundaries README.md states for a definition's fields (cron fields' ranges, interval 1m..31d,
// timeout 10s..24h, approval_timeout 1m..30d, a session's 1m..365d, agent names of 1-63 characters),
// taken at their ends, and the advice a near miss gets: a mutation walk found each unchecked.
import { describe, expect, it } from "vitest";
import { parseAgent } from "../helpers/definitions.ts";
import { ConfigError } from "../../src/errors.ts";

function issuesOf(input: Record<string, unknown>): { path: string; message: string }[] {
	try {
		parseAgent({ name: "bounds", prompt: "p", ...input });
	} catch (error) {
		expect(error).toBeInstanceOf(ConfigError);
		return (error as ConfigError).issues;
	}
	return [];
}

const cron = (expression: string, timezone?: string) => issuesOf({ schedules: { a: { cron: expression, ...(timezone === undefined ? {} : { timezone }) } } });
const interval = (value: string) => issuesOf({ schedules: { a: { interval: value } } });

describe("a schedule at the ends of what README.md allows", () => {
	it("takes each cron field's highest value, and a cron written with spaces around it, stored trimmed", () => {
		expect(cron("59 23 31 12 7")).toEqual([]);
		expect(cron("59 23 * * 6")).toEqual([]);
		expect(parseAgent({ name: "bounds", prompt: "p", schedules: { a: { cron: " 0 9 * * 1-5 " } } }).schedules.a).toMatchObject({ cron: "0 9 * * 1-5" });
	});

	it("refuses a cron whose every field is in range but whose date never comes, saying it never fires", () => {
		expect(cron("0 0 30 2 *")).toEqual([{ path: "schedules.a.cron", message: 'cron "0 0 30 2 *" never fires' }]);
	});

	it("takes an interval of 1m and of 31d, and refuses one a minute past 31d", () => {
		expect(interval("1m")).toEqual([]);
		expect(interval("31d")).toEqual([]);
		expect(interval("31d1m")).toEqual([{ path: "schedules.a.interval", message: 'interval "31d1m" must be at most 31d' }]);
	});

	it("says an empty interval is not a duration, rather than too short", () => {
		expect(interval("")).toEqual([{ path: "schedules.a.interval", message: expect.stringMatching(/^interval "" is not a duration; use /) }]);
	});

	it("takes a timeout of 10s and of 24h, an approval_timeout of 1m and of 30d, a session's of 1m and of 365d and max_context_tokens of 1000 and of 900000", () => {
		expect(issuesOf({ timeout: "10s" })).toEqual([]);
		expect(issuesOf({ timeout: "24h" })).toEqual([]);
		expect(issuesOf({ approval_timeout: "1m" })).toEqual([]);
		expect(issuesOf({ approval_timeout: "30d" })).toEqual([]);
		for (const value of ["1m", "365d"]) {
			expect(issuesOf({ session: { mode: "persistent", idle_timeout: value, timeout: value } }), value).toEqual([]);
		}
		for (const tokens of [1000, 900_000]) expect(issuesOf({ session: { mode: "persistent", max_context_tokens: tokens } }), String(tokens)).toEqual([]);
	});

	it("reads Hermes' every in any case as the interval it is, and a date's yearly repeat as a leap year's only on 29 February", () => {
		expect(cron("Every 30m")).toEqual([{ path: "schedules.a.cron", message: 'invalid cron "Every 30m": a run every 30m is an interval, not a cron: write interval: "30m" in place of cron' }]);
		expect(cron("2026-12-29")[0]?.message).toContain('cron "0 0 29 12 *" (in the schedule\'s timezone, UTC unless it sets one) runs at that time, then each year until');
	});
});

describe("a timezone near one", () => {
	it("suggests the zone two letters longer, UTC for a letter off it, and an abbreviation's zone in any case", () => {
		expect(cron("0 9 * * *", "Europe/Brln")).toEqual([{ path: "schedules.a.timezone", message: 'unknown timezone "Europe/Brln" (did you mean "Europe/Berlin"?)' }]);
		expect(cron("0 9 * * *", "UTX")).toEqual([{ path: "schedules.a.timezone", message: 'unknown timezone "UTX" (did you mean "UTC"?)' }]);
		expect(cron("0 9 * * *", "est")).toEqual([{ path: "schedules.a.timezone", message: expect.stringContaining(': "America/New_York" for US Eastern time') }]);
	});
});

describe("an agent name at the ends of 1-63 characters", () => {
	it("takes 63 characters and a one-character name", () => {
		expect(parseAgent({ name: "a".repeat(63), prompt: "p" }).name).toBe("a".repeat(63));
		expect(parseAgent({ name: "7", prompt: "p" }).name).toBe("7");
	});

	it("says a leading - is the character that breaks it, and reads a pasted byte-order mark as nothing", () => {
		expect(issuesOf({ name: "-daily" })).toEqual([{ path: "name", message: expect.stringMatching(/^agent name "-daily" has "-" at character 1; /) }]);
		expect(issuesOf({ name: "\ufeffdaily-digest" })).toEqual([{ path: "name", message: expect.stringContaining('has U+FEFF at character 1 (did you mean "daily-digest"?)') }]);
	});
});

describe("a definition's other bounds and near misses", () => {
	it("takes a webhook tool's name of 64 characters, the Messages API's most", () => {
		const name = "t".repeat(64);
		expect(issuesOf({ tools: [{ type: "webhook", name, description: "Files a ticket.", url_secret: "TICKETS_URL" }] })).toEqual([]);
		expect(issuesOf({ tools: [{ type: "webhook", name: `${name}t`, description: "Files a ticket.", url_secret: "TICKETS_URL" }] })).toEqual([{ path: "tools[0].name", message: "tool names are 1-64 letters, digits, _ or -" }]);
	});

	it("takes an http_fetch tool's max_response_bytes of 10,000,000, its most", () => {
		expect(issuesOf({ tools: [{ type: "http_fetch", allow_hosts: ["example.com"], max_response_bytes: 10_000_000 }] })).toEqual([]);
	});

	it("names the key a typo two letters off means", () => {
		expect(issuesOf({ max_tunrs: 5 })).toEqual([{ path: "max_tunrs", message: 'unknown key (did you mean "max_turns"?)' }]);
	});
});
