import { z } from "@hono/zod-openapi";
import { agentRpc } from "../../durable-objects/agent/client.ts";
import { MAX_SESSION_JOBS, type SessionDetail } from "../../durable-objects/agent/sessions.ts";
import { ConflictError, NotFoundError } from "../errors.ts";
import { JobIdSchema, JobStatusSchema, JobSummarySchema } from "../jobs/model.ts";
import { MIN_SESSION_PREFIX } from "../jobs/session-id-format.ts";
import { firstJobPrefix, SessionIdParam } from "../jobs/session-ids.ts";
import { log } from "../log.ts";
import { sessionStarts } from "../store/job-index.ts";
import { createApi, withRole } from "./factory.ts";
import { AgentNameParam } from "./params.ts";
import { requireKnownAgent } from "./resolve-agent.ts";
import { conflictResponse, DateTimeString, notFoundResponse } from "./schemas.ts";

/** Sessions an ambiguous prefix names in its 409, at most. */
const CANDIDATES_SHOWN = 5;
/**
 * Agents a prefix lookup asks for their sessions, at most: past them it is a 409 asking for more of
 * the id, as a prefix fitting several sessions is.
 */
const AGENTS_ASKED = 10;

const SessionJobRefSchema = z.object({ id: z.string(), status: JobStatusSchema, created_at: DateTimeString }).openapi("SessionJobRef");

export const SessionSummarySchema = z
	.object({
		session_id: z.string().openapi({ example: "ses-job-2026-12-02-k2x9qa" }),
		agent: z.string(),
		job_count: z.number().int().openapi({ description: "Jobs in the session: those that ran in it and continues queued for it" }),
		first_job: SessionJobRefSchema,
		last_job: SessionJobRefSchema.openapi({ description: "The newest job: the one `drover sessions resume` continues" }),
		updated_at: DateTimeString.openapi({ description: "When the newest job last changed" }),
		persistent: z.boolean().openapi({
			description:
				"The agent's persistent session (session.mode: persistent): the one its persistent runs carry on. An agent switched to fresh_per_job keeps it: a continue of its last completed run (GET …/sessions/current, last_job) carries it on",
		}),
	})
	.openapi("SessionSummary");

const SessionSchema = SessionSummarySchema.extend({
	jobs: z
		.array(JobSummarySchema.extend({ continued_from: JobIdSchema.nullable() }))
		.openapi({ description: `The session's jobs, oldest first (its newest ${MAX_SESSION_JOBS} when it has more; job_count counts them all)` }),
}).openapi("Session");


/** The answers' shapes, for the CLI (a type-only import: nothing of src/ loads in it at run time). */
export type SessionSummaryShape = z.infer<typeof SessionSummarySchema>;
export type SessionShape = z.infer<typeof SessionSchema>;


/** GET /v1/sessions/:id: a session found by its id, or a unique prefix of one. */
export const sessionsApi = createApi().openapi(
	withRole("read", {
		method: "get",
		operationId: "getSession",
		path: "/{id}",
		summary: "A session and its jobs, by its id or a unique prefix of it",
		description:
			`A session id is its first job's id behind ses- (ses-job-2026-12-02-k2x9qa): the job index finds it, and its agent, by that job. ` +
			`A prefix needs ${MIN_SESSION_PREFIX} characters after ses-; one that fits several sessions is a 409 naming them, as is one fitting jobs of more agents than the ${AGENTS_ASKED} a lookup asks (a ses-job-… prefix names one session only once it goes past the date into the job id's 6 last characters: ses-job-2026-12-02-k2). ` +
			"Sessions from before this id scheme (ses-<uuid>), and any whose first job retention has removed, are found through their agent: add ?agent=<name>.",
		request: {
			params: z.object({ id: SessionIdParam }),
			query: z.strictObject({ agent: AgentNameParam.optional().openapi({ description: "Look in this agent only (needed for a ses-<uuid> id)" }) }),
		},
		responses: {
			200: { description: "The session, its agent and its jobs", content: { "application/json": { schema: SessionSchema } } },
			...notFoundResponse,
			...conflictResponse,
		},
	}),
	async (c) => {
		const { id } = c.req.valid("param");
		const { agent } = c.req.valid("query");
		const session = agent === undefined ? await findByFirstJob(c.env, id) : await findInAgent(c.env, agent, id);
		return c.json(session, 200);
	},
);

/** Looks through one agent's sessions: the way to old `ses-<uuid>` ids. */
async function findInAgent(env: Env, agent: string, id: string): Promise<SessionDetail> {
	await requireKnownAgent(env, agent);
	const found = await agentRpc(env, agent).session(id, CANDIDATES_SHOWN + 1);
	if ("session" in found) return found.session;
	if (found.candidates.length === 0) throw new NotFoundError(`agent ${agent} has no session ${id}`);
	throw ambiguous(id, found.candidates.map((session_id) => ({ session_id, agent })));
}

/**
 * Finds a session through its first job: the D1 index's primary key names the jobs that may have
 * started it, and their agents hold the sessions. The index cannot tell a job that started a
 * session from a persistent run that carried its agent's session on, so each agent it names is
 * asked which sessions of the id or prefix it really has (a whole id: one agent, one question).
 * No scan of agents or of jobs.
 */
async function findByFirstJob(env: Env, id: string): Promise<SessionDetail> {
	const jobPrefix = firstJobPrefix(id);
	if (jobPrefix === null) {
		throw new NotFoundError(`no session ${id} found without its agent: an id of the form ses-<uuid> (a session from before ids named their first job) is looked up through its agent: ?agent=<name> in the API, --agent <name> in drover sessions resume`);
	}
	const found: { session_id: string; agent: string }[] = [];
	let only: SessionDetail | null = null;
	const asked: string[] = [];
	for (;;) {
		// Jobs of agents not asked yet: an agent answers for all its sessions of the prefix at once.
		const starts = await sessionStarts(env.DB, jobPrefix, CANDIDATES_SHOWN + 1, asked);
		const unasked = [...new Set(starts.map((j) => j.agent))];
		const agents = unasked.slice(0, AGENTS_ASKED - asked.length);
		asked.push(...agents);
		// A job started before session ids named their first job has a ses-<uuid> session instead:
		// its agent has none of this id.
		const answers = await Promise.all(agents.map((agent) => agentRpc(env, agent).session(id, CANDIDATES_SHOWN + 1)));
		for (const [i, answer] of answers.entries()) {
			const agent = agents[i]!;
			if ("session" in answer) {
				found.push({ session_id: answer.session.session_id, agent });
				only = answer.session;
			} else found.push(...answer.candidates.map((session_id) => ({ session_id, agent })));
		}
		if (found.length > 1) throw ambiguous(id, found);
		// Less than a full page: every agent with a job of the prefix has answered.
		if (agents.length === unasked.length && starts.length <= CANDIDATES_SHOWN) break;
		if (asked.length >= AGENTS_ASKED) {
			log.info("sessions.prefix_too_wide", { prefix: id, agents: asked.length });
			throw new ConflictError(`session id prefix ${id} fits jobs of more agents than the ${AGENTS_ASKED} a lookup asks; give more of the id`, { candidates: found });
		}
	}
	if (found.length === 1 && only !== null) return only;
	throw new NotFoundError(`no session ${id}: no job of the index started a session of that id (a session whose first job retention removed is found through its agent: ?agent=<name> in the API, --agent <name> in drover sessions resume)`);
}

function ambiguous(id: string, candidates: { session_id: string; agent: string }[]): ConflictError {
	const shown = candidates.slice(0, CANDIDATES_SHOWN);
	const more = candidates.length > CANDIDATES_SHOWN ? " and more" : "";
	const list = shown.map((s) => `${s.session_id} (agent ${s.agent})`).join(", ");
	log.info("sessions.ambiguous_prefix", { prefix: id, candidates: shown.length });
	return new ConflictError(`session id prefix ${id} fits more than one session: ${list}${more}; give more of the id`, { candidates: shown });
}

