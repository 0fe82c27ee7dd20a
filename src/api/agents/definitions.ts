import { z } from "@hono/zod-openapi";
import { agentRpc } from "../../../durable-objects/agent/client.ts";
import { loadFleet } from "../../config/bundled.ts";
import { definitionRevision, notDefined } from "../../config/fleet.ts";
import { AgentSchema, MAX_DEFINITION_BYTES, MAX_PROMPT_CHARS, unpricedCostLimit, type AgentDefinition } from "../../config/schema.ts";
import { BadRequestError, ConflictError, NotFoundError } from "../../errors.ts";
import { log } from "../../log.ts";
import { getRegisteredAgent, listRegisteredAgentNames, listRegisteredAgents } from "../../store/agent-registry.ts";
import { readHeartbeat } from "../../store/heartbeat.ts";
import { REDACTED } from "../../security/redact.ts";
import { markerPaths, secretValuePaths, shownDefinition } from "../../security/definition-secrets.ts";
import { forgetHeldSecret, sayHeldSecret } from "../../security/definition-secrets-warning.ts";
import type { Issue } from "../../shared/zod-issues.ts";
import { createApi, withRole } from "../factory.ts";
import { AgentNameParam, pageLimit } from "../params.ts";
import { oneTag, weakMatch } from "../preconditions.ts";
import { unwrap } from "../refusals.ts";
import { requireAgent, type ResolvedAgent } from "../resolve-agent.ts";
import { yamlText } from "../../shared/yaml-text.ts";
import { bodySize, errorResponse, DEFINITION_BODY_BYTES, conflictResponse, notFoundResponse } from "../schemas.ts";
import { AgentDryRun, DryRunQuery, dryRun } from "./dry-run.ts";
import { AgentDetail, AgentView, agentView, viewed, type Viewed } from "./views.ts";

const AgentPage = z.object({ agents: z.array(AgentView), next_cursor: z.string().nullable() }).openapi("AgentPage");

const AgentName = z.object({ name: z.string(), source: z.enum(["file", "api"]) }).openapi("AgentName");
const AgentNamePage = z.object({ agents: z.array(AgentName), next_cursor: z.string().nullable() }).openapi("AgentNamePage");

const AgentPath = z.object({ agent: AgentNameParam });

export type AgentNameT = z.infer<typeof AgentName>;


/**
 * A page of agents by name, fleet.yaml's and the registry's merged: those after `cursor` (and whose
 * name starts with `prefix`), at most
 * `limit`, and the next page's cursor (the last name on it, if more follow). `fromRegistry` reads up
 * to `n` API agents after the cursor, leaving out fleet.yaml's names (`except`): an API agent a
 * deploy gave fleet.yaml's name to is the file agent now; its registry row is retired at the next
 * tick, and until then it is not listed twice.
 */
async function pageOfMerged<T extends { name: string }>(
	cursor: string | undefined,
	limit: number,
	prefix: string,
	fromFile: (agent: AgentDefinition) => T,
	fromRegistry: (n: number, after: string | undefined, except: readonly string[], prefix: string) => Promise<T[]>,
): Promise<{ page: T[]; nextCursor: string | null }> {
	const fleet = loadFleet().agents;
	const file = fleet.filter((a) => (cursor === undefined || a.name > cursor) && a.name.startsWith(prefix)).map(fromFile);
	const api = await fromRegistry(limit + 1, cursor, fleet.map((a) => a.name), prefix);
	const merged = [...file, ...api].sort((a, b) => (a.name < b.name ? -1 : 1));
	const page = merged.slice(0, limit);
	return { page, nextCursor: merged.length > limit ? (page.at(-1)?.name ?? null) : null };
}

/** The body was validated by the fleet.yaml schema on the way in; a PUT's name must match its path. */
function checkName(agent: AgentDefinition, pathName: string): AgentDefinition {
	if (agent.name !== pathName) {
		throw new BadRequestError(`the body's name "${agent.name}" does not match the path's "${pathName}"`, {
			issues: [{ path: "name", message: "must match the agent name in the path" }],
		});
	}
	return agent;
}

function refuseFileAgent(name: string): void {
	if (loadFleet().agents.some((a) => a.name === name)) {
		throw new ConflictError(`agent ${name} is defined in fleet.yaml; change it there and deploy`);
	}
}

/** A cost limit on a model the fleet has no price for could never be checked: refused, as the fleet file's check refuses it. */
function refuseUnpriced(agent: AgentDefinition): void {
	const unpriced = unpricedCostLimit(agent, loadFleet().pricing);
	if (unpriced) throw new BadRequestError(unpriced, { issues: [{ path: "usage_limits.max_cost_usd", message: unpriced }] });
}

const SECRET_VALUE_MESSAGE =
	"holds the value of one of the Worker's secrets (an API token, API key, webhook secret, signing key or URL secret): a definition is shown to every read token; name the secret instead (url_secret, webhook.secret), never its value";

/**
 * A definition is stored as sent and shown to every read token (GET /v1/agents/{agent}, its
 * YAML, a job's manifest), so one holding a Worker secret's value (a drover token pasted into a
 * prompt, a URL secret spelt out, percent-encoded or JSON-escaped) is refused, naming each field and
 * never the value: redacting it on the way in would store a definition other than the one sent.
 */
function refuseSecretValues(agent: AgentDefinition): void {
	const issues: Issue[] = secretValuePaths(agent).map(({ path, key }) => ({ path, message: key ? `a key ${SECRET_VALUE_MESSAGE}` : SECRET_VALUE_MESSAGE }));
	if (issues.length > 0) throw new BadRequestError(`invalid body: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`, { issues });
}

const MARKER_MESSAGE = `holds ${REDACTED}, which a read shows where the stored definition holds the value of one of the Worker's secrets: sent back, it would replace that value with the marker. Write the field anew, naming the secret instead of its value (url_secret, webhook.secret)`;

/**
 * A definition stored before its secret values were refused (or holding a value a secret set later
 * has) is read with the marker in their place: a read, edit and PUT would store the marker over them,
 * silently. Refused where the stored definition holds a secret's value at the same field; the marker
 * elsewhere (a prompt about redaction) is text like any other.
 */
async function refuseMarkerOverSecret(env: Env, agent: AgentDefinition): Promise<void> {
	const marked = markerPaths(agent);
	if (marked.length === 0) return;
	const stored = (await getRegisteredAgent(env.DB, agent.name))?.definition;
	if (!stored) return;
	const held = new Set(secretValuePaths(stored).map(({ path, key }) => `${key}:${path}`));
	const issues: Issue[] = marked.filter(({ path, key }) => held.has(`${key}:${path}`)).map(({ path, key }) => ({ path, message: key ? `a key ${MARKER_MESSAGE}` : MARKER_MESSAGE }));
	if (issues.length > 0) throw new BadRequestError(`invalid body: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`, { issues });
}

/** What a read token is shown of a stored definition: its secret values as the marker, said once in the log. */
function shown(agent: ResolvedAgent, revision: string): AgentDefinition {
	const definition = shownDefinition(agent.definition);
	if (definition !== agent.definition) sayHeldSecret(agent.name, agent.source, agent.source === "file" ? "fleet.yaml" : revision, secretValuePaths(agent.definition));
	return definition;
}

/**
 * The agent's Durable Object decides (it refuses a create of a live agent, a replace of none) and
 * stores, then brings its shard (it ticks) and the D1 registry (it lists) in line itself: this
 * handler's checks before it are only the cheap ones. If its shard or D1 fails, the definition stays
 * stored, the call fails (5xx), and the object's alarm completes the rest.
 */
async function store(env: Env, agent: AgentDefinition, expect: "create" | "replace", by: string, ifRevision?: string): Promise<string> {
	const revision = await definitionRevision(agent);
	// The scheduler's last tick dates the definition in the ticks' own time (see firstSight).
	const hb = await readHeartbeat(env.DB);
	unwrap(await agentRpc(env, agent.name).define(agent.name, agent, revision, hb ? Date.parse(hb.scheduled_time) : null, expect, by, ifRevision));
	return revision;
}

/** What GET /{agent}/definition answers with beside the YAML: its ETag is what PUT's If-Match names. */
const DefinitionHeaders = z.object({
	ETag: z.string().openapi({ description: "The definition_revision, quoted: send it as PUT's If-Match", example: '"254be1d43c9c3fe0"' }),
	"Cache-Control": z.string().openapi({ description: "`private, no-cache`" }),
	"X-Drover-Source": z.enum(["file", "api"]).openapi({ description: "file: change it in fleet.yaml; api: change it with PUT" }),
});

const IfMatchHeader = z.object({
	"if-match": z
		.string()
		.optional()
		.openapi({ description: 'The definition_revision the change was made on, quoted as GET /v1/agents/{agent}/definition\'s ETag gives it ("3f2a…"): a 412, changing nothing, when the agent is no longer at it. Without it, the last write wins' }),
});

/** The one revision If-Match names, or none to check ("*": any current definition, which PUT needs anyway). */
function revisionOf(header: string | undefined): string | undefined {
	const tag = oneTag(header, "If-Match", /^[0-9a-f]{1,64}$/, 'one definition_revision in quotes, as the definition\'s ETag gives it ("3f2a…"), or *');
	return tag === "*" ? undefined : tag;
}

const AgentBody = {
	// YAML is read as fleet.yaml is, each issue of a 400 then carrying the line and column it is at.
	content: { "application/json": { schema: AgentSchema }, "application/yaml": { schema: AgentSchema } },
	required: true,
	description: `A fleet.yaml agent, as JSON or as YAML (as GET /v1/agents/{agent}/definition writes it; a 400's issues then carry the line and column each is at). Its system prompt, prompt, schedule prompts and tool descriptions are at most ${MAX_PROMPT_CHARS.toLocaleString("en-US")} characters each, and the whole definition at most ${MAX_DEFINITION_BYTES / 1024} KiB as JSON in UTF-8 (defaults filled in): a 400 names the field that is over. A field holding the value of one of the Worker's secrets (an API token, a webhook secret, a URL secret) is a 400 naming it, never the value: a definition is shown to every read token. So is a PUT's field holding [REDACTED] where the stored definition holds such a value (as a read shows it): it would replace the value with the marker. The body may be up to ${bodySize(DEFINITION_BODY_BYTES)}, room for such a definition sent with \\u escapes`,
} as const;

export const agentDefinitionsApi = createApi()
	.openapi(
		withRole("read", {
			method: "get",
			operationId: "listAgents",
			path: "/",
			summary: "Agents (fleet.yaml's and the API's), their schedules, next runs and state, by name",
			request: {
				query: z.strictObject({
					limit: pageLimit(200, 50),
					cursor: AgentNameParam.optional().openapi({ description: "next_cursor of the previous page" }),
					prefix: AgentNameParam.optional().openapi({ description: "Only agents whose name starts with this (a search by name: a fleet of thousands is paged by name)", example: "etl-" }),
					view: z.enum(["names"]).optional().openapi({
						description: "names: each agent's name and source alone (AgentNamePage), from fleet.yaml and the D1 registry, asking no agent's Durable Object for its state; paged alike, its cursors the same",
					}),
				}),
			},
			responses: {
				200: {
					description: "A page of agents (AgentPage), or of their names with view=names (AgentNamePage)",
					content: { "application/json": { schema: z.union([AgentPage, AgentNamePage]) } },
				},
			},
		}),
		async (c) => {
			const { limit, cursor, view, prefix = "" } = c.req.valid("query");
			if (view === "names") {
				// The same merge as below, without the definitions or the objects' state: a name
				// suggester's read of a fleet of 1,000 asked 1,000 objects.
				const { page, nextCursor } = await pageOfMerged<AgentNameT>(
					cursor,
					limit,
					prefix,
					(a) => ({ name: a.name, source: "file" }),
					async (n, after, except, p) => (await listRegisteredAgentNames(c.env.DB, n, after, except, p)).map((name) => ({ name, source: "api" })),
				);
				return c.json({ agents: page, next_cursor: nextCursor }, 200);
			}
			const { page, nextCursor } = await pageOfMerged<Viewed>(
				cursor,
				limit,
				prefix,
				(a) => viewed({ name: a.name, source: "file", definition: a }),
				async (n, after, except, p) => (await listRegisteredAgents(c.env.DB, n, after, except, p)).map((r) => ({ ...r, source: "api" })),
			);
			const now = new Date();
			const statuses = await Promise.all(page.map((a) => agentRpc(c.env, a.name).status(a.name, a.source)));
			return c.json({ agents: page.map((a, i) => agentView(a, statuses[i]!, now, c.env)), next_cursor: nextCursor }, 200);
		},
	)
	.openapi(
		withRole("read", {
			method: "get",
			operationId: "getAgent",
			path: "/{agent}",
			summary: "One agent: definition, schedules with next runs, paused state, running jobs, last status",
			request: { params: AgentPath },
			responses: {
				200: {
					description: "The agent. A value of one of the Worker's secrets its definition holds (a fleet.yaml agent's, or one stored before such values were refused) is shown as [REDACTED], and GET /v1/status warns of it (definition_secret); definition_revision is the stored definition's",
					content: { "application/json": { schema: AgentDetail } },
				},
				...notFoundResponse,
			},
		}),
		async (c) => {
			const agent = await requireAgent(c.env, c.req.valid("param").agent);
			const status = await agentRpc(c.env, agent.name).status(agent.name, agent.source);
			const revision = await definitionRevision(agent.definition);
			return c.json({ ...agentView(viewed(agent), status, new Date(), c.env), definition: shown(agent, revision), definition_revision: revision }, 200);
		},
	)
	.openapi(
		withRole("read", {
			method: "get",
			operationId: "getAgentDefinition",
			path: "/{agent}/definition",
			summary: "An agent's definition as YAML, as PUT and POST take it (and fleet.yaml's agents are written); its ETag is its revision, for PUT's If-Match",
			request: { params: AgentPath, headers: z.object({ "if-none-match": z.string().optional().openapi({ description: "The ETag of a definition already held: 304 while it is still the agent's" }) }) },
			responses: {
				200: {
					description:
						"The definition as YAML, a value of one of the Worker's secrets it holds shown as [REDACTED] (PUT refuses the marker sent back at that field); ETag: its definition_revision, quoted; X-Drover-Source: file or api (a file agent is changed in fleet.yaml, not through the API)",
					content: { "application/yaml": { schema: z.string() } },
					headers: DefinitionHeaders,
				},
				304: { description: "Unchanged since the If-None-Match's revision", headers: DefinitionHeaders },
				...notFoundResponse,
			},
		}),
		async (c) => {
			const agent = await requireAgent(c.env, c.req.valid("param").agent);
			const revision = await definitionRevision(agent.definition);
			const etag = `"${revision}"`;
			const headers = { ETag: etag, "Cache-Control": "private, no-cache", "X-Drover-Source": agent.source };
			if (weakMatch(c.req.valid("header")["if-none-match"], etag)) return c.body(null, 304, headers);
			return c.body(yamlText(shown(agent, revision)), 200, { ...headers, "Content-Type": "application/yaml; charset=utf-8" });
		},
	)
	.openapi(
		withRole("admin", {
			method: "post",
			operationId: "createAgent",
			path: "/",
			summary: "Define an agent through the API (same schema as a fleet.yaml agent)",
			request: { body: AgentBody, query: DryRunQuery },
			responses: {
				201: { description: "Created", content: { "application/json": { schema: AgentDetail } } },
				200: { description: "With dry_run=true: what the create would do, nothing stored", content: { "application/json": { schema: AgentDryRun } } },
				...conflictResponse,
			},
		}, { maxBodyBytes: DEFINITION_BODY_BYTES }),
		async (c) => {
			const agent = c.req.valid("json");
			refuseFileAgent(agent.name);
			refuseSecretValues(agent);
			refuseUnpriced(agent);
			if (c.req.valid("query").dry_run === "true") return c.json(await dryRun(c.env, agent, "create"), 200);
			// Not refused on the registry's word: the object decides, and a refusal there also brings a
			// registry left behind by an older release back in line with it.
			const revision = await store(c.env, agent, "create", c.var.principal.name);
			forgetHeldSecret(agent.name);
			log.info("agent.created", { agent: agent.name, by: c.var.principal.name, definition_revision: revision });
			const status = await agentRpc(c.env, agent.name).status(agent.name, "api");
			return c.json({ ...agentView(viewed({ name: agent.name, source: "api", definition: agent }), status, new Date(), c.env), definition: agent, definition_revision: revision }, 201);
		},
	)
	.openapi(
		withRole("admin", {
			method: "put",
			operationId: "replaceAgent",
			path: "/{agent}",
			summary: "Replace an API-defined agent's definition",
			request: { params: AgentPath, body: AgentBody, headers: IfMatchHeader, query: DryRunQuery },
			responses: {
				200: { description: "Updated (AgentDetail); with dry_run=true, what the change would do, nothing stored (AgentDryRun)", content: { "application/json": { schema: z.union([AgentDetail, AgentDryRun]) } } },
				...notFoundResponse,
				...conflictResponse,
				412: errorResponse("If-Match named a revision that is no longer the agent's: someone changed it since it was read; nothing was changed (code precondition_failed)"),
			},
		}, { maxBodyBytes: DEFINITION_BODY_BYTES }),
		async (c) => {
			const { agent: name } = c.req.valid("param");
			refuseFileAgent(name);
			const agent = checkName(c.req.valid("json"), name);
			const ifRevision = revisionOf(c.req.valid("header")["if-match"]);
			refuseSecretValues(agent);
			await refuseMarkerOverSecret(c.env, agent);
			refuseUnpriced(agent);
			if (c.req.valid("query").dry_run === "true") return c.json(await dryRun(c.env, agent, "replace", ifRevision), 200);
			// A name the registry never had is refused here, without waking (and so storing) an object for
			// it; for any other, live or deleted in the registry, the object decides (see POST).
			if (!(await getRegisteredAgent(c.env.DB, name))) throw new NotFoundError(notDefined(name));
			const revision = await store(c.env, agent, "replace", c.var.principal.name, ifRevision);
			forgetHeldSecret(name);
			log.info("agent.updated", { agent: name, by: c.var.principal.name, definition_revision: revision });
			const status = await agentRpc(c.env, name).status(name, "api");
			return c.json({ ...agentView(viewed({ name, source: "api", definition: agent }), status, new Date(), c.env), definition: agent, definition_revision: revision }, 200);
		},
	)
	.openapi(
		withRole("admin", {
			method: "delete",
			operationId: "deleteAgent",
			path: "/{agent}",
			summary: "Delete an API-defined agent; its jobs and ledger stay readable",
			request: { params: AgentPath },
			responses: {
				200: { description: "Deleted", content: { "application/json": { schema: z.object({ deleted: z.string() }) } } },
				...notFoundResponse,
				...conflictResponse,
			},
		}),
		async (c) => {
			const { agent: name } = c.req.valid("param");
			refuseFileAgent(name);
			if (!(await getRegisteredAgent(c.env.DB, name))) throw new NotFoundError(`no agent named ${name}`);
			// The object decides (one of concurrent deletes succeeds) and tells its shard and D1.
			const removed = unwrap(await agentRpc(c.env, name).remove(Date.now(), c.var.principal.name));
			forgetHeldSecret(name);
			// Its queued runs, each ended with its own job.finished (an object on the release before does not say).
			log.info("agent.deleted", { agent: name, by: c.var.principal.name, ...(typeof removed.cancelled === "number" ? { cancelled_jobs: removed.cancelled } : {}) });
			return c.json({ deleted: name }, 200);
		},
	);
