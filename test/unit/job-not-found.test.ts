import { describe, expect, it } from "vitest";
import { noJob } from "../../src/api/jobs/not-found.ts";

const ID = "job-2026-10-01-abcdef";
const DAY_BEGAN = Date.parse("2026-10-01T00:00:00Z");
const DAY_MS = 86_400_000;

describe("a job id the index does not hold", () => {
	it("is said to be past the retention only once RETENTION_DAYS have passed since its day began", () => {
		// A job made at 00:00 of its day and ended at once is kept until exactly 30 days on: not before.
		expect(noJob({ RETENTION_DAYS: "30" }, ID, DAY_BEGAN + 30 * DAY_MS).message).toBe(`no job ${ID}`);
		expect(noJob({ RETENTION_DAYS: "30" }, ID, DAY_BEGAN + 30 * DAY_MS + 1).message).toBe(
			`no job ${ID}: its id is from 2026-10-01, and a job is kept 30 days after it ends (RETENTION_DAYS; less where its agent sets retention_days), so retention may have removed it`,
		);
		expect(noJob({ RETENTION_DAYS: "30" }, ID, DAY_BEGAN + 30 * DAY_MS + 1).status).toBe(404);
	});

	it("counts the deployment's RETENTION_DAYS, its default when unset", () => {
		const later = DAY_BEGAN + 7 * DAY_MS + 1;
		expect(noJob({ RETENTION_DAYS: "7" }, ID, later).message).toMatch(/kept 7 days after it ends/);
		expect(noJob({}, ID, later).message).toBe(`no job ${ID}`);
		expect(noJob({}, ID, DAY_BEGAN + 30 * DAY_MS + 1).message).toMatch(/kept 30 days after it ends/);
	});

	it("is plain for an id of a day still to come", () => {
		expect(noJob({ RETENTION_DAYS: "30" }, "job-2099-01-01-abcdef", DAY_BEGAN).message).toBe("no job job-2099-01-01-abcdef");
	});
});
