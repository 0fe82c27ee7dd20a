import { afterEach, describe, expect, it, vi } from "vitest";
import { configureLogLevel, errorFields, log, logLevelOf, setLogLevel } from "../../src/log.ts";

afterEach(() => {
	vi.restoreAllMocks();
	setLogLevel("info");
});

describe("log lines", () => {
	it("writes a debug line through console.debug, where a console filtered to debug finds it", () => {
		const debug: string[] = [];
		const info: string[] = [];
		vi.spyOn(console, "debug").mockImplementation((line: string) => void debug.push(line));
		vi.spyOn(console, "log").mockImplementation((line: string) => void info.push(line));
		setLogLevel("debug");
		log.debug("model.call", { agent: "a" });
		expect(debug.map((l) => JSON.parse(l))).toMatchObject([{ level: "debug", event: "model.call", agent: "a" }]);
		expect(info).toEqual([]);
	});

	it("redacts a credential in any field, nested ones and an error's message included, before it is written", () => {
		const written: string[] = [];
		vi.spyOn(console, "warn").mockImplementation((line: string) => void written.push(line));
		const token = "ghp_" + "a1B2c3D4e5F6".repeat(3);
		const key = `sk-ant-api03-${"x9Y8w7V6".repeat(12)}`;
		log.warn("model.call_failed", { agent: "a", error_message: `401 for Bearer ${token}`, request: { headers: { "x-api-key": key } }, ...errorFields(new Error(`fetch https://u:p4ssw0rd@h.example.test/ failed`)) });
		expect(written).toHaveLength(1);
		for (const secret of [token, key, "p4ssw0rd"]) expect(written[0]).not.toContain(secret);
		expect(JSON.parse(written[0]!)).toMatchObject({ agent: "a", error_message: expect.stringContaining("[REDACTED]") });
	});

	it("writes only lines at LOG_LEVEL or above", () => {
		const written: string[] = [];
		for (const method of ["debug", "log", "warn", "error"] as const) vi.spyOn(console, method).mockImplementation((line: string) => void written.push(JSON.parse(line).event));
		setLogLevel("warn");
		log.debug("a");
		log.info("b");
		log.warn("c");
		log.error("d");
		setLogLevel("info");
		log.debug("e");
		log.info("f");
		expect(written).toEqual(["c", "d", "f"]);
	});

	it("writes bidirectional and C1 controls and line separators as escapes, which parse back to the same value", () => {
		const written: string[] = [];
		vi.spyOn(console, "log").mockImplementation((line: string) => void written.push(line));
		const path = "/v1/agents/x\u202etxt.exe\u2066\u0085\u2028\u001b[2J";
		log.info("request", { path });
		expect(written).toHaveLength(1);
		expect(written[0]).toContain(String.raw`x\u202etxt.exe\u2066\u0085\u2028\u001b[2J`);
		expect(written[0]).not.toMatch(/[\u0080-\u009f\u202a-\u202e\u2066-\u2069\u2028\u001b]/);
		expect(JSON.parse(written[0]!).path).toBe(path);
	});
});

describe("configureLogLevel", () => {
	it("is read once an isolate; a value that is no level is info, said once", () => {
		const written: Record<string, unknown>[] = [];
		for (const method of ["debug", "log", "warn", "error"] as const) vi.spyOn(console, method).mockImplementation((line: string) => void written.push(JSON.parse(line)));
		// setLogLevel counts as configured: this isolate has run entry points already, so test the once.
		configureLogLevel({ LOG_LEVEL: "debug" });
		log.debug("still info");
		expect(written).toEqual([]);
	});

	it("reads a level in any case; blank is info, and a value that is none is info with its problem", () => {
		expect(logLevelOf(" DEBUG ")).toEqual({ level: "debug", problem: null });
		expect(logLevelOf("")).toEqual({ level: "info", problem: null });
		expect(logLevelOf(undefined)).toEqual({ level: "info", problem: null });
		expect(logLevelOf("verbose")).toEqual({ level: "info", problem: 'LOG_LEVEL "verbose" is not one of debug, info, warn, error' });
	});
});

describe("errorFields", () => {
	it("names an error's cause: what a wrapped fetch failure was underneath", () => {
		const err = new Error("delivery failed", { cause: new TypeError("Network connection lost") });
		expect(errorFields(err)).toMatchObject({ error_name: "Error", error_message: "delivery failed", cause_name: "TypeError", cause_message: "Network connection lost" });
	});

	it("names a cause that is no Error by its value", () => {
		expect(errorFields(new Error("x", { cause: { code: "E_LIMIT" } }))).toMatchObject({ cause_message: '{"code":"E_LIMIT"}' });
	});

	it("writes a thrown plain object as JSON, not [object Object], and cuts a long one", () => {
		expect(errorFields({ code: 7, reason: "quota" })).toEqual({ error_message: '{"code":7,"reason":"quota"}' });
		const long = errorFields({ text: "x".repeat(5000) }).error_message as string;
		expect(long.length).toBeLessThan(1100);
		expect(long).toMatch(/^\{"text":"x+… \[\d+ more characters\]$/);
	});

	it("keeps no piece of a credential a long thrown value is cut through, in the field or the line written", () => {
		const key = `sk-ant-api03-${"Q7".repeat(40)}`;
		// Cut at 1,000 characters 12 into the key: a piece no pattern matches on its own.
		const thrown = { detail: `${"word ".repeat(192)}pad ${key}` };
		const spy = vi.spyOn(console, "error").mockImplementation(() => {});
		const fields = errorFields(thrown);
		log.error("probe.thrown", fields);
		const written = String(spy.mock.calls[0]?.[0]);
		for (const text of [fields.error_message as string, written]) {
			expect(text).toContain("[REDACTED]");
			expect(text).not.toContain("Q7Q7");
		}
	});

	it("writes a thrown value JSON cannot take (a cycle, a BigInt) without throwing", () => {
		const cyclic: Record<string, unknown> = { a: 1 };
		cyclic.self = cyclic;
		expect(errorFields(cyclic).error_message).toBe("[unserializable object]");
		expect(errorFields(10n).error_message).toBe("10");
		expect(errorFields("plain text").error_message).toBe("plain text");
	});
});

describe("log.once", () => {
	it("writes a line once an isolate for each key of its event, at its level; another key, or the same key of another event, is written too", () => {
		const written: Record<string, unknown>[] = [];
		for (const method of ["debug", "log", "warn", "error"] as const) vi.spyOn(console, method).mockImplementation((line: string) => void written.push(JSON.parse(line)));
		for (let i = 0; i < 3; i++) log.once("error", "once.test_a", "k1", { n: i });
		log.once("error", "once.test_a", "k2", { n: 9 });
		log.once("warn", "once.test_b", "k1", { n: 7 });
		expect(written.map(({ level, event, n }) => ({ level, event, n }))).toEqual([
			{ level: "error", event: "once.test_a", n: 0 },
			{ level: "error", event: "once.test_a", n: 9 },
			{ level: "warn", event: "once.test_b", n: 7 },
		]);
	});
});
