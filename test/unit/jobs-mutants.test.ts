// Pure modules of src/jobs and src/delivery where a mutation walk found the suite blind: each case
// passed on a single mutation of the module and fails on it (the walk's labels in brackets).
import { describe, expect, it } from "vitest";
import { createJob, isJobId, JobInvariantError, transition } from "../../src/jobs/model.ts";
import { outputLogEntry } from "../../src/jobs/output-text.ts";
import { toHerdctlYaml } from "../../src/jobs/yaml.ts";

const at = "2026-12-02T09:00:05.000Z";
const entry = (line: unknown) => outputLogEntry(JSON.stringify(line));

describe("a refused transition's reason", () => {
	it("says a job is already in the status it was asked to enter [mo23]", () => {
		const running = transition(createJob({ agent: "a", trigger_type: "manual", definition_revision: "r" }, new Date(at)), "running", { reason: "start", at: new Date(at) });
		expect(() => transition(running, "running", { reason: "again", at: new Date(at) })).toThrow(JobInvariantError);
		expect(() => transition(running, "running", { reason: "again", at: new Date(at) })).toThrow(/cannot go from running to running: it is already running$/);
	});
});

describe("outputLogEntry (herdctl's plain-text output.log) at its edges", () => {
	it("leaves an empty status or exit reason out of a system line's brackets [ot04]", () => {
		expect(entry({ timestamp: at, type: "system", subtype: "status", content: "job ended", status: "cancelled", exit_reason: "" })).toBe(`${at} system:status job ended (cancelled)`);
	});

	it("takes a tool result without success: true for an error, and shows its result where it has no error [ot05, ot06]", () => {
		expect(entry({ timestamp: at, type: "tool_result", tool_use_id: "t1", result: "HTTP 503" })).toBe(`${at} tool_result t1 error HTTP 503`);
		expect(entry({ timestamp: at, type: "tool_result", tool_use_id: "t1", success: false, result: "denied by operator" })).toBe(`${at} tool_result t1 error denied by operator`);
	});

	it("shows a tool call without a name as ?, and one without input as null [ot07, ot10]", () => {
		expect(entry({ timestamp: at, type: "tool_use", tool_use_id: "t2" })).toBe(`${at} tool_use ? t2 null`);
	});

	it("says a line was cut only where it says how long it was [ot11]", () => {
		expect(entry({ timestamp: at, type: "assistant", content: "abc", truncated: { field: "content" } })).toBe(`${at} assistant abc`);
	});

	it("writes a line that is a JSON array as it is, not as a typeless entry [ot08]", () => {
		expect(outputLogEntry('["a",1]')).toBe('["a",1]');
	});
});

describe("a job in herdctl's YAML layout", () => {
	it("has herdctl's fields in herdctl's order, and nothing else [ya04]", () => {
		const job = createJob({ agent: "a", trigger_type: "manual", definition_revision: "r" }, new Date(at));
		const keys = toHerdctlYaml(job).split("\n").filter((l) => /^[a-z_]+:/.test(l)).map((l) => l.slice(0, l.indexOf(":")));
		expect(keys).toEqual(["id", "agent", "schedule", "trigger_type", "status", "exit_reason", "session_id", "forked_from", "started_at", "finished_at", "duration_seconds", "prompt", "summary", "output_file", "usage"]);
	});
});

describe("a job id's date", () => {
	it("is read as written for years 0 to 99 too, not as 1900 to 1999 [if05]", () => {
		// Year 0 is a leap year, 1900 is not: Date.UTC's reading would refuse the first and take nothing in it.
		expect(isJobId("job-0000-02-29-abcdef")).toBe(true);
		expect(isJobId("job-0099-12-31-abcdef")).toBe(true);
		expect(isJobId("job-0001-02-29-abcdef")).toBe(false);
	});
});
