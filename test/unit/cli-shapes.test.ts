import { describe, expect, it } from "vitest";
import { problemOf, shapes } from "../../cli/shapes.ts";

// The minimal check of each answer (cli/shapes.ts): what the one line says of an answer that is not
// drover's, `<url> does not answer as a drover API (GET /v1/jobs: <this>)`, and which answers pass.

const row = { id: "job-2026-12-07-abcdef", agent: "a", status: "completed", trigger_type: "manual" };

describe("an answer that will not do", () => {
	it("names the field at fault by its path, as written in JavaScript", () => {
		expect(problemOf(shapes.jobPage, {})).toBe("missing `jobs`");
		expect(problemOf(shapes.jobPage, { jobs: [row, { ...row, id: undefined }] })).toBe("missing `jobs[1].id`");
		expect(problemOf(shapes.job, { id: "j", agent: "a", status: "s", usage: { num_turns: 1 } })).toBe("missing `usage.per_model`");
	});

	it("says which type a field should have, with its article", () => {
		expect(problemOf(shapes.jobPage, { jobs: "x" })).toBe("`jobs` is not an array");
		expect(problemOf(shapes.job, { id: "j", agent: "a", status: "s", usage: "x" })).toBe("`usage` is not an object");
		expect(problemOf(shapes.jobPage, { jobs: [{ ...row, status: null }] })).toBe("`jobs[0].status` is not a string");
		expect(problemOf(shapes.agentDryRun, { dry_run: false, action: "create", definition: { name: "a" }, definition_revision: "r", previous_revision: null, warnings: [] })).toMatch(/^`dry_run`: /);
	});

	it("that is no object at all says so", () => {
		expect(problemOf(shapes.jobPage, "<html>")).toBe("not a JSON object");
		expect(problemOf(shapes.jobPage, null)).toBe("not a JSON object");
	});

	it("a job row without its trigger type, a notepad written without the key written", () => {
		expect(problemOf(shapes.jobPage, { jobs: [{ ...row, trigger_type: undefined }] })).toBe("missing `jobs[0].trigger_type`");
		expect(problemOf(shapes.notepadWith("k"), { other: "v" })).toBe("missing `k`");
	});
});

describe("an answer that will do", () => {
	it("a page with a null, or no, next cursor; a record from an older server without hooks; extra fields", () => {
		expect(problemOf(shapes.jobPage, { jobs: [row], next_cursor: null })).toBeNull();
		expect(problemOf(shapes.jobPage, { jobs: [], extra: 1 })).toBeNull();
		expect(problemOf(shapes.job, { id: "j", agent: "a", status: "s", usage: { num_turns: 1, per_model: {} } })).toBeNull();
		expect(problemOf(shapes.notepadWith("k"), { k: "v", other: "w" })).toBeNull();
	});
});
