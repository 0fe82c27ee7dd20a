import { z } from "@hono/zod-openapi";

// A field left out reads "required", with the type it takes: zod's own words ("Invalid input: expected
// string, received undefined", "Invalid option: expected one of …") describe a value that was never
// sent. A value of the wrong type that is a common slip (a duration without its unit, YAML 1.1's
// yes/no, a number in quotes, a list written as a map) says what to write instead. The API and
// fleet.yaml say it alike.
z.config({
	customError: (iss) => {
		if (iss.input === undefined) {
			if (iss.code === "invalid_type") return `required (${iss.expected})`;
			return iss.code === "invalid_value" ? "required" : undefined;
		}
		// A number out of range, in words and with the value sent: zod's "Too small: expected number to be >=1".
		if (iss.code === "too_small" && iss.origin === "number") return `must be ${iss.inclusive ? "at least" : "more than"} ${String(iss.minimum)}, got ${String(iss.input)}`;
		if (iss.code === "too_big" && iss.origin === "number") return `must be ${iss.inclusive ? "at most" : "less than"} ${String(iss.maximum)}, got ${String(iss.input)}`;
		return iss.code === "invalid_type" ? wrongType(iss.expected, iss.input, iss.path?.at(-1)) : undefined;
	},
});

/** The fields whose value is a duration ("15m", "1h30m"). */
const DURATIONS = new Set(["interval", "timeout", "approval_timeout", "idle_timeout"]);

/** What YAML 1.1 (and people) write for a boolean, read by YAML 1.2 as text. */
const BOOLEANS: Record<string, boolean> = { true: true, false: false, yes: true, no: false, on: true, off: false, y: true, n: false };

function wrongType(expected: string, input: unknown, key: PropertyKey | undefined): string | undefined {
	if (expected === "string" && typeof input === "number") {
		if (!DURATIONS.has(String(key))) return `expected text, got the number ${input}: write it in quotes ("${input}")`;
		return Number.isInteger(input) && input > 0
			? `a duration is text with a unit: write "${input}m" for ${input} minutes ("${input}s" seconds, "${input}h" hours)`
			: 'a duration is text with a unit, e.g. "90s", "15m", "1h30m"';
	}
	if (expected === "boolean" && typeof input === "string") {
		const meant = BOOLEANS[input.trim().toLowerCase()];
		return `expected true or false, got the text ${JSON.stringify(input)}${meant === undefined ? "" : `: write ${meant}, without quotes`}`;
	}
	if (expected === "number" && typeof input === "string" && /^\s*-?\d+(?:\.\d+)?\s*$/.test(input)) {
		return `expected a number, got the text ${JSON.stringify(input)}: write ${Number(input)}, without quotes`;
	}
	// In the words of both forms a definition comes in: YAML's lines and JSON's brackets.
	if (expected === "array" && input === null) return "expected a list, got nothing: list its items (a - line each in YAML), or write []";
	if (expected === "array" && typeof input === "object" && !Array.isArray(input)) return "expected a list (a - line an item in YAML, [...] in JSON), got a map";
	if ((expected === "record" || expected === "object") && Array.isArray(input)) return "expected a map (key: value lines in YAML, {...} in JSON), got a list";
	return undefined;
}
