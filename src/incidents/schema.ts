import { z } from "@hono/zod-openapi";

export const INCIDENT_STATES = ["detected", "alerted", "resolved", "closed"] as const;
export type IncidentState = (typeof INCIDENT_STATES)[number];
/** What a listing filters by: a state, or `open` for detected and alerted together (what still fails). */
export const INCIDENT_STATE_FILTERS = ["open", ...INCIDENT_STATES] as const;
export type IncidentStateFilter = (typeof INCIDENT_STATE_FILTERS)[number];

/**
 * An incident as the API answers it and as the store reads it: one schema for both (and the CLI's
 * type), so the route's documented shape and what it returns cannot drift apart.
 */
// Times are ISO 8601 (toISOString), as the job record's are.
const At = z.string().openapi({ format: "date-time", example: "2026-11-30T09:00:00.000Z" });

export const IncidentSchema = z
	.object({
		id: z.string(),
		agent: z.string(),
		signature: z.string(),
		class: z.string().openapi({ description: "rate_limit | timeout | auth | delivery | config | script | agent | unknown" }),
		state: z.enum(INCIDENT_STATES).openapi({
			description:
				"detected: open, its alert not taken yet (ALERT_WEBHOOK_URL unset, or its webhook refusing or not answering: tried again at each failure and tick; GET /v1/status warns of one still detected 3 minutes after it opened); alerted: open, paged once for this opening; resolved: a clean run (or the agent's deletion) ended it, the same error again re-opens it and pages again; closed: by an operator, terminal for its signature (the same error is counted, never paged)",
		}),
		error: z.string(),
		count: z.number().int().openapi({ description: "Failures filed under this signature since it was first seen, across re-openings (a re-opened incident's alert says ×count of them all); only a resolved incident pruned after RETENTION_DAYS starts again from 1" }),
		first_seen_at: At,
		last_seen_at: At,
		last_job_id: z.string().nullable(),
		alerted_at: At.nullable(),
		resolved_at: At.nullable(),
		closed_at: At.nullable(),
		closed_by: z.string().nullable(),
		failing: z
			.array(z.string())
			.nullable()
			.openapi({
				description:
					"While open: the sources failing with this error that have not run clean since (`schedule:<name>`, `webhook`, `manual` for one-off runs, `delivery` for the agent's delivery target, `hook:<list>:<url_secret>` for one of its hooks, its list after_run or on_error, e.g. `hook:on_error:PAGER_URL`); it resolves when none is left that the agent still runs, or at any clean run for class auth or rate_limit unless it waits on the delivery target or a hook. A clean run clears its own source and `manual`; only an answer actually delivered clears `delivery` (a `[SILENT]` or empty answer, which sends nothing, leaves it), and only a call of the hook that gets through clears its `hook:…` source. Null once closed or resolved, and when unknown (opened before this was kept, or the scheduler's own): any clean run resolves it then",
			}),
	})
	.openapi("Incident");

export type Incident = z.infer<typeof IncidentSchema>;
