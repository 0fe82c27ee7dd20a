/**
 * A finished manual job `job-2026-01-01-abcdef` as GET /v1/jobs/:id gives it, with what a test
 * changes: for the CLI's tests against a fake API.
 */
export function jobRecord(overrides: Record<string, unknown> = {}) {
	return {
		id: "job-2026-01-01-abcdef",
		agent: "fake",
		status: "completed",
		exit_reason: "success",
		trigger_type: "manual",
		schedule: null,
		dispatch: "manual",
		scheduled_instant: null,
		created_at: "2026-01-01T00:00:00.000Z",
		started_at: "2026-01-01T00:00:01.000Z",
		finished_at: "2026-01-01T00:00:02.500Z",
		duration_seconds: 1.5,
		session_id: null,
		forked_from: null,
		owner: "root",
		prompt: "Go.",
		summary: "All done.",
		error: null,
		pending_approval: null,
		delivery: null,
		output_file: null,
		usage: { num_turns: 1, total_cost_usd: null, per_model: {} },
		transitions: [{ from: "pending", to: "running", at: "2026-01-01T00:00:01.000Z", reason: "started" }],
		...overrides,
	};
}
