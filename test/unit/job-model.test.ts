import { afterEach, describe, expect, it, vi } from "vitest";
import {
	EXIT_REASONS,
	FINAL_STATUSES,
	JOB_ID_PATTERN,
	JOB_STATUSES,
	JobIdSchema,
	JobInvariantError,
	JobRecordSchema,
	JobSummarySchema,
	TRANSITIONS_CAP,
	canTransition,
	createJob,
	isFinal,
	isJobId,
	transition,
	type ExitReason,
	type JobRecord,
	type JobStatus,
	type Transition,
} from "../../src/jobs/model.ts";
import { drawnJobId, SLOT_CAPACITY } from "../../src/jobs/id-blocks.ts";

const CREATED = new Date("2025-01-15T09:00:00.000Z");
const STARTED = new Date("2025-01-15T09:00:01.500Z");
const LATER = new Date("2025-01-15T09:15:32.123Z");

// The contract from DESIGN.md, written out independently of the implementation's table.
const ALLOWED: Record<JobStatus, JobStatus[]> = {
	pending: ["running", "cancelled", "failed"],
	running: ["completed", "failed", "cancelled", "approval_pending", "indeterminate"],
	approval_pending: ["running", "cancelled", "failed"],
	completed: [],
	failed: [],
	cancelled: [],
	indeterminate: [],
};

const DEFAULT_EXIT: Record<string, ExitReason> = {
	completed: "success",
	failed: "error",
	cancelled: "cancelled",
	indeterminate: "error",
};

function newJob(): JobRecord {
	return createJob(
		{ agent: "bragdoc-coder", trigger_type: "schedule", schedule: "issue-check", definition_revision: "cfg-3f2a" },
		CREATED,
	);
}

/** A job that reached `status` by a real path, started at STARTED when it ran at all. */
function jobIn(status: JobStatus): JobRecord {
	const job = newJob();
	if (status === "pending") return job;
	const running = transition(job, "running", { reason: "dispatched", at: STARTED });
	if (status === "running") return running;
	return transition(running, status, { reason: `to ${status}`, at: new Date(STARTED.getTime() + 1000) });
}

const pairs = JOB_STATUSES.flatMap((from) => JOB_STATUSES.map((to) => [from, to] as const));

describe("status machine, every (from, to) pair", () => {
	it("covers all 49 pairs of the 7 statuses", () => {
		expect(pairs).toHaveLength(49);
		expect(new Set(JOB_STATUSES)).toEqual(new Set(Object.keys(ALLOWED)));
	});

	it.each(pairs.filter(([from, to]) => ALLOWED[from].includes(to)))("allows %s → %s", (from, to) => {
		const job = jobIn(from);
		const before = structuredClone(job);
		expect(canTransition(from, to)).toBe(true);

		const next = transition(job, to, { reason: "operator asked", at: LATER });

		expect(job).toEqual(before);
		expect(next.status).toBe(to);
		expect(next.revision).toBe(job.revision + 1);
		expect(next.transitions).toHaveLength(job.transitions.length + 1);
		expect(next.transitions.at(-1)).toEqual({ from, to, at: LATER.toISOString(), reason: "operator asked" });
		expect(next.started_at).toBe(from === "pending" && to === "running" ? LATER.toISOString() : job.started_at);
		if (isFinal(to)) {
			expect(next.finished_at).toBe(LATER.toISOString());
			expect(next.exit_reason).toBe(DEFAULT_EXIT[to]);
			const start = Date.parse(job.started_at ?? job.created_at);
			expect(next.duration_seconds).toBe((LATER.getTime() - start) / 1000);
		} else {
			expect(next.finished_at).toBeNull();
			expect(next.exit_reason).toBeNull();
			expect(next.duration_seconds).toBeNull();
		}
		expect(JobRecordSchema.safeParse(next).success).toBe(true);
	});

	it.each(pairs.filter(([from, to]) => !ALLOWED[from].includes(to)))("refuses %s → %s", (from, to) => {
		const job = jobIn(from);
		const before = structuredClone(job);
		expect(canTransition(from, to)).toBe(false);

		let thrown: unknown;
		try {
			transition(job, to, { reason: "operator asked", at: LATER });
		} catch (error) {
			thrown = error;
		}

		expect(thrown).toBeInstanceOf(JobInvariantError);
		const conflict = thrown as JobInvariantError;
		expect(conflict.message).toContain(`cannot go from ${from} to ${to}`);
		expect(conflict.message).toContain(job.id);
		expect(job).toEqual(before);
	});

	it("names the final status as the reason in the refusal", () => {
		const job = jobIn("completed");
		expect(() => transition(job, "running", { reason: "retry", at: LATER })).toThrow(
			`job ${job.id} cannot go from completed to running: completed is final`,
		);
	});

	it("treats exactly completed, failed, cancelled and indeterminate as final, and they refuse every target", () => {
		expect(JOB_STATUSES.filter(isFinal)).toEqual(["completed", "failed", "cancelled", "indeterminate"]);
		expect([...FINAL_STATUSES].sort()).toEqual(["cancelled", "completed", "failed", "indeterminate"]);
		for (const from of FINAL_STATUSES) {
			for (const to of JOB_STATUSES) {
				expect(() => transition(jobIn(from), to, { reason: "again", at: LATER })).toThrow(JobInvariantError);
			}
		}
	});
});

describe("revision and transitions", () => {
	it("bumps the revision by exactly one per transition and records each change in order", () => {
		let job = newJob();
		expect(job.revision).toBe(1);
		const path: JobStatus[] = ["running", "approval_pending", "running", "approval_pending", "running", "completed"];
		path.forEach((to, i) => {
			const from = job.status;
			job = transition(job, to, { reason: `step ${i}`, at: new Date(STARTED.getTime() + i * 1000) });
			expect(job.revision).toBe(i + 2);
			expect(job.transitions.at(-1)).toMatchObject({ from, to, reason: `step ${i}` });
		});
		expect(job.transitions.map((t) => t.to)).toEqual(path);
	});

	it(`keeps only the newest ${TRANSITIONS_CAP} transitions when a job bounces through approvals`, () => {
		expect(TRANSITIONS_CAP).toBe(128);
		let job = transition(newJob(), "running", { reason: "dispatched", at: STARTED });
		const all: Transition[] = [...job.transitions];
		for (let i = 0; i < 200; i++) {
			const to = job.status === "running" ? "approval_pending" : "running";
			const at = new Date(STARTED.getTime() + (i + 1) * 1000);
			job = transition(job, to, { reason: `bounce ${i}`, at });
			all.push({ from: to === "running" ? "approval_pending" : "running", to, at: at.toISOString(), reason: `bounce ${i}` });
		}

		expect(all).toHaveLength(201);
		expect(job.transitions).toHaveLength(128);
		expect(job.transitions).toEqual(all.slice(-128));
		expect(job.transitions[0]?.reason).toBe("bounce 72");
		expect(job.transitions.at(-1)?.reason).toBe("bounce 199");
		expect(job.revision).toBe(202);
		expect(job.started_at).toBe(STARTED.toISOString());
		expect(JobRecordSchema.safeParse(job).success).toBe(true);
	});

	it("returns a new record and leaves the input, including its transitions list, untouched", () => {
		const job = jobIn("running");
		const transitionsBefore = job.transitions;
		const next = transition(job, "completed", { reason: "done", at: LATER, summary: "fixed it" });
		expect(next).not.toBe(job);
		expect(job.status).toBe("running");
		expect(job.transitions).toBe(transitionsBefore);
		expect(job.transitions).toHaveLength(1);
		expect(job.summary).toBeNull();
		expect(job.revision).toBe(2);
	});

	it("refuses a transition without a reason", () => {
		const job = newJob();
		expect(() => transition(job, "running", { reason: "  ", at: STARTED })).toThrow(JobInvariantError);
		expect(job.status).toBe("pending");
	});
});

describe("exit reasons", () => {
	it("records success for completed and refuses any other exit reason", () => {
		const running = jobIn("running");
		expect(transition(running, "completed", { reason: "done", at: LATER }).exit_reason).toBe("success");
		expect(transition(running, "completed", { reason: "done", at: LATER, exit_reason: "success" }).exit_reason).toBe("success");
		for (const reason of EXIT_REASONS.filter((r) => r !== "success")) {
			expect(() => transition(running, "completed", { reason: "done", at: LATER, exit_reason: reason })).toThrow(JobInvariantError);
		}
		expect(running.status).toBe("running");
		expect(running.exit_reason).toBeNull();
	});

	it("records the given failure reason for failed, error by default, and refuses success or cancelled", () => {
		const running = jobIn("running");
		expect(transition(running, "failed", { reason: "boom", at: LATER }).exit_reason).toBe("error");
		for (const reason of ["error", "timeout", "max_turns", "usage_limit"] as const) {
			expect(transition(running, "failed", { reason: "stopped", at: LATER, exit_reason: reason }).exit_reason).toBe(reason);
		}
		for (const reason of ["success", "cancelled"] as const) {
			expect(() => transition(running, "failed", { reason: "stopped", at: LATER, exit_reason: reason })).toThrow(JobInvariantError);
		}
	});

	it("records cancelled for cancelled and error for indeterminate, refusing anything else", () => {
		for (const from of ["pending", "running", "approval_pending"] as const) {
			expect(transition(jobIn(from), "cancelled", { reason: "operator", at: LATER }).exit_reason).toBe("cancelled");
		}
		const running = jobIn("running");
		expect(transition(running, "indeterminate", { reason: "tool call unaccounted", at: LATER }).exit_reason).toBe("error");
		expect(() => transition(running, "cancelled", { reason: "x", at: LATER, exit_reason: "error" })).toThrow(JobInvariantError);
		expect(() => transition(running, "indeterminate", { reason: "x", at: LATER, exit_reason: "timeout" })).toThrow(JobInvariantError);
	});

	it("refuses an exit reason on a status that does not end the job", () => {
		const job = newJob();
		expect(() => transition(job, "running", { reason: "dispatched", at: STARTED, exit_reason: "success" })).toThrow(JobInvariantError);
		expect(job.status).toBe("pending");
	});

	it("records the ending error and summary, and refuses an error on a success", () => {
		const running = jobIn("running");
		const failed = transition(running, "failed", {
			reason: "model call failed",
			at: LATER,
			error: { type: "rate_limit", message: "429 from the Messages API" },
			summary: "stopped after 3 turns",
		});
		expect(failed.error).toEqual({ type: "rate_limit", message: "429 from the Messages API" });
		expect(failed.summary).toBe("stopped after 3 turns");
		expect(() =>
			transition(running, "completed", { reason: "done", at: LATER, error: { type: "x", message: "y" } }),
		).toThrow(JobInvariantError);
		expect(() =>
			transition(running, "approval_pending", { reason: "gate", at: LATER, error: { type: "x", message: "y" } }),
		).toThrow(JobInvariantError);
	});
});

describe("timestamps and duration", () => {
	it("sets started_at on the first entry into running only", () => {
		const running = transition(newJob(), "running", { reason: "dispatched", at: STARTED });
		expect(running.started_at).toBe(STARTED.toISOString());
		const waiting = transition(running, "approval_pending", { reason: "gate", at: new Date("2025-01-15T09:05:00.000Z") });
		const resumed = transition(waiting, "running", { reason: "approved", at: new Date("2025-01-15T10:00:00.000Z") });
		expect(resumed.started_at).toBe(STARTED.toISOString());
	});

	it("times a finished job from started_at, in seconds with millisecond precision", () => {
		const done = transition(jobIn("running"), "completed", { reason: "done", at: LATER });
		expect(done.finished_at).toBe("2025-01-15T09:15:32.123Z");
		expect(done.duration_seconds).toBe(930.623);
	});

	it("times a job that never ran from created_at and leaves started_at null", () => {
		const cancelled = transition(newJob(), "cancelled", { reason: "operator", at: new Date("2025-01-15T09:00:02.500Z") });
		expect(cancelled.started_at).toBeNull();
		expect(cancelled.duration_seconds).toBe(2.5);
	});

	it("rounds the duration to 3 decimals and never makes it negative", () => {
		const running = transition(newJob(), "running", { reason: "dispatched", at: new Date("2025-01-15T09:00:00.001Z") });
		const done = transition(running, "completed", { reason: "done", at: new Date("2025-01-15T09:00:00.301Z") });
		expect(done.duration_seconds).toBe(0.3);
		const skewed = transition(running, "failed", { reason: "clock stepped back", at: CREATED });
		expect(skewed.duration_seconds).toBe(0);
	});
});

describe("pending approval", () => {
	it("records the tool call awaiting a decision and clears it once the job moves on", () => {
		const request = {
			tool_use_id: "toolu_01",
			tool_name: "Bash",
			input: { command: "rm -rf build" },
			requested_at: LATER.toISOString(),
		};
		const waiting = transition(jobIn("running"), "approval_pending", { reason: "gated tool", at: LATER, pending_approval: request });
		expect(waiting.pending_approval).toEqual(request);
		expect(JobRecordSchema.safeParse(waiting).success).toBe(true);
		expect(transition(waiting, "running", { reason: "approved", at: LATER }).pending_approval).toBeNull();
		expect(transition(waiting, "cancelled", { reason: "denied", at: LATER }).pending_approval).toBeNull();
		expect(() => transition(jobIn("running"), "failed", { reason: "x", at: LATER, pending_approval: request })).toThrow(
			JobInvariantError,
		);
	});
});

describe("tool call count", () => {
	it("is recorded as a job ends: as given, none for a job that never started, unknown (null) for one that ran without it", () => {
		expect(jobIn("running").tool_calls).toBeNull();
		const ended = transition(jobIn("running"), "completed", { reason: "final answer", at: LATER, tool_calls: { made: 3, failed: 1 } });
		expect(ended.tool_calls).toEqual({ made: 3, failed: 1 });
		expect(JobRecordSchema.safeParse(ended).success).toBe(true);
		expect(transition(newJob(), "cancelled", { reason: "by operator", at: LATER }).tool_calls).toEqual({ made: 0, failed: 0 });
		expect(transition(jobIn("running"), "failed", { reason: "x", at: LATER, exit_reason: "error", error: { type: "error", message: "x" } }).tool_calls).toBeNull();
		expect(() => transition(jobIn("running"), "approval_pending", { reason: "gated", at: LATER, tool_calls: { made: 1, failed: 0 } })).toThrow(JobInvariantError);
	});
});

describe("job ids", () => {
	afterEach(() => {
		vi.restoreAllMocks();
	});

	it("generates 1,000 ids that all match the format, dated with the UTC day", () => {
		// 04:30 UTC on the 16th is still the 15th in New York: the id must carry the UTC date.
		const now = new Date("2025-01-15T23:30:00-05:00");
		const ids = Array.from({ length: 1000 }, () => createJob({ agent: "a", trigger_type: "manual", definition_revision: "r" }, now).id);
		for (const id of ids) {
			expect(id).toMatch(JOB_ID_PATTERN);
			expect(isJobId(id)).toBe(true);
			expect(id.slice(0, 15)).toBe("job-2025-01-16-");
			expect(id.slice(15)).toMatch(/^[a-z0-9]{6}$/);
		}
		// ~128 million numbers in the drawn slot: a single collision in 1,000 is ~4e-3 likely, two ~8e-6.
		expect(new Set(ids).size).toBeGreaterThanOrEqual(999);
		const used = new Set(ids.flatMap((id) => [...id.slice(15)]));
		expect([...used].sort().join("")).toBe("0123456789abcdefghijklmnopqrstuvwxyz");
		expect(drawnJobId(Date.parse("2025-12-31T23:59:59.999Z")).slice(0, 15)).toBe("job-2025-12-31-");
	});

	it("redraws random numbers that would bias the drawn slot instead of wrapping them", () => {
		// The lowest number past the last whole multiple of the slot's size wraps to 0 under a plain
		// modulo; it must be drawn again, and the next draw (0) decides.
		const wrapsToZero = 2 ** 32 - (2 ** 32 % SLOT_CAPACITY);
		const draws = [wrapsToZero, 2 ** 32 - 1, 0];
		vi.spyOn(crypto, "getRandomValues").mockImplementation(<T extends ArrayBufferView | null>(array: T): T => {
			(array as unknown as Uint32Array)[0] = draws.shift()!;
			return array;
		});
		const redrawn = drawnJobId(CREATED.getTime());
		expect(draws).toEqual([]);
		vi.restoreAllMocks();
		vi.spyOn(crypto, "getRandomValues").mockImplementation(<T extends ArrayBufferView | null>(array: T): T => {
			(array as unknown as Uint32Array)[0] = 0;
			return array;
		});
		expect(redrawn).toBe(drawnJobId(CREATED.getTime()));
	});

	it("accepts herdctl's example id", () => {
		expect(isJobId("job-2025-01-15-k2x9qa")).toBe(true);
		expect(JobIdSchema.parse("job-2025-01-15-k2x9qa")).toBe("job-2025-01-15-k2x9qa");
	});

	it.each([
		["path traversal", "../etc"],
		["traversal after an id", "job-2025-01-15-k2x9qa/../x"],
		["upper case", "job-2025-01-15-K2X9QA"],
		["SQL quote", "job-2025-01-15-k2x9q'"],
		["SQL injection", "job-2025-01-15-k2x9qa' OR 1=1--"],
		["SQL comment", "job-2025-01-15-k2x9-"],
		["semicolon", "job-2025-01-15-k2x9q;"],
		["percent", "job-2025-01-15-k2x9q%"],
		["unicode letter", "job-2025-01-15-k2x9qä"],
		["cyrillic look-alike", "job-2025-01-15-k2x9q\u0430"],
		["full-width digits", "job-２０２５-01-15-k2x9qa"],
		["too long", "job-2025-01-15-k2x9qab"],
		["too short", "job-2025-01-15-k2x9q"],
		["trailing newline", "job-2025-01-15-k2x9qa\n"],
		["leading space", " job-2025-01-15-k2x9qa"],
		["empty", ""],
		["no date", "job-k2x9qa"],
		["month 13", "job-2025-13-01-k2x9qa"],
		["day 32", "job-2025-01-32-k2x9qa"],
		["February 30th", "job-2026-02-30-abcdef"],
		["April 31st", "job-2026-04-31-abcdef"],
		["February 29th of a common year", "job-2025-02-29-k2x9qa"],
		["February 29th of a century that is not a leap year", "job-1900-02-29-k2x9qa"],
		["wrong prefix", "run-2025-01-15-k2x9qa"],
	])("rejects %s", (_label, value) => {
		expect(isJobId(value)).toBe(false);
		const parsed = JobIdSchema.safeParse(value);
		expect(parsed.success).toBe(false);
		expect(parsed.error?.issues[0]?.message).toContain("job-YYYY-MM-DD-xxxxxx");
	});

	it("accepts February 29th of a leap year, and says which date is impossible otherwise", () => {
		for (const id of ["job-2024-02-29-k2x9qa", "job-2000-02-29-k2x9qa", "job-2026-12-31-k2x9qa", "job-2026-04-30-k2x9qa"]) {
			expect(isJobId(id)).toBe(true);
			expect(JobIdSchema.parse(id)).toBe(id);
		}
		const parsed = JobIdSchema.safeParse("job-2026-02-30-abcdef");
		expect(parsed.error?.issues).toHaveLength(1);
		expect(parsed.error?.issues[0]?.message).toContain("2026-02-30 is not a date");
		// A value the pattern already refused gets one issue, not a second about its "date".
		expect(JobIdSchema.safeParse("../etc").error?.issues).toHaveLength(1);
	});

	it("rejects values that are not strings", () => {
		for (const value of [null, undefined, 20250115, ["job-2025-01-15-k2x9qa"], { id: "job-2025-01-15-k2x9qa" }]) {
			expect(isJobId(value)).toBe(false);
		}
	});
});

describe("createJob", () => {
	it("creates a pending record at revision 1 that validates against JobRecordSchema", () => {
		const job = newJob();
		expect(JobRecordSchema.parse(job)).toEqual(job);
		expect(job).toMatchObject({
			agent: "bragdoc-coder",
			schedule: "issue-check",
			trigger_type: "schedule",
			status: "pending",
			revision: 1,
			transitions: [],
			created_at: "2025-01-15T09:00:00.000Z",
			definition_revision: "cfg-3f2a",
			usage: { per_model: {}, num_turns: 0, total_cost_usd: null },
		});
		expect(job.id.startsWith("job-2025-01-15-")).toBe(true);
		for (const field of [
			"exit_reason",
			"session_id",
			"forked_from",
			"started_at",
			"finished_at",
			"duration_seconds",
			"prompt",
			"summary",
			"output_file",
			"scheduled_instant",
			"dispatch",
			"usage_limits",
			"error",
			"pending_approval",
			"delivery",
			"owner",
		] as const) {
			expect(job[field], field).toBeNull();
		}
	});

	it("carries the optional inputs through and keeps a given id", () => {
		const job = createJob(
			{
				id: "job-2025-01-15-abc123",
				agent: "triage",
				trigger_type: "fork",
				definition_revision: "cfg-1",
				prompt: "Look again",
				forked_from: "job-2025-01-14-zzz999",
				scheduled_instant: new Date("2025-01-15T09:00:00Z"),
				dispatch: "late",
				usage_limits: { max_requests: 20, max_cost_usd: 1.5 },
				owner: "operator",
			},
			CREATED,
		);
		expect(job).toMatchObject({
			id: "job-2025-01-15-abc123",
			prompt: "Look again",
			forked_from: "job-2025-01-14-zzz999",
			scheduled_instant: "2025-01-15T09:00:00.000Z",
			dispatch: "late",
			usage_limits: { max_requests: 20, max_cost_usd: 1.5 },
			owner: "operator",
		});
		expect(JobRecordSchema.safeParse(job).success).toBe(true);
	});

	it("refuses an id or a parent that is not a job id", () => {
		const base = { agent: "a", trigger_type: "manual", definition_revision: "r" } as const;
		expect(() => createJob({ ...base, id: "../etc" }, CREATED)).toThrow(JobInvariantError);
		expect(() => createJob({ ...base, trigger_type: "fork", forked_from: "1; DROP TABLE jobs" }, CREATED)).toThrow(JobInvariantError);
	});
});

describe("schemas", () => {
	it("rejects a record whose status, id or transition count breaks the contract", () => {
		const job = newJob();
		expect(JobRecordSchema.safeParse({ ...job, status: "queued" }).success).toBe(false);
		expect(JobRecordSchema.safeParse({ ...job, id: "job-1" }).success).toBe(false);
		const entry = { from: "running", to: "approval_pending", at: LATER.toISOString(), reason: "x" };
		expect(JobRecordSchema.safeParse({ ...job, transitions: Array(129).fill(entry) }).success).toBe(false);
	});

	it("reduces a record to the list-row fields", () => {
		const row = JobSummarySchema.parse(jobIn("completed"));
		expect(Object.keys(row).sort()).toEqual(
			[
				"id",
				"agent",
				"schedule",
				"trigger_type",
				"status",
				"exit_reason",
				"dispatch",
				"scheduled_instant",
				"created_at",
				"started_at",
				"finished_at",
				"duration_seconds",
				"summary",
				"revision",
				"tool_calls",
				"error",
			].sort(),
		);
		expect(row.status).toBe("completed");
	});
});
