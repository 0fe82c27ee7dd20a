import { z } from "@hono/zod-openapi";
import { agentRpc } from "../../../durable-objects/agent/client.ts";
import { SESSION_MODES } from "../../config/schema.ts";
import { NotFoundError } from "../../errors.ts";
import { cursorScope, decodeCursor, encodeCursor } from "../../shared/cursor.ts";
import { isoOrNull } from "../../shared/iso-time.ts";
import { createApi, withRole } from "../factory.ts";
import { AgentNameParam, CursorParam, pageLimit } from "../params.ts";
import { unwrap } from "../refusals.ts";
import { requireAgent, requireAgentSource, requireKnownAgent } from "../resolve-agent.ts";
import { DateTimeString, notFoundResponse } from "../schemas.ts";
import { SessionSummarySchema } from "../sessions.ts";

const SessionPage = z.object({ sessions: z.array(SessionSummarySchema), next_cursor: z.string().nullable() }).openapi("SessionPage");

const CurrentSessionSchema = z
	.object({
		agent: z.string(),
		mode: z.enum(SESSION_MODES).openapi({ description: "The agent's session mode (a schedule may override it for its runs)" }),
		session_id: z.string().nullable().openapi({ description: "The persistent session its next persistent run continues; null when there is none" }),
		last_job: z.string().nullable().openapi({ description: "The session's last completed run (a persistent run's or a continue's): the one continued, by the next persistent run or by a resume" }),
		started_at: DateTimeString.nullable().openapi({ description: "When the session's first run started (timeout counts from it)" }),
		active_at: DateTimeString.nullable().openapi({ description: "When last_job completed (idle_timeout counts from it)" }),
		expires_at: DateTimeString.nullable().openapi({ description: "When timeout or idle_timeout ends the session; null when neither is set" }),
		expired: z.boolean().openapi({ description: "Past expires_at: the next run starts a new session" }),
		continues: z.boolean().openapi({ description: "Whether the agent's next persistent run continues the session" }),
		not_continued_because: z
			.string()
			.nullable()
			.openapi({ description: "Why it would not (none yet, expired, its last run removed by retention, the system prompt or tools changed, a run failed on the conversation it carried)" }),
		schedule_modes: z.record(z.string(), z.enum(SESSION_MODES)).openapi({ description: "Schedules whose session.mode overrides the agent's, by name" }),
		max_context_tokens: z.number().int(),
	})
	.openapi("CurrentSession");

const ResetSessionSchema = z
	.object({ agent: z.string(), forgotten: z.string().nullable().openapi({ description: "The session forgotten; null when there was none" }) })
	.openapi("SessionReset");

export type CurrentSessionShape = z.infer<typeof CurrentSessionSchema>;
export type SessionResetShape = z.infer<typeof ResetSessionSchema>;

/** GET /v1/agents/:agent/sessions, mounted beside the agent's other lists. */
export const agentSessionsApi = createApi()
	.openapi(
		withRole("read", {
			method: "get",
			operationId: "getCurrentSession",
			path: "/{agent}/sessions/current",
			summary: "The agent's persistent session (session.mode: persistent): what its next run continues, and when it expires",
			request: { params: z.object({ agent: AgentNameParam }) },
			responses: { 200: { description: "The persistent session, its fields null when there is none", content: { "application/json": { schema: CurrentSessionSchema } } }, ...notFoundResponse },
		}),
		async (c) => {
			// The name is checked before its object is woken; the object answers from the definition it runs on.
			const agent = await requireAgentSource(c.env, c.req.valid("param").agent);
			const view = await agentRpc(c.env, agent.name).persistentSession();
			// Null only if the agent went between the lookup and its object's answer.
			if (view === null) throw new NotFoundError(`no agent named ${agent.name}`);
			const { assessment: a, expiresAt } = view;
			return c.json(
				{
					agent: agent.name,
					mode: view.mode,
					session_id: a.session?.sessionId ?? null,
					last_job: a.session?.jobId ?? null,
					started_at: isoOrNull(a.session?.startedAt),
					active_at: isoOrNull(a.session?.activeAt),
					expires_at: isoOrNull(expiresAt),
					expired: expiresAt !== null && Date.now() >= expiresAt,
					continues: a.continues,
					not_continued_because: a.continues ? null : a.why,
					schedule_modes: view.scheduleModes,
					max_context_tokens: view.maxContextTokens,
				},
				200,
			);
		},
	)
	.openapi(
		withRole("operate", {
			method: "delete",
			operationId: "forgetCurrentSession",
			path: "/{agent}/sessions/current",
			summary: "Forget the agent's persistent session: its next run starts a new one (the session's jobs stay, and can still be continued)",
			request: { params: z.object({ agent: AgentNameParam }) },
			responses: { 200: { description: "Forgotten (or there was none)", content: { "application/json": { schema: ResetSessionSchema } } }, ...notFoundResponse },
		}),
		async (c) => {
			const agent = await requireAgent(c.env, c.req.valid("param").agent);
			const answer = await agentRpc(c.env, agent.name).resetPersistentSession(c.var.principal.name);
			const forgotten = answer === null ? null : unwrap(answer);
			return c.json({ agent: agent.name, forgotten: forgotten?.sessionId ?? null }, 200);
		},
	)
	.openapi(
		withRole("read", {
			method: "get",
			operationId: "listAgentSessions",
			path: "/{agent}/sessions",
			summary: "The agent's sessions, newest first (by their newest started job; a session retention left none of, with a continue of it queued, by that continue), with keyset pagination",
			request: {
				params: z.object({ agent: AgentNameParam }),
				query: z.strictObject({ limit: pageLimit(100, 20), cursor: CursorParam }),
			},
			responses: { 200: { description: "A page of sessions", content: { "application/json": { schema: SessionPage } } }, ...notFoundResponse },
		}),
		async (c) => {
			const { agent } = c.req.valid("param");
			const { limit, cursor } = c.req.valid("query");
			const scope = cursorScope("sessions", { agent });
			const before = cursor === undefined ? undefined : decodeCursor(cursor, scope);
			// Asked before its object is woken, which would create one for any name.
			await requireKnownAgent(c.env, agent);
			const { sessions, next } = await agentRpc(c.env, agent).sessions(limit, before);
			return c.json({ sessions, next_cursor: next ? encodeCursor(next, scope) : null }, 200);
		},
	);
