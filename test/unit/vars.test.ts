import { afterEach, describe, expect, it, vi } from "vitest";
import { numberVar, numberVarIssues, numberVarProblem, publicUrl, varIssues } from "../../src/config/vars.ts";

afterEach(() => vi.restoreAllMocks());

describe("the Worker's numeric vars", () => {
	it("take a whole number in range, and the default when unset or blank", () => {
		expect(numberVar({ RETENTION_DAYS: "7" }, "RETENTION_DAYS")).toBe(7);
		expect(numberVar({ RETENTION_DAYS: " 90 " }, "RETENTION_DAYS")).toBe(90);
		expect(numberVar({}, "RETENTION_DAYS")).toBe(30);
		expect(numberVar({ HEARTBEAT_STALE_SECONDS: "" }, "HEARTBEAT_STALE_SECONDS")).toBe(180);
		expect(numberVarIssues({ RETENTION_DAYS: "7", HEARTBEAT_STALE_SECONDS: "300" })).toEqual([]);
	});

	it("fall back to the default for anything else, saying what is wrong", () => {
		for (const bad of ["30d", "1e3", "-5", "7.5", "0x1e", "NaN", "0", "3651"]) expect(numberVar({ RETENTION_DAYS: bad }, "RETENTION_DAYS"), bad).toBe(30);
		expect(numberVar({ HEARTBEAT_STALE_SECONDS: "3m" }, "HEARTBEAT_STALE_SECONDS")).toBe(180);
		expect(numberVarProblem("RETENTION_DAYS", "30d")).toBe('RETENTION_DAYS "30d" is not a whole number of days (1..3650)');
		expect(numberVarProblem("HEARTBEAT_STALE_SECONDS", "30")).toBe("HEARTBEAT_STALE_SECONDS 30 is outside 120..604800 seconds");
	});

	it("raise a heartbeat staleness set below its minimum to the minimum, not the looser default (60 was valid before)", () => {
		expect(numberVar({ HEARTBEAT_STALE_SECONDS: "90" }, "HEARTBEAT_STALE_SECONDS")).toBe(120);
		expect(numberVarIssues({ HEARTBEAT_STALE_SECONDS: "90" })).toEqual([
			{ path: "HEARTBEAT_STALE_SECONDS", message: "HEARTBEAT_STALE_SECONDS 90 is outside 120..604800 seconds; its minimum 120 is used" },
		]);
		expect(numberVar({ HEARTBEAT_STALE_SECONDS: "700000" }, "HEARTBEAT_STALE_SECONDS")).toBe(180);
		// Retention is not: a day's retention for a mistyped 0 would delete history.
		expect(numberVar({ RETENTION_DAYS: "0" }, "RETENTION_DAYS")).toBe(30);
	});
});

describe("a var that is not valid, in the log", () => {
	it("is said once as config.var_invalid, what is wrong under error_message, as every other line says it", () => {
		const lines: Record<string, unknown>[] = [];
		vi.spyOn(console, "error").mockImplementation((line: unknown) => void lines.push(JSON.parse(String(line)) as Record<string, unknown>));
		numberVar({ RETENTION_DAYS: "31 days" }, "RETENTION_DAYS");
		numberVar({ RETENTION_DAYS: "31 days" }, "RETENTION_DAYS");
		publicUrl({ PUBLIC_URL: "ftp://var-log.example.test" });
		publicUrl({ PUBLIC_URL: "https://drover.example.test/?tok=PubQry0123456789" });
		expect(lines).toEqual([
			expect.objectContaining({ event: "config.var_invalid", level: "error", variable: "RETENTION_DAYS", error_message: 'RETENTION_DAYS "31 days" is not a whole number of days (1..3650)', using: 30 }),
			expect.objectContaining({ event: "config.var_invalid", variable: "PUBLIC_URL", error_message: expect.stringContaining("is not an http(s) origin"), using: null }),
			// A query may hold a token: it is not said.
			expect.objectContaining({ event: "config.var_invalid", variable: "PUBLIC_URL", error_message: expect.stringMatching(/^PUBLIC_URL "https:\/\/drover\.example\.test\/\?…" is not/) }),
		]);
		expect(JSON.stringify(lines)).not.toContain("PubQry");
		for (const line of lines) expect(line).not.toHaveProperty("problem");
	});
});

describe("a PUBLIC_URL that is not an origin, as /healthz and the log say it", () => {
	const said = (value: string) => /^PUBLIC_URL "(.*)" is not an http\(s\) origin \(such as https:\/\/drover\.example\.workers\.dev\): deliveries and alerts carry no dashboard link$/.exec(varIssues({ PUBLIC_URL: value })[0]!.message)?.[1];

	it("is shown by its scheme and host, each other part it has marked and elided: a path too, which may be a webhook's token", () => {
		for (const [value, shown] of [
			["https://drover.example.test/hooks/PathTok0123456789", "https://drover.example.test/…"],
			["https://bot:s3cret-pass-0123@drover.example.test/jobs?tok=PubQry0123456789#frag", "https://…@drover.example.test/…?…#…"],
			["https://drover.example.test/?tok=PubQry0123456789", "https://drover.example.test/?…"],
			["drover.example.test/jobs/PathTok0123456789", "drover.example.test/…"],
			["ftp://drover.example.test", "ftp://drover.example.test/"],
		]) {
			expect(said(value!), value).toBe(shown);
		}
	});

	it("elides a password holding @, /, ? or # whole, and shows only the scheme where an @ may be a password's or the path's", () => {
		// Parsed, the @ is in the path (host bot, port 1234): it may as well be the end of a password holding a /.
		expect(said("https://bot:1234/5678PassTok@drover.example.test/")).toBe("https://…");
		expect(said("https://drover.example.test/hooks/@PathTok0123456789")).toBe("https://…");
		expect(said("drover.example.test/hooks/@PathTok0123456789")).toBe("…");
		// Parsed, the password is `ab` and the host `cd`: the rest of the password would show as the path.
		expect(said("https://bot:ab@cd/efghPassTok@drover.example.test/")).toBe("https://…");
		expect(said("https://bot:ab@cd?efghPassTok@drover.example.test/")).toBe("https://…");
		expect(said("bot@cd/efghPassTok@drover.example.test/")).toBe("…");
		expect(said("https://bot:ab@cd\\efghPassTok@drover.example.test/")).toBe("https://…");
		for (const password of ["p@ss-word0123", "pa/ss-word0123", "pa?ss-word0123", "pa#ss-word0123"]) {
			expect(said(`https://bot:${password}@drover.example.test/`), password).toBe("https://…@drover.example.test/");
		}
	});

	it("is logged as /healthz shows it, without its path", () => {
		const lines: string[] = [];
		vi.spyOn(console, "error").mockImplementation((line: unknown) => void lines.push(String(line)));
		publicUrl({ PUBLIC_URL: "https://drover.example.test/hooks/LogPathTok0123456789" });
		expect(lines.map((line) => (JSON.parse(line) as { error_message: string }).error_message)).toEqual([
			'PUBLIC_URL "https://drover.example.test/…" is not an http(s) origin (such as https://drover.example.workers.dev): deliveries and alerts carry no dashboard link',
		]);
		expect(lines.join("")).not.toContain("LogPathTok");
	});
});
