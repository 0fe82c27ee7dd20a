import { z } from "@hono/zod-openapi";
import { ConflictError, NotFoundError } from "../errors.ts";
import { log } from "../log.ts";
import { IncidentSchema, INCIDENT_STATE_FILTERS } from "../incidents/schema.ts";
import { INCIDENT_ID_FORMAT, INCIDENT_ID_PATTERN } from "../incidents/id-format.ts";
import { closeIncident, getIncident, listIncidents, resolveIncident } from "../store/incidents.ts";
import { createApi, withRole } from "./factory.ts";
import { AgentNameParam, CursorParam, pageLimit } from "./params.ts";
import { errorResponse, notFoundResponse } from "./schemas.ts";

/** What a client that read the incident saw of it: without it, a resolve is guarded by its arrival alone. */
const ResolveBody = z
	.strictObject({
		count: z
			.number()
			.int()
			.min(1)
			.optional()
			.openapi({
				description:
					"The incident's `count` as the client last read it: when it has counted more failures since (one the operator did not see, even one from before the request that reached D1 late), it is not resolved and is answered as it stands, still open. The dashboard sends it; without it, only failures seen after the request arrived are guarded against",
				example: 3,
			}),
	})
	.openapi("ResolveIncidentBody");

const IncidentPath = z.object({ id: z.string().regex(INCIDENT_ID_PATTERN, `must be an incident id: ${INCIDENT_ID_FORMAT}`).openapi({ description: "An incident's id" }) });

/** " (by ops at 2026-…)", as the closed incident records it (either part absent from an older row). */
function closedBy(incident: { closed_by: string | null; closed_at: string | null }): string {
	const parts = [incident.closed_by === null ? null : `by ${incident.closed_by}`, incident.closed_at === null ? null : `at ${incident.closed_at}`].filter((p) => p !== null);
	return parts.length > 0 ? ` (${parts.join(" ")})` : "";
}

export const incidentsApi = createApi()
	.openapi(
		withRole("read", {
			method: "get",
			operationId: "listIncidents",
			path: "/",
			summary: "Failure incidents, deduplicated by error signature, most recently seen first",
			request: {
				query: z.strictObject({
					state: z.enum(INCIDENT_STATE_FILTERS).optional().openapi({ description: "Only incidents in this state; open: detected or alerted, those still failing" }),
					agent: AgentNameParam.optional().openapi({ description: "Only this agent's incidents" }),
					limit: pageLimit(200, 50),
					cursor: CursorParam,
				}),
			},
			responses: {
				200: {
					description:
						"A page of incidents (a resolved one is deleted once neither its last failure nor its resolution is within RETENTION_DAYS; open and closed ones are kept). One seen failing again while a client pages moves to the first page, ahead of the cursor: a client that must miss none reads the first page again when it is done",
					content: { "application/json": { schema: z.object({ incidents: z.array(IncidentSchema), next_cursor: z.string().nullable() }) } },
				},
			},
		}),
		async (c) => {
			const { state, agent, limit, cursor } = c.req.valid("query");
			return c.json(await listIncidents(c.env.DB, { state, agent }, limit, cursor), 200);
		},
	)
	.openapi(
		withRole("read", {
			method: "get",
			operationId: "getIncident",
			path: "/{id}",
			summary: "One incident, as the list has it: what an alert's `drover incident <id>` names",
			request: { params: IncidentPath },
			responses: {
				200: { description: "The incident", content: { "application/json": { schema: IncidentSchema } } },
				...notFoundResponse,
			},
		}),
		async (c) => {
			const { id } = c.req.valid("param");
			const incident = await getIncident(c.env.DB, id);
			// Never filed, or a resolved one pruned after RETENTION_DAYS (as the list says).
			if (!incident) throw new NotFoundError(`no incident ${id}`);
			return c.json(incident, 200);
		},
	)
	.openapi(
		withRole("operate", {
			method: "post",
			operationId: "closeIncident",
			path: "/{id}/close",
			summary: "Close an incident: terminal for its signature (the same error again stays quiet)",
			request: { params: IncidentPath },
			responses: { 200: { description: "The closed incident (one closed before is answered as it stands: `closed_by` and `closed_at` are its closing's)", content: { "application/json": { schema: IncidentSchema } } }, ...notFoundResponse },
		}),
		async (c) => {
			const { id } = c.req.valid("param");
			const result = await closeIncident(c.env.DB, id, c.var.principal.name, Date.now());
			if (!result) throw new NotFoundError(`no incident ${id}`);
			// Closed before (a second press, another operator): the record keeps who closed it and when,
			// and the log names no second closer, who changed nothing.
			if (result.closed) log.info("incident.closed", { agent: result.incident.agent, incident: id, by: c.var.principal.name });
			return c.json(result.incident, 200);
		},
	)
	.openapi(
		withRole("operate", {
			method: "post",
			operationId: "resolveIncident",
			path: "/{id}/resolve",
			summary: "Resolve an open incident, as a clean run would: the same error again re-opens it and pages (closing would quiet it for good)",
			request: { params: IncidentPath, body: { content: { "application/json": { schema: ResolveBody } }, required: false } },
			responses: {
				200: {
					description:
						"The resolved incident. One resolved before is answered as it stands, and so is one seen failing after the request arrived (a failure that landed while the resolve was on its way) or counted past the body's `count`: still open (`detected` or `alerted`), as a clean run that ended before that failure would have left it: resolved over it, a failure that re-opened it would never be paged. Asked again (after reading it again, with a `count`), it resolves",
					content: { "application/json": { schema: IncidentSchema } },
				},
				...notFoundResponse,
				409: errorResponse(
					"The incident is closed, which is terminal for its signature, or it has counted fewer failures than the body's `count` (not a count read from it: read it again); nothing was changed (code conflict)",
				),
			},
		}),
		async (c) => {
			const { id } = c.req.valid("param");
			const seen = c.req.valid("json")?.count;
			// The operator's word is as of the request's arrival (and of the count they read, when the
			// client sends it): a failure seen after it is not resolved over.
			const result = await resolveIncident(c.env.DB, id, Date.now(), seen);
			if (!result) throw new NotFoundError(`no incident ${id}`);
			// Whose closing, and when: a resolve crossing another operator's close tells its sender of it.
			if (result.incident.state === "closed") throw new ConflictError(`incident ${id} is closed${closedBy(result.incident)}: a closing is terminal for its signature, and the same error stays quiet`);
			// Counts only grow (a pruned incident's row is gone, and one seen again starts a new row at 1).
			if (seen !== undefined && !result.resolved && result.incident.count < seen) {
				throw new ConflictError(`incident ${id} has counted ${result.incident.count} failures, fewer than the count ${seen} this resolve names: read it again; nothing was changed`);
			}
			if (result.resolved) log.info("incident.resolved", { agent: result.incident.agent, incident: id, by: c.var.principal.name });
			return c.json(result.incident, 200);
		},
	);
