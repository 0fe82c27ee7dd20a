import type { Incident } from "../../src/store/incidents.ts";

/** A freshly detected incident as the store returns it, for a test that sends one (`overrides` changes it). */
export function detectedIncident(overrides: Partial<Incident> = {}): Incident {
	return {
		id: "inc_0001",
		agent: "flaky",
		signature: "sig",
		class: "unknown",
		state: "detected",
		error: "boom",
		count: 1,
		first_seen_at: "2024-12-05T10:00:00.000Z",
		last_seen_at: "2024-12-05T10:00:00.000Z",
		last_job_id: null,
		alerted_at: null,
		resolved_at: null,
		closed_at: null,
		closed_by: null,
		failing: [],
		...overrides,
	};
}
